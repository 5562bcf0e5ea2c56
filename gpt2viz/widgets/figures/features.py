"""Figures of the Features tab: the active features at a position and block ("features"), and one feature's
dashboard ("feature", ``options["feature"]``). Drawn from :mod:`gpt2viz.core.viewmodels.features`."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QRectF, Qt
from PySide6.QtGui import QColor, QPainter

from gpt2viz.widgets.figures.base import BODY_PX, SMALL_PX, Axes, Figure, Theme, draw_text, fit, font, text_width
from gpt2viz.widgets.figures.views import Ctx, _caption, _lines_height, _text_block, figure

translate = QCoreApplication.translate  # lupdate reads calls spelled translate("Figures", "...")
ROW = 22.0
LINE = SMALL_PX + 9.0


def _missing(ctx: Ctx, title: str, why: str) -> Figure:
    lines = [(why, False)]
    h = _lines_height(lines, 816)
    return Figure(title, ctx.caption, lambda p, r, th, _cb: _text_block(p, r, lines, th), h)


@figure("features")
def features_figure(ctx: Ctx) -> Figure:
    """The active features at the selection, ranked, with their labels and the reconstruction error."""
    from gpt2viz.core.viewmodels.features import features_summary

    sm = features_summary(ctx.session, ctx.selection)
    title = translate("Figures", "Features of block {L}'s input at position {pos} {t}").format(
        L=sm.layer, pos=sm.position, t=ctx.q(sm.token))
    if sm.missing:
        return _missing(ctx, title, translate("Figures", "The model has no sparse autoencoder for this block."))
    rows = sm.rows
    top = max((r.activation for r in rows), default=1.0) or 1.0
    labels = [(len(rows) - 1 - i, f"{r.feature}  {r.label}") for i, r in enumerate(rows)]

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        ax = Axes(r, (0, top * 1.3), (-0.6, len(rows) - 0.4), th, yticks=labels, max_label=360,
                  xlabel=translate("Figures", "activation"))
        ax.draw(p)
        p.save()
        p.setPen(Qt.NoPen)
        p.setBrush(th.accent2)
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            p.drawRect(ax.cell(0, y - 0.3, row.activation, y + 0.3))
        p.restore()
        f = font(SMALL_PX)
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            s = f"{row.activation:.2f}" + ("" if row.density is None else
                                           translate("Figures", "  (fires on {d:.1%})").format(d=row.density))
            draw_text(p, QRectF(ax.x(row.activation) + 5, ax.y(y) - SMALL_PX / 2 - 2, text_width(s, f) + 6,
                                SMALL_PX + 4), s, f, th.fg)

    note = translate("Figures", "{arch} SAE of {n} features on {hook}: {l0} active here; they rebuild the vector up "
                     "to an error of {err:.1%} of its length. Labels: the tokens a feature fires on most → the token "
                     "it promotes most.").format(arch=sm.architecture, n=f"{sm.d_sae:,}", hook=sm.hook, l0=sm.l0,
                                                 err=sm.relative_error)
    return Figure(title, _caption(ctx, note), body, ROW * max(1, len(rows)) + 50)


def _context_line(p: QPainter, x: float, y: float, width: float, pieces, center, top: float, th: Theme) -> None:
    """Tokens left to right with a background as strong as the activation; the chosen token bold."""
    for i, (text, a) in enumerate(pieces):
        f = font(SMALL_PX, i == center)
        w = text_width(text, f) + 1
        if x + w > width:
            break
        alpha = int(min(1.0, max(0.0, a / (top or 1.0))) * 200)
        if alpha:
            p.fillRect(QRectF(x, y, w, LINE - 3), QColor(th.accent2.red(), th.accent2.green(), th.accent2.blue(),
                                                         alpha))
        draw_text(p, QRectF(x, y, w + 2, LINE), text, f, th.fg)
        x += w


@figure("feature")
def feature_figure(ctx: Ctx) -> Figure:
    """One feature's dashboard: histogram, contexts with token highlighting, logit effects, neighbours."""
    from gpt2viz.core.viewmodels.features import feature_page

    feature = ctx.options.get("feature")
    page = None if feature is None else feature_page(ctx.session, ctx.selection.layer, int(feature), ctx.selection)
    if page is None:
        title = translate("Figures", "Feature {f} of block {L}").format(f=feature, L=ctx.selection.layer)
        return _missing(ctx, title, translate("Figures", "No dashboard for this feature (is there an SAE with "
                                              "dashboards for this block? see gpt2viz sae-dashboards)."))
    hist_h = 130.0
    ctx_lines = len(page.contexts) + len({c.band for c in page.contexts})
    lines = [(translate("Figures", "What it writes (its direction through ln_f's weight and the unembedding)"), True),
             (translate("Figures", "promotes ") + ", ".join(f"{t} ({v:+.2f})" for t, v in page.promotes), False),
             (translate("Figures", "suppresses ") + ", ".join(f"{t} ({v:+.2f})" for t, v in page.suppresses), False),
             (translate("Figures", "Nearest features (decoder cosine)"), True),
             ("; ".join(f"{n} ({c:.2f}) {label}" for n, c, label in page.neighbours), False)]
    text_h = _lines_height(lines, 816)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        n = len(page.histogram)
        width = page.max_activation / max(1, n)
        ax = Axes(QRectF(r.left(), r.top(), r.width(), hist_h), (0, page.max_activation),
                  (0, max(page.histogram) * 1.1 or 1), th, xlabel=translate("Figures", "activation (non-zero)"),
                  ylabel=translate("Figures", "count"))
        ax.draw(p)
        p.save()
        p.setPen(Qt.NoPen)
        p.setBrush(th.accent2)
        for i, c in enumerate(page.histogram):
            p.drawRect(ax.cell(i * width, 0, (i + 0.9) * width, c))
        p.restore()
        y = r.top() + hist_h + 8
        band = -1
        for c in page.contexts:
            if c.band != band:
                band = c.band
                head = translate("Figures", "Top activations") if band == 0 else translate(
                    "Figures", "Between {lo:.0%} and {hi:.0%} of the strongest").format(
                    lo=page.bands[band - 1][0], hi=page.bands[band - 1][1])
                draw_text(p, QRectF(r.left(), y, r.width(), LINE), fit(head, font(SMALL_PX, True), r.width()),
                          font(SMALL_PX, True), th.muted)
                y += LINE
            _context_line(p, r.left() + 8, y, r.right() - 60, c.pieces, c.center, page.max_activation, th)
            s = f"{c.pieces[c.center][1]:.2f}"
            draw_text(p, QRectF(r.right() - 50, y, 50, LINE), s, font(SMALL_PX), th.muted, Qt.AlignRight | Qt.AlignTop)
            y += LINE
        _text_block(p, QRectF(r.left(), y + 6, r.width(), text_h), lines, th)

    title = translate("Figures", "Block {L} · feature {f}: {label}").format(L=page.layer, f=page.feature,
                                                                        label=page.label or "—")
    here = "" if page.here is None else translate("Figures", " Here (position {pos}): {v:.2f}.").format(
        pos=ctx.selection.position_in(len(ctx.session.history.tokens)), v=page.here)
    note = translate("Figures", "Fires on {d:.2%} of the {n} tokens of {corpus}; strongest {top:.2f}.").format(
        d=page.density, n=f"{page.corpus_tokens:,}", corpus=page.corpus, top=page.max_activation) + here
    return Figure(title, _caption(ctx, note), body, hist_h + 8 + ctx_lines * LINE + 6 + text_h + BODY_PX)
