"""Drawing for the page: a figure is a title, a body painted from a view model, and a caption with the facts.

Everything is painted with QPainter into a layout computed in logical units (1 unit = 1 px at scale 1), so
the same code writes a PNG at any scale (QImage) and a vector SVG (QSvgGenerator: text stays ``<text>``,
bars and lines stay shapes; only heatmap cells are an embedded image). Nothing here is a widget: an export
can never carry a spin box, a combo box or a hover hint.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QImage, QPainter, QPen
from PySide6.QtSvg import QSvgGenerator

WIDTH = 860.0  # logical width of a figure: at 6.5 in on a page, 13-unit text prints at about 7 pt
MARGIN = 22.0
TITLE_PX, BODY_PX, SMALL_PX = 19, 13, 11


@dataclass(frozen=True)
class Theme:
    """Colours of a figure: light (for paper, the default) or dark."""

    dark: bool = False

    @property
    def bg(self) -> QColor:
        return QColor(30, 32, 36) if self.dark else QColor(255, 255, 255)

    @property
    def fg(self) -> QColor:
        return QColor(232, 232, 232) if self.dark else QColor(20, 20, 20)

    @property
    def muted(self) -> QColor:
        return QColor(165, 165, 170) if self.dark else QColor(95, 95, 100)

    @property
    def grid(self) -> QColor:
        return QColor(70, 72, 78) if self.dark else QColor(222, 222, 226)

    @property
    def panel(self) -> QColor:
        return QColor(44, 46, 52) if self.dark else QColor(246, 246, 248)

    accent = QColor(46, 110, 190)
    accent2 = QColor(230, 130, 20)
    accent3 = QColor(46, 160, 67)
    accent4 = QColor(150, 80, 200)
    masked = QColor(150, 150, 150)
    push = QColor(46, 120, 200)
    pull = QColor(215, 80, 50)


def font(px: float, bold: bool = False, mono: bool = False) -> QFont:
    f = QFont("DejaVu Sans Mono" if mono else "DejaVu Sans")
    if mono:
        f.setStyleHint(QFont.Monospace)
    f.setPixelSize(max(1, round(px)))
    f.setBold(bold)
    return f


def text_height(text: str, f: QFont, width: float) -> float:
    """Height of ``text`` wrapped to ``width``: layouts are measured before anything is drawn (no clipping)."""
    if not text:
        return 0.0
    return QFontMetricsF(f).boundingRect(QRectF(0, 0, width, 1e6), Qt.TextWordWrap, text).height()


def text_width(text: str, f: QFont) -> float:
    return QFontMetricsF(f).horizontalAdvance(text)


def fit(text: str, f: QFont, width: float) -> str:
    """``text`` shortened with an ellipsis to ``width`` (never cut in the middle of a glyph by a clip)."""
    return QFontMetricsF(f).elidedText(text, Qt.ElideRight, width)


def draw_text(p: QPainter, rect: QRectF, text: str, f: QFont, color: QColor, flags=Qt.AlignLeft | Qt.AlignTop) -> None:
    p.setFont(f)
    p.setPen(color)
    p.drawText(rect, int(flags) | int(Qt.TextWordWrap), text)


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not math.isfinite(lo) or not math.isfinite(hi) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(1, n)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    return [round(first + i * step, 10) for i in range(int((hi - first) / step + 1e-9) + 1)]


def tick_label(v: float, step: float) -> str:
    if step >= 1 and abs(v) < 1e6:
        return f"{v:.0f}"
    digits = max(0, -math.floor(math.log10(step)) + (1 if step * 10 ** math.floor(-math.log10(step)) % 1 else 0))
    return f"{v:.{min(digits, 4)}f}"


# ---- colour maps -----------------------------------------------------------------------------------
def lut(name: str) -> np.ndarray:
    """[256, 4] uint8 lookup table of a pyqtgraph colour map (viridis, CET-D1 ...)."""
    import pyqtgraph as pg

    return np.asarray(pg.colormap.get(name).getLookupTable(0.0, 1.0, 256, alpha=True), np.uint8)


def to_image(m: np.ndarray, lo: float, hi: float, cmap: str) -> QImage:
    """Values through ``cmap`` between ``lo`` and ``hi``; NaN (masked) grey."""
    table = lut(cmap)
    span = (hi - lo) or 1.0
    idx = np.clip((np.nan_to_num(m, nan=lo) - lo) / span * 255, 0, 255).astype(np.uint8)
    rgba = np.ascontiguousarray(table[idx])
    rgba[np.isnan(m)] = (150, 150, 150, 255)
    h, w = m.shape
    img = QImage(rgba.data, w, h, 4 * w, QImage.Format_RGBA8888)
    return img.copy()  # own the pixels: the array goes away


@dataclass(frozen=True)
class Scale:
    """A colour scale: what a colour means (the colour bar's label), its range and its map."""

    label: str
    lo: float
    hi: float
    cmap: str = "viridis"


def draw_heatmap(p: QPainter, rect: QRectF, m: np.ndarray, scale: Scale) -> None:
    p.save()
    p.setRenderHint(QPainter.SmoothPixmapTransform, False)
    p.drawImage(rect, to_image(m, scale.lo, scale.hi, scale.cmap))
    p.restore()


COLORBAR_W = 14.0


def colorbar_width(scale: Scale) -> float:
    f = font(SMALL_PX)
    step = _cb_ticks(scale)
    labels = [tick_label(v, step[1]) for v in step[0]]
    return COLORBAR_W + 6 + max(text_width(s, f) for s in labels) + 6 + SMALL_PX + 6


def _cb_ticks(scale: Scale) -> tuple[list[float], float]:
    ticks = [t for t in nice_ticks(scale.lo, scale.hi, 4) if scale.lo - 1e-9 <= t <= scale.hi + 1e-9]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    return ticks, step


def draw_colorbar(p: QPainter, rect: QRectF, scale: Scale, theme: Theme, record: list | None = None) -> None:
    """A vertical colour bar (high at the top) with ticks and its label, in ``rect`` (height used, left edge)."""
    table = lut(scale.cmap)
    bar = QRectF(rect.left(), rect.top(), COLORBAR_W, rect.height())
    n = 64
    p.save()
    p.setPen(Qt.NoPen)
    for i in range(n):  # shapes, not an image: the SVG keeps a vector gradient strip
        c = table[round(255 * (n - 1 - i) / (n - 1))]
        p.setBrush(QColor(int(c[0]), int(c[1]), int(c[2])))
        y0 = bar.top() + bar.height() * i / n
        p.drawRect(QRectF(bar.left(), y0, bar.width(), bar.height() / n + 0.6))
    p.setBrush(Qt.NoBrush)
    p.setPen(QPen(theme.muted, 0.8))
    p.drawRect(bar)
    ticks, step = _cb_ticks(scale)
    f = font(SMALL_PX)
    p.setFont(f)
    span = (scale.hi - scale.lo) or 1.0
    tw = 0.0
    for t in ticks:
        y = bar.bottom() - (t - scale.lo) / span * bar.height()
        p.setPen(QPen(theme.muted, 0.8))
        p.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 4, y))
        s = tick_label(t, step)
        tw = max(tw, text_width(s, f))
        p.setPen(theme.fg)
        p.drawText(QRectF(bar.right() + 6, y - SMALL_PX, 200, 2 * SMALL_PX), Qt.AlignLeft | Qt.AlignVCenter, s)
    # the label, turned to read upwards
    p.translate(bar.right() + 6 + tw + 6 + SMALL_PX, bar.center().y())
    p.rotate(-90)
    lw = bar.height()
    p.setPen(theme.fg)
    p.drawText(QRectF(-lw / 2, -SMALL_PX - 2, lw, SMALL_PX + 4), Qt.AlignCenter, fit(scale.label, f, lw))
    p.restore()
    if record is not None:
        record.append({"label": scale.label, "lo": scale.lo, "hi": scale.hi, "cmap": scale.cmap,
                       "rect": [bar.left(), bar.top(), bar.width(), bar.height()]})


