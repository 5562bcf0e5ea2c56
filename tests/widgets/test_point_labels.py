"""PointLabels draws each text where pg.TextItem(anchor=(0, 0.5)) drew it, at every scale of the plot."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from gpt2viz.widgets.views.point_labels import PointLabels

LABELS = [(0.42, 2.0, "42.0%  (model 40.1%)"), (0.1, 1.0, "10.0%"), (0.015, 0.0, "1.5%  (before 3.0%, -1.5%)")]


def ink_boxes(plot: pg.PlotWidget, qtbot) -> list[tuple[int, int, int, int]]:
    """Per label row (a band of the plot's height around its y), the box of the pixels that are not background."""
    qtbot.wait(20)
    img = plot.grab().toImage()
    a = np.array([[img.pixelColor(x, y).lightness() for x in range(img.width())] for y in range(img.height())])
    vb = plot.getPlotItem().vb
    boxes = []
    for x, y, _t in LABELS:
        at = plot.mapFromScene(vb.mapViewToScene(pg.Point(x, y)))
        band = a[at.y() - 8: at.y() + 9, at.x() + 1:]
        ys, xs = np.nonzero(band < 128)
        boxes.append((xs.min() + at.x() + 1, ys.min() + at.y() - 8, xs.max() + at.x() + 1, ys.max() + at.y() - 8))
    return boxes


def test_labels_sit_where_text_items_did_at_any_scale(qtbot):
    def plot_with(add):
        plot = pg.PlotWidget(background="w")
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        plot.hideButtons()  # the auto-range button shows while the cursor hovers: not what is compared
        qtbot.addWidget(plot)
        plot.resize(500, 200)
        add(plot)
        plot.show()
        qtbot.waitExposed(plot)
        return plot

    def items(plot):
        for x, y, t in LABELS:
            item = pg.TextItem(t, color=QColor(0, 0, 0), anchor=(0, 0.5))
            item.setPos(x, y)
            plot.addItem(item)

    def ours(plot):
        labels = PointLabels(QColor(0, 0, 0))
        labels.set_labels(LABELS)
        plot.addItem(labels, ignoreBounds=True)

    old, new = plot_with(items), plot_with(ours)
    for x_reach in (1.0, 2.5):  # the labels stay at their points when the scale changes
        for plot in (old, new):
            plot.setXRange(0, x_reach, padding=0)
            plot.setYRange(-0.6, 2.6, padding=0)
        for a, b in zip(ink_boxes(old, qtbot), ink_boxes(new, qtbot)):
            assert max(abs(u - v) for u, v in zip(a, b)) <= 1, (a, b)


def test_a_labels_extent_is_a_text_items_width(qtbot):
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    labels = PointLabels(QColor(0, 0, 0))
    plot.addItem(labels, ignoreBounds=True)
    for _x, _y, text in LABELS:
        item = pg.TextItem(text)
        plot.addItem(item)
        assert abs(labels.extent(text) - item.textItem.boundingRect().width()) <= 1
