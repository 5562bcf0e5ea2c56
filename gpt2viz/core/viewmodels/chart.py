"""The next-token chart: the model's distribution and what the sampling settings leave of it."""

from __future__ import annotations

from dataclasses import dataclass

from gpt2viz.core.session.session import Session

N_BARS = 12


@dataclass(frozen=True)
class ChartRow:
    """One bar: token id, the model's probability, the probability after the settings, kept, chosen."""

    id: int
    raw: float
    final: float
    kept: bool
    chosen: bool
    before: float | None = None  # the model's probability without the interventions in force (None: none)


@dataclass(frozen=True)
class ChartSummary:
    """Top candidates (most likely first by the model's own probability; a tail pick replaces the last)."""

    rows: tuple[ChartRow, ...]
    position: int  # the newest position: the one whose next token this is
    n_kept: int
    vocab_size: int
    entropy: float  # of the model's own distribution, nats
    chosen: int
    interventions: tuple = ()  # in force for these numbers; the rows' ``before`` is without them


def chart_summary(session: Session, n_bars: int = N_BARS) -> ChartSummary | None:
    """The chart's rows under the session's settings; None before a prompt has run. No model call."""
    d = session.distribution()
    if d is None:
        return None
    dist, chosen = d
    ids = [int(i) for i in dist.top(n_bars, "raw")]
    if chosen not in ids:  # a sampled token from the tail still gets its bar
        ids[-1] = int(chosen)
    base = session.baseline_distribution()
    rows = tuple(ChartRow(i, float(dist.raw[i]), float(dist.final[i]), bool(dist.kept[i]), i == chosen,
                          None if base is None else float(base[i])) for i in ids)
    return ChartSummary(rows, len(session.history.tokens) - 1, int(dist.kept.sum()), int(dist.raw.size),
                        dist.entropy("raw"), int(chosen), session.history.current.interventions)
