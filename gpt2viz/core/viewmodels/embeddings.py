"""The embeddings view: token vector + position vector = the residual entering block 0; neighbours."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import analogy, nearest_tokens
from gpt2viz.core.session.session import Selection, Session


@dataclass(frozen=True)
class EmbeddingSummary:
    """Vectors [E] at the selected position and the 10 nearest tokens (id, cosine) to the token's embedding."""

    position: int
    token: int
    token_vec: np.ndarray
    pos_vec: np.ndarray
    sum_vec: np.ndarray
    nearest: tuple[tuple[int, float], ...]

    @property
    def norms(self) -> tuple[float, float, float]:
        return tuple(float(np.linalg.norm(v)) for v in (self.token_vec, self.pos_vec, self.sum_vec))


def embedding_summary(session: Session, selection: Selection | None = None, k: int = 10) -> EmbeddingSummary | None:
    """The embeddings view's numbers; None before a run."""
    h, w = session.history, session.weights
    if h is None or w is None:
        return None
    sel = selection or session.selection
    n = len(h.tokens)
    pos = sel.position_in(n)
    tid = int(h.tokens[pos])
    e, p = h.hook_at("hook_embed", pos), h.hook_at("hook_pos_embed", pos)
    near = tuple(nearest_tokens(w, w.embedding_rows([tid])[0], k + 1, exclude=(tid,))[:k])
    return EmbeddingSummary(pos, tid, e, p, e + p, near)


def analogy_summary(session: Session, a: int, b: int, c: int, k: int = 5) -> tuple[tuple[int, float], ...]:
    """Nearest tokens (id, cosine) to embed(a) − embed(b) + embed(c)."""
    return tuple(analogy(session.weights, a, b, c, k))