# ---- axes ------------------------------------------------------------------------------------------
class Axes:
    """A data rectangle inside ``outer`` with room for tick labels and axis labels.

    ``xticks`` / ``yticks``: None for round numbers, or a list of (value, label) (e.g. tokens).
    """

    def __init__(self, outer: QRectF, xlim, ylim, theme: Theme, xlabel: str = "", ylabel: str = "",
                 xticks=None, yticks=None, invert_y: bool = False, rotate_x: bool = False, title: str = "",
                 max_label: float = 150.0):
        self.theme, self.xlim, self.ylim, self.invert_y = theme, xlim, ylim, invert_y
        self.xlabel, self.ylabel, self.title, self.rotate_x = xlabel, ylabel, title, rotate_x
        self.f = font(SMALL_PX)
        self.xticks = xticks if xticks is not None else self._auto(xlim)
        self.yticks = yticks if yticks is not None else self._auto(ylim)
        self.ylabels = [(v, fit(s, self.f, max_label)) for v, s in self.yticks]
        self.xlabels = [(v, fit(s, self.f, max_label)) for v, s in self.xticks]
        left = (max((text_width(s, self.f) for _, s in self.ylabels), default=0) + 8
                + (SMALL_PX + 8 if ylabel else 0))
        xh = (max((text_width(s, self.f) for _, s in self.xlabels), default=0) if rotate_x else SMALL_PX) + 8
        bottom = xh + (SMALL_PX + 8 if xlabel else 0)
        top = (BODY_PX + 8) if title else 4
        self.rect = QRectF(outer.left() + left, outer.top() + top, max(10.0, outer.width() - left - 6),
                           max(10.0, outer.height() - top - bottom))
        self.outer = outer

    def _auto(self, lim):
        ticks = [t for t in nice_ticks(lim[0], lim[1], 5) if lim[0] - 1e-9 <= t <= lim[1] + 1e-9]
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        return [(t, tick_label(t, step)) for t in ticks]

    def x(self, v: float) -> float:
        a, b = self.xlim
        return self.rect.left() + (v - a) / ((b - a) or 1) * self.rect.width()

    def y(self, v: float) -> float:
        a, b = self.ylim
        t = (v - a) / ((b - a) or 1)
        return self.rect.top() + t * self.rect.height() if self.invert_y else self.rect.bottom() - t * self.rect.height()

    def cell(self, x0: float, y0: float, x1: float, y1: float) -> QRectF:
        return QRectF(QPointF(self.x(x0), self.y(y0)), QPointF(self.x(x1), self.y(y1))).normalized()

    def draw(self, p: QPainter, grid: bool = True, frame: bool = True) -> None:
        th, r = self.theme, self.rect
        p.save()
        p.setFont(self.f)
        if self.title:
            draw_text(p, QRectF(r.left(), self.outer.top(), r.width(), BODY_PX + 6),
                      fit(self.title, font(BODY_PX, True), r.width()), font(BODY_PX, True), th.fg, Qt.AlignHCenter)
            p.setFont(self.f)
        for v, s in self.ylabels:
            y = self.y(v)
            if grid:
                p.setPen(QPen(th.grid, 0.7))
                p.drawLine(QPointF(r.left(), y), QPointF(r.right(), y))
            p.setPen(th.fg)
            p.drawText(QRectF(self.outer.left(), y - SMALL_PX, r.left() - self.outer.left() - 6, 2 * SMALL_PX),
                       Qt.AlignRight | Qt.AlignVCenter, s)
        for v, s in self.xlabels:
            x = self.x(v)
            p.setPen(QPen(th.muted, 0.8))
            p.drawLine(QPointF(x, r.bottom()), QPointF(x, r.bottom() + 4))
            p.setPen(th.fg)
            if self.rotate_x:
                p.save()
                p.translate(x, r.bottom() + 6)
                p.rotate(-90)
                p.drawText(QRectF(-400, -SMALL_PX / 2 - 2, 400, SMALL_PX + 4), Qt.AlignRight | Qt.AlignVCenter, s)
                p.restore()
            else:
                w = text_width(s, self.f) + 4
                p.drawText(QRectF(x - w / 2, r.bottom() + 5, w, SMALL_PX + 3), Qt.AlignHCenter | Qt.AlignTop, s)
        if frame:
            p.setPen(QPen(th.muted, 0.9))
            p.setBrush(Qt.NoBrush)
            p.drawRect(r)
        if self.xlabel:
            p.setPen(th.fg)
            p.drawText(QRectF(r.left(), self.outer.bottom() - SMALL_PX - 4, r.width(), SMALL_PX + 4),
                       Qt.AlignHCenter | Qt.AlignBottom, fit(self.xlabel, self.f, r.width()))
        if self.ylabel:
            p.translate(self.outer.left() + SMALL_PX / 2 + 1, r.center().y())
            p.rotate(-90)
            p.setPen(th.fg)
            p.drawText(QRectF(-r.height() / 2, -SMALL_PX / 2 - 2, r.height(), SMALL_PX + 4), Qt.AlignCenter,
                       fit(self.ylabel, self.f, r.height()))
        p.restore()


