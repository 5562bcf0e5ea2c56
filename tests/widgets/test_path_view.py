"""The Path view draws the core summary and its clicks open the head, the MLP or the lens."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
import pytest

from gpt2viz.core.analysis.attribution import attribute
from gpt2viz.core.io.trace_export import export_trace


@pytest.fixture
def win(stepped_window):
    return stepped_window("l3h4e32")


def _show(win):
    view = win.detail.views["Path"]
    win.detail.setCurrentWidget(view)
    return view


def test_view_draws_the_attribution_of_the_newest_token(win):
    st, view = win.state, _show(win)
    a = attribute(st.history, st.weights, 3, 4)
    s = view.summary
    assert s.target == a.target and s.position == len(st.history.tokens) - 1
    assert s.logit == pytest.approx(a.logit)
    assert "freezes the final LayerNorm" in view.method.text() and "recomputes" in view.method.text()
    view.slider.setValue(0)  # the lowest threshold (0.5 %) keeps more edges than 4 %
    assert len(view.summary.edges) >= len(s.edges) and view.summary.threshold == pytest.approx(0.005)


def test_nodes_are_drawn_by_two_lasting_scatter_items_in_shades_of_their_value(win):
    """Each draw gives the same two scatter items new points; a node's brush is one shared object per sign and
    shade, so pyqtgraph renders a look's symbol once, not once per draw."""
    from gpt2viz.widgets.views.path_view import NODE_LEVELS, _node_brush

    st, view = win.state, _show(win)
    nodes, others = view.nodes, view.others
    st.select_position(len(st.history.tokens) - 2)
    view.refresh()
    assert view.nodes is nodes and view.others is others
    assert [i for i in view.graph.getPlotItem().items if isinstance(i, pg.ScatterPlotItem)] == [others, nodes]
    kept = [n for n in view.summary.nodes if not np.isnan(n.value)]
    assert len(nodes.data) == len(kept) and len(others.data) == len(view.summary.nodes) - len(kept)
    span = max(abs(n.value) for n in kept)
    for n, brush in zip(kept, nodes.data["brush"]):
        assert brush is _node_brush(n.value >= 0, round(NODE_LEVELS * abs(n.value) / span))
    assert nodes.zValue() > max(i.zValue() for i in view.graph.getPlotItem().items if i not in (nodes, others))


def test_clicks_open_the_head_the_mlp_and_the_lens(win):
    st, view = win.state, _show(win)
    view.slider.setValue(1)
    heads = [i for i, e in enumerate(view.summary.edges) if e.kind == "head"]
    mlps = [i for i, e in enumerate(view.summary.edges) if e.kind == "mlp"]
    e = view.summary.edges[heads[0]]
    x, y = ((a + b) / 2 for a, b in zip(*view._edge_points(e)))
    assert view.edge_at(x, y) is not None
    view.click_edge(heads[0])
    assert win.detail.currentWidget() is win.detail.views["Attention"]
    assert (st.layer, st.head) == (e.layer, e.head)
    win.detail.setCurrentWidget(view)
    view.click_edge(mlps[0])
    assert win.detail.currentWidget() is win.detail.views["MLP"]
    win.detail.setCurrentWidget(view)
    node = next(i for i, n in enumerate(view.summary.nodes) if n.position == 2 and n.depth == 1)
    assert view.node_at(2.05, 1.02) == node
    assert "lens there predicts" in view.describe_node(node)
    view.click_node(node)
    assert win.detail.currentWidget() is win.detail.views["Logit lens"] and st.selected_position == 2


def test_data_export_carries_the_attribution(win, tmp_path):
    st = win.state
    npz, js = export_trace(st.history, st.model, st.sampling, tmp_path / "t.npz")
    a = attribute(st.history, st.weights, 3, 4)
    data, meta = np.load(npz), json.loads(js.read_text())
    np.testing.assert_allclose(data["attribution.by_source"], a.by_source)
    assert meta["attribution"]["target_id"] == a.target and len(meta["attribution"]["components"]) == 20


def test_after_an_edit_the_bars_carry_the_unedited_attribution_as_ghosts(qtbot, win):
    """With a rank-one edit in force the Path view attributes the edited run and, as ghosts, the same target in
    the run without the edit (both from onnxruntime runs); removing the edit removes the ghosts."""
    from gpt2viz.core.analysis.attribution import needed_hooks
    from gpt2viz.core.generation.stepper import Frame, History
    from gpt2viz.core.interventions import RankOneEdit

    st, view = win.state, _show(win)
    rng = np.random.default_rng(5)
    edit = RankOneEdit(2, rng.normal(size=48) * 0.5, rng.normal(size=32) * 2.0, "an edit")
    st.set_interventions((edit,))
    qtbot.waitUntil(lambda: not st.busy and st.history.current.interventions == (edit,), timeout=20000)
    view.refresh()
    s = view.summary
    tokens = list(st.history.tokens)
    edited, _ = st.model.run(tokens, hooks=needed_hooks(3), interventions=(edit,))
    plain, _ = st.model.run(tokens, hooks=needed_hooks(3))
    a = attribute(History((Frame(tuple(tokens), edited, 0.0),), st.history.prompt_len), st.weights, 3, 4,
                  target=s.target, position=s.position)
    b = attribute(History((Frame(tuple(tokens), plain, 0.0),), st.history.prompt_len), st.weights, 3, 4,
                  target=s.target, position=s.position)
    assert s.logit == pytest.approx(a.logit, rel=1e-4)
    assert s.before_logit == pytest.approx(b.logit, rel=1e-4) and abs(s.before_logit - s.logit) > 1e-3
    unedited = {(c.kind, c.layer, c.head): c.value for c in b.components()}
    assert len(s.before_bars) == len(s.bars)
    for bar, ghost in zip(s.bars, s.before_bars):
        assert ghost == pytest.approx(unedited[(bar.kind, bar.layer, bar.head)], rel=1e-4, abs=1e-6)
    # the edited block's MLP is the part that moved
    assert abs(a.mlp[2] - b.mlp[2]) > 1e-3
    assert "before them this logit was" in view.caption.text() and "grey outline" in view.bars_title.text()
    st.clear_interventions()
    qtbot.waitUntil(lambda: not st.busy and not st.history.current.interventions, timeout=20000)
    view.refresh()
    assert view.summary.before_logit is None and not view.summary.before_bars
