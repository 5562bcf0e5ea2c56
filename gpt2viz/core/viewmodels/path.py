"""The Path view's summary for a session: the contribution graph and ranked bars (see core.path_graph)."""

from __future__ import annotations

from gpt2viz.core.analysis.path_graph import DEFAULT_THRESHOLD, PathSummary, build_path_summary


def path_summary(session, target_text: str = "", vs_text: str = "",
                 threshold: float = DEFAULT_THRESHOLD) -> PathSummary | None:
    """The direct-logit-attribution graph of the session's selected position, or None before a run.

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
    return build_path_summary(session.history, session.weights, cfg.n_layer, cfg.n_head, session.model.tokenizer,
                              session.selected_position, target_text, vs_text, threshold)
