"""Numbers derived from a trace and the weights: what the app's views show beyond raw hooks."""

from __future__ import annotations

import numpy as np

from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.numeric import entropy, token_probabilities


def token_rank_and_prob(logits: np.ndarray, token: int,
                        p_top: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of [N, V] logits: the token's rank (0 = top) and its softmax probability.

    ``p_top``: each row's top probability, 1 / sum(e^(x - max)), when it is known already (the lens graph makes
    it with the lens: ``Weights.lens_with_tops``). The probability is then e^(x_token - max) · p_top, the same
    softmax without summing V exponentials again: 0.7 of the 1 ms this takes for a
    GPT-2-small lens, which the pipeline and the lens tab each paid after every intervention.
    """
    logits = np.atleast_2d(logits)
    # counted row by row: count_nonzero along an axis sums booleans, 3x slower than its whole-array count
    # (0.24 against 0.08 ms for a GPT-2-small lens, which every Step's target path ranks)
    ranks = np.array([np.count_nonzero(row > row[token]) for row in logits], dtype=np.int64)
    return ranks, token_prob(logits, token, p_top)


def token_prob(logits: np.ndarray, token: int, p_top: np.ndarray | None = None) -> np.ndarray:
    """Per row of [N, V] logits: the token's softmax probability (:func:`token_rank_and_prob`'s, without the rank)."""
    logits = np.atleast_2d(logits)
    if p_top is None:
        return token_probabilities(logits, np.full(len(logits), token))
    gap = np.asarray(logits[:, token], np.float64) - logits.max(1)  # as token_probabilities: the gap in float64
    return np.exp(gap) * np.asarray(p_top, np.float64)


def residual_stack_at(history, n_layer: int, position: int) -> np.ndarray:
    """[n_layer + 1, E] residual at ``position`` of a History (before block 0, after each block)."""
    rows = [history.hook_at(("resid_pre", 0), position)]
    rows += [history.hook_at(("resid_post", L), position) for L in range(n_layer)]
    return np.stack(rows)


def lens_at(history, weights: Weights, n_layer: int, position: int) -> np.ndarray:
    """Logit lens [n_layer + 1, V] at any position of a History; the last row is the model's logits."""
    return weights.lens(residual_stack_at(history, n_layer, position))


def focused_head(pattern_row: np.ndarray) -> tuple[int, int, float]:
    """The head that puts the most weight on one earlier token, ignoring position 0 when it can.

    GPT-2's heads park unused attention on the first token (an "attention sink"), so a head's
    weight there says little; ``pattern_row`` is [H, K] for one query position.
    Returns (head, key position, weight).
    """
    rows = pattern_row if pattern_row.shape[1] == 1 else pattern_row[:, 1:]
    offset = 0 if pattern_row.shape[1] == 1 else 1
    h, k = np.unravel_index(int(np.argmax(rows)), rows.shape)
    return int(h), int(k) + offset, float(rows[h, k])


# ---- embeddings ---------------------------------------------------------------------------------
def nearest_tokens(weights: Weights, vector: np.ndarray, k: int = 10, exclude=()) -> list[tuple[int, float]]:
    """The ``k`` vocabulary tokens whose embeddings have the highest cosine similarity to ``vector``."""
    v = np.asarray(vector, dtype=np.float32)
    sims = weights.unembed(v / max(float(np.linalg.norm(v)), 1e-12)) / weights.embedding_norms
    if exclude:
        sims[list(exclude)] = -np.inf
    idx = np.argpartition(-sims, k)[:k]
    idx = idx[np.argsort(-sims[idx])]
    return [(int(i), float(sims[i])) for i in idx]


def analogy(weights: Weights, a: int, b: int, c: int, k: int = 5) -> list[tuple[int, float]]:
    """Nearest tokens to embed(a) − embed(b) + embed(c), leaving out a, b and c themselves."""
    ea, eb, ec = weights.embedding_rows([a, b, c])
    return nearest_tokens(weights, ea - eb + ec, k, exclude=(a, b, c))


