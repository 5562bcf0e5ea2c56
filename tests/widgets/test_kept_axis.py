"""KeptAxis: a kept picture is played only when it is the picture pyqtgraph would draw."""

import pyqtgraph as pg
import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from gpt2viz.widgets.views.kept_axis import KEEP, KeptAxis, kept_axes

TICKS_A = [[(i, f"tok{i:02d}") for i in range(12)]]
# narrower than A's labels by less than an axis gives back room for (10 px): the axis keeps its width
TICKS_B = [[(i, f"tik{i:02d}") for i in range(12)]]


def _plot(qtbot, axes):
    w = pg.PlotWidget(axisItems=axes)
    qtbot.addWidget(w)
    w.resize(360, 300)
    w.setYRange(-0.5, 11.5, padding=0)
    w.setXRange(-0.5, 11.5, padding=0)
    w.show()
    qtbot.waitExposed(w)
    return w


def _image(w):
    """The plot as drawn once its layout has settled (an axis that needs more room for its labels asks for it
    while it draws them, and the plot is laid out again after that frame)."""
    for _ in range(3):
        QApplication.processEvents()
        w.grab()
    return w.grab().toImage()


def _counting(axis: KeptAxis) -> list:
    calls = []
    draw = axis.generateDrawSpecs

    def counted(p):
        calls.append(1)
        return draw(p)

    axis.generateDrawSpecs = counted
    return calls


def test_going_back_plays_the_kept_picture_which_is_what_pyqtgraph_draws(qtbot):
    kept = _plot(qtbot, kept_axes())
    plain = _plot(qtbot, {"left": pg.AxisItem("left"), "bottom": pg.AxisItem("bottom")})
    for w in (kept, plain):
        for ax in ("left", "bottom"):
            w.getAxis(ax).setTicks(TICKS_A)
    first = _image(kept)
    assert first == _image(plain)
    left = kept.getAxis("left")
    calls = _counting(left)
    left.setTicks(TICKS_B)
    other = _image(kept)
    assert other != first and len(calls) == 1
    left.setTicks(TICKS_A)  # back: played, not drawn again
    assert _image(kept) == first
    assert len(calls) == 1


@pytest.mark.parametrize("change", ["text pen", "range", "size"])
def test_a_change_the_picture_depends_on_draws_it_again(qtbot, change):
    kept = _plot(qtbot, kept_axes())
    plain = _plot(qtbot, {"left": pg.AxisItem("left"), "bottom": pg.AxisItem("bottom")})
    for w in (kept, plain):
        w.getAxis("left").setTicks(TICKS_A)
    before = _image(kept)
    calls = _counting(kept.getAxis("left"))
    for w in (kept, plain):
        if change == "text pen":
            w.getAxis("left").setTextPen(QColor(200, 30, 30))
        elif change == "range":
            w.setYRange(2.5, 9.5, padding=0)
        else:
            w.resize(360, 240)
        # the same ticks set again, as a view's refresh does: the kept picture of them is now out of date
        w.getAxis("left").setTicks(TICKS_B)
        _image(w)
        w.getAxis("left").setTicks(TICKS_A)
    after = _image(kept)
    assert after != before
    assert after == _image(plain)
    assert calls  # drawn again, not played


def test_an_axis_keeps_a_few_pictures(qtbot):
    kept = _plot(qtbot, kept_axes())
    left = kept.getAxis("left")
    for n in range(KEEP + 3):
        left.setTicks([[(i, f"t{n}.{i}") for i in range(12)]])
        _image(kept)
    assert len(left._kept) == KEEP


def test_numeric_axes_are_drawn_as_pyqtgraph_draws_them(qtbot):
    kept = _plot(qtbot, kept_axes())
    plain = _plot(qtbot, {"left": pg.AxisItem("left"), "bottom": pg.AxisItem("bottom")})
    assert _image(kept) == _image(plain)
    assert kept.getAxis("left")._kept == {} and kept.getAxis("bottom")._kept == {}


def _counting_titles(axis) -> list:
    calls = []
    set_html = axis.label.setHtml

    def counted(html):
        calls.append(html)
        return set_html(html)

    axis.label.setHtml = counted
    return calls


def test_the_title_is_set_again_only_when_its_text_changes(qtbot):
    # pyqtgraph sets an axis title again at every range change (its automatic SI prefix); the kept axis sets it
    # when the prefix, and so the text, changes, and otherwise ends as pyqtgraph's does
    kept = _plot(qtbot, kept_axes())
    plain = _plot(qtbot, {"left": pg.AxisItem("left"), "bottom": pg.AxisItem("bottom")})
    for w in (kept, plain):
        w.getAxis("left").setLabel("value", units="V")
    left = kept.getAxis("left")
    titles = _counting_titles(left)
    ranges = [(0, 2), (0, 3), (0, 0.002), (0, 0.003), (-0.001, 0.004), (0, 5), (0, 2e6)]
    for lo, hi in ranges:
        for w in (kept, plain):
            w.setYRange(lo, hi, padding=0)
        assert left.label.toHtml() == plain.getAxis("left").label.toHtml()
        assert left.width() == plain.getAxis("left").width()
        assert _image(kept) == _image(plain)
    # V, mV, V, MV: set when the prefix changed, not at the other ranges
    assert len(titles) == 3


def test_an_axis_without_a_title_does_not_set_one_at_each_range(qtbot):
    kept = _plot(qtbot, kept_axes())
    left = kept.getAxis("left")
    titles = _counting_titles(left)
    left.setTicks(TICKS_A)
    for lo in range(5):
        kept.setYRange(lo - 0.5, lo + 6.5, padding=0)
        _image(kept)
    assert titles == []
