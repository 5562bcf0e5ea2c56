"""A plot's labels at points, drawn in one paint from laid-out texts: the probability chart's bar labels.

Each label was a ``pg.TextItem``: a QGraphicsTextItem holding a QTextDocument, laid out again when its text changed
(all twelve at every Step), moved again whenever the view's scale changed and painted as a document. On a 2-core
EPYC that was ~0.35 ms of each repaint of the chart (hot; ~1 ms in the frame after a Step, the caches cold from the
model's read) and the labels' new texts and places as much again in the chart's redraw.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont

from gpt2viz.widgets.views.common import StaticTexts

# A QGraphicsTextItem's document leaves this many pixels around its text (QTextDocument's documentMargin): the
# labels keep the room and the places they had as TextItems.
MARGIN = 4.0
TEXTS_KEPT = 1024  # laid-out label texts kept: cleared when more


class PointLabels(pg.GraphicsObject):
    """Texts in one colour, each with its left end at a point of the plot (data coordinates) and centred on it
    vertically, in pixels whatever the plot's scale: what ``pg.TextItem(anchor=(0, 0.5))`` draws, MARGIN
    pixels in from the point. Add it with ``ignoreBounds=True``: it covers the view, not data."""

    def __init__(self, colour: QColor):
        super().__init__()
        self.colour = QColor(colour)
        self._labels: list[tuple[float, float, str]] = []
        self._texts = StaticTexts(TEXTS_KEPT)

    def set_labels(self, labels: list[tuple[float, float, str]]) -> None:
        """Show ``labels``, each (x, y, text); nothing is drawn again if they are the ones shown."""
        labels = [(float(x), float(y), str(t)) for x, y, t in labels]
        if labels != self._labels:
            self._labels = labels
            self.update()

    def labels(self) -> list[tuple[float, float, str]]:
        """The labels shown, each (x, y, text)."""
        return list(self._labels)

    def font(self) -> QFont:
        """The labels' font: the scene's, as a text item's."""
        scene = self.scene()
        return scene.font() if scene is not None else QFont()

    def extent(self, text: str) -> float:
        """A label's width in pixels from its point to the end of its room (the text and a margin each side)."""
        return self._texts.in_font(self.font())(text).size().width() + 2 * MARGIN

    def boundingRect(self) -> QRectF:  # noqa: N802 - Qt's name
        # the view's whole visible area: the labels are sized in pixels, and the view box clips its items
        r = self.viewRect()
        return QRectF(r) if r is not None else QRectF()

    def viewRangeChanged(self) -> None:  # noqa: N802 - pyqtgraph's name
        self.prepareGeometryChange()

    def viewTransformChanged(self) -> None:  # noqa: N802 - pyqtgraph's name
        self.prepareGeometryChange()

    def paint(self, p, *_args) -> None:
        """Every label at its point's pixel, in the device's coordinates."""
        if not self._labels:
            return
        font = self.font()
        laid_out = self._texts.in_font(font)
        to_device = p.transform()
        p.save()
        p.resetTransform()
        p.setFont(font)
        p.setPen(self.colour)
        for x, y, text in self._labels:
            st = laid_out(text)
            at = to_device.map(QPointF(x, y))
            p.drawStaticText(QPointF(round(at.x() + MARGIN), round(at.y() - st.size().height() / 2)), st)
        p.restore()
