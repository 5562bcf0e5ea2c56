"""Small pieces the detail views share: themed plots, heatmap images, hover read-outs."""

from __future__ import annotations

import html
import weakref

import numpy as np
import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics, QPalette, QStaticText, QTransform
from PySide6.QtWidgets import QGraphicsView, QLabel, QSizePolicy, QSpinBox, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.widgets.views.kept_axis import kept_axes

_CMAP = pg.colormap.get("viridis")
MASKED_RGBA = (110, 110, 110, 255)
# viridis' 256 colours, then the masked cells' grey: one table look-up colours a whole map
_LUT = np.vstack([_CMAP.getLookupTable(0.0, 1.0, 256, alpha=True), np.array([MASKED_RGBA], np.uint8)])


def symbol_style(brush=(50, 50, 150), pen=(200, 200, 200)) -> dict:
    """``symbolPen`` / ``symbolBrush`` for a curve with markers, as Qt objects made once (pyqtgraph's defaults).

    pyqtgraph caches each marker picture under the identity of its pen and brush objects: colours given as
    tuples become new objects on every ``setData``, so every redraw added a picture to the cache (found by
    the 1000-step soak). Objects made once keep the cache at one picture per curve.
    """
    return {"symbolPen": pg.mkPen(pen), "symbolBrush": pg.mkBrush(brush)}


# Every plot made by repaint_whole, which the window prepares before it paints a frame (MainWindow.event). Finding
# them with findChildren walked every object of the window at every frame (its 200 token chips included): ~0.5 ms
# a frame on a 2-core EPYC, two or three frames a Step.
_PLOTS: weakref.WeakSet = weakref.WeakSet()


def repaint_whole(view: pg.GraphicsView) -> pg.GraphicsView:
    """Have ``view`` repaint its whole viewport when anything in it changes, and return it; it is one of
    :func:`plots` from now on.

    pyqtgraph's default works out the smallest region each changed item covers; after a step every item of a
    plot changes (data, ranges, axes), so that bookkeeping only added to the frame (~1 ms of a Back at 200
    tokens with the Attention tab's three plots and the chart shown, in a timeline of the GUI thread).
    """
    view.setViewportUpdateMode(QGraphicsView.FullViewportUpdate)
    _PLOTS.add(view)
    return view


def plots() -> list[pg.GraphicsView]:
    """The plots made by :func:`repaint_whole` that still exist (every plot of the app's windows)."""
    return [v for v in list(_PLOTS) if shiboken6.isValid(v)]


def set_ticks(axis: pg.AxisItem, ticks: list) -> None:
    """``axis.setTicks(ticks)`` unless the axis shows those ticks already: pyqtgraph makes an axis' picture again
    on every setTicks (its labels measured and drawn: 0.4-1.5 ms), and several views set the same ticks at every
    refresh."""
    if axis._tickLevels != ticks:  # pyqtgraph keeps the explicit ticks there (AxisItem.setTicks)
        axis.setTicks(ticks)


TICK_GAP_PX = 8  # between two tick labels along an axis


_WIDTHS: dict[tuple[str, str], int] = {}  # (font key, text) -> width in pixels (see _text_widths)


def _text_widths(font, texts) -> list[int]:
    """``horizontalAdvance`` of each of ``texts`` in ``font``, remembered: the token axes measure up to 200 labels
    at every step (~2 ms at 200 tokens), and a text's tokens come back step after step."""
    fm, key = None, font.key()
    out = []
    for text in texts:
        w = _WIDTHS.get((key, text))
        if w is None:
            if len(_WIDTHS) > 50_000:  # a bound, not a cache policy: labels are short and repeat
                _WIDTHS.clear()
            fm = fm or QFontMetrics(font)
            w = _WIDTHS[(key, text)] = fm.horizontalAdvance(text)
        out.append(w)
    return out


def spaced_ticks(ticks: list, length_px: float, font, vertical: bool) -> list:
    """Every n-th of ``ticks`` ((position, label), one per unit along an axis ``length_px`` long), n the smallest
    for which no two shown labels overlap: across a horizontal axis each takes its text's width, centred on its
    tick, along a vertical one a line.

    pyqtgraph draws every tick label it is given. A fixed count (24 of the attention map's 128 tokens) ran the
    labels of the map's and the bars' token axes into one smear at the window's default size, and each of them
    was measured and drawn at every step (~0.8 ms an axis at 200 tokens)."""
    if not ticks or length_px <= 0:
        return ticks[:1]
    widths = np.full(len(ticks), QFontMetrics(font).height() + 2.0) if vertical else \
        np.array(_text_widths(font, [label for _, label in ticks]), float) + TICK_GAP_PX
    unit = length_px / len(ticks)
    for n in range(1, len(ticks)):
        w = widths[::n]
        if np.all((w[:-1] + w[1:]) / 2 <= n * unit):
            return ticks[::n]
    return ticks[:1]


