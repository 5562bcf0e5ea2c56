"""One figure builder per view, all in one table: ``FIGURES[view](ctx) -> Figure``.

A builder reads the view model of ``ctx.session`` at ``ctx.selection`` (never a widget) and returns a
:class:`~gpt2viz.widgets.figures.base.Figure`. To add a view (patching, causal trace ...) write one
function and decorate it with ``@figure("name")``; per-layer views also give ``@value_range("name")`` so a
contact sheet shares one colour scale, and honour ``ctx.compact`` (a contact-sheet panel: the plot only).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QCoreApplication, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen

from gpt2viz.app import attribution_text as at
from gpt2viz.core.generation.sampling import top_k_text
from gpt2viz.core.session.session import Selection, Session
from gpt2viz.widgets.figures.base import (BODY_PX, SMALL_PX, Axes, Figure, Scale, Theme, colorbar_width,
                                          draw_colorbar, draw_heatmap, draw_text, fit, font, legend, text_height,
                                          text_width)

translate = QCoreApplication.translate  # lupdate reads calls spelled translate("Figures", "...")


@dataclass
class Ctx:
    """What a builder draws from: the session at a selection, the words of the caption, options."""

    session: Session
    selection: Selection
    caption: str = ""
    facts: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)  # which, lens_target, path_target, path_vs, threshold, neuron
    shared: tuple[float, float] | None = None  # a contact sheet's common range
    compact: bool = False

    @property
    def tok(self):
        return self.session.model.tokenizer

    def show(self, t: int) -> str:
        return self.tok.token_display(int(t))

    def q(self, t: int) -> str:
        return "“" + self.show(t) + "”"


FIGURES: dict[str, Callable[[Ctx], Figure]] = {}
RANGES: dict[str, Callable[[Ctx], tuple[float, float]]] = {}


def figure(name: str):
    def deco(fn):
        FIGURES[name] = fn
        return fn
    return deco


def value_range(name: str):
    def deco(fn):
        RANGES[name] = fn
        return fn
    return deco


def build(view: str, ctx: Ctx) -> Figure:
    """The figure of ``view``; ValueError for a view without a builder."""
    if view not in FIGURES:
        raise ValueError(f"no figure for the view '{view}'")
    fig = FIGURES[view](ctx)
    fig.facts = dict(ctx.facts)
    return fig


def _caption(ctx: Ctx, note: str) -> str:
    return ctx.caption + (("\n" + note) if note else "")


def _token_ticks(ctx: Ctx, tokens, first: int = 0, most: int = 32) -> list[tuple[float, str]]:
    step = max(1, math.ceil(len(tokens) / most))
    return [(i, f"{first + i} {ctx.show(t)}") for i, t in enumerate(tokens)][::step]


def _text_block(p: QPainter, rect: QRectF, lines: list[tuple[str, bool]], theme: Theme, px=BODY_PX) -> float:
    """Lines (text, bold) top-down with wrapping; returns the y reached."""
    y = rect.top()
    for s, bold in lines:
        f = font(px, bold)
        h = text_height(s, f, rect.width())
        draw_text(p, QRectF(rect.left(), y, rect.width(), h + 2), s, f, theme.fg)
        y += h + 4
    return y


def _lines_height(lines, width, px=BODY_PX) -> float:
    return sum(text_height(s, font(px, b), width) + 4 for s, b in lines)


# ---- pipeline -------------------------------------------------------------------------------------
@figure("pipeline")
def pipeline_figure(ctx: Ctx) -> Figure:
    from gpt2viz.app.stages import cell_text, explain, stage_title
    from gpt2viz.core.viewmodels.pipeline import pipeline_summary

    sm = pipeline_summary(ctx.session, ctx.selection)
    stages = ctx.session.stages()
    sel = ctx.selection.stage
    per_row = 8
    rows = math.ceil(len(stages) / per_row)
    cw, chh, gap = 90.0, 78.0, 11.0
    inner = 860 - 44
    expl = f"{stage_title(sel)}. " + explain(sel, sm, ctx.show)
    eh = text_height(expl, font(BODY_PX), inner)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        for i, st in enumerate(stages):
            row, col = divmod(i, per_row)
            x = r.left() + col * (cw + gap) + (inner - per_row * (cw + gap) + gap) / 2
            y = r.top() + row * (chh + 18)
            cell = QRectF(x, y, cw, chh)
            chosen = st == sel
            p.setPen(QPen(th.accent if chosen else th.muted, 2.4 if chosen else 0.9))
            p.setBrush(th.panel)
            p.drawRoundedRect(cell, 6, 6)
            if col:
                p.setPen(QPen(th.muted, 1.2))
                yy = cell.center().y()
                p.drawLine(QPointF(x - gap + 2, yy), QPointF(x - 2, yy))
                p.drawLine(QPointF(x - 6, yy - 3), QPointF(x - 2, yy))
                p.drawLine(QPointF(x - 6, yy + 3), QPointF(x - 2, yy))
            fb = font(SMALL_PX, True)
            p.setFont(fb)
            p.setPen(th.fg)
            p.drawText(cell.adjusted(3, 4, -3, 0), Qt.AlignHCenter | Qt.AlignTop, fit(stage_title(st), fb, cw - 6))
            txt = cell_text(st, sm, ctx.show)
            lines = [fit(s, font(SMALL_PX), cw - 6) for s in txt.split("\n")]
            draw_text(p, cell.adjusted(3, 24, -3, -2), "\n".join(lines), font(SMALL_PX), th.fg, Qt.AlignHCenter)
        y = r.top() + rows * (chh + 18) + 4
        draw_text(p, QRectF(r.left(), y, r.width(), eh + 2), expl, font(BODY_PX), th.fg)

    title = translate("Figures", "The path of {token} (position {pos}) through {model}").format(
        token=ctx.q(sm.token), pos=sm.position, model=ctx.session.model.name)
    note = translate("Figures", "Each box is one stage the token passes through, with its live numbers; the "
                     "outlined one is explained below.")
    return Figure(title, _caption(ctx, note), body, rows * (chh + 18) + 8 + eh)


# ---- next-token chart ----------------------------------------------------------------------------
@figure("chart")
def chart_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.chart import chart_summary

    sm = chart_summary(ctx.session)
    rows = sm.rows
    before = bool(sm.interventions) and all(r.before is not None for r in rows)  # ghost = the run without them
    top = max(max(r.raw, r.final, r.before or 0.0) for r in rows)
    xmax = min(1.0, top * 1.35 + 1e-3)
    labels = [(len(rows) - 1 - i, ("★ " if r.chosen else "") + ctx.show(r.id) + ("" if r.kept else " ✕"))
              for i, r in enumerate(rows)]

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        ax = Axes(r.adjusted(0, 20, 0, 0), (0, xmax), (-0.6, len(rows) - 0.4), th,
                  xlabel=translate("Figures", "probability of being the next token (%)"), yticks=labels)
        ax.xlabels = [(v, f"{v * 100:g}") for v, _ in ax.xticks]
        ax.ylabels = labels
        ax.draw(p)
        p.save()
        p.setClipRect(ax.rect)
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            ghost = ax.cell(0, y - 0.4, row.before if before else row.raw, y + 0.4)
            p.setPen(QPen(th.muted, 0.8, Qt.DashLine))
            p.setBrush(QColor(128, 128, 128, 50))
            p.drawRect(ghost)
            p.setPen(Qt.NoPen)
            p.setBrush(th.accent2 if row.chosen else th.accent)
            p.drawRect(ax.cell(0, y - 0.26, row.final, y + 0.26))
        p.restore()
        f = font(SMALL_PX)
        for i, row in enumerate(rows):
            y = len(rows) - 1 - i
            s = f"{row.final:.1%}" + (translate("Figures", "  (model {p:.1%})").format(p=row.raw)
                                      if abs(row.final - row.raw) > 5e-4 else "")
            if before:
                s += translate("Figures", "  (before {p:.1%})").format(p=row.before)
            x = min(ax.x(max(row.final, row.raw, row.before if before else 0.0)) + 5, ax.rect.right() - text_width(s, f) - 4)
            draw_text(p, QRectF(x, ax.y(y) - SMALL_PX / 2 - 2, text_width(s, f) + 6, SMALL_PX + 4), s, f, th.fg)
        ghost_name = translate("Figures", "before the interventions") if before else \
            translate("Figures", "model's own probability")
        legend(p, r.left() + 4, r.top(), [(QColor(128, 128, 128, 110), ghost_name),
                                          (th.accent, translate("Figures", "after the sampling settings")),
                                          (th.accent2, translate("Figures", "★ what a step takes"))], th)

    st = ctx.session.sampling
    title = translate("Figures", "Next token after position {pos}: {n} of {v} tokens kept, entropy {e:.2f} nats").format(
        pos=sm.position, n=f"{sm.n_kept:,}", v=f"{sm.vocab_size:,}", e=sm.entropy)
    note = translate("Figures", "Settings: temperature {t:g}, top-k {k}, top-p {p:g}, seed {s}. ✕ = cut by "
                     "top-k / top-p.").format(t=st.temperature, k=top_k_text(st.top_k, translate("Figures", "off")),
                                              p=st.top_p, s=st.seed)
    return Figure(title, _caption(ctx, note), body, 26 * len(rows) + 70)


# ---- tokens --------------------------------------------------------------------------------------
MAX_TOKEN_ROWS = 40


@figure("tokens")
def tokens_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.tokens import tokens_summary

    sm = tokens_summary(ctx.session)
    rows = sm.rows[-MAX_TOKEN_ROWS:]
    heads = [translate("Figures", "position"), translate("Figures", "id"), translate("Figures", "token"),
             translate("Figures", "bytes (hex)"), translate("Figures", "kind")]
    widths = [70.0, 70.0, 190.0, 230.0, 246.0]
    rh = 20.0
    sel = ctx.session.selected_position if ctx.selection is ctx.session.selection else \
        ctx.selection.position_in(len(sm.rows))
    strip = "".join(r.display for r in sm.rows)
    sh = text_height(strip, font(BODY_PX + 1, mono=True), 816)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        # the text cut into tokens: alternating backgrounds show the boundaries
        x, y = r.left(), r.top()
        f = font(BODY_PX + 1, mono=True)
        for i, row in enumerate(sm.rows):
            w = text_width(row.display, f)
            if x + w > r.right():
                x, y = r.left(), y + BODY_PX + 8
            c = QColor(th.accent if i % 2 == 0 else th.accent2)
            c.setAlpha(70)
            p.fillRect(QRectF(x, y, w, BODY_PX + 5), c)
            draw_text(p, QRectF(x, y, w + 2, BODY_PX + 6), row.display, f, th.fg)
            x += w + 1
        y += BODY_PX + 16
        fb, fr = font(SMALL_PX + 1, True), font(SMALL_PX + 1, mono=True)
        xs = np.cumsum([r.left()] + widths[:-1])
        for xx, w, hd in zip(xs, widths, heads):
            draw_text(p, QRectF(xx + 4, y, w - 8, rh), hd, fb, th.fg)
        y += rh
        p.setPen(QPen(th.muted, 0.8))
        p.drawLine(QPointF(r.left(), y - 2), QPointF(r.right(), y - 2))
        for row in rows:
            if row.position == sel:
                p.fillRect(QRectF(r.left(), y, r.width(), rh), th.panel)
            kind = (translate("Figures", "generated") if row.generated else translate("Figures", "prompt")) + (
                translate("Figures", " · partial character") if row.partial else "")
            for xx, w, v in zip(xs, widths, (row.position, row.id, row.display, row.bytes_hex, kind)):
                draw_text(p, QRectF(xx + 4, y + 2, w - 8, rh), fit(str(v), fr, w - 8), fr, th.fg)
            y += rh

    title = translate("Figures", "{n} tokens for {b} bytes of UTF-8 (context {n}/{c})").format(
        n=len(sm.rows), b=sm.n_bytes, c=sm.n_positions)
    note = translate("Figures", "A leading space belongs to the token (␣). [i-j/n] marks bytes i..j of an n-byte "
                     "character.") + (translate("Figures", " The table shows the newest {k} tokens.").format(
                         k=MAX_TOKEN_ROWS) if len(sm.rows) > MAX_TOKEN_ROWS else "")
    return Figure(title, _caption(ctx, note), body, sh + 16 + rh * (len(rows) + 1) + 10)


# ---- embeddings ----------------------------------------------------------------------------------
@figure("embeddings")
def embeddings_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.embeddings import embedding_summary

    sm = embedding_summary(ctx.session, ctx.selection)
    m = np.stack([sm.token_vec, sm.pos_vec, sm.sum_vec])
    lim = float(np.abs(m).max()) or 1.0
    scale = Scale(translate("Figures", "value of the dimension"), -lim, lim, "CET-D1")
    ne, npos, ns = sm.norms
    near = [(translate("Figures", "Nearest tokens to {t} (cosine, unembedding directions):").format(t=ctx.q(sm.token)),
             True), ("   ".join(f"{ctx.show(i)} {c:.3f}" for i, c in sm.nearest), False)]
    nh = _lines_height(near, 816)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        cbw = colorbar_width(scale)
        plot = QRectF(r.left(), r.top(), r.width() - cbw - 10, 190)
        rows = [(0, translate("Figures", "token ‖{n:.2f}‖").format(n=ne)),
                (1, translate("Figures", "position ‖{n:.2f}‖").format(n=npos)),
                (2, translate("Figures", "sum ‖{n:.2f}‖").format(n=ns))]
        ax = Axes(plot, (0, m.shape[1]), (-0.5, 2.5), th, xlabel=translate("Figures", "dimension (0 … {e})").format(
            e=m.shape[1] - 1), yticks=rows, invert_y=True)
        draw_heatmap(p, ax.rect, m, scale)
        ax.draw(p, grid=False)
        draw_colorbar(p, QRectF(plot.right() + 10, ax.rect.top(), cbw, ax.rect.height()), scale, th, cbs)
        _text_block(p, QRectF(r.left(), plot.bottom() + 10, r.width(), nh), near, th)

    title = translate("Figures", "Embedding of {t} (id {id}) at position {pos}: token + position = the residual "
                      "entering block 0").format(t=ctx.q(sm.token), id=sm.token, pos=sm.position)
    note = translate("Figures", "{e} numbers per vector; blue negative, red positive, one symmetric scale.").format(
        e=m.shape[1])
    return Figure(title, _caption(ctx, note), body, 190 + 10 + nh, heatmap=True)


# ---- attention -----------------------------------------------------------------------------------
def _attention(ctx: Ctx):
    from gpt2viz.core.viewmodels.attention import attention_summary

    return attention_summary(ctx.session, ctx.options.get("which", "pattern"), ctx.selection)


def _attention_scale(ctx: Ctx, sm) -> Scale:
    if ctx.shared is not None:
        lo, hi = ctx.shared
    elif sm.which == "pattern":
        lo, hi = 0.0, 1.0
    else:
        lo, hi = min(a for a, _ in sm.levels), max(b for _, b in sm.levels)
    label = translate("Figures", "attention weight (0–1)") if sm.which == "pattern" else \
        translate("Figures", "score q·k/√d (logit units)")
    return Scale(label, lo, hi)


@value_range("attention")
@value_range("head")
def attention_range(ctx: Ctx) -> tuple[float, float]:
    sm = _attention(ctx)
    if sm.which == "pattern":
        return 0.0, 1.0
    return min(a for a, _ in sm.levels), max(b for _, b in sm.levels)


def _head_grid(p: QPainter, r: QRectF, th: Theme, sm, scale: Scale, mark: bool = True) -> None:
    n = sm.n_head
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    lab = SMALL_PX + 4
    side = min((r.width() - (cols - 1) * 6) / cols, (r.height() - rows * (lab + 6)) / rows)
    f = font(SMALL_PX)
    for hd in range(n):
        rr, cc = divmod(hd, cols)
        x = r.left() + cc * (side + 6)
        y = r.top() + rr * (side + lab + 6)
        s = translate("Figures", "head {h} · {e:.2f} nats").format(h=hd, e=float(sm.entropies[hd]))
        draw_text(p, QRectF(x, y, side + 6, lab), fit(s, f, side + 4), f, th.fg)
        cell = QRectF(x, y + lab, side, side)
        draw_heatmap(p, cell, sm.matrices[hd], scale)
        p.setBrush(Qt.NoBrush)
        p.setPen(QPen(th.accent2, 2.5) if (mark and hd == sm.head) else QPen(th.muted, 0.6))
        p.drawRect(cell)


@figure("attention")
def attention_figure(ctx: Ctx) -> Figure:
    sm = _attention(ctx)
    scale = _attention_scale(ctx, sm)
    masked = translate("Figures", "Rows are queries (the token reading), columns keys (the token read); grey cells "
                       "are the future, masked. Entropy at the selected query in nats (0 = one key takes all).")
    clip = translate("Figures", " The newest {k} of {n} positions are drawn.").format(
        k=sm.matrices.shape[1], n=sm.n_tokens) if sm.first else ""
    title = translate("Figures", "Attention in block {L}: every head, query × key").format(L=sm.layer)
    if ctx.compact:
        def panel(p, r, th, _cb):
            _head_grid(p, r, th, sm, scale, mark=False)
        return Figure(translate("Figures", "block {L}").format(L=sm.layer), "", panel, 0, heatmap=True)

    ticks = _token_ticks(ctx, sm.tokens, sm.first, 20)
    big = sm.matrices[sm.head]
    reads = np.argsort(-np.nan_to_num(sm.bars))[:3]
    read_line = translate("Figures", "{q} (position {pos}) reads, head {h}: ").format(
        q=ctx.q(ctx.session.history.tokens[sm.position]), pos=sm.position, h=sm.head) + ", ".join(
        f"{ctx.q(ctx.session.history.tokens[k])} {float(sm.bars[k]):.2f}" for k in reads)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        grid = QRectF(r.left(), r.top(), r.width() * 0.36, r.height() - 30)
        _head_grid(p, grid, th, sm, scale)
        cbw = colorbar_width(scale)
        right = QRectF(grid.right() + 18, r.top(), r.right() - grid.right() - 18 - cbw - 8, r.height() - 30)
        ax = Axes(right, (-0.5, big.shape[1] - 0.5), (-0.5, big.shape[0] - 0.5), th,
                  xlabel=translate("Figures", "key (position, token)"),
                  ylabel=translate("Figures", "query (position, token)"), xticks=ticks, yticks=ticks,
                  invert_y=True, rotate_x=True, title=translate("Figures", "head {h}").format(h=sm.head), max_label=110)
        side = min(ax.rect.width(), ax.rect.height())
        ax.rect = QRectF(ax.rect.left(), ax.rect.top(), side, side)
        draw_heatmap(p, ax.rect, big, scale)
        ax.draw(p, grid=False)
        draw_colorbar(p, QRectF(ax.rect.right() + 10, ax.rect.top(), cbw, side), scale, th, cbs)
        draw_text(p, QRectF(r.left(), r.bottom() - 24, r.width(), 24), fit(read_line, font(BODY_PX), r.width()),
                  font(BODY_PX), th.fg)

    return Figure(title, _caption(ctx, masked + clip), body, 520, heatmap=True)


@figure("head")
def head_figure(ctx: Ctx) -> Figure:
    sm = _attention(ctx)
    scale = _attention_scale(ctx, sm)
    big = sm.matrices[sm.head]
    ticks = _token_ticks(ctx, sm.tokens, sm.first, 12 if ctx.compact else 28)

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        cbw = 0 if ctx.compact else colorbar_width(scale)
        ax = Axes(QRectF(r.left(), r.top(), r.width() - cbw - 10, r.height()), (-0.5, big.shape[1] - 0.5),
                  (-0.5, big.shape[0] - 0.5), th,
                  xlabel="" if ctx.compact else translate("Figures", "key (position, token)"),
                  ylabel="" if ctx.compact else translate("Figures", "query (position, token)"),
                  xticks=ticks, yticks=ticks, invert_y=True, rotate_x=True, max_label=90 if ctx.compact else 140)
        side = min(ax.rect.width(), ax.rect.height())
        ax.rect = QRectF(ax.rect.left() + (ax.rect.width() - side) / 2, ax.rect.top(), side, side)
        draw_heatmap(p, ax.rect, big, scale)
        ax.draw(p, grid=False)
        if not ctx.compact:
            draw_colorbar(p, QRectF(ax.rect.right() + 12, ax.rect.top(), cbw, side), scale, th, cbs)

    title = translate("Figures", "Block {L}, head {h}: {what}").format(
        L=sm.layer, h=sm.head, what=translate("Figures", "attention weights, after softmax") if sm.which == "pattern"
        else translate("Figures", "attention scores, before softmax"))
    if ctx.compact:
        return Figure(translate("Figures", "block {L}, head {h}").format(L=sm.layer, h=sm.head), "", body, 0,
                      heatmap=True)
    note = translate("Figures", "Rows are queries, columns keys; grey cells are the future, masked.")
    return Figure(title, _caption(ctx, note), body, 600, heatmap=True)


# ---- MLP -----------------------------------------------------------------------------------------
def _mlp(ctx: Ctx):
    from gpt2viz.core.viewmodels.mlp import mlp_summary

    return mlp_summary(ctx.session, ctx.options.get("neuron"), ctx.selection)


@value_range("mlp")
def mlp_range(ctx: Ctx) -> tuple[float, float]:
    sm = _mlp(ctx)
    return float(sm.post.min()), float(sm.post.max())


def _mlp_plot(p, r, th, ctx, sm, compact):
    lo, hi = ctx.shared if ctx.shared is not None else (float(sm.post.min()), float(sm.post.max()))
    pad = 0.05 * ((hi - lo) or 1)
    ax = Axes(r, (0, sm.post.size - 1), (lo - pad, hi + pad), th,
              xlabel="" if compact else translate("Figures", "neuron (0 … {n})").format(n=sm.post.size - 1),
              ylabel=translate("Figures", "activation (after GELU)"))
    ax.draw(p)
    p.save()
    p.setClipRect(ax.rect)
    pts = [QPointF(ax.x(i), ax.y(float(v))) for i, v in enumerate(sm.post)]
    p.setPen(QPen(th.accent, 1.0))
    p.drawPolyline(pts)
    p.setPen(Qt.NoPen)
    p.setBrush(th.accent2)
    for n, a, _ in sm.top[:10]:
        p.drawEllipse(QPointF(ax.x(n), ax.y(a)), 3.5, 3.5)
    p.restore()


@figure("mlp")
def mlp_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.mlp import ACTIVE

    sm = _mlp(ctx)
    if ctx.compact:
        return Figure(translate("Figures", "block {L}").format(L=sm.layer), "",
                      lambda p, r, th, _cb: _mlp_plot(p, r, th, ctx, sm, True), 0)
    lines = [(translate("Figures", "Biggest writers (neuron: activation, × ‖value‖)"), True),
             ("   ".join(f"{n}: {a:+.2f}, {s:+.2f}" for n, a, s in sm.top[:10]), False),
             (translate("Figures", "The whole MLP output, read by the unembedding"), True),
             (translate("Figures", "promotes ") + ", ".join(ctx.show(i) for i, _ in sm.promotes) + "; " +
              translate("Figures", "suppresses ") + ", ".join(ctx.show(i) for i, _ in sm.suppresses), False),
             (translate("Figures", "Neuron {n}'s value vector W_out[{n}] · W_U").format(n=sm.neuron), True),
             (translate("Figures", "promotes ") + ", ".join(f"{ctx.show(i)} ({v:+.2f})" for i, v in sm.neuron_promotes)
              + "; " + translate("Figures", "suppresses ") + ", ".join(
                  f"{ctx.show(i)} ({v:+.2f})" for i, v in sm.neuron_suppresses), False)]
    lh = _lines_height(lines, 816)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        _mlp_plot(p, QRectF(r.left(), r.top(), r.width(), 260), th, ctx, sm, False)
        _text_block(p, QRectF(r.left(), r.top() + 272, r.width(), lh), lines, th)

    title = translate("Figures", "MLP of block {L} at position {pos} {t}: {n} neurons, {k} above {a}").format(
        L=sm.layer, pos=sm.position, t=ctx.q(sm.token), n=f"{sm.post.size:,}", k=sm.n_active, a=ACTIVE)
    note = translate("Figures", "Orange dots: the ten neurons that write the most (activation × norm of the value "
                     "vector).")
    return Figure(title, _caption(ctx, note), body, 272 + lh)


# ---- logit lens ----------------------------------------------------------------------------------
@figure("lens")
def lens_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.lens import MAX_POSITIONS, lens_grid, lens_target

    g = lens_grid(ctx.session)
    target = ctx.options.get("lens_target")
    t = lens_target(ctx.session, target, ctx.selection)
    scale = Scale(translate("Figures", "probability"), 0.0, 1.0)
    n_rows, n_cols = g.tops.shape
    cell_h = max(22.0, 160.0 / n_rows)
    grid_h = n_rows * cell_h + 110

    def body(p: QPainter, r: QRectF, th: Theme, cbs):
        cbw = colorbar_width(scale)
        xt = [(c, f"{pos} {ctx.show(tk)}") for c, (pos, tk) in enumerate(zip(g.positions, g.tokens))]
        yt = [(0, translate("Figures", "embed"))] + [(k, translate("Figures", "block {L}").format(L=k - 1))
                                                       for k in range(1, n_rows)]
        ax = Axes(QRectF(r.left(), r.top(), r.width() - cbw - 10, grid_h), (-0.5, n_cols - 0.5), (-0.5, n_rows - 0.5),
                  th, xlabel=translate("Figures", "position (token there)"), ylabel=translate("Figures", "depth"),
                  xticks=xt, yticks=yt, invert_y=False, rotate_x=True, max_label=90)
        draw_heatmap(p, ax.rect, g.probs[::-1], scale)  # row 0 (embed) at the bottom
        f = font(SMALL_PX - 1)
        cw = ax.rect.width() / n_cols
        for rr in range(n_rows):
            for c in range(n_cols):
                pr = float(g.probs[rr, c])
                cell = ax.cell(c - 0.5, rr - 0.5, c + 0.5, rr + 0.5)
                col = QColor(20, 20, 20) if pr > 0.55 else QColor(250, 250, 250)
                draw_text(p, cell, fit(ctx.show(int(g.tops[rr, c])), f, cw - 2), f, col, Qt.AlignCenter)
        ax.draw(p, grid=False)
        draw_colorbar(p, QRectF(ax.rect.right() + 10, ax.rect.top(), cbw, ax.rect.height()), scale, th, cbs)
        # the target's probability through the depths
        pr = QRectF(r.left(), r.top() + grid_h + 14, r.width(), 200)
        ax2 = Axes(pr, (-0.2, len(t.probs) - 0.8), (0, 1.2), th, xlabel=translate("Figures", "depth (0 = embeddings, then "
                                                                               "after each block)"),
                   ylabel=translate("Figures", "probability"),
                   title=translate("Figures", "{t} at position {pos}: probability (rank) by depth").format(
                       t=ctx.q(t.target), pos=t.position),
                   xticks=[(k, str(k)) for k in range(len(t.probs))],
                   yticks=[(v, f"{v:.1f}") for v in (0, 0.2, 0.4, 0.6, 0.8, 1.0)])
        ax2.draw(p)
        pts = [QPointF(ax2.x(k), ax2.y(float(v))) for k, v in enumerate(t.probs)]
        p.setPen(QPen(th.accent, 2))
        p.drawPolyline(pts)
        p.setBrush(th.accent)
        fs = font(SMALL_PX - 1)
        for k, pt in enumerate(pts):
            p.setPen(Qt.NoPen)
            p.drawEllipse(pt, 3.5, 3.5)
            s = f"#{int(t.ranks[k]) + 1}"
            draw_text(p, QRectF(pt.x() - 30, pt.y() - SMALL_PX - 6, 60, SMALL_PX + 2), s, fs, th.fg, Qt.AlignHCenter)

    title = translate("Figures", "Logit lens: what the residual stream would predict after every block")
    clip = translate("Figures", " The newest {k} of {n} positions are drawn.").format(k=n_cols, n=g.n_tokens) \
        if g.n_tokens > MAX_POSITIONS else ""
    note = translate("Figures", "Each cell: the top token if the model stopped there (final LayerNorm + "
                     "unembedding applied early) and, as colour, its probability; the top row is the real "
                     "output. #k = rank of the target.") + clip
    return Figure(title, _caption(ctx, note), body, grid_h + 14 + 200, heatmap=True)


# ---- residual ------------------------------------------------------------------------------------
@figure("residual")
def residual_figure(ctx: Ctx) -> Figure:
    from gpt2viz.core.viewmodels.residual import residual_summary

    pr = residual_summary(ctx.session, ctx.selection)
    depth = np.arange(pr.resid_norm.size)
    xt = [(0, translate("Figures", "embed"))] + [(k, str(k)) for k in depth[1:]]

    def series(p, ax, xs, ys, c, w=2.0):
        pts = [QPointF(ax.x(float(x)), ax.y(float(y))) for x, y in zip(xs, ys)]
        p.setPen(QPen(c, w))
        p.drawPolyline(pts)
        p.setPen(Qt.NoPen)
        p.setBrush(c)
        for pt in pts:
            p.drawEllipse(pt, 3.2, 3.2)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        hi = float(max(pr.resid_norm.max(), pr.attn_norm.max(), pr.mlp_norm.max())) * 1.08
        a = Axes(QRectF(r.left(), r.top() + 20, r.width(), 240), (-0.3, depth[-1] + 0.3), (0, hi), th,
                 ylabel=translate("Figures", "norm (‖x‖₂)"), xticks=xt)
        a.draw(p)
        series(p, a, depth, pr.resid_norm, th.accent)
        series(p, a, depth[1:] - 0.1, pr.attn_norm, th.accent2)
        series(p, a, depth[1:] + 0.1, pr.mlp_norm, th.accent3)
        legend(p, r.left() + 4, r.top(), [(th.accent, translate("Figures", "residual after")),
                                          (th.accent2, translate("Figures", "attention adds")),
                                          (th.accent3, translate("Figures", "MLP adds"))], th)
        lo = min(-0.2, float(pr.cos_to_final.min()) - 0.05)
        b = Axes(QRectF(r.left(), r.top() + 272, r.width(), 210), (-0.3, depth[-1] + 0.3), (lo, 1.05), th,
                 xlabel=translate("Figures", "depth (embed = embeddings, then after each block)"),
                 ylabel=translate("Figures", "cosine to final"), xticks=xt)
        b.draw(p)
        series(p, b, depth, pr.cos_to_final, th.accent4)

    title = translate("Figures", "The residual stream at position {pos} {t}: its size and direction by depth").format(
        pos=pr.position, t=ctx.q(pr.token))
    note = translate("Figures", "Top: the norm after each block and of what that block's attention and MLP added. "
                     "Bottom: cosine to the final residual (1 = same direction).")
    return Figure(title, _caption(ctx, note), body, 482)


# ---- path and attribution ------------------------------------------------------------------------
def _path(ctx: Ctx):
    from gpt2viz.core.analysis.path_graph import DEFAULT_THRESHOLD
    from gpt2viz.core.viewmodels.path import path_summary

    o = ctx.options
    return path_summary(ctx.session, o.get("path_target", ""), o.get("path_vs", ""),
                        o.get("threshold", DEFAULT_THRESHOLD))


def _signed(th: Theme, v: float, alpha: int = 255) -> QColor:
    c = QColor(th.push if v >= 0 else th.pull)
    c.setAlpha(alpha)
    return c


@figure("path")
def path_figure(ctx: Ctx) -> Figure:
    s = _path(ctx)
    n_head = ctx.session.model.config.n_head

    def points(e):
        dx = 0.0
        if e.kind == "head":
            dx = (e.head - (n_head - 1) / 2) * min(0.12, 0.6 / max(n_head, 1))
        elif e.kind in ("embed", "pos_embed"):
            dx = -0.15 if e.kind == "embed" else 0.15
        elif e.kind == "attn_bias":
            dx = 0.3
        return (e.source + dx, e.y0), (e.target, e.y1)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        xt = [(s.first + i, t) for i, t in enumerate(s.token_labels)]
        xt = xt[:: max(1, len(xt) // 16)]
        yt = [(d, translate("Figures", "embed") if d == 0 else str(d)) for d in range(s.n_layer + 1)]
        ax = Axes(QRectF(r.left(), r.top() + 20, r.width(), r.height() - 20), (s.first - 0.6, s.position + 0.6),
                  (-0.7, s.n_layer + 0.2), th, xlabel=translate("Figures", "position (token)"),
                  ylabel=translate("Figures", "depth (n = after block n−1)"), xticks=xt, yticks=yt, rotate_x=True)
        ax.draw(p)
        big = max((abs(e.value) for e in s.edges), default=1.0)
        p.setBrush(th.muted)
        p.setPen(Qt.NoPen)
        for n in s.nodes:
            if math.isnan(n.value):
                p.drawEllipse(QPointF(ax.x(n.position), ax.y(n.depth)), 2.5, 2.5)
        for e in reversed(s.edges):
            (x0, y0), (x1, y1) = points(e)
            w = max(1.2, 8.0 * math.sqrt(abs(e.value) / big))
            p.setPen(QPen(_signed(th, e.value, 190), w, Qt.SolidLine, Qt.RoundCap))
            p.drawLine(QPointF(ax.x(x0), ax.y(y0)), QPointF(ax.x(x1), ax.y(y1)))
        col = [n for n in s.nodes if not math.isnan(n.value)]
        span = max((abs(n.value) for n in col), default=1.0) or 1.0
        for n in col:
            p.setPen(QPen(th.fg, 0.8))
            p.setBrush(_signed(th, n.value, int(80 + 175 * min(1.0, abs(n.value) / span))))
            rr = 6 if float(n.depth).is_integer() else 3.5
            p.drawEllipse(QPointF(ax.x(n.position), ax.y(n.depth)), rr, rr)
        legend(p, r.left() + 4, r.top(), [(th.push, translate("Figures", "pushed the target up")),
                                          (th.pull, translate("Figures", "pulled it down"))], th)

    what = s.target_text + (f" − {s.vs_text}" if s.vs_text else "")
    title = translate("Figures", "How “{what}” got its logit at position {pos}: direct contributions by layer and "
                      "position").format(what=what, pos=s.position)
    note = translate("Figures", "Logit {logit:.3f} = the parts + final LayerNorm bias {bias:+.3f}. Edge width ∝ "
                     "√|contribution|; {dropped} parts at or under {th:.1%} of the total are hidden (the kept ones are "
                     "{kept:.0%}). Largest source: {head}.").format(
        logit=s.logit, bias=s.ln_bias_term, dropped=s.dropped, th=s.threshold, kept=s.kept_fraction, head=at.headline(s))
    return Figure(title, _caption(ctx, note), body, 520)


@figure("attribution")
def attribution_figure(ctx: Ctx) -> Figure:
    s = _path(ctx)
    bars = s.bars
    n = len(bars)

    def body(p: QPainter, r: QRectF, th: Theme, _cb):
        vals = np.array([b.value for b in bars]) if n else np.zeros(1)
        lo, hi = min(0.0, float(vals.min())), max(0.0, float(vals.max()))
        pad = 0.08 * ((hi - lo) or 1)
        yt = [(n - 1 - i, f"{at.bar_label(b)}  {b.value:+.2f}") for i, b in enumerate(bars)]
        ax = Axes(r, (lo - pad, hi + pad), (-0.6, n - 0.4), th,
                  xlabel=translate("Figures", "direct contribution to the logit (logit units)"), yticks=yt,
                  max_label=220)
        ax.draw(p)
        p.setPen(QPen(th.muted, 1))
        p.drawLine(QPointF(ax.x(0), ax.rect.top()), QPointF(ax.x(0), ax.rect.bottom()))
        p.setPen(Qt.NoPen)
        for i, b in enumerate(bars):
            y = n - 1 - i
            p.setBrush(_signed(th, b.value))
            p.drawRect(ax.cell(min(0.0, b.value), y - 0.35, max(0.0, b.value), y + 0.35))

    what = s.target_text + (f" − {s.vs_text}" if s.vs_text else "")
    title = translate("Figures", "What pushed “{what}” at position {pos} (and what pulled it down)").format(
        what=what, pos=s.position)
    note = translate("Figures", "Direct logit attribution: each part's write into the residual, read by the final "
                     "LayerNorm (scale frozen) and the unembedding. Logit {logit:.3f}.").format(logit=s.logit)
    return Figure(title, _caption(ctx, note), body, max(120, 24 * n + 50))


def with_layer(sel: Selection, layer: int) -> Selection:
    """``sel`` in another block (the stage follows, as selecting the block in the app does)."""
    from gpt2viz.core.session.session import Stage

    return replace(sel, layer=layer, stage=Stage.block(layer))