def legend(p: QPainter, x: float, y: float, items: list[tuple[QColor, str]], theme: Theme) -> None:
    """A row of colour swatches with their names."""
    f = font(SMALL_PX)
    p.save()
    p.setFont(f)
    for c, s in items:
        p.setPen(Qt.NoPen)
        p.setBrush(c)
        p.drawRect(QRectF(x, y + 2, 12, SMALL_PX - 2))
        p.setPen(theme.fg)
        w = text_width(s, f)
        p.drawText(QRectF(x + 16, y, w + 4, SMALL_PX + 3), Qt.AlignLeft | Qt.AlignVCenter, s)
        x += 16 + w + 18
    p.restore()


# ---- a whole figure --------------------------------------------------------------------------------
Body = Callable[[QPainter, QRectF, Theme, list], None]


@dataclass
class Figure:
    """What an export draws: ``body(painter, rect, theme, colorbars)`` paints inside ``rect`` of ``body_h``.

    ``colorbars`` is filled while painting with every colour bar's rectangle and scale (in logical units):
    PNG metadata and tests read it.
    """

    title: str
    caption: str
    body: Body
    body_h: float
    width: float = WIDTH
    facts: dict = field(default_factory=dict)
    heatmap: bool = False  # the figure has a colour scale (tests: it must draw a colour bar)
    colorbars: list = field(default_factory=list)

    def layout(self) -> tuple[float, float, float]:
        """(title height, caption height, total height)."""
        inner = self.width - 2 * MARGIN
        th = text_height(self.title, font(TITLE_PX, True), inner)
        ch = text_height(self.caption, font(SMALL_PX), inner)
        return th, ch, MARGIN + th + 12 + self.body_h + 14 + ch + MARGIN

    @property
    def height(self) -> float:
        return self.layout()[2]

    def paint(self, p: QPainter, theme: Theme) -> None:
        th, ch, total = self.layout()
        inner = self.width - 2 * MARGIN
        p.fillRect(QRectF(0, 0, self.width, total), theme.bg)
        draw_text(p, QRectF(MARGIN, MARGIN, inner, th + 2), self.title, font(TITLE_PX, True), theme.fg)
        body = QRectF(MARGIN, MARGIN + th + 12, inner, self.body_h)
        self.colorbars.clear()
        p.save()
        self.body(p, body, theme, self.colorbars)
        p.restore()
        y = body.bottom() + 14
        p.setPen(QPen(theme.grid, 1))
        p.drawLine(QPointF(MARGIN, y - 7), QPointF(self.width - MARGIN, y - 7))
        draw_text(p, QRectF(MARGIN, y, inner, ch + 2), self.caption, font(SMALL_PX), theme.muted)


