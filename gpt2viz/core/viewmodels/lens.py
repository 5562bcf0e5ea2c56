"""The logit lens: the top token at every depth and position, and one target token's path."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import token_rank_and_prob
from gpt2viz.core.session.session import LENS_WINDOW, Selection, Session

MAX_POSITIONS = LENS_WINDOW  # each column is a [layers + 1, V] product: the newest 16 keep this view instant


@dataclass(frozen=True)
class LensGrid:
    """[n_layer + 1, len(positions)] top tokens and probabilities; row 0 = embeddings, last = output."""

    positions: tuple[int, ...]
    tokens: tuple[int, ...]  # the token at each position
    tops: np.ndarray
    probs: np.ndarray
    n_tokens: int


@dataclass(frozen=True)
class LensTarget:
    """One token's rank (0 = top) and probability at every depth, at the selected position.

    ``default`` is True when the target is not the one asked for (the token that followed, or the
    model's top pick at the newest position).
    """

    position: int
    token: int
    target: int
    ranks: np.ndarray
    probs: np.ndarray
    default: bool
    # without the interventions in force (newest position only; None when none are in force)
    base_ranks: np.ndarray | None = None
    base_probs: np.ndarray | None = None


def lens_grid(session: Session, max_positions: int = MAX_POSITIONS) -> LensGrid | None:
    """The newest ``max_positions`` columns of the lens (cached per token prefix); None before a run."""
    h = session.history
    if h is None or session.weights is None:
        return None
    n = len(h.tokens)
    positions = tuple(range(max(0, n - max_positions), n))
    cols = [session.lens_tops(p) for p in positions]
    return LensGrid(positions, tuple(int(h.tokens[p]) for p in positions),
                    np.stack([c[0] for c in cols], axis=1), np.stack([c[1] for c in cols], axis=1), n)


def lens_target(session: Session, target: int | None = None, selection: Selection | None = None) -> LensTarget | None:
    """The path of ``target`` (default: the next token, else the model's pick) through the depths."""
    h = session.history
    if h is None or session.weights is None:
        return None
    sel = selection or session.selection
    n = len(h.tokens)
    pos = sel.position_in(n)
    default = target is None
    if default:  # the token that followed, else the model's pick (the lens's top token at the last depth)
        target = int(h.tokens[pos + 1]) if pos + 1 < n else int(session.lens_tops(pos)[0][-1])
    ranks, probs = session.lens_path(pos, int(target))
    br = bp = None
    if session.baseline is not None and pos == n - 1:
        br, bp = token_rank_and_prob(np.asarray(session.baseline[1]), int(target), session.baseline[3][1])
    return LensTarget(pos, int(h.tokens[pos]), int(target), ranks, probs, default, br, bp)
