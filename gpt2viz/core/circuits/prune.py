"""Pruning by influence on the logits, and the replacement / completeness scores (circuit-tracer's ``graph.py``).

A = |adjacency| with each row normalised to sum 1 (a target's inputs as shares); the influence of node j is
``w @ (A + A^2 + ...)`` with ``w`` the logit nodes' probabilities (the series ends: the graph has no cycles). Nodes are
kept, largest influence first, until their cumulative share reaches the node threshold (0.8); edges scored by
``A[i, j] * (influence_i + w_i)`` in the pruned graph are kept to the edge threshold (0.98); tokens and logits always
stay; features and errors left with no outgoing kept edge (features also with no incoming one) are dropped until
nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.circuits.graph import AttributionGraph

NODE_THRESHOLD = 0.8
EDGE_THRESHOLD = 0.98


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """|matrix| with each row divided by its sum (rows summing to under 1e-10 divided by 1e-10)."""
    a = np.abs(matrix)
    return a / np.maximum(a.sum(1, keepdims=True), 1e-10)


def influence(A: np.ndarray, weights: np.ndarray, max_iter: int = 1000) -> np.ndarray:
    """``weights @ (A + A^2 + ...)``: every node's total influence on the weighted targets."""
    current = weights @ A
    total = current.copy()
    for _ in range(max_iter):
        if not current.any():
            return total
        current = current @ A
        total += current
    raise RuntimeError(f"influence did not converge after {max_iter} iterations (a cycle in the graph?)")


def find_threshold(scores: np.ndarray, threshold: float) -> float:
    """The score above which the largest scores hold ``threshold`` of their total."""
    s = np.sort(np.asarray(scores).ravel())[::-1]
    total = s.sum()
    if total <= 0:
        return 0.0
    i = int(np.searchsorted(np.cumsum(s) / total, threshold))
    return float(s[min(i, len(s) - 1)])


def _logit_weights(g: AttributionGraph) -> np.ndarray:
    w = np.zeros(g.adjacency.shape[0])
    w[g.logit_slice] = g.logit_probabilities
    return w


@dataclass(frozen=True)
class Pruned:
    """What pruning keeps: ``node_mask`` [N], ``edge_mask`` [N, N] (target, source), and each node's
    ``cumulative`` share (the influence of it and every node more influential, over the total)."""

    node_mask: np.ndarray
    edge_mask: np.ndarray
    cumulative: np.ndarray


def prune(g: AttributionGraph, node_threshold: float = NODE_THRESHOLD,
          edge_threshold: float = EDGE_THRESHOLD) -> Pruned:
    """circuit-tracer's ``prune_graph``: keep nodes to ``node_threshold`` and edges to ``edge_threshold`` of the
    influence on the logits."""
    for name, v in (("node threshold", node_threshold), ("edge threshold", edge_threshold)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"the {name} must be between 0 and 1, not {v}")
    w = _logit_weights(g)
    node_inf = influence(normalize_rows(g.adjacency), w)
    node_mask = node_inf >= find_threshold(node_inf, node_threshold)
    fixed = g.token_slice.start  # tokens and logits always stay
    node_mask[fixed:] = True
    pruned = g.adjacency.copy()
    pruned[~node_mask] = 0
    pruned[:, ~node_mask] = 0
    An = normalize_rows(pruned)
    edge_scores = An * (influence(An, w) + w)[:, None]
    edge_mask = edge_scores >= find_threshold(edge_scores, edge_threshold)
    edge_mask &= pruned != 0
    nF = g.n_features
    old = None
    while old is None or not np.array_equal(old, node_mask):
        old = node_mask.copy()
        edge_mask[~node_mask] = False
        edge_mask[:, ~node_mask] = False
        node_mask[:fixed] &= edge_mask[:, :fixed].any(0)
        node_mask[:nF] &= edge_mask[:nF].any(1)
    order = np.argsort(-node_inf, kind="stable")
    total = node_inf.sum()
    cumulative = np.zeros_like(node_inf)
    cumulative[order] = np.cumsum(node_inf[order]) / (total if total > 0 else 1.0)
    return Pruned(node_mask, edge_mask, cumulative)


def graph_scores(g: AttributionGraph) -> tuple[float, float]:
    """circuit-tracer's (replacement score, completeness score) of the full graph.

    Replacement: the tokens' share of the influence that tokens and errors have on the logits (1 when everything
    flows through features). Completeness: the share of every node's inputs that do not come from errors, weighted by
    the node's influence on the logits (plus the logits' own weights).
    """
    w = _logit_weights(g)
    An = normalize_rows(g.adjacency)
    inf = influence(An, w)
    tok, err = inf[g.token_slice].sum(), inf[g.error_slice].sum()
    replacement = float(tok / (tok + err)) if tok + err > 0 else float("nan")
    non_error = 1.0 - An[:, g.error_slice].sum(1)
    out = inf + w
    return replacement, float((non_error * out).sum() / out.sum())