def render_png(fig: Figure, scale: float = 1.0, theme: Theme = Theme()) -> QImage:
    """The figure at ``scale`` with its facts (and colour bars, JSON) as PNG text metadata."""
    w, h = fig.width, fig.height
    img = QImage(QSize(math.ceil(w * scale), math.ceil(h * scale)), QImage.Format_ARGB32)
    img.fill(theme.bg)
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing)
    p.setRenderHint(QPainter.TextAntialiasing)
    p.scale(scale, scale)
    try:
        fig.paint(p, theme)
    finally:
        p.end()
    for k, v in {**fig.facts, "Title": fig.title, "Description": fig.caption}.items():
        img.setText(k, str(v))
    img.setText("Colorbars", json.dumps([{**c, "rect": [v * scale for v in c["rect"]]} for c in fig.colorbars]))
    return img


def svg_bytes(fig: Figure, theme: Theme = Theme()) -> bytes:
    """The figure as SVG (text as text); facts in the SVG's description."""
    w, h = fig.width, fig.height
    data = QByteArray()
    buf = QBuffer(data)
    buf.open(QIODevice.WriteOnly)
    gen = QSvgGenerator()
    gen.setOutputDevice(buf)
    gen.setSize(QSize(math.ceil(w), math.ceil(h)))
    gen.setViewBox(QRectF(0, 0, w, h))
    gen.setResolution(96)
    gen.setTitle(fig.title)
    gen.setDescription(json.dumps(fig.facts, ensure_ascii=False))
    p = QPainter(gen)
    try:
        fig.paint(p, theme)
    finally:
        p.end()
    buf.close()
    return bytes(data)