# ---- attention ----------------------------------------------------------------------------------
def attention_matrices(history, layer: int, which: str = "pattern", last: int = 256) -> tuple[np.ndarray, int]:
    """[H, Q, K] weights (``pattern``) or scores (``attn_scores``) of every head over the whole text.

    Masked (future) cells are NaN. Only the last ``last`` positions are included (a 1024² image is
    neither readable nor cheap); returns the matrices and the first position they cover.
    """
    n = len(history.tokens)
    first = max(0, n - last)
    rows = history.hook_rows((which, layer), first, n)  # one row per query, all heads
    m = np.full((rows[0].shape[0], n - first, n - first), np.nan, dtype=np.float32)
    for i, r in enumerate(rows):
        m[:, i, : i + 1] = r[:, first:]
    return m, first


def pattern_entropy(row: np.ndarray) -> np.ndarray:
    """Entropy in nats of attention rows [..., K] (0 = all weight on one token)."""
    return entropy(row)


# ---- MLP ----------------------------------------------------------------------------------------
def top_neurons(post: np.ndarray, norms: np.ndarray, k: int = 10) -> list[tuple[int, float, float]]:
    """Neurons ranked by |activation| × ‖value vector‖: how much each writes into the residual.

    ``norms`` are the block's ‖W_out[n]‖ (:meth:`~gpt2viz.core.engine.weights.Weights.W_out_norms`).
    Returns (neuron, activation, activation × ‖W_out[n]‖), largest writers first.
    """
    score = post * norms
    idx = np.argsort(-np.abs(score))[:k]
    return [(int(i), float(post[i]), float(score[i])) for i in idx]


def project_to_vocab(weights: Weights, vector: np.ndarray, k: int = 10) -> tuple[list, list]:
    """Tokens a residual-space vector promotes and suppresses when read by the unembedding.

    Returns (top ``k`` (id, logit) by largest dot product, top ``k`` by most negative).
    """
    return projections_to_vocab(weights, [vector], [k])[0]


def projections_to_vocab(weights: Weights, vectors, ks) -> list[tuple[list, list]]:
    """:func:`project_to_vocab` of each of ``vectors`` with its ``ks``, in one unembedding call: the unembedding
    (154 MB on GPT-2 small) is read once, not once per vector (~7 ms a read on a 2-core EPYC)."""
    logits = weights.unembed(np.asarray(vectors, dtype=np.float32))
    return [_promoted(row, k) for row, k in zip(logits, ks)]


def _promoted(logits: np.ndarray, k: int) -> tuple[list, list]:
    """(top ``k`` (id, logit), bottom ``k`` (id, logit)) of one row of logits.

    Both ends come from one partition (kth at both ends): half the time of one partition per end over GPT-2's
    50,257 logits (1.3-1.7 -> 0.85 ms, two of them at each MLP view show)."""
    n = logits.size
    if 2 * k <= n:
        part = np.argpartition(logits, (k - 1, n - k))
        up, down = part[n - k:], part[:k]
    else:  # a vocabulary smaller than both ends together
        up = down = np.arange(n)
    up = up[np.argsort(-logits[up])][:k]
    down = down[np.argsort(logits[down])][:k]
    return [(int(i), float(logits[i])) for i in up], [(int(i), float(logits[i])) for i in down]


# ---- residual stream ----------------------------------------------------------------------------
def residual_profile(history, n_layer: int, position: int) -> dict[str, np.ndarray]:
    """Per block at one position: residual norm after it, norms of what attention and the MLP add,
    and the cosine of the residual after each block with the final residual."""
    stack = residual_stack_at(history, n_layer, position)  # [L + 1, E]
    final = stack[-1]
    cos = stack @ final / np.maximum(np.linalg.norm(stack, axis=1) * np.linalg.norm(final), 1e-12)
    return {
        "resid_norm": np.linalg.norm(stack, axis=1),
        "attn_norm": np.array([np.linalg.norm(history.hook_at(("attn_out", L), position)) for L in range(n_layer)]),
        "mlp_norm": np.array([np.linalg.norm(history.hook_at(("mlp_out", L), position)) for L in range(n_layer)]),
        "cos_to_final": cos,
    }