def place_token_ticks(plot, ax: str, labels: list) -> None:
    """Show on ``plot``'s axis ``ax`` ("left" or "bottom") as many of ``labels`` as fit along it now
    (:func:`spaced_ticks`); views call it again when the plot is resized."""
    axis, vertical = plot.getAxis(ax), ax == "left"
    vb = plot.getPlotItem().vb
    set_ticks(axis, [spaced_ticks(labels, vb.height() if vertical else vb.width(),
                                  axis.style.get("tickFont") or axis.font(), vertical)])


def set_title(plot, title: str, **opts) -> None:
    """``plot.setTitle(title, **opts)`` unless the plot (a PlotWidget or PlotItem) shows that title already:
    pyqtgraph lays a title out as HTML again on every setTitle and asks for the plot to be laid out again
    (a layout request that reached the window after every refresh of a view whose title had not changed).

    ``title`` is plain text, shown as it is: pyqtgraph puts it into HTML unescaped, where a token such as
    ``<|endoftext|>`` was taken for a tag and vanished from the title."""
    text = html.escape(title, quote=False)
    item = getattr(plot, "plotItem", plot)
    label = item.titleLabel
    if label.isVisible() and label.text == text and all(label.opts.get(k) == v for k, v in opts.items()):
        return
    item.setTitle(text, **opts)


def themed_plot(widget: QWidget, **kw) -> pg.PlotWidget:
    """A PlotWidget in the window's palette (light or dark), no context menu, repainted whole, its axes
    :class:`~gpt2viz.widgets.views.kept_axis.KeptAxis`."""
    pal = widget.palette()
    kw.setdefault("axisItems", kept_axes())
    p = repaint_whole(pg.PlotWidget(background=pal.color(QPalette.Base), **kw))
    p.setMenuEnabled(False)
    for ax in ("left", "bottom"):
        p.getAxis(ax).setTextPen(pal.color(QPalette.Text))
        p.getAxis(ax).setPen(pal.color(QPalette.Mid))
    return p


def to_rgba(m: np.ndarray, lo=0.0, hi=1.0) -> np.ndarray:
    """Values through viridis between ``lo`` and ``hi``; NaN (masked cells) as flat grey.

    One ``take`` from a table whose last row is the grey (a step redraws 13 maps of up to 128 x 128 on GPT-2
    small: indexing the table and then painting the mask over it was 0.33 ms a map, this is 0.03). ``lo`` and
    ``hi`` may be arrays that broadcast against ``m``: a stack of maps [H, Q, K] with levels shaped [H, 1, 1]
    is coloured in one pass (the Attention tab's 12 heads, ~0.4 ms less than one call a map at 200 tokens).
    """
    m = np.asarray(m)
    ft = m.dtype if m.dtype.kind == "f" else np.dtype(np.float64)
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    # the range in float64, then the map's own precision: as Python floats were taken, one map at a time
    span = np.where(hi == lo, 1.0, hi - lo).astype(ft)  # a flat map: no division by 0
    x = np.clip((m - lo.astype(ft)) / span * 255, 0, 255)  # NaN stays NaN
    x[np.isnan(x)] = len(_LUT) - 1
    return _LUT.take(x.astype(np.uint16), axis=0)


class HoverImage(pg.ImageItem):
    """An ImageItem that reports the cell under the cursor and clicks on it."""

    sigHover = Signal(int, int)  # row, column
    sigClicked = Signal(int, int)

    def __init__(self):
        super().__init__(axisOrder="row-major")
        self.setAcceptHoverEvents(True)

    def set_rgba(self, rgba: np.ndarray) -> None:
        """Show ``rgba`` ([rows, columns, 4] uint8, e.g. from :func:`to_rgba`) exactly as given.

        pyqtgraph's default levels each image from its own extremes (a map without pure black got levels
        1..255, which shifted every colour) and then converts it pixel by pixel: 0.075 ms a 128 x 128 map
        against 0.007 for these bytes wrapped as they are, 13 maps a frame on GPT-2 small's Attention tab.
        """
        self.setImage(rgba, autoLevels=False, levels=None)

    def _cell(self, pos):
        # pos is in image pixels whatever rect the image is drawn into
        return int(np.floor(pos.y())), int(np.floor(pos.x()))

    def hoverEvent(self, ev):
        if ev.isExit() or self.image is None:
            return
        r, c = self._cell(ev.pos())
        if 0 <= r < self.image.shape[0] and 0 <= c < self.image.shape[1]:
            self.sigHover.emit(r, c)

    def mouseClickEvent(self, ev):
        if self.image is None:
            return
        r, c = self._cell(ev.pos())
        if 0 <= r < self.image.shape[0] and 0 <= c < self.image.shape[1]:
            ev.accept()
            self.sigClicked.emit(r, c)


