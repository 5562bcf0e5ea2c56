"""MarkedLine draws what pyqtgraph's PlotDataItem with markers draws, pixel for pixel."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from gpt2viz.widgets.views.common import symbol_style
from gpt2viz.widgets.views.marked_line import MarkedLine


def test_a_marked_line_looks_as_a_plot_data_item_with_markers(qtbot):
    ys = (np.array([0.01, 0.02, 0.05, 0.1, 0.08, 0.2, 0.3, 0.25, 0.5, 0.6, 0.7, 0.65, 0.9]), np.linspace(0.9, 0.1, 13))
    images = []
    for make in (lambda p: p.plot([], [], symbol="o", pen=(70, 130, 200), **symbol_style()),
                 lambda p: MarkedLine(p, pen=(70, 130, 200), symbol="o", **symbol_style())):
        plot = pg.PlotWidget(background="w")
        qtbot.addWidget(plot)
        plot.resize(400, 300)
        # The left axis sizes itself to its labels in a later layout pass, whose timing varies with the machine's
        # load: fixed, the grabs differ only in what the two items draw.
        plot.getAxis("left").setWidth(40)
        plot.hideButtons()
        line = make(plot)
        plot.setXRange(0, 12)
        plot.setYRange(0, 1)
        plot.show()
        qtbot.waitExposed(plot)
        shots = []
        for y in ys:  # set again: the second path replaces the first
            line.setData(np.arange(13), y)
            qtbot.wait(20)
            shots.append(plot.grab().toImage())
        images.append(shots)
    for ours, theirs in zip(images[1], images[0]):
        assert ours == theirs
    assert images[0][0] != images[0][1]
