"""Numbers derived from a trace and the weights: what the app's views show beyond raw hooks."""

from __future__ import annotations

import numpy as np

from gpt2viz.core.sampling import softmax
from gpt2viz.core.trace import Trace
from gpt2viz.core.weights import Weights


def residual_stack(trace: Trace, n_layer: int, position: int = -1) -> tuple[list[str], np.ndarray]:
    """The residual stream at one position before block 0 and after each block.

    Returns labels (``"embed"``, ``"block 0"``, …) and an [n_layer + 1, E] array.
    """
    rows = [trace["resid_pre", 0][position]] + [trace["resid_post", L][position] for L in range(n_layer)]
    return ["embed"] + [f"block {L}" for L in range(n_layer)], np.stack(rows)


def logit_lens(trace: Trace, weights: Weights, n_layer: int, position: int = -1) -> np.ndarray:
    """Logits [n_layer + 1, V] when each stage's residual goes through ln_final and the unembedding.

    The last row is the model's own output logits (the final residual takes the same path).
    """
    _, stack = residual_stack(trace, n_layer, position)
    return weights.unembed(weights.ln_final(stack))


def token_rank_and_prob(logits: np.ndarray, token: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of [N, V] logits: the token's rank (0 = top) and its softmax probability."""
    logits = np.atleast_2d(logits)
    ranks = (logits > logits[:, [token]]).sum(axis=1)
    probs = np.array([softmax(row)[token] for row in logits])
    return ranks, probs


def residual_stack_at(history, n_layer: int, position: int) -> np.ndarray:
    """[n_layer + 1, E] residual at ``position`` of a History (before block 0, after each block)."""
    rows = [history.hook_at(("resid_pre", 0), position)]
    rows += [history.hook_at(("resid_post", L), position) for L in range(n_layer)]
    return np.stack(rows)


def lens_at(history, weights: Weights, n_layer: int, position: int) -> np.ndarray:
    """Logit lens [n_layer + 1, V] at any position of a History; the last row is the model's logits."""
    return weights.unembed(weights.ln_final(residual_stack_at(history, n_layer, position)))


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
