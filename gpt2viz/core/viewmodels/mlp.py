"""The MLP view: every neuron's activation, the biggest writers, and what a neuron's value vector promotes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import projections_to_vocab, top_neurons
from gpt2viz.core.session.session import Selection, Session

ACTIVE = 0.1  # an activation above this counts as "firing" in the caption


@dataclass(frozen=True)
class MlpSummary:
    """One block's MLP at the selected position.

    ``top`` is (neuron, activation, activation × ‖W_out[n]‖), biggest writers first; ``promotes`` /
    ``suppresses`` are (token, logit) of the whole MLP output read by the unembedding; ``neuron`` and
    ``neuron_promotes`` / ``neuron_suppresses`` are the same for one neuron's value vector.
    """

    layer: int
    position: int
    token: int
    post: np.ndarray
    n_active: int
    top: tuple[tuple[int, float, float], ...]
    promotes: tuple[tuple[int, float], ...]
    suppresses: tuple[tuple[int, float], ...]
    neuron: int
    neuron_promotes: tuple[tuple[int, float], ...]
    neuron_suppresses: tuple[tuple[int, float], ...]


def mlp_summary(session: Session, neuron: int | None = None, selection: Selection | None = None,
                n_top: int = 15) -> MlpSummary | None:
    """The MLP view's numbers; ``neuron`` defaults to the biggest writer. None before a run."""
    h, w = session.history, session.weights
    if h is None or w is None:
        return None
    sel = selection or session.selection
    pos, L = sel.position_in(len(h.tokens)), sel.layer
    # A position's MLP is the same after a Step or Back (the model is causal): made once and kept, a Step or Back
    # with the MLP tab shown reads no unembedding (~7 ms at 200 tokens of a GPT-2-small-sized model on a 2-core
    # EPYC) and no on-demand block. It reads the tokens up to the position, the interventions and (mean ablations)
    # the prompt.
    key = ("mlp", h.tokens[: max(pos + 1, h.prompt_len)], h.prompt_len, h.current.interventions, pos, L, neuron, n_top)
    return session.remembered(key, lambda: _summary(session, h, pos, L, neuron, n_top))


def _summary(session: Session, h, pos: int, L: int, neuron: int | None, n_top: int) -> MlpSummary:
    """mlp_summary's numbers at position ``pos`` of block ``L``."""
    w = session.weights
    post = h.hook_at(("post", L), pos)
    top = tuple(top_neurons(post, w.W_out_norms(L), n_top))
    neuron = top[0][0] if neuron is None or not 0 <= neuron < post.size else int(neuron)
    (up, down), (nup, ndown) = projections_to_vocab(w, [h.hook_at(("mlp_out", L), pos), w.W_out_row(L, neuron)],
                                                    [8, 10])
    return MlpSummary(L, pos, int(h.tokens[pos]), post, int((post > ACTIVE).sum()), top, tuple(up), tuple(down),
                      neuron, tuple(nup), tuple(ndown))