class PlainLabel(pg.LabelItem):
    """A LabelItem for plain text redrawn often (the Attention tab's head titles, at every step).

    pyqtgraph's ``setText`` wraps the text in HTML, lays it out as rich text and asks the layout for a new
    geometry every time: ~0.08 ms a label, and the head grid's layout ran again at every step. Here a text is
    set as plain text in one colour, and the layout is asked again only when the text no longer fits.
    """

    _plain: str | None = None  # the text shown

    def __init__(self, text: str = " ", color=None, **kw):
        super().__init__(" ", color=color, **kw)
        self.item.setDefaultTextColor(pg.mkColor(color if color is not None else pg.getConfigOption("foreground")))
        self.setText(text)

    def setText(self, text: str, **_style) -> None:  # noqa: N802 - pyqtgraph's name
        """Show ``text`` (plain, not HTML)."""
        if text == self._plain:
            return
        self._plain = self.text = text
        self.item.setPlainText(text)
        self.resizeEvent(None)  # centred in the place it has

    def updateMin(self) -> None:  # noqa: N802 - pyqtgraph's name
        """Grow the label's minimum to fit its text; never shrink it (a shrink would relay the grid out)."""
        b = self.itemRect()
        if b.width() > self.minimumWidth() or b.height() > self.minimumHeight():
            super().updateMin()


class StaticTexts:
    """Texts laid out once per font (``QStaticText``), for widgets that paint the same short texts at every
    frame (the lens grid's tokens, the pipeline's titles); at most ``limit`` kept, all dropped when more."""

    def __init__(self, limit: int):
        self.limit = limit
        self._kept: dict[tuple[str, str], QStaticText] = {}

    def in_font(self, font):
        """A function giving a text laid out in ``font``, whose ``size()`` (for centring) is in that font, not the
        default one. The font's key is made once, for the many texts of a paint (~2 µs each: the lens grid's 120
        texts took 0.3 ms more)."""
        font_key, kept = font.key(), self._kept

        def laid_out(text: str) -> QStaticText:
            st = kept.get((font_key, text))
            if st is None:
                if len(kept) >= self.limit:
                    kept.clear()
                st = kept[(font_key, text)] = QStaticText(text)
                st.setTextFormat(Qt.PlainText)
                st.prepare(QTransform(), font)
            return st
        return laid_out


class SteadyLabel(QLabel):
    """A label that keeps the room its longest text needed: it grows with its text and never shrinks back.

    Texts that change at every step or with every intervention (a chart's title gaining a "with ablation"
    line, the lens path's before/after ranks, the status line's numbers) otherwise resize the label, and with
    it the plot beside or under it: the plot is laid out, its axes made and the whole of it drawn again
    (~4 ms of adding or removing an ablation at 200 tokens). Kept in place, the plot under the text does not
    move when an ablation comes and goes, so before and after can be compared where they stand. The room is
    measured again when the label's width changes (a window resized, a language switched).
    """

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        """Show ``text``; the label grows if it needs more room than it has had since its width last changed."""
        if text == self.text():
            return
        super().setText(text)
        if self.wordWrap():
            need = self.heightForWidth(self.width()) if self.width() > 0 else self.sizeHint().height()
            if need > self.minimumHeight():
                self.setMinimumHeight(need)
        else:
            hint = self.sizeHint()
            if hint.width() > self.minimumWidth() or hint.height() > self.minimumHeight():
                self.setMinimumSize(hint.expandedTo(self.minimumSize()))

    def resizeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        # a wrapped text's height depends on the width: measure it again from the text shown now
        if self.wordWrap() and e.oldSize().width() != e.size().width() and self.minimumHeight() > 0:
            self.setMinimumHeight(0)  # QLabel measures a wrapped text no lower than the label's minimum
            self.setMinimumHeight(max(0, self.heightForWidth(e.size().width())))
        super().resizeEvent(e)

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        if e.type() in (QEvent.FontChange, QEvent.LanguageChange) and not self.wordWrap():
            self.setMinimumSize(0, 0)  # the room of another font or language's texts
        super().changeEvent(e)


