"""The attention view: every head of a layer, one head large, the selected query's weights."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import attention_matrices, pattern_entropy
from gpt2viz.core.session.session import Selection, Session

MAX_SIDE = 128  # positions drawn per head: the newest 128 (the view says so when the text is longer)


@dataclass(frozen=True)
class AttentionSummary:
    """One layer's attention over the (newest ``MAX_SIDE`` positions of the) text.

    Attributes
    ----------
    layer, head, position : int
        The selection (``head`` clamped to the layer's heads).
    which : str
        ``"pattern"`` (after softmax) or ``"attn_scores"`` (scaled q·k, before the mask).
    matrices : np.ndarray
        [H, Q, K], future cells NaN; rows and columns start at position ``first``.
    levels : tuple
        (lo, hi) colour range per head: 0..1 for patterns, min..max for scores.
    bars : np.ndarray
        [position + 1] the selected head's values for the selected query.
    entropies : np.ndarray
        [H] entropy (nats) of each head's pattern at the selected query.
    tokens : tuple[int, ...]
        Token ids of the positions the matrices cover.
    n_tokens : int
        Length of the whole text.
    """

    layer: int
    head: int
    position: int
    which: str
    first: int
    matrices: np.ndarray
    levels: tuple[tuple[float, float], ...]
    bars: np.ndarray
    entropies: np.ndarray
    tokens: tuple[int, ...]
    n_tokens: int

    @property
    def n_head(self) -> int:
        return self.matrices.shape[0]


def attention_summary(session: Session, which: str = "pattern", selection: Selection | None = None,
                      max_side: int = MAX_SIDE) -> AttentionSummary | None:
    """The attention view's numbers for the selected layer, head and position; None before a run."""
    h = session.history
    if h is None or session.model is None:
        return None
    if which not in ("pattern", "attn_scores"):
        raise ValueError(f"which must be 'pattern' or 'attn_scores', got {which!r}")
    sel = selection or session.selection
    n = len(h.tokens)
    pos = sel.position_in(n)
    L = sel.layer
    mats, first = attention_matrices(h, L, which, max_side)
    head = min(sel.head, mats.shape[0] - 1)
    if which == "pattern":
        levels = ((0.0, 1.0),) * mats.shape[0]
    else:
        levels = tuple((float(np.nanmin(m)), float(np.nanmax(m))) for m in mats)
    pattern_row = h.hook_at(("pattern", L), pos)
    bars = pattern_row[head] if which == "pattern" else h.hook_at((which, L), pos)[head]
    return AttentionSummary(L, head, pos, which, first, mats, levels, np.asarray(bars),
                            pattern_entropy(pattern_row), tuple(int(t) for t in h.tokens[first:]), n)
