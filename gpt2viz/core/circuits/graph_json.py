"""circuit-tracer's graph JSON (``frontend/graph_models.py``, ``utils/create_graph_files.py``): the file its frontend
and Neuronpedia's graph viewer open.

``{"metadata": {...}, "qParams": {...}, "nodes": [...], "links": [{"source", "target", "weight"}]}``; node ids
``"{layer}_{feature}_{pos}"`` for features, ``"{layer}_-1_{pos}"`` for errors, ``"E_{token}_{pos}"`` for embeddings,
``"{n_layer + 1}_{token}_{pos}"`` for logits. Feature nodes keep circuit-tracer's ``feature_type`` "cross layer
transcoder" (its frontend knows that name; ours are per-layer transcoders) and its Cantor-paired ``feature`` number.
"""

from __future__ import annotations

import numpy as np

from gpt2viz.core.circuits.graph import AttributionGraph
from gpt2viz.core.circuits.prune import NODE_THRESHOLD, Pruned

SCHEMA_VERSION = 1


def _cantor(x: int, y: int) -> int:
    return (x + y) * (x + y + 1) // 2 + y


def _node(node_id, feature, layer, ctx, ftype, js, *, influence=None, activation=None, token_prob=0.0,
          is_target=False, clerp=""):
    return {"node_id": node_id, "feature": int(feature), "layer": str(layer), "ctx_idx": int(ctx),
            "feature_type": ftype, "token_prob": float(token_prob), "is_target_logit": bool(is_target), "run_idx": 0,
            "reverse_ctx_idx": 0, "jsNodeId": js, "clerp": clerp,
            "influence": None if influence is None else float(influence),
            "activation": None if activation is None else float(activation)}


def graph_json(g: AttributionGraph, pruned: Pruned, tokenizer, *, prompt: str, slug: str, scan: str = "gpt2viz",
               node_threshold: float = NODE_THRESHOLD, labels: dict | None = None) -> dict:
    """The pruned graph as circuit-tracer's JSON object.

    Parameters
    ----------
    g, pruned : AttributionGraph, Pruned
    tokenizer : GPT2Tokenizer
        For the prompt's and the logits' token texts.
    prompt, slug, scan : str
        ``metadata`` fields (``scan`` names the transcoder set).
    node_threshold : float
        Written into ``metadata``.
    labels : dict, optional
        ``(layer, feature) -> clerp`` (a feature's label).
    """
    labels = labels or {}
    nodes = {}
    nF, P, nL = g.n_features, g.n_pos, g.n_layer
    cum = pruned.cumulative
    for i in np.nonzero(pruned.node_mask)[0]:
        i = int(i)
        if i < nF:
            L, p, f = (int(v) for v in g.active_features[i])
            nodes[i] = _node(f"{L}_{f}_{p}", _cantor(L, f), L, p, "cross layer transcoder", f"{L}_{f}-0",
                             influence=cum[i], activation=g.activations[i], clerp=labels.get((L, f), ""))
        elif i < g.token_slice.start:
            L, p = divmod(i - nF, P)
            nodes[i] = _node(f"{L}_-1_{p}", -1, L, p, "mlp reconstruction error", f"{L}_-1-{p}", influence=cum[i])
        elif i < g.logit_slice.start:
            p = i - g.token_slice.start
            t = g.tokens[p]
            nodes[i] = _node(f"E_{t}_{p}", p, "E", p, "embedding", f"E_{t}-{p}", influence=cum[i])
        else:
            j = i - g.logit_slice.start
            t, prob = int(g.logit_tokens[j]), float(g.logit_probabilities[j])
            layer = nL + 1
            nodes[i] = _node(f"{layer}_{t}_{P - 1}", t, layer, P - 1, "logit", f"L_{t}-{P - 1}", token_prob=prob,
                             is_target=j == 0, clerp=f'Output "{tokenizer.token_text(t)}" (p={prob:.3f})')
    dst, src = np.nonzero(pruned.edge_mask)
    links = [{"source": nodes[int(s)]["node_id"], "target": nodes[int(d)]["node_id"],
              "weight": float(g.adjacency[d, s])} for d, s in zip(dst, src) if int(s) in nodes and int(d) in nodes]
    used = {lk["source"] for lk in links} | {lk["target"] for lk in links}
    kept = [n for n in nodes.values() if n["node_id"] in used or n["feature_type"] in ("embedding", "logit")]
    return {
        "metadata": {"slug": slug, "scan": scan, "transcoder_list": [], "prompt_tokens":
                     [tokenizer.token_text(t) for t in g.tokens], "prompt": prompt,
                     "node_threshold": float(node_threshold), "schema_version": SCHEMA_VERSION},
        "qParams": {"pinnedIds": [], "supernodes": [], "linkType": "both", "clickedId": "", "sg_pos": ""},
        "nodes": kept,
        "links": links,
    }


def add_supernode(data: dict, name: str, node_ids) -> dict:
    """A copy of the graph JSON ``data`` with ``node_ids`` grouped as the supernode ``name``, the way circuit-tracer's
    frontend and Neuronpedia store one: ``qParams.supernodes`` is a list of ``[name, node_id, node_id, ...]``, and the
    members are pinned (``qParams.pinnedIds``; the frontend shows supernodes of pinned nodes). A node belongs to one
    supernode: it leaves any other. Raises ValueError for an empty name, no members, or ids not in the graph."""
    name = str(name).strip()
    ids = list(dict.fromkeys(str(n) for n in node_ids))
    known = {n["node_id"] for n in data["nodes"]}
    unknown = [n for n in ids if n not in known]
    if not name or not ids or unknown:
        raise ValueError(f"a supernode needs a name and nodes of the graph (unknown: {', '.join(unknown)})" if unknown
                         else "a supernode needs a name and at least one node")
    q = dict(data.get("qParams", {}))
    groups = [[g[0], *[m for m in g[1:] if m not in ids]] for g in q.get("supernodes", [])]
    q["supernodes"] = [g for g in groups if len(g) > 1 and g[0] != name] + [[name, *ids]]
    q["pinnedIds"] = list(dict.fromkeys([*q.get("pinnedIds", []), *ids]))
    return {**data, "qParams": q}
