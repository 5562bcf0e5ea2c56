"""The residual-stream view: its size after each block, what each block adds, its direction."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import residual_profile
from gpt2viz.core.session.session import Selection, Session


@dataclass(frozen=True)
class ResidualSummary:
    """Per depth at one position: [L + 1] residual norms and cosines to the final residual, [L] added norms."""

    position: int
    token: int
    resid_norm: np.ndarray
    attn_norm: np.ndarray
    mlp_norm: np.ndarray
    cos_to_final: np.ndarray


def residual_summary(session: Session, selection: Selection | None = None) -> ResidualSummary | None:
    """The residual view's numbers; None before a run."""
    h = session.history
    if h is None or session.model is None:
        return None
    sel = selection or session.selection
    n = len(h.tokens)
    pos = sel.position_in(n)
    pr = residual_profile(h, session.n_layer, pos)
    return ResidualSummary(pos, int(h.tokens[pos]), pr["resid_norm"], pr["attn_norm"], pr["mlp_norm"],
                           pr["cos_to_final"])
