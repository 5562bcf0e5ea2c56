"""Ablating by pointing: the context menu adds an intervention, the worker re-runs the text under it,
the chart shows exactly the engine's numbers with the run without it as ghost; removing the chip
restores the original numbers bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint

from gpt2viz.core.interventions import HeadAblation, NeuronAblation, SublayerAblation
from gpt2viz.core.generation.sampling import pick
from gpt2viz.core.generation.stepper import Generator


def wait_idle(qtbot, state, timeout=20000):
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=timeout)


def engine_probs(win, ivs):
    """The raw next-token probabilities the engine gives for the window's text under ``ivs``, made as
    the worker makes them (prefill of the prompt, then the generated tokens stepped)."""
    st = win.state
    h = st.history
    gen = Generator(st.model, interventions=ivs)
    gen.start(list(h.tokens[: h.prompt_len]))
    for t in h.generated:
        gen._run_step(int(t), True)
    dist, _ = pick(gen.current.logits, st.sampling, len(gen.tokens))
    return dist.raw


def chart_numbers(win):
    return [(r.id, r.raw, r.final) for r in win.chart.summary.rows]


def test_ablating_a_head_from_the_menu_gives_the_engines_numbers_and_removing_restores(qtbot, stepped_window,
                                                                                     tmp_path):
    win = stepped_window("l3h4e32")
    st = win.state
    before = chart_numbers(win)
    before_logits = st.history.current.logits.copy()
    st.select_block(1)
    win.detail.setCurrentWidget(win.detail.views["Attention"])
    qtbot.waitUntil(lambda: win.detail.views["Attention"].summary is not None)
    att = win.detail.views["Attention"]
    # right-click on head 2's small map
    vb = att.cells[2].getViewBox()
    centre = att.grid.mapFromScene(vb.sceneBoundingRect().center())
    pos = win.detail.mapFromGlobal(att.grid.mapToGlobal(centre))
    win._context_menu(win.detail, None, pos)
    acts = win.ablation_menu_actions
    assert "1.2" in acts[0].text()
    acts[0].trigger()  # ablate head 1.2 (zero)
    assert st.session("A").interventions == (HeadAblation(1, 2, "zero"),)
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: st.history.current.interventions == (HeadAblation(1, 2),))
    assert len(win.chips.chips) == 1 and win.chips.isVisible()
    want = engine_probs(win, (HeadAblation(1, 2),))
    rows = win.chart.summary.rows
    assert [r.raw for r in rows] == [float(want[r.id]) for r in rows]
    assert [r.id for r in rows] != [i for i, _, _ in before] or [r.raw for r in rows] != [b for _, b, _ in before]
    # the ghost is the run without the intervention: the original numbers
    assert [r.before for r in rows] == pytest.approx([float(engine_probs(win, ())[r.id]) for r in rows], rel=1e-5)
    assert "1.2" in win.chart.title.text()
    # the data export and the figures' captions name it
    import json

    from gpt2viz.core.io.trace_export import export_trace
    from gpt2viz.widgets.snapshot import facts, full_caption

    _, js = export_trace(st.history, st.model, st.sampling, tmp_path / "d.npz")
    assert json.loads(js.read_text())["interventions"] == [
        {"kind": "head_ablation", "layer": 1, "head": 2, "mode": "zero", "positions": None}]
    assert "L1.H2" in full_caption(facts(st, "chart"))
    # the pipeline carries the original answer's deltas
    ps = win.pipeline.cells.summary
    assert ps.target is not None and all(b.target_delta is not None for b in ps.blocks)
    # remove the chip: bit for bit the original numbers
    win.chips.chips[0].click()
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: st.history.current.interventions == ())
    assert chart_numbers(win) == before
    np.testing.assert_array_equal(st.history.current.logits, before_logits)
    assert win.chips.chips == [] and win.chart.summary.rows[0].before is None
    assert win.chips.isVisible()  # the empty row keeps its place (nothing under it moves) and says how to add one


def test_neuron_and_block_ablations_from_menus_and_remove_all(qtbot, stepped_window):
    win = stepped_window("l3h4e32")
    st = win.state
    before = chart_numbers(win)
    st.select_block(0)
    win.detail.setCurrentWidget(win.detail.views["MLP"])
    qtbot.waitUntil(lambda: win.detail.views["MLP"].summary is not None)
    mlp = win.detail.views["MLP"]
    neuron = int(mlp.summary.top[1][0])
    rect = mlp.table.visualItemRect(mlp.table.item(1, 0))
    pos = win.detail.mapFromGlobal(mlp.table.viewport().mapToGlobal(rect.center()))
    win._context_menu(win.detail, None, pos)
    acts = win.ablation_menu_actions
    assert f"0.{neuron}" in acts[0].text()
    acts[0].trigger()
    wait_idle(qtbot, st)
    # a block cell of the pipeline: block 2's attention (mean)
    cells = win.pipeline.cells
    i = st.session("A").stages().index(next(s for s in st.session("A").stages() if s.is_block and s.layer == 2))
    gpos = cells.mapToGlobal(cells.cell_rect(i).center().toPoint())
    win._context_menu(win.pipeline, "pipeline", win.pipeline.mapFromGlobal(gpos))
    act = next(a for a in win.ablation_menu_actions if "2" in a.text() and "mean" in a.text())
    act.trigger()
    wait_idle(qtbot, st)
    ivs = (NeuronAblation(0, neuron, 0.0), SublayerAblation(2, "attn_out", "mean"))
    qtbot.waitUntil(lambda: st.history.current.interventions == ivs)
    want = engine_probs(win, ivs)
    assert [r.raw for r in win.chart.summary.rows] == [float(want[r.id]) for r in win.chart.summary.rows]
    assert len(win.chips.chips) == 2
    # Back keeps the interventions, then Remove all restores the original numbers
    st.back()
    wait_idle(qtbot, st)
    assert st.history.current.interventions == ivs and len(st.history.tokens) == 5
    st.step()
    wait_idle(qtbot, st)
    win.chips.clear_btn.click()
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: st.history.current.interventions == ())
    assert st.session("A").interventions == ()


def test_the_plots_stay_in_place_when_an_ablation_comes_and_goes(qtbot, stepped_window):
    """An ablation adds a line to the chart's title and before/after ranks under the lens path. The labels keep
    that room once they have had it, so removing and adding the ablation again moves no plot (each move laid
    the plot out and drew it whole: ~4 ms of every add and remove at 200 tokens), and before and after are
    compared in place."""
    from PySide6.QtCore import QCoreApplication, QEvent

    win = stepped_window("l3h4e32")
    st = win.state
    lens = win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(lens)
    ablation = HeadAblation(1, 2)

    def settled(interventions):
        wait_idle(qtbot, st)
        qtbot.waitUntil(lambda: st.history.current.interventions == interventions)
        QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)
        qtbot.wait(20)
        return win.chart.plot.geometry(), lens.chart.geometry(), win.chart.title.height(), lens.rank_label.height()

    plain = settled(())
    st.add_intervention(ablation)
    ablated = settled((ablation,))
    assert ablated[2] > plain[2] and ablated[3] > plain[3]  # the title and the rank lines did gain lines
    assert "1.2" in win.chart.title.text() and "→" in lens.rank_label.text()
    st.remove_intervention(ablation)
    assert settled(()) == ablated
    assert "1.2" not in win.chart.title.text() and "→" not in lens.rank_label.text()
    st.add_intervention(ablation)
    assert settled((ablation,)) == ablated


def test_the_chips_row_is_painted_before_the_model_runs(qtbot, stepped_window, qapp):
    """A new chip, and the hint that replaces the last one, are painted before the request goes to the worker,
    and a removed chip is gone by then. Painted while the model ran, that frame took a core from its threads."""
    from PySide6.QtCore import QEvent, QObject

    win = stepped_window("l3h4e32")
    st = win.state
    painted: set = set()

    class Painted(QObject):
        def eventFilter(self, obj, e):
            if e.type() == QEvent.Paint:
                painted.add(obj)
            return False

    spy = Painted()
    qapp.installEventFilter(spy)
    seen = []

    def row():
        inner = win.chips._inner
        return [w for w in inner.findChildren(QObject) if w.isWidgetType() and w.parent() is inner]

    def at_request(*_args):
        now = row()
        # a dropped widget is hidden at once and deleted after the frame (row_widgets.drop_now): the row shows
        seen.append(([w for w in now if w.isVisible() and w not in painted], [w for w in old if w.isVisible()],
                     sum(w.isVisible() for w in now)))

    st._toIntervene.connect(at_request)
    try:
        for change in (st.add_intervention, st.remove_intervention):
            old = row()
            painted.clear()
            change(HeadAblation(1, 2))
            wait_idle(qtbot, st)
    finally:
        st._toIntervene.disconnect(at_request)
        qapp.removeEventFilter(spy)
    (unpainted_add, old_shown_add, n_add), (unpainted_rm, old_shown_rm, n_rm) = seen
    assert n_add == 3 and n_rm == 1  # "in force:", the chip, "Remove all"; then the hint
    assert unpainted_add == [] and unpainted_rm == []
    assert old_shown_add == [] and old_shown_rm == []


def test_a_steady_label_grows_with_its_text_and_measures_again_at_a_new_width(qtbot):
    """A SteadyLabel keeps the height of its tallest text while its width stays, and fits its text again when
    the width changes; a one-line label keeps its widest text's width (the status line)."""
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from gpt2viz.widgets.views.common import SteadyLabel, note

    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    label = note(steady=True)
    assert isinstance(label, SteadyLabel) and label.wordWrap()
    lay.addWidget(label)
    lay.addStretch(1)
    box.resize(200, 400)
    box.show()
    label.setText("one line")
    qtbot.wait(10)
    one = label.height()
    label.setText("many words " * 20)
    qtbot.waitUntil(lambda: label.height() > 2 * one)
    tall = label.height()
    label.setText("one line again")
    qtbot.wait(10)
    assert label.height() == tall and label.text() == "one line again"
    box.resize(400, 400)  # a new width: measured from the text shown now
    qtbot.waitUntil(lambda: label.height() < tall)
    status = SteadyLabel()
    status.setText("last step 12.5 ms · running…")
    wide = status.minimumWidth()
    status.setText("last step 9.1 ms")
    assert wide >= status.sizeHint().width() and status.minimumWidth() == wide


