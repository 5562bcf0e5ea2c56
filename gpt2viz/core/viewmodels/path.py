"""The Path view's summary for a session: the contribution graph and ranked bars (see core.path_graph)."""

from __future__ import annotations

from gpt2viz.core.analysis.path_graph import DEFAULT_THRESHOLD, PathSummary, build_path_summary, with_before


def path_summary(session, target_text: str = "", vs_text: str = "",
                 threshold: float = DEFAULT_THRESHOLD) -> PathSummary | None:
    """The direct-logit-attribution graph of the session's selected position, or None before a run.

    With interventions in force (an edit), the summary carries the ghosts: the same attribution in the session's
    baseline run, the text without them (``before_logit``, ``before_bars``).

    Parameters
    ----------
    session : Session
        The run to explain.
    target_text, vs_text : str
        The target token (default: the token the model put first) and an optional alternative (logit difference).
    threshold : float
        Edges at or below this share of the total |contribution| are dropped, the rest renormalised.
    """
    if session.history is None or session.weights is None or session.model is None:
        return None
    cfg = session.model.config
    pos = session.selected_position
    # the model's logits there, as the session keeps them (an earlier position's made once, not at every show)
    s = build_path_summary(session.history, session.weights, cfg.n_layer, cfg.n_head, session.model.tokenizer,
                           pos, target_text, vs_text, threshold, logits=session.output_logits(pos))
    base = session.baseline
    if base is not None and len(base) > 2 and base[2] is not None and tuple(base[2].tokens) == tuple(session.history.tokens):
        s = with_before(s, base[2], session.weights, cfg.n_layer, cfg.n_head)
    return s