class LayoutFence(QWidget):
    """Holds one label, and passes its requests to be laid out on to the layouts around it only when the label
    no longer fits the room it has.

    A label's new text has Qt make every layout around it again, up to the window's: QLabel.setText asks its
    parent's layout, and each layout, once made, asks its parent's, whatever changed (QLayout::activate ends in
    updateGeometry). After a Step with the newest token followed, five texts (the stage's explanation, the lens
    caption and target line, the chart's title, the status line) made five chains of layouts up to the window,
    ~1 ms of a 2-core EPYC's frame, though nothing moved. Behind the fence a text that fits is only drawn; a
    text that needs more room is laid out as before. A text that needs less keeps the room (as
    :class:`SteadyLabel` does) until the window is laid out again for another reason.
    """

    def __init__(self, child: QLabel, parent=None):
        super().__init__(parent)
        self.child = child
        child.setParent(self)
        self.setSizePolicy(child.sizePolicy())
        self._limits = self._limits_now()

    def _limits_now(self) -> tuple:
        c = self.child
        return c.minimumSize(), c.maximumSize(), c.sizePolicy()

    def _fits(self) -> bool:
        c, size = self.child, self.size()
        if self._limits_now() != self._limits or size.isEmpty():
            return False
        if c.hasHeightForWidth():
            return c.heightForWidth(size.width()) <= size.height()
        hint = c.sizeHint()
        return hint.width() <= size.width() and hint.height() <= size.height()

    def event(self, e) -> bool:
        if e.type() == QEvent.LayoutRequest:  # posted by the label's updateGeometry (this widget has no layout)
            if not self._fits():
                self._limits = self._limits_now()
                self.setSizePolicy(self.child.sizePolicy())
                self.updateGeometry()
            return True
        return super().event(e)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.child.sizeHint()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        return self.child.minimumSizeHint().expandedTo(self.child.minimumSize())

    def hasHeightForWidth(self) -> bool:  # noqa: N802 - Qt's name
        return self.child.hasHeightForWidth()

    def heightForWidth(self, width: int) -> int:  # noqa: N802 - Qt's name
        return max(self.child.heightForWidth(width), self.child.minimumHeight())

    def resizeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        self.child.setGeometry(self.rect())
        super().resizeEvent(e)


def note(text: str = "", steady: bool = False) -> QLabel:
    """A wrapped explanatory label; ``steady``: a :class:`SteadyLabel` (for a text that changes with every step
    or intervention)."""
    lbl = (SteadyLabel if steady else QLabel)(text)
    lbl.setWordWrap(True)
    # never squeezed under its text: a plot beside it would otherwise clip a caption that wraps to more
    # lines (Chinese captions wrap differently from English ones)
    lbl.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)
    return lbl


def layer_box(state, session: SessionId = SessionId.A) -> QSpinBox:
    """A "layer N" spin box that selects that block for every view of ``session``."""
    box = LayerBox()
    box.valueChanged.connect(lambda v: state.select_block(v, session=session))
    return box


class LayerBox(QSpinBox):
    """A spin box whose "layer " prefix follows the language."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setPrefix(QCoreApplication.translate("Views", "layer "))

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        if e.type() == QEvent.LanguageChange:
            self.setPrefix(QCoreApplication.translate("Views", "layer "))
        super().changeEvent(e)


def sync_layer_box(box: QSpinBox, n_layer: int, layer: int) -> None:
    """Show ``layer`` in the box without echoing the change back as a new selection."""
    box.blockSignals(True)
    box.setRange(0, n_layer - 1)
    box.setValue(layer)
    box.blockSignals(False)


class LazyView(QWidget):
    """A view that redraws only while it is visible; a hidden one catches up when it is shown.

    Six detail views listen to every step; drawing the hidden five would cost the visible one its
    frame rate (the logit-lens grid alone is 16 unembeddings for GPT-2 small).
    """

    _stale = False

    def bind(self, state, session: str) -> None:
        """Show session ``session`` of ``state`` (the same view class can show A or B)."""
        self.state, self.name, self.session = state, session, state.session(session)

    def watch(self, signal, slot=None) -> None:
        """Call ``slot`` (default ``refresh``) on ``signal`` for this view's session if visible, else on the next show."""
        signal.connect(lambda name, *_a: name == self.name and self._request(slot or self.refresh))

    def _request(self, slot) -> None:
        if self.isVisible():
            slot()
        else:
            self._stale = True

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        # A language switch: fixed texts now, the drawn ones (captions, read-outs) when next visible.
        if e.type() == QEvent.LanguageChange:
            self.retranslate()
            self._request(self.refresh)
        super().changeEvent(e)

    def retranslate(self) -> None:
        """Reset the view's fixed texts (labels, headers, placeholders); views with any override it."""

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self._stale:
            self._stale = False
            self.refresh()

    def refresh(self) -> None:  # pragma: no cover - every view defines it
        raise NotImplementedError
