"""An axis that keeps the pictures of its last few sets of token labels, and sets its title only when it changes.

pyqtgraph's AxisItem draws its ticks and labels into a picture and throws it away whenever anything about them
changes; making it again lays out every label's text (~0.8 ms an axis of token labels at 200 tokens on a 2-core
EPYC, three such axes in the frame after a Back: the chart's tokens, the attention map's rows and columns). Back,
and an intervention taken off, go back to a view drawn a moment before, so its labels' picture is kept and played
again instead.

pyqtgraph also sets the axis title again (its rich text laid out, the axis resized) at every change of its range,
for the automatic SI prefix, though the title's text changes only when the prefix does (0.06-0.08 ms each on the
EPYC machine, two or more in every Step and Back on atlas, where the maps change shape).
"""

from __future__ import annotations

from collections import OrderedDict

import pyqtgraph as pg
from PySide6.QtGui import QFont, QPen

KEEP = 4  # pictures kept per axis: the view now, the one before, and the two a Step / Back pair goes between


def _pen_key(pen: QPen) -> tuple:
    return pen.color().rgba(), pen.widthF(), int(pen.style().value), pen.isCosmetic()


class KeptAxis(pg.AxisItem):
    """An AxisItem that, for explicit ticks (:meth:`setTicks`), keeps the last :data:`KEEP` pictures it drew,
    each under everything the picture depends on (the ticks, the range, its size and device scale, the grid's
    bounds, the style, pens and fonts), and plays one again when all of that is as it was. Numeric axes (no
    explicit ticks) are drawn as pyqtgraph draws them."""

    def __init__(self, *args, **kwargs):
        self._kept: OrderedDict = OrderedDict()  # key -> (picture, the text size its labels needed)
        self._text_size: float | None = None
        self._label_text: str | None = None  # the title's text as last set (see _updateLabel)
        super().__init__(*args, **kwargs)

    def _picture_key(self) -> tuple | None:
        t = self.deviceTransform_()  # None before the plot is shown: pyqtgraph then draws nothing
        if self._tickLevels is None or t is None:
            return None
        g = self.geometry()
        view = self.linkedView()
        grid_bounds = None
        if view is not None and self.grid is not False:
            r = view.mapRectToItem(self, view.boundingRect())
            grid_bounds = (r.x(), r.y(), r.width(), r.height())
        font = self.style.get("tickFont")
        style = tuple(sorted((k, repr(v)) for k, v in self.style.items() if k != "tickFont"))
        return (tuple(tuple(level) for level in self._tickLevels), tuple(self.range), (g.width(), g.height()),
                (t.m11(), t.m12(), t.m21(), t.m22()), grid_bounds, self.grid, style,
                font.key() if font is not None else QFont().key(),
                _pen_key(self.pen()), _pen_key(self.tickPen()), _pen_key(self.textPen()))

    def _updateLabel(self):  # noqa: N802 - pyqtgraph's name
        """pyqtgraph's, when the title's text changed; else only the picture is redrawn, as it asks too."""
        text = self.labelString()
        if text == self._label_text:
            self.picture = None
            self.update()
            return
        self._label_text = text
        super()._updateLabel()

    def _updateMaxTextSize(self, x: int):  # noqa: N802 - pyqtgraph's name
        # Noted while a picture is made and told again when it is played: the axis makes room for its labels.
        self._text_size = x
        super()._updateMaxTextSize(x)

    def paint(self, p, opt, widget):
        """Play the kept picture of these ticks if there is one, else draw them and keep the picture."""
        key = self._picture_key() if self.picture is None else None
        kept = self._kept.get(key) if key is not None else None
        if kept is not None:
            self._kept.move_to_end(key)
            picture, size = kept
            if size is not None:  # as generateDrawSpecs does; it clears the picture, set after it as there
                self._updateMaxTextSize(size)
            self.picture = picture
        self._text_size = None
        super().paint(p, opt, widget)  # plays self.picture, made first if there is none
        if key is not None and kept is None and self.picture is not None:
            self._kept[key] = (self.picture, self._text_size)
            while len(self._kept) > KEEP:
                self._kept.popitem(last=False)


def kept_axes() -> dict[str, KeptAxis]:
    """A left and a bottom :class:`KeptAxis`, for ``pg.PlotWidget(axisItems=...)``."""
    return {"left": KeptAxis("left"), "bottom": KeptAxis("bottom")}
