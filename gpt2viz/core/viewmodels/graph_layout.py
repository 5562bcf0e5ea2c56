"""Where each node of an attribution graph goes in a picture: rows are the embeddings, each block and the logits,
columns are prompt positions.

The layout reads the graph's JSON (circuit-tracer's format, :func:`gpt2viz.core.circuits.graph_json.graph_json`),
so a figure draws exactly what the written file holds. A pruned graph of GPT-2 small still has hundreds of nodes
and thousands of links: a cell shows its most influential nodes and the picture its strongest links; what is
left out is counted, so a reader knows the picture is a part.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = {"embedding": "embedding", "cross layer transcoder": "feature", "mlp reconstruction error": "error",
         "logit": "logit"}


@dataclass(frozen=True)
class LaidNode:
    """One drawn node: its row (0 embeddings, 1 + L block L, n_layer + 1 logits), column and slot in the cell."""

    node_id: str
    kind: str  # embedding | feature | error | logit
    row: int
    column: int
    slot: int
    label: str
    influence: float | None
    activation: float | None


@dataclass(frozen=True)
class LaidEdge:
    """A drawn link between ``nodes[source]`` and ``nodes[target]`` with its direct-effect weight."""

    source: int
    target: int
    weight: float


@dataclass(frozen=True)
class GraphLayout:
    """Nodes placed on the (row, column) grid and the links between drawn nodes, strongest first."""

    nodes: tuple[LaidNode, ...]
    edges: tuple[LaidEdge, ...]
    prompt_tokens: tuple[str, ...]
    n_layer: int
    slots: int  # the most nodes any block's cell shows (the logits share the top row; one embedding per column)
    hidden_nodes: int  # nodes of the file not drawn (cells over ``per_cell``)
    hidden_edges: int  # links of the file not drawn
    max_weight: float  # the largest |weight| drawn (line widths are relative to it)
    scores: dict  # replacement / completeness scores when the file carries them
    supernodes: tuple = ()  # (name, (indices of its drawn members, ...)) per qParams.supernodes group

    @property
    def n_pos(self) -> int:
        """Number of prompt positions (columns)."""
        return len(self.prompt_tokens)


def _row(node: dict, n_layer: int) -> int:
    layer = node["layer"]
    if layer == "E":
        return 0
    return min(int(layer), n_layer) + 1 if node["feature_type"] != "logit" else n_layer + 1


def graph_layout(data: dict, per_cell: int = 5, max_edges: int = 300) -> GraphLayout:
    """Lay out circuit-tracer graph JSON ``data`` (``metadata``, ``nodes``, ``links``).

    Parameters
    ----------
    per_cell : int
        At most this many nodes per (row, column) cell, the most influential first (circuit-tracer's
        ``influence`` is the cumulative share, smaller = more influential); logits and embeddings always.
    max_edges : int
        At most this many links, the strongest |weight| first, among drawn nodes.
    """
    nodes = data["nodes"]
    logits = [n for n in nodes if n["feature_type"] == "logit"]
    n_layer = int(logits[0]["layer"]) - 1 if logits else 1 + max(
        (int(n["layer"]) for n in nodes if n["layer"] != "E"), default=0)
    cells: dict[tuple[int, int], list[dict]] = {}
    for n in nodes:
        if n["feature_type"] not in KINDS:
            continue
        cells.setdefault((_row(n, n_layer), int(n["ctx_idx"])), []).append(n)
    laid, hidden = [], 0
    for (row, col), members in sorted(cells.items()):
        always = row in (0, n_layer + 1)
        # logits: the most probable first; others: the most influential (smallest cumulative share) first
        members.sort(key=lambda n: -n["token_prob"] if n["feature_type"] == "logit" else
                     (n["influence"] if n["influence"] is not None else 1.0))
        keep = members if always else members[:per_cell]
        hidden += len(members) - len(keep)
        for slot, n in enumerate(keep):
            kind = KINDS[n["feature_type"]]
            label = n.get("clerp") or (f"{n['layer']}/{_feature_index(n)}" if kind == "feature" else "")
            if kind == "logit":  # 'Output " Paris" (p=0.748)' -> ' Paris 74.8%': the box is narrow
                quoted = re.search(r'"(.*)"', label)
                label = f"{quoted.group(1) if quoted else n['feature']} {n['token_prob']:.1%}"
            laid.append(LaidNode(n["node_id"], kind, row, col, slot, label, n.get("influence"),
                                 n.get("activation")))
    index = {n.node_id: i for i, n in enumerate(laid)}
    links = [lk for lk in data["links"] if lk["source"] in index and lk["target"] in index]
    links.sort(key=lambda lk: -abs(lk["weight"]))
    drawn = links[:max_edges]
    edges = tuple(LaidEdge(index[lk["source"]], index[lk["target"]], float(lk["weight"])) for lk in drawn)
    meta = data.get("metadata", {})
    info = meta.get("info", {})
    return GraphLayout(
        nodes=tuple(laid), edges=edges, prompt_tokens=tuple(meta.get("prompt_tokens", ())), n_layer=n_layer,
        slots=max((n.slot + 1 for n in laid if n.kind in ("feature", "error")), default=1), hidden_nodes=hidden,
        hidden_edges=len(data["links"]) - len(edges), max_weight=max((abs(e.weight) for e in edges), default=1.0),
        scores={k: info[k] for k in ("replacement_score", "completeness_score") if k in info},
        supernodes=tuple((str(g[0]), tuple(index[m] for m in g[1:] if m in index))
                         for g in data.get("qParams", {}).get("supernodes", []) if g and any(m in index for m in g[1:])))


def _feature_index(node: dict) -> int:
    # the node id is "{layer}_{feature}_{pos}": the feature's own index (``feature`` is circuit-tracer's
    # Cantor pairing of layer and index)
    return int(node["node_id"].split("_")[1])