def test_a_layout_fence_lays_out_only_a_label_that_outgrows_its_room(qtbot):
    """Behind a LayoutFence a new text that fits the label's room asks no layout around it to be made again; one
    that needs more room is laid out as without the fence (the label grows, the widget under it moves down)."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from gpt2viz.widgets.views.common import LayoutFence, note

    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    label, under = note(), QLabel("under")
    lay.addWidget(LayoutFence(label))
    lay.addWidget(under)
    lay.addStretch(1)
    box.resize(200, 400)
    box.show()
    qtbot.waitExposed(box)
    label.setText("one line")  # a wrapped label's first text turns its size policy's height-for-width on
    qtbot.wait(20)
    requests = []

    class Spy(QObject):
        def eventFilter(self, obj, e):
            if obj is box and e.type() == QEvent.LayoutRequest:
                requests.append(e)
            return False

    spy = Spy()
    box.installEventFilter(spy)
    top, one = under.y(), label.height()
    label.setText("another line")
    qtbot.wait(20)
    assert requests == [] and under.y() == top and label.height() == one
    label.setText("many words " * 20)
    qtbot.waitUntil(lambda: label.height() > 2 * one)
    assert requests and under.y() >= label.height()
    assert label.heightForWidth(label.width()) <= label.height()  # the whole text shows



def test_an_ablation_with_an_earlier_token_selected_runs_no_lens_on_the_gui_thread(qtbot, stepped_window):
    """With an earlier token selected, the pipeline shows that position's top tokens and output under the
    ablation: the worker makes them with the run (they were two LM-head calls on the GUI thread, ~17 ms at
    200 tokens of GPT-2 small), and the pipeline shows the same numbers as the lens of that run."""
    import threading

    from gpt2viz.core.analysis.lens import residual_stack_at
    from gpt2viz.core.numeric import lens_top

    win = stepped_window("l3h4e32")
    st = win.state
    win.detail.setCurrentWidget(win.detail.views["Tokens"])  # no lens grid on screen (it shows every position)
    st.select_position(2)
    weights = st.session("A").weights
    calls = []
    for name in ("lens", "lens_tops", "lens_with_tops", "lens_tops_with_rows"):
        made = getattr(weights, name)

        def spy(*a, made=made, name=name, **k):
            calls.append((name, threading.current_thread() is threading.main_thread()))
            return made(*a, **k)

        setattr(weights, name, spy)
    st.add_intervention(HeadAblation(1, 2))
    wait_idle(qtbot, st)
    qtbot.waitUntil(lambda: win.pipeline.cells.summary is not None
                    and win.pipeline.cells.summary.position == 2
                    and st.history.current.interventions == (HeadAblation(1, 2),))
    qtbot.wait(50)
    assert [c for c in calls if c[1]] == [] and calls  # all made on the worker thread
    for name in ("lens", "lens_tops", "lens_with_tops", "lens_tops_with_rows"):
        del weights.__dict__[name]
    want = weights.lens(residual_stack_at(st.history, 3, 2))
    top, _ = lens_top(want)
    ps = win.pipeline.cells.summary
    assert [b.lens_token for b in ps.blocks] == [int(t) for t in top[1:]]
    assert list(ps.top_ids) == [int(i) for i in np.argsort(-want[-1])[:3]]


def test_the_attention_view_tells_the_state_what_it_shows(qtbot, stepped_window):
    """An intervention's run brings the attention rows an attention view on screen reads: the view reports its
    showing, its kind of rows and its hiding, and the state hands the worker the selected layer with them."""
    from gpt2viz.app.sessions import SessionId

    win = stepped_window("l3h4e32")
    st, view = win.state, win.detail.views["Attention"]
    win.detail.setCurrentWidget(view)
    st.select_block(2)
    shown = st._shown(SessionId.A)
    assert (shown.layer, shown.attention) == (2, ("pattern",))
    view.mode.setCurrentIndex(1)
    assert st._shown(SessionId.A).attention == ("attn_scores",)
    st.select_position(3)
    win.detail.setCurrentWidget(win.detail.views["Tokens"])
    shown = st._shown(SessionId.A)
    assert (shown.position, shown.layer, shown.attention) == (3, None, ())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_charts_labels_fit_with_an_ablation_in_force(qtbot, tmp_path, qapp, lang):
    """With an ablation the chart's labels say "(before …, ±…)" after each bar, wider in Chinese: the probability
    axis leaves each label its width in pixels, so none runs past the plot's edge. On atlas, three steps after
    "The capital of France is" and head 0.1 ablated, the top bar's Chinese label ran ~20 px past it."""
    from PySide6.QtCore import QPointF

    from gpt2viz.app import i18n
    from gpt2viz.core.model_folder.locations import resolve_model
    from tests.widgets.conftest import run_window

    win = run_window(qtbot, tmp_path, resolve_model(None))
    st, chart = win.state, win.chart
    try:
        win.set_language(lang)
        for _ in range(3):
            st.step()
            wait_idle(qtbot, st)
        st.add_intervention(HeadAblation(0, 1))
        wait_idle(qtbot, st)
        qtbot.waitUntil(lambda: bool(st.history.current.interventions))
        vb = chart.plot.getPlotItem().vb
        shown = chart.labels.labels()
        assert shown and all(text.count("%") >= 3 for _x, _y, text in shown)  # after (before, change)
        right = vb.sceneBoundingRect().right()
        ends = [vb.mapViewToScene(QPointF(x, y)).x() + chart.labels.extent(text) for x, y, text in shown]
        assert max(ends) <= right, (max(ends), right)
    finally:
        i18n.install("en", qapp)  # the language is process-wide
