"""The next-token chart's probability axis: where it reaches, and when it is fitted again."""

from __future__ import annotations

import pytest

from gpt2viz.widgets.prob_chart import REACH_SLACK, axis_reach


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
        return vb.viewRange()[0][1], chart.labels[0].toPlainText()

    plain = vb.viewRange()[0][1]
    ablated, label = after(st.add_intervention)
    assert ablated > plain and "%," in label  # "(before …, -…%)"
    assert after(st.remove_intervention)[0] == ablated
    assert after(st.add_intervention)[0] == ablated
