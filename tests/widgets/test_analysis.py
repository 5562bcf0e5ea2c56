"""Compare, activation patching and the causal trace in the window: numbers from the engine, worker jobs
with progress and cancel, a patching cell opens its patched run in B."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.analysis.causal_trace import causal_trace
from gpt2viz.core.analysis.patching import patching_table
from gpt2viz.core.interventions import Patch


def wait_idle(qtbot, st, timeout=30000):
    qtbot.waitUntil(lambda: not st.busy and not st.jobs and st.history is not None, timeout=timeout)


def open_b(qtbot, win, text):
    win.open_compare(text)
    st = win.state
    qtbot.waitUntil(lambda: st.session("B").history is not None and not st.busy, timeout=30000)
    if st.model.tokenizer.decode(list(st.session("B").history.tokens)) != text:
        win.compare.prompt.setText(text)
        win.compare.run()
        qtbot.waitUntil(lambda: not st.busy and st.model.tokenizer.decode(
            list(st.session("B").history.tokens)) == text, timeout=30000)


@pytest.fixture
def win(stepped_window):
    return stepped_window("l3h4e32")


def test_patching_with_b_equal_to_a_has_zero_effect_everywhere(qtbot, win):
    st = win.state
    st.reset()
    wait_idle(qtbot, st)
    open_b(qtbot, win, "The capital of France is")
    win.open_analysis(0)
    seen = []
    st.sigJobProgress.connect(lambda ch, d, n: seen.append((ch, d, n)))
    win.analysis.patching.run()
    wait_idle(qtbot, st)
    sm = st.session("A").analyses["patching"]
    assert sm.clean_prob == sm.corrupt_prob
    np.testing.assert_allclose(sm.prob, sm.clean_prob, rtol=1e-5)
    np.testing.assert_allclose(sm.heat.values, 0.0, atol=1e-6)
    assert seen and seen[-1][1] == seen[-1][2] and win.analysis.patching.progress.value() == seen[-1][2]
    # the compare dock's differences B − A are zero too
    win.compare.tabs.setCurrentIndex(2)
    np.testing.assert_allclose(win.compare.lens_diff.values, 0.0, atol=1e-6)
    d = win.compare.att_diff.values
    np.testing.assert_allclose(d[np.isfinite(d)], 0.0, atol=1e-6)


def patch_against_germany(qtbot, win, site="resid_pre"):
    """A at its start, B "The capital of Germany is", the patching table of ``site`` made; returns the panel."""
    st = win.state
    st.reset()
    wait_idle(qtbot, st)
    open_b(qtbot, win, "The capital of Germany is")
    win.open_analysis(0)
    panel = win.analysis.patching
    panel.site.setCurrentText(site)
    panel.run()
    wait_idle(qtbot, st)
    return panel


def test_patching_table_matches_the_engine_and_a_cell_opens_its_patched_run(qtbot, win):
    st = win.state
    panel = patch_against_germany(qtbot, win, "attn_out")
    sm = st.session("A").analyses["patching"]
    clean, corrupt = st.prompt_ids("A"), st.prompt_ids("B")
    target = int(np.argmax(st.history.frames[0].logits))
    t = patching_table(st.model, clean, corrupt, target, "attn_out")
    np.testing.assert_array_equal(sm.prob, t.prob)
    assert sm.target == target and "attn_out" in panel.heatmap.plot.plotItem.titleLabel.text
    panel._hover(1, 3)
    assert "0.0" in panel.readout.text() or "effect" in panel.readout.text()
    # click cell (layer 1, position 3): B runs with A's attention output copied in there
    panel.heatmap.sigClicked.emit(1, 3)
    qtbot.waitUntil(lambda: not st.busy and bool(st.session("B").history.current.interventions), timeout=30000)
    b = st.session("B")
    assert b.interventions == (Patch("attn_out", 1, 3, st.history.hook_at(("attn_out", 1), 3)),)
    p = b.distribution()[0].raw[target]
    assert p == pytest.approx(sm.prob[1, 3], rel=1e-4)
    assert win.compare_dock.isVisible()


def test_a_cell_of_a_table_made_for_an_earlier_prompt_says_so(qtbot, win):
    """Found by the GUI fuzz: a table's cell clicked after A's prompt got shorter named a position A no
    longer has (IndexError in the event loop)."""
    st = win.state
    panel = patch_against_germany(qtbot, win)
    assert st.patching_is_current(st.session("A").analyses["patching"])
    st.run_prompt("zebra")
    wait_idle(qtbot, st)
    assert not st.patching_is_current(st.session("A").analyses["patching"])
    panel.heatmap.sigClicked.emit(1, 3)
    assert "earlier prompts" in panel.message.text()
    assert not st.session("B").interventions


def test_unequal_token_counts_say_why_and_show_both_tokenisations(qtbot, win):
    st = win.state
    open_b(qtbot, win, "The capital of the United Kingdom is")
    win.open_analysis(0)
    win.analysis.patching.run()
    text = win.analysis.patching.message.text()
    assert "same number of tokens" in text and "United" in text and "France" in text
    assert not st.jobs and "patching" not in st.session("A").analyses


def test_causal_trace_with_noise_zero_is_the_clean_probability_everywhere(qtbot, win):
    st = win.state
    st.reset()
    wait_idle(qtbot, st)
    win.tokens.toggle_subject(3)  # " France", as a Shift+click on its chip does
    assert st.session("A").subject == (3,)
    panel = win.analysis.causal
    assert panel.subject.text() == " France"
    panel.noise.setValue(0.0)
    panel.samples.setValue(2)
    win.open_analysis(1)
    panel.run()
    wait_idle(qtbot, st)
    sm = st.session("A").analyses["causal"]
    assert sm.subject == (3,) and sm.corrupt_prob == pytest.approx(sm.clean_prob, rel=1e-5)
    for heat in sm.heats:
        np.testing.assert_allclose(heat.values, sm.clean_prob, rtol=1e-5)
    assert "clean" in panel.message.text() and panel.export_btn.isEnabled()


def test_causal_trace_after_an_edit_runs_on_the_edited_model_beside_the_unedited_one(qtbot, win):
    """A's edit is in force in the trace (its clean p is the edited model's, from onnxruntime), and the trace
    without it is drawn below as the comparison, on the same colour scale."""
    from gpt2viz.core.interventions import RankOneEdit

    st = win.state
    st.reset()
    wait_idle(qtbot, st)
    rng = np.random.default_rng(4)
    edit = RankOneEdit(1, rng.normal(size=48) * 0.5, rng.normal(size=32) * 2.0, "France → Rome")
    st.set_interventions((edit,))
    wait_idle(qtbot, st)
    panel = win.analysis.causal
    win.open_analysis(1)
    panel.subject.setText(" France")
    panel.samples.setValue(2)
    seen = []
    st.sigJobProgress.connect(lambda ch, d, n: ch == "causal" and seen.append((d, n)))
    panel.run()
    wait_idle(qtbot, st)
    sm = st.session("A").analyses["causal"]
    ids = st.prompt_ids("A")
    target = int(np.argmax(st.history.frames[0].logits))  # the edited run's own answer
    assert sm.target == target and sm.interventions == ("France → Rome",)
    edited, _ = st.model.run(ids, interventions=(edit,))
    plain, _ = st.model.run(ids)
    p = lambda x: float(np.exp(x[target] - x.max()) / np.exp(x - x.max()).sum())
    assert sm.clean_prob == pytest.approx(p(edited.last_logits.astype(np.float64)), rel=1e-5)
    assert sm.before is not None and sm.before.clean_prob == pytest.approx(p(plain.last_logits.astype(np.float64)),
                                                                           rel=1e-5)
    tr = causal_trace(st.model, st.weights, ids, (3,), target, samples=2, interventions=(edit,))
    for heat, ghost in zip(sm.heats, sm.before.heats):
        np.testing.assert_array_equal(heat.values, tr.prob[heat.title].T)
        assert (heat.lo, heat.hi) == (ghost.lo, ghost.hi)  # one colour scale for both rows
    assert panel.before_row.isVisible() and "France → Rome" in panel.message.text()
    assert seen[-1][0] == seen[-1][1]  # one bar over both traces
    panel._hover("mlp", 3, 1, before=True)
    assert "with the interventions" in panel.readout.text()
    # no intervention: one trace, no comparison row
    st.clear_interventions()
    wait_idle(qtbot, st)
    panel.run()
    wait_idle(qtbot, st)
    assert st.session("A").analyses["causal"].before is None and not panel.before_row.isVisible()


def test_causal_trace_numbers_are_the_engines_and_cancel_stops_it(qtbot, win):
    st = win.state
    st.reset()
    wait_idle(qtbot, st)
    panel = win.analysis.causal
    panel.subject.setText(" France")
    panel.samples.setValue(3)
    panel.run()
    wait_idle(qtbot, st)
    sm = st.session("A").analyses["causal"]
    tr = causal_trace(st.model, st.weights, st.prompt_ids("A"), (3,), sm.target, samples=3)
    for heat in sm.heats:
        np.testing.assert_array_equal(heat.values, tr.prob[heat.title].T)
    # cancel: the job ends with no result; the old one stays
    done = []
    st.sigJobDone.connect(lambda ch, r: done.append((ch, r)))
    panel.samples.setValue(100)
    panel.run()
    panel.cancel_btn.click()
    qtbot.waitUntil(lambda: bool(done), timeout=30000)
    assert done == [("causal", None)] and st.session("A").analyses["causal"] is sm
    assert panel.run_btn.isEnabled() and not st.jobs
    # a new model request cancels a running job too
    done.clear()
    panel.run()
    st.step()
    qtbot.waitUntil(lambda: bool(done), timeout=30000)
    wait_idle(qtbot, st)


def test_compare_paired_bars_are_each_sessions_numbers(qtbot, win):
    st = win.state
    open_b(qtbot, win, "The capital of Germany is")
    sm = win.compare.bars.summary
    pa, pb = st.session("A").distribution()[0].raw, st.session("B").distribution()[0].raw
    assert [r.a for r in sm.rows] == [float(pa[r.id]) for r in sm.rows]
    assert [r.b for r in sm.rows] == [float(pb[r.id]) for r in sm.rows]
    assert [c.text() for c in win.compare.strip_b.chips][3] == "\u2423Germany"
    assert len(win.compare.strip_a.chips) == len(st.history.tokens)
    assert win.compare.lens[1].session is st.session("B") and win.compare.attention[1].session is st.session("B")
    # differences: none while the token counts differ (A has a generated token), then B's lens probability of
    # A's top token minus A's, at the last position and depth
    win.compare.tabs.setCurrentIndex(2)
    assert win.compare.lens_diff is None and "same number of tokens" in win.compare.diff_note.text()
    st.reset()
    wait_idle(qtbot, st)
    from gpt2viz.core.numeric import softmax

    pos = len(st.history.tokens) - 1
    la, lb = softmax(st.session("A").lens(pos)), softmax(st.session("B").lens(pos))
    top = int(np.argmax(la[-1]))
    assert win.compare.lens_diff.values[-1, -1] == pytest.approx(lb[-1, top] - la[-1, top])


def _until_cancelled(progress, cancel):
    """A long job: reports progress until its cancel flag rises (then says so)."""
    import time

    from gpt2viz.core.engine.errors import Cancelled

    for i in range(100000):
        if cancel():
            raise Cancelled()
        progress(i, 100000)
        time.sleep(0.01)
    return "finished"


def test_a_new_request_or_closing_the_window_cancels_a_long_job(qtbot, win):
    st = win.state
    done = []
    st.sigJobDone.connect(lambda ch, r: done.append((ch, r)))
    st.run_job("causal", _until_cancelled)
    st.step()  # a model request: the job stops at its next check, then the step runs
    qtbot.waitUntil(lambda: bool(done) and not st.busy, timeout=30000)
    assert done == [("causal", None)] and len(st.history.tokens) == 7
    st.run_job("patching", _until_cancelled)
    qtbot.wait(100)
    win.close()  # would wait forever for the worker if closing did not cancel the job
    assert not st._thread.isRunning() and "patching" not in st.session("A").analyses
