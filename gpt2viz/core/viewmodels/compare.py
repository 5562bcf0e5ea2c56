"""Two prompts side by side (session A and B), and the analyses that need both: activation patching
(A clean, B corrupted) and the causal trace of A. Frozen summaries the views and figures draw."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpt2viz.core.analysis.lens import attention_matrices
from gpt2viz.core.numeric import softmax
from gpt2viz.core.session.session import Session
from gpt2viz.core.viewmodels.lens import lens_grid


@dataclass(frozen=True)
class PairedRow:
    """One token's probability of coming next after A and after B (the model's own, no settings)."""

    id: int
    a: float
    b: float


@dataclass(frozen=True)
class PairedChart:
    """The union of A's and B's top tokens, ordered by the larger of the two probabilities."""

    rows: tuple[PairedRow, ...]
    tokens_a: tuple[int, ...]
    tokens_b: tuple[int, ...]
    top_a: int
    top_b: int


def paired_chart(a: Session, b: Session, n_bars: int = 8) -> PairedChart | None:
    """A's and B's next-token probabilities for the tokens either ranks in its top ``n_bars``."""
    if a.history is None or b is None or b.history is None:
        return None
    pa, pb = a.distribution()[0].raw, b.distribution()[0].raw
    ids = list(dict.fromkeys([*np.argsort(-pa)[:n_bars].tolist(), *np.argsort(-pb)[:n_bars].tolist()]))
    ids.sort(key=lambda i: -max(pa[i], pb[i]))
    ids = ids[: max(n_bars, 2)]
    return PairedChart(tuple(PairedRow(int(i), float(pa[i]), float(pb[i])) for i in ids),
                       tuple(int(t) for t in a.history.tokens), tuple(int(t) for t in b.history.tokens),
                       int(np.argmax(pa)), int(np.argmax(pb)))


@dataclass(frozen=True)
class Alignment:
    """A's and B's tokens position by position (None where one text is shorter); ``same`` per position."""

    a: tuple[int | None, ...]
    b: tuple[int | None, ...]
    same: tuple[bool, ...]
    equal_length: bool


def align_tokens(a_ids, b_ids) -> Alignment:
    """Position-by-position alignment of two token lists (patching needs equal lengths)."""
    n = max(len(a_ids), len(b_ids))
    a = tuple(int(a_ids[i]) if i < len(a_ids) else None for i in range(n))
    b = tuple(int(b_ids[i]) if i < len(b_ids) else None for i in range(n))
    return Alignment(a, b, tuple(x == y for x, y in zip(a, b)), len(a_ids) == len(b_ids))


@dataclass(frozen=True)
class HeatmapSummary:
    """One heatmap of an analysis: values [rows, cols] with their labels and colour range.

    ``rows`` / ``cols`` are labels (token ids are given as ints, layers and heads as "L0", "h3");
    ``marked_rows`` are row indices drawn as the subject (the causal trace's corrupted tokens).
    """

    title: str  # the kind: "resid_pre", "hidden", "mlp", ...
    values: np.ndarray
    rows: tuple
    cols: tuple
    lo: float
    hi: float
    row_kind: str  # "layer" | "position"
    col_kind: str  # "position" | "head" | "layer"
    marked_rows: tuple[int, ...] = ()


@dataclass(frozen=True)
class PatchingSummary:
    """The patching table as drawn: rows = layers, columns = positions (or heads); the normalised effect."""

    heat: HeatmapSummary
    prob: np.ndarray
    site: str
    target: int
    clean_prob: float
    corrupt_prob: float
    best: tuple[int, int, float, float]  # layer, column, effect, p
    clean_ids: tuple[int, ...]
    corrupt_ids: tuple[int, ...]
    ms: float
    calls: int


def patching_summary(table, clean_ids, corrupt_ids) -> PatchingSummary:
    """What the patching view draws of a :class:`~gpt2viz.core.analysis.patching.PatchingTable`."""
    m = np.asarray(table.metric, dtype=float)
    if not np.isfinite(m).any():
        # p_clean == p_corrupt (e.g. B = A): there is nothing to restore, so the effect is the change itself
        m = np.asarray(table.prob, dtype=float) - table.corrupt_prob
    finite = m[np.isfinite(m)]
    lo = min(0.0, float(finite.min())) if finite.size else 0.0
    hi = max(1.0, float(finite.max())) if finite.size else 1.0
    n_layer, n_col = m.shape
    cols = tuple(int(t) for t in clean_ids) if table.columns == "position" else tuple(f"h{h}" for h in range(n_col))
    heat = HeatmapSummary(table.site, m, tuple(range(n_layer)), cols, lo, hi, "layer", table.columns)
    if finite.size:
        L, c = np.unravel_index(int(np.nanargmax(m)), m.shape)
    else:
        L, c = 0, 0
    return PatchingSummary(heat, np.asarray(table.prob), table.site, table.target, table.clean_prob,
                           table.corrupt_prob, (int(L), int(c), float(m[L, c]), float(table.prob[L, c])),
                           tuple(int(t) for t in clean_ids), tuple(int(t) for t in corrupt_ids), table.ms, table.calls)


@dataclass(frozen=True)
class CausalSummary:
    """The causal trace as ROME draws it: per kind, rows = tokens (subject marked), columns = layers,
    colour from the corrupted run's p(target) up to the table's largest value."""

    heats: tuple[HeatmapSummary, ...]
    ids: tuple[int, ...]
    subject: tuple[int, ...]
    target: int
    clean_prob: float
    corrupt_prob: float
    best: dict  # kind -> (layer, position, p)
    noise: float
    samples: int
    window: int
    ms: float
    interventions: tuple[str, ...] = ()  # labels of the interventions the trace ran under (an edit: its label)
    before: CausalSummary | None = None  # the same trace without them (the ghost: the model before the edit)


def _label(d: dict) -> str:
    # an edit names itself ("France → Rome"); other interventions by kind and block
    return d.get("label") or f"{d['kind']} {d.get('layer', '')}".strip()


def causal_summary(trace, ids, before=None) -> CausalSummary:
    """What the causal-trace view draws of a :class:`~gpt2viz.core.analysis.causal_trace.CausalTrace`.

    ``before``: the same trace run without the interventions ``trace`` ran under (the unedited model). Both
    then share one colour scale per kind, so a cell's colour means the same probability in both.
    """
    def heats_of(tr, scale):
        out = []
        for kind, m in tr.prob.items():
            v = np.asarray(m).T  # [positions, layers]
            lo, hi = scale[kind]
            out.append(HeatmapSummary(kind, v, tuple(int(t) for t in ids), tuple(range(v.shape[1])), lo, hi,
                                      "position", "layer", tuple(tr.subject)))
        return tuple(out)

    traces = [trace] if before is None else [trace, before]
    scale = {k: (float(min(min(t.corrupt_prob, float(np.min(t.prob[k]))) for t in traces)),
                 float(max(max(float(np.max(t.prob[k])), t.corrupt_prob + 1e-6) for t in traces)))
             for k in trace.prob}

    def summary(tr, ghost):
        return CausalSummary(heats_of(tr, scale), tuple(int(t) for t in ids), tuple(tr.subject), tr.target,
                             tr.clean_prob, tr.corrupt_prob, {k: tr.best(k) for k in tr.prob}, tr.noise, tr.samples,
                             tr.window, tr.ms, tuple(_label(d) for d in tr.interventions), ghost)
    return summary(trace, None if before is None else summary(before, None))


def attention_difference(a: Session, b: Session, layer: int, head: int) -> HeatmapSummary | None:
    """B's attention pattern minus A's for one head ([query, key], future NaN); None unless both ran and
    their texts have the same number of tokens (the cells must mean the same positions)."""
    if a.history is None or b is None or b.history is None or len(a.history.tokens) != len(b.history.tokens):
        return None
    ma, _ = attention_matrices(a.history, layer, "pattern", 10**9)
    mb, _ = attention_matrices(b.history, layer, "pattern", 10**9)
    d = mb[head] - ma[head]
    lim = float(np.nanmax(np.abs(d))) if np.isfinite(d).any() else 0.0
    lim = max(lim, 1e-6)
    ids = tuple(int(t) for t in a.history.tokens)
    return HeatmapSummary(f"attention {layer}.{head}", d, ids, ids, -lim, lim, "position", "position")


def lens_difference(a: Session, b: Session) -> HeatmapSummary | None:
    """How much of A's top token B's run gives at every depth and position: p_B(top_A) − p_A(top_A),
    [depth, position] (row 0 = embeddings); None unless both texts have the same number of tokens."""
    if a.history is None or b is None or b.history is None or len(a.history.tokens) != len(b.history.tokens):
        return None
    ga = lens_grid(a)
    rows = np.arange(ga.tops.shape[0])
    diff = np.zeros(ga.tops.shape)
    for c, pos in enumerate(ga.positions):
        pa, pb = softmax(a.lens(pos)), softmax(b.lens(pos))
        top = ga.tops[:, c]
        diff[:, c] = pb[rows, top] - pa[rows, top]
    return HeatmapSummary("lens", diff, tuple(range(len(rows))), tuple(ga.positions), -1.0, 1.0, "layer", "position")
