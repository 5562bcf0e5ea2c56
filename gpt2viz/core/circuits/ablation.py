"""Checking a circuit graph by intervention: scale (or ablate) some of its nodes in the real model and compare each
target logit's change with what the graph predicts.

- Predicted change of a target logit = (s - 1) x the sum of the chosen nodes' direct effects on it (their edges into
  the logit node: the graph's adjacency), the first-order, direct-only prediction of a linear graph.
- Real change = the demeaned logit (``logit_t - mean_v logit_v``, what the graph's logit nodes are) of onnxruntime's
  run with the nodes scaled, minus the clean run's.

A node is scaled inside the exported graph by the intervention inputs: a transcoder feature (L, p, f) by adding
``(s - 1) * a_f * W_dec[f]`` to ``blocks.L.hook_mlp_out`` at p (:class:`~gpt2viz.core.interventions.MlpOutShift`), with
``a_f`` the feature's activation in the run as the chosen nodes of earlier blocks left it (blocks are done from the
first up, as :mod:`gpt2viz.core.features.steering` clamps SAE features); an error node by adding ``(s - 1)`` times the
block's real output minus the transcoder's reconstruction there; a token node by adding ``(s - 1)`` times the token's
embedding plus its position embedding at block 0's input. Logit nodes are not scaled.

Where the prediction is exact and where not: the graph freezes attention patterns and every LayerNorm's scale, the
real model does not. For a feature of the last block at the last position (nothing lies between it and the logits)
the only gap is the final LayerNorm's scale; measured on atlas (see ``docs/analyses.md``), single-feature ablations
there give predicted vs real with correlation above 0.9 over the target logits, each real change within
``SINGLE_NODE_TOLERANCE`` of the predicted one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.circuits.graph import AttributionGraph
from gpt2viz.core.features.transcoder import transcoder_input
from gpt2viz.core.interventions import MlpOutShift, Steer

# |real - predicted| <= SINGLE_NODE_TOLERANCE * max|predicted| + 0.05 for single last-block features at the last position
# (the frozen final LayerNorm scale: removing a write rescales every logit; measured on atlas, docs/analyses.md)
SINGLE_NODE_TOLERANCE = 0.6


def node_ids(g: AttributionGraph) -> list[str]:
    """Every node's id in circuit-tracer's spelling (``graph_json``'s), in the graph's order."""
    nF, P, nL = g.n_features, g.n_pos, g.n_layer
    out = [f"{int(L)}_{int(f)}_{int(p)}" for L, p, f in g.active_features]
    out += [f"{L}_-1_{p}" for L in range(nL) for p in range(P)]
    out += [f"E_{int(t)}_{p}" for p, t in enumerate(g.tokens)]
    out += [f"{nL + 1}_{int(t)}_{P - 1}" for t in g.logit_tokens]
    assert len(out) == g.adjacency.shape[0] and len(out) == nF + nL * P + P + len(g.logit_tokens)
    return out


def direct_logit_effects(g: AttributionGraph, ids: Sequence[str] | None = None) -> dict[str, list[float]]:
    """Node id -> its direct effect on each target logit (the adjacency's logit rows), for ``ids`` (default every
    non-logit node). Small enough to travel in the graph JSON (``metadata.info``) so a saved graph can be checked."""
    all_ids = node_ids(g)
    index = {n: i for i, n in enumerate(all_ids)}
    rows = g.adjacency[g.logit_slice]  # [n_logits, N]
    want = [n for n in (all_ids[: g.logit_slice.start] if ids is None else ids) if n in index
            and index[n] < g.logit_slice.start]
    return {n: [float(v) for v in rows[:, index[n]]] for n in want}


def parse_node(node_id: str, n_layer: int) -> tuple[str, int, int, int]:
    """("feature" | "error" | "token" | "logit", layer (-1 for tokens), position, feature or token id)."""
    a, b, c = node_id.split("_")
    if a == "E":
        return "token", -1, int(c), int(b)
    L, f, p = int(a), int(b), int(c)
    if L == n_layer + 1:
        return "logit", L, p, f
    return ("error" if f == -1 else "feature"), L, p, f


@dataclass(frozen=True)
class AblationCheck:
    """What scaling some nodes did to each target logit, predicted by the graph and measured in the model.

    Attributes
    ----------
    nodes : tuple of str
        The node ids scaled; ``skipped``: those that cannot be (logits, unknown ids).
    scale : float
        0 = ablation.
    logit_tokens : tuple of int
        The graph's target logits, in its order.
    predicted, real : np.ndarray
        [n_logits] change of each demeaned logit: (scale - 1) x the nodes' direct effects, and onnxruntime's.
    pearson : float
        Their correlation (NaN when either does not vary).
    interventions : tuple
        What ran inside the graph.
    """

    nodes: tuple[str, ...]
    skipped: tuple[str, ...]
    scale: float
    logit_tokens: tuple[int, ...]
    predicted: np.ndarray
    real: np.ndarray
    pearson: float
    interventions: tuple = ()


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson correlation; NaN when either side is constant or there are fewer than two points."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if len(x) < 2 or x.std() == 0 or y.std() == 0:
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def scale_interventions(model, transcoders, token_ids: Sequence[int], nodes: Sequence[str], scale: float,
                        weights=None) -> tuple[tuple, tuple[str, ...]]:
    """The graph interventions that scale ``nodes`` by ``scale``, and the nodes skipped (logits, unknown).

    Blocks are done in order: the activations (and errors) of block L are read from a run with the interventions of
    the blocks before it in force.
    """
    nL, P = model.config.n_layer, len(token_ids)
    tcs = {tc.cfg.layer: tc for tc in transcoders}
    parsed, skipped = [], []
    for n in dict.fromkeys(nodes):
        try:
            kind, L, p, f = parse_node(n, nL)
        except ValueError:
            skipped.append(n)
            continue
        if kind == "logit" or not 0 <= p < P or (kind != "token" and L not in tcs):
            skipped.append(n)
            continue
        parsed.append((kind, L, p, f))
    factor = float(scale) - 1.0
    out: list = []
    tokens = [x for x in parsed if x[0] == "token"]
    if tokens:
        trace, _ = model.run(list(token_ids), hooks=["hook_embed", "hook_pos_embed"])
        for _, _, p, _ in tokens:
            out.append(Steer(0, (p,), trace["hook_embed"][p] + trace["hook_pos_embed"][p], factor))
    for L in sorted({x[1] for x in parsed if x[0] != "token"}):
        here = [x for x in parsed if x[0] != "token" and x[1] == L]
        tc = tcs[L]
        hooks = [tc.cfg.hook_name, f"blocks.{L}.hook_mlp_out", f"blocks.{L}.ln2.hook_normalized"]
        trace, _ = model.run(list(token_ids), hooks=list(dict.fromkeys(hooks)), interventions=tuple(out))
        x = transcoder_input(trace, L, tc.cfg.input_kind, weights)  # [P, d_in]
        acts = tc.encode(x)
        for kind, _, p, f in here:
            if kind == "feature":
                vec = acts[p, f] * tc.W_dec[f]
            else:
                vec = np.asarray(trace[f"blocks.{L}.hook_mlp_out"][p], np.float32) - tc.forward(x[p:p + 1])[0]
            out.append(MlpOutShift(L, (p,), vec, factor))
    return tuple(out), tuple(skipped)


def ablation_check(model, transcoders, token_ids: Sequence[int], graph_data: dict, nodes: Sequence[str],
                   scale: float = 0.0, weights=None) -> AblationCheck:
    """Scale ``nodes`` of a graph (its JSON object, whose ``metadata.info`` carries ``logit_tokens`` and
    ``direct_effects`` as the app's graph job writes them) by ``scale`` in the model and in the graph's prediction."""
    info = graph_data["metadata"].get("info", {})
    effects, logit_tokens = info.get("direct_effects"), info.get("logit_tokens")
    if effects is None or logit_tokens is None:
        raise ValueError("this graph carries no direct effects on its logits (build it again with gpt2viz)")
    ivs, skipped = scale_interventions(model, transcoders, token_ids, nodes, scale, weights)
    used = tuple(n for n in dict.fromkeys(nodes) if n not in skipped)
    direct = np.zeros(len(logit_tokens))
    for n in used:
        if n in effects:
            direct += np.asarray(effects[n], np.float64)
    predicted = (float(scale) - 1.0) * direct
    ids = list(token_ids)
    base = model.run(ids, hooks=[])[0].last_logits.astype(np.float64)
    new = model.run(ids, hooks=[], interventions=ivs)[0].last_logits.astype(np.float64) if ivs else base
    t = np.asarray(logit_tokens, int)
    real = (new[t] - new.mean()) - (base[t] - base.mean())
    return AblationCheck(used, skipped, float(scale), tuple(int(x) for x in t), predicted, real,
                         pearson(predicted, real), ivs)
