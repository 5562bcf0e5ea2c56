"""Figures for the page, drawn from the view models (not grabbed widgets).

``build(view, ctx)`` gives a :class:`Figure`; ``render_png`` / ``svg_bytes`` write it; ``contact_sheet``
puts every layer of a per-layer view on one page with one shared colour scale. The builders live in
:mod:`gpt2viz.widgets.figures.views` (one table, ``FIGURES``).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QCoreApplication, QRectF

from gpt2viz.widgets.figures.base import (BODY_PX, SMALL_PX, Figure, Scale, Theme, colorbar_width, draw_colorbar,
                                          draw_text, fit, font, render_png, svg_bytes)
from gpt2viz.widgets.figures.views import FIGURES, RANGES, Ctx, attention_range, build, with_layer
from gpt2viz.widgets.figures import analysis as _analysis  # noqa: F401 - registers patching, causal trace, compare
from gpt2viz.widgets.figures import features as _features  # noqa: F401 - registers features, feature

__all__ = ["Figure", "Theme", "Ctx", "FIGURES", "RANGES", "build", "render_png", "svg_bytes", "contact_sheet",
           "shared_range", "with_layer"]

translate = QCoreApplication.translate


def shared_range(view: str, ctx: Ctx, n_layer: int) -> tuple[float, float] | None:
    """One value range over every layer of ``view`` (None if the view has no scale to share)."""
    fn = RANGES.get(view)
    if fn is None:
        return None
    lo, hi = math.inf, -math.inf
    for L in range(n_layer):
        a, b = fn(Ctx(ctx.session, with_layer(ctx.selection, L), options=ctx.options))
        lo, hi = min(lo, a), max(hi, b)
    return lo, hi


def contact_sheet(view: str, ctx: Ctx, n_layer: int, title: str, shared: tuple[float, float] | None) -> Figure:
    """Every layer of ``view`` as a compact panel, one shared colour bar (heatmaps) or y range (MLP)."""
    cols = max(1, math.ceil(math.sqrt(n_layer)))
    rows = math.ceil(n_layer / cols)
    width = 1100.0
    panels = [build(view, Ctx(ctx.session, with_layer(ctx.selection, L), options=ctx.options, shared=shared,
                              compact=True)) for L in range(n_layer)]
    heat = panels[0].heatmap
    scale = None
    if heat:
        from gpt2viz.widgets.figures.views import _attention, _attention_scale

        sm = _attention(Ctx(ctx.session, ctx.selection, options=ctx.options))
        scale = _attention_scale(Ctx(ctx.session, ctx.selection, shared=shared), sm)
    cbw = colorbar_width(scale) + 12 if scale else 0
    inner = width - 44
    cw = (inner - cbw - (cols - 1) * 14) / cols
    ch = cw * (0.8 if view == "mlp" else 1.0) + BODY_PX + 8

    def body(p, r: QRectF, th: Theme, cbs):
        for k, pf in enumerate(panels):
            rr, cc = divmod(k, cols)
            cell = QRectF(r.left() + cc * (cw + 14), r.top() + rr * (ch + 12), cw, ch)
            draw_text(p, QRectF(cell.left(), cell.top(), cw, BODY_PX + 4), fit(pf.title, font(BODY_PX, True), cw),
                      font(BODY_PX, True), th.fg)
            p.save()
            pf.body(p, cell.adjusted(0, BODY_PX + 8, 0, 0), th, cbs)
            p.restore()
        if scale:
            draw_colorbar(p, QRectF(r.right() - cbw + 12, r.top() + BODY_PX + 8, cbw, min(r.height(), 2 * ch) - 20),
                          scale, th, cbs)

    note = translate("Figures", "Every panel uses the same scale ({lo:.3g} … {hi:.3g}).").format(
        lo=shared[0], hi=shared[1]) if shared else ""
    fig = Figure(title, ctx.caption + ("\n" + note if note else ""), body, rows * (ch + 12), width=width,
                 facts=dict(ctx.facts), heatmap=heat)
    return fig
