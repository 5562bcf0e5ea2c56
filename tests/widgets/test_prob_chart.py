"""The next-token chart's probability axis: where it reaches, and when it is fitted again."""

from __future__ import annotations

import pyqtgraph as pg
import pytest

from gpt2viz.widgets.prob_chart import REACH_SLACK, axis_reach, probability_step


@pytest.mark.parametrize("current, need, want", [
    (0.8, 0.8, 0.8),  # fitted
    (0.9, 0.8, 0.9),  # a little further than it must: stays
    (0.8 * REACH_SLACK, 0.8, 0.8 * REACH_SLACK),
    (0.97, 0.8, 0.8),  # much further: fitted again, the bars would look small
    (0.7, 0.8, 0.8),  # short of it: a label would be cut
])
def test_the_axis_stays_where_it_is_while_every_label_fits_and_the_bars_are_not_much_smaller(current, need, want):
    assert axis_reach(current, need) == want


def test_the_axis_stays_in_place_when_an_ablation_comes_and_goes(qtbot, tmp_path):
    """On atlas, ablating head 0.1 widens the labels ("before …"): the axis reaches further. Removing the ablation
    leaves it there (it reaches less than REACH_SLACK times further than it must), and so does adding it again:
    before and after are drawn to one scale, and the axis's ticks and every label's place are not made again."""
    from gpt2viz.core.interventions import HeadAblation
    from gpt2viz.core.model_folder.locations import resolve_model
    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, resolve_model(None))
    st, chart = win.state, win.chart
    vb = chart.plot.getPlotItem().vb

    def after(change):
        change(HeadAblation(0, 1))
        qtbot.waitUntil(lambda: not st.busy and st.history.current.interventions == st.session().interventions)
        return vb.viewRange()[0][1], chart.labels.labels()[0][2]

    plain = vb.viewRange()[0][1]
    ablated, label = after(st.add_intervention)
    assert ablated > plain and "%," in label  # "(before …, -…%)"
    assert after(st.remove_intervention)[0] == ablated
    assert after(st.add_intervention)[0] == ablated


@pytest.mark.parametrize("reach, px, want", [
    (1.75, 600, 0.2),  # a wide chart: 0, 20, ..., 100 %
    (1.75, 170, 0.5),  # a narrow one (the Chinese window with an ablation): 0, 50, 100 %
    (1.75, 60, 1.0),  # too narrow for more than 0 and 100 %
    (0.3, 600, 0.05),  # a flat distribution: the axis reaches 30 %, six ticks at most
])
def test_the_probability_ticks_never_run_into_each_other(reach, px, want):
    step = probability_step(reach, px / reach, 40)
    assert step == want
    assert min(reach, 1.0) / step <= 6 or step == 1.0


def test_the_chart_s_tick_labels_keep_apart_on_a_narrow_chart(qtbot, tmp_path):
    """Squeezed, the chart shows fewer probability ticks: each label is at least its own width from the next."""
    from PySide6.QtGui import QFontMetrics

    from gpt2viz.core.model_folder.locations import resolve_model
    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, resolve_model(None))
    chart = win.chart
    for width in (900, 300):
        chart.setFixedWidth(width)
        qtbot.wait(50)
        chart.redraw()
        axis = chart.plot.getAxis("bottom")
        ticks = [v for v, _ in axis._tickLevels[0]]
        vb = chart.plot.getPlotItem().vb
        px = [vb.mapViewToScene(pg.Point(v, 0)).x() for v in ticks]
        label = QFontMetrics(axis.font()).horizontalAdvance("100%")
        assert len(ticks) >= 2 and min(b - a for a, b in zip(px, px[1:])) > label
