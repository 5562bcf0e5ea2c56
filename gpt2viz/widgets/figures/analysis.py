"""Figures of the analyses that need more than one run: activation patching, the causal trace, and two
prompts compared (paired bars, lens and attention side by side). ``ctx.options["other"]`` is session B."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter

from gpt2viz.widgets.figures.base import (BODY_PX, SMALL_PX, Axes, Figure, Scale, Theme, colorbar_width,
                                          draw_colorbar, draw_heatmap, draw_text, fit, font, legend, text_width)
from gpt2viz.widgets.figures.views import Ctx, _caption, _head_grid, figure, translate


def _heat_panel(p: QPainter, r: QRectF, th: Theme, cbs, values, scale: Scale, xt, yt, xlabel, ylabel, title,
                marked=()):
    cbw = colorbar_width(scale)
    ax = Axes(QRectF(r.left(), r.top(), r.width() - cbw - 10, r.height()), (-0.5, values.shape[1] - 0.5),
              (-0.5, values.shape[0] - 0.5), th, xlabel=xlabel, ylabel=ylabel, xticks=xt, yticks=yt, invert_y=True,
              rotate_x=True, title=title, max_label=110)
    draw_heatmap(p, ax.rect, values, scale)
    ax.draw(p, grid=False)
    for m in marked:  # the subject's rows: a frame
        p.setPen(th.accent2)
        p.setBrush(Qt.NoBrush)
        p.drawRect(ax.cell(-0.5, m - 0.5, values.shape[1] - 0.5, m + 0.5))
    draw_colorbar(p, QRectF(ax.rect.right() + 10, ax.rect.top(), cbw, ax.rect.height()), scale, th, cbs)


@figure("patching")
def patching_figure(ctx: Ctx) -> Figure:
    sm = ctx.session.analyses.get("patching")
    if sm is None:
        raise ValueError(translate("Figures", "no patching table has been computed"))
    if sm.heat.col_kind == "position":
        xt = [(c, ctx.show(a) if a == b else f"{ctx.show(a)}/{ctx.show(b)}")
              for c, (a, b) in enumerate(zip(sm.clean_ids, sm.corrupt_ids))]
        xlabel = translate("Figures", "position (clean/corrupted token)")
    else:
        xt = [(c, str(h)) for c, h in enumerate(sm.heat.cols)]
        xlabel = translate("Figures", "head (z patched at every position)")
    yt = [(L, str(L)) for L in sm.heat.rows]
    scale = Scale(translate("Figures", "normalised effect"), sm.heat.lo,
                  sm.heat.hi, "viridis")
    n_rows = len(sm.heat.rows)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        _heat_panel(p, QRectF(r.left(), r.top(), min(r.width(), 140 + 80 * len(xt)), r.height()), th, cbs,
                    sm.heat.values, scale, xt, yt, xlabel, translate("Figures", "layer"), "")

    L, c, eff, pr = sm.best
    title = translate("Figures", "Activation patching of {site}: clean → corrupted, target {t}").format(
        site=sm.site, t=ctx.q(sm.target))
    note = translate("Figures", "Effect = (p − p_corrupt) / (p_clean − p_corrupt): 1 = the clean answer fully "
                     "back, 0 = no change. p({t}) clean {pc:.4f}, corrupted {pk:.4f}. Best cell: layer {L}, column {c} "
                     "({col}): effect {e:.3f}, p = {p:.4f}. {n} graph calls.").format(
        t=ctx.show(sm.target), pc=sm.clean_prob, pk=sm.corrupt_prob, L=L, c=c, col=xt[c][1], e=eff, p=pr, n=sm.calls)
    return Figure(title, _caption(ctx, note), body, 60 + 34 * n_rows + 90, heatmap=True)


@figure("causal-trace")
def causal_figure(ctx: Ctx) -> Figure:
    sm = ctx.session.analyses.get("causal")
    if sm is None:
        raise ValueError(translate("Figures", "no causal trace has been computed"))
    names = {"hidden": translate("Figures", "hidden state (block L's input)"),
             "mlp": translate("Figures", "MLP output"), "attn": translate("Figures", "attention output")}
    yt = [(i, ("* " if i in sm.subject else "") + ctx.show(t)) for i, t in enumerate(sm.ids)]
    n = len(sm.heats)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        w = (r.width() - (n - 1) * 16) / n
        for k, heat in enumerate(sm.heats):
            scale = Scale(translate("Figures", "p({t})").format(t=ctx.show(sm.target)), heat.lo, heat.hi,
                          "viridis")
            xt = [(c, str(c)) for c in heat.cols]
            _heat_panel(p, QRectF(r.left() + k * (w + 16), r.top(), w, r.height()), th, cbs, heat.values, scale, xt,
                        yt, translate("Figures", "layer"), "" if k else translate("Figures", "token"),
                        names[heat.title], heat.marked_rows)

    best = "; ".join(translate("Figures", "{kind}: layer {L} at {tok} → {p:.3f}").format(
        kind=names[k], L=L, tok=ctx.q(sm.ids[pos]), p=v) for k, (L, pos, v) in sm.best.items())
    title = translate("Figures", "Causal trace: p({t}) with the subject corrupted and one state restored").format(
        t=ctx.q(sm.target))
    note = translate("Figures", "Subject (*, framed): {s}. Noise {noise:g} × the embedding's standard deviation, "
                     "mean of {n} samples; MLP / attention window {w}. p clean {pc:.4f}, corrupted {pk:.4f}. Each "
                     "panel's colour starts at its corrupted score. Best: {best}.").format(
        s="".join(ctx.tok.token_text(sm.ids[i]) for i in sm.subject), noise=sm.noise, n=sm.samples, w=sm.window,
        pc=sm.clean_prob, pk=sm.corrupt_prob, best=best)
    return Figure(title, _caption(ctx, note), body, 90 + 30 * len(sm.ids) + 60, width=1300, heatmap=True)


def _other(ctx: Ctx):
    b = ctx.options.get("other")
    if b is None or b.history is None:
        raise ValueError(translate("Figures", "the comparison needs a second prompt (--compare)"))
    return b


@figure("compare-chart")
def compare_chart_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.compare import paired_chart

    b = _other(ctx)
    sm = paired_chart(ctx.session, b)
    rows = sm.rows
    top = max(max(r.a, r.b) for r in rows)
    xmax = min(1.0, top * 1.3 + 1e-3)
    labels = [(len(rows) - 1 - i, ctx.show(r.id)) for i, r in enumerate(rows)]
    col_a, col_b = QColor(70, 130, 200), QColor(230, 140, 20)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        ax = Axes(r.adjusted(0, 22, 0, 0), (0, xmax), (-0.6, len(rows) - 0.4), th,
                  xlabel=translate("Figures", "probability of being the next token (%)"), yticks=labels)
        ax.xlabels = [(v, f"{v * 100:g}") for v, _ in ax.xticks]
        ax.ylabels = labels
        ax.draw(p)
        f = font(SMALL_PX)
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            for val, y0, y1, col in ((row.a, y, y + 0.36, col_a), (row.b, y - 0.36, y, col_b)):
                p.setPen(Qt.NoPen)
                p.setBrush(col)
                cell = ax.cell(0, y0, val, y1)
                p.drawRect(cell)
                s = f"{val:.1%}"
                draw_text(p, QRectF(cell.right() + 4, cell.top() - 2, text_width(s, f) + 6, SMALL_PX + 4), s, f, th.fg)
        legend(p, r.left() + 4, r.top(), [(col_a, translate("Figures", "A: {t}").format(t=ctx.tok.decode(
            list(sm.tokens_a)))), (col_b, translate("Figures", "B: {t}").format(t=ctx.tok.decode(list(sm.tokens_b))))],
            th)

    title = translate("Figures", "Next token, A vs B: A's top {a}, B's top {b}").format(a=ctx.q(sm.top_a),
                                                                                       b=ctx.q(sm.top_b))
    note = translate("Figures", "The model's own probabilities (no sampling settings), for every token in either "
                     "prompt's top list.")
    return Figure(title, _caption(ctx, note), body, 30 * len(rows) + 80)


@figure("compare-lens")
def compare_lens_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.lens import lens_grid

    b = _other(ctx)
    ga, gb = lens_grid(ctx.session), lens_grid(b)
    same = ga.tops.shape == gb.tops.shape
    scale = Scale(translate("Figures", "probability of the top token"), 0.0, 1.0)
    dscale = Scale(translate("Figures", "B − A (A's top token)"), -1.0, 1.0, "CET-D1")
    n_rows = ga.tops.shape[0]
    h = n_rows * 26 + 110

    def grid_panel(p, r, th, cbs, g, title):
        xt = [(c, f"{pos} {ctx.show(tk)}") for c, (pos, tk) in enumerate(zip(g.positions, g.tokens))]
        yt = [(0, translate("Figures", "embed"))] + [(k, str(k - 1)) for k in range(1, n_rows)]
        cbw = colorbar_width(scale)
        ax = Axes(QRectF(r.left(), r.top(), r.width() - cbw - 10, r.height()), (-0.5, len(xt) - 0.5),
                  (-0.5, n_rows - 0.5), th, xticks=xt, yticks=yt, rotate_x=True, max_label=90, title=title,
                  ylabel=translate("Figures", "depth"))
        draw_heatmap(p, ax.rect, g.probs[::-1], scale)
        f = font(SMALL_PX - 1)
        cw = ax.rect.width() / len(xt)
        for rr in range(n_rows):
            for c in range(len(xt)):
                pr = float(g.probs[rr, c])
                col = QColor(20, 20, 20) if pr > 0.55 else QColor(250, 250, 250)
                draw_text(p, ax.cell(c - 0.5, rr - 0.5, c + 0.5, rr + 0.5), fit(ctx.show(int(g.tops[rr, c])), f, cw - 2),
                          f, col, Qt.AlignCenter)
        ax.draw(p, grid=False)
        draw_colorbar(p, QRectF(ax.rect.right() + 10, ax.rect.top(), cbw, ax.rect.height()), scale, th, cbs)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        w = (r.width() - 20) / 2
        grid_panel(p, QRectF(r.left(), r.top(), w, h), th, cbs, ga, translate("Figures", "A"))
        grid_panel(p, QRectF(r.left() + w + 20, r.top(), w, h), th, cbs, gb, translate("Figures", "B"))
        if same:  # the difference: how much of A's top token B's run still gives, depth by depth
            from gpt2viz.core.viewmodels.compare import lens_difference

            diff = lens_difference(ctx.session, b).values
            xt = [(c, f"{pos} {ctx.show(a)}/{ctx.show(bb)}" if a != bb else f"{pos} {ctx.show(a)}")
                  for c, (pos, a, bb) in enumerate(zip(ga.positions, ga.tokens, gb.tokens))]
            yt = [(0, translate("Figures", "embed"))] + [(k, str(k - 1)) for k in range(1, n_rows)]
            cbw = colorbar_width(dscale)
            rr = QRectF(r.left(), r.top() + h + 20, w, h)
            ax = Axes(QRectF(rr.left(), rr.top(), rr.width() - cbw - 10, rr.height()), (-0.5, len(xt) - 0.5),
                      (-0.5, n_rows - 0.5), th, xticks=xt, yticks=yt, rotate_x=True, max_label=110,
                      title=translate("Figures", "difference B − A"), ylabel=translate("Figures", "depth"))
            draw_heatmap(p, ax.rect, diff[::-1], dscale)
            ax.draw(p, grid=False)
            draw_colorbar(p, QRectF(ax.rect.right() + 10, ax.rect.top(), cbw, ax.rect.height()), dscale, th, cbs)

    title = translate("Figures", "Logit lens, A and B side by side")
    note = translate("Figures", "Each cell: the token the residual would predict after that block, and its probability.")
    return Figure(title, _caption(ctx, note), body, h + (h + 20 if same else 0), width=1300, heatmap=True)


@figure("compare-attention")
def compare_attention_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.attention import attention_summary

    b = _other(ctx)
    sa = attention_summary(ctx.session, "pattern", ctx.selection)
    sb = attention_summary(b, "pattern", ctx.selection)
    scale = Scale(translate("Figures", "attention weight (0–1)"), 0.0, 1.0)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        cbw = colorbar_width(scale)
        w = (r.width() - cbw - 40) / 2
        for k, (sm, name) in enumerate(((sa, "A"), (sb, "B"))):
            x = r.left() + k * (w + 20)
            draw_text(p, QRectF(x, r.top(), w, BODY_PX + 6), name, font(BODY_PX, True), th.fg)
            _head_grid(p, QRectF(x, r.top() + BODY_PX + 8, w, r.height() - BODY_PX - 8), th, sm, scale)
        draw_colorbar(p, QRectF(r.right() - cbw, r.top() + BODY_PX + 8, cbw, r.height() - BODY_PX - 30), scale, th, cbs)

    title = translate("Figures", "Attention in block {L}, A and B side by side").format(L=sa.layer)
    note = translate("Figures", "Rows are queries, columns keys; grey cells are the future, masked.")
    return Figure(title, _caption(ctx, note), body, 520, width=1300, heatmap=True)
