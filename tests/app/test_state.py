"""AppState and its worker thread: sessions by name, superseded requests dropped, errors become messages."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.interventions import HeadAblation
from gpt2viz.core.session.session import Stage
from gpt2viz.core.viewmodels.attention import attention_summary
from gpt2viz.core.viewmodels.chart import chart_summary
from gpt2viz.core.viewmodels.embeddings import embedding_summary
from gpt2viz.core.viewmodels.lens import lens_grid, lens_target
from gpt2viz.core.viewmodels.mlp import mlp_summary
from gpt2viz.core.viewmodels.pipeline import pipeline_summary
from gpt2viz.core.viewmodels.residual import residual_summary
from gpt2viz.core.viewmodels.tokens import tokens_summary


@pytest.fixture
def state(qtbot, tmp_path, exported):
    st = AppState(Settings(str(tmp_path / "s.ini")))
    st.load_model(str(exported["l2h2e16"]))
    qtbot.waitUntil(lambda: st.model is not None and not st.busy, timeout=20000)
    yield st
    st.shutdown()


def test_a_newer_prompt_supersedes_queued_work(qtbot, state):
    seen = []
    state.sigHistory.connect(lambda name: state.history and seen.append(state.history.tokens))
    state.run_prompt("Hello")
    state.step()
    state.step()
    state.run_prompt("The capital of France is")  # everything before this is now stale
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    tok = state.model.tokenizer
    assert state.history.tokens == tuple(tok.encode("The capital of France is"))
    assert seen[-1] == state.history.tokens
    assert tuple(tok.encode("Hello")) not in seen[1:]  # the superseded prompt was never shown after it


def test_worker_errors_become_messages_and_the_session_goes_on(qtbot, state):
    errors = []
    state.sigError.connect(errors.append)
    state.run_prompt("word " * 40)  # 40 tokens > 32 positions
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    assert errors and "reads at most 32" in errors[0]
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.step()
    qtbot.waitUntil(lambda: not state.busy and len(state.history.tokens) == 2, timeout=20000)


def test_sliders_never_touch_the_worker(qtbot, state):
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    runs = state.model_runs
    for t in (0.0, 0.5, 1.5):
        state.set_sampling(temperature=t, top_k=5, top_p=0.9)
        dist, chosen = state.distribution()
        assert dist.kept[chosen]
    assert state.model_runs == runs and not state.busy
    with pytest.raises(ValueError):
        state.set_sampling(temperature=-1)


def test_back_is_not_counted_as_a_model_run(qtbot, state):
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.step()
    qtbot.waitUntil(lambda: not state.busy and len(state.history.tokens) == 2, timeout=20000)
    runs, ms = state.model_runs, state.last_ms
    state.back()
    qtbot.waitUntil(lambda: not state.busy and len(state.history.tokens) == 1, timeout=20000)
    assert state.model_runs == runs and state.last_ms == ms


def _same(x, y) -> bool:
    """Deep equality of view models (frozen dataclasses holding arrays and tuples)."""
    if isinstance(x, np.ndarray):
        return isinstance(y, np.ndarray) and x.shape == y.shape and np.array_equal(x, y, equal_nan=x.dtype.kind == "f")
    if isinstance(x, (tuple, list)):
        return type(x) is type(y) and len(x) == len(y) and all(_same(a, b) for a, b in zip(x, y))
    if hasattr(x, "__dataclass_fields__"):
        return type(x) is type(y) and all(_same(getattr(x, f), getattr(y, f)) for f in x.__dataclass_fields__)
    return x == y


def _summaries(s):
    return {"pipeline": pipeline_summary(s), "chart": chart_summary(s), "attention": attention_summary(s),
            "mlp": mlp_summary(s), "lens": lens_grid(s), "target": lens_target(s), "embed": embedding_summary(s),
            "residual": residual_summary(s), "tokens": tokens_summary(s)}


def test_two_sessions_on_one_model_stay_apart(qtbot, state):
    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    a = state.session("A")
    state.select_block(1, head=1)
    before = _summaries(a)
    tokens_a, runs_a = a.history.tokens, a.model_runs
    emitted = []
    state.sigHistory.connect(emitted.append)
    b = state.open_session("B", "My favourite city is")
    qtbot.waitUntil(lambda: not state.busy and b.history is not None, timeout=20000)
    assert b.model is a.model  # one model, two runs
    state.step(session="B")
    state.step(session="B")
    qtbot.waitUntil(lambda: not state.busy and len(b.history.tokens) == len(b.history.frames[0].tokens) + 2,
                    timeout=20000)
    state.select_block(1, head=1, session="B")
    state.set_sampling("B", temperature=0.5)
    # A is untouched by B's requests
    assert a.history.tokens == tokens_a and a.model_runs == runs_a and a.sampling.temperature == 1.0
    assert set(emitted) == {"B"}
    after = _summaries(a)
    for k in before:
        assert _same(before[k], after[k]), k
    # B's view models show B's text wherever the text matters
    got = _summaries(b)
    assert got["tokens"].rows != before["tokens"].rows
    assert got["pipeline"].token != before["pipeline"].token or got["pipeline"].position != before["pipeline"].position
    assert not np.allclose(got["embed"].sum_vec, before["embed"].sum_vec)
    assert got["attention"].matrices.shape != before["attention"].matrices.shape
    assert not np.array_equal(got["mlp"].post, before["mlp"].post)
    assert got["lens"].positions != before["lens"].positions
    assert not np.allclose(got["residual"].resid_norm, before["residual"].resid_norm)
    assert [r.raw for r in got["chart"].rows] != [r.raw for r in before["chart"].rows]
    # a new prompt in A supersedes A's queue only
    state.step(session="B")
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    assert len(b.history.generated) == 3 and a.history.tokens == tuple(a.model.tokenizer.encode("Hello"))
    state.close_session("B")
    assert list(state.sessions) == ["A"]


def test_stage_is_typed(state):
    with pytest.raises(TypeError):
        state.select_stage("block.1")
    state.select_stage(Stage.block(1))
    assert state.layer == 1 and state.stage == Stage.block(1)


def test_a_prompt_typed_while_a_model_loads_runs_on_that_model(qtbot, state, exported):
    """The worker finished loading, but a newer prompt superseded the load before its answer arrived:
    the session must still take the new model, so its histories and its config agree."""
    import threading

    from PySide6.QtCore import Qt

    loaded = threading.Event()
    state.worker.sigModelLoaded.connect(lambda *_a: loaded.set(), Qt.DirectConnection)  # runs on the worker
    state.load_model(str(exported["l3h4e32"]))
    assert loaded.wait(20)  # the answer is queued for this thread, not yet delivered
    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    assert state.model.config.n_layer == 3
    assert pipeline_summary(state.session("A")) is not None  # reads every layer of the history
    assert {k for k in state.history.current.trace.hooks if k.endswith("hook_resid_post")} == \
        {f"blocks.{L}.hook_resid_post" for L in range(3)}


def test_the_ghost_under_interventions_is_the_run_without_them_after_steps_and_back(qtbot, state):
    """The baseline (chart ghost, dashed lens) follows the tokens: after steps (cached on the worker) and
    after Back it equals a fresh run of the same tokens without interventions."""
    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.interventions import HeadAblation

    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.add_intervention(HeadAblation(1, 0))
    qtbot.waitUntil(lambda: not state.busy and state.session("A").baseline is not None, timeout=20000)
    s = state.session("A")

    def check():
        tokens = list(state.history.tokens)
        trace, _ = state.model.run(tokens)
        logits, lens, base, (top, p_top) = s.baseline
        np.testing.assert_allclose(logits, trace.last_logits, rtol=0, atol=1e-4 * np.abs(trace.last_logits).max())
        from gpt2viz.core.analysis.attribution import attribute
        from gpt2viz.core.generation.stepper import Frame, History

        clean = History((Frame(tuple(tokens), trace, 0.0),), len(tokens))
        want = lens_at(clean, state.weights, state.model.config.n_layer, len(tokens) - 1)
        np.testing.assert_allclose(lens, want, rtol=0, atol=1e-4 * np.abs(want).max())
        from gpt2viz.core.numeric import lens_top

        want_top, want_p = lens_top(lens)  # its tops are the baseline lens's own
        np.testing.assert_array_equal(top, want_top)
        np.testing.assert_allclose(p_top, want_p, rtol=1e-6)
        # the baseline run kept as a History (the Path view's ghosts), its frames stitched across cached steps
        assert tuple(base.tokens) == tuple(tokens)
        c = state.model.config
        for q in (2, len(tokens) - 1):
            got = attribute(base, state.weights, c.n_layer, c.n_head, position=q)
            ref = attribute(clean, state.weights, c.n_layer, c.n_head, position=q)
            np.testing.assert_allclose(got.by_source, ref.by_source, rtol=1e-4, atol=1e-5)
        assert not np.allclose(logits, state.history.current.logits)  # the ablation does change the answer
        # the chart's ghost: the softmax of this baseline's logits, made once per baseline
        from gpt2viz.core.numeric import softmax

        ghost = s.baseline_distribution()
        np.testing.assert_array_equal(ghost, softmax(logits))
        assert s.baseline_distribution() is ghost

    check()
    for n in (6, 7):
        state.step()
        qtbot.waitUntil(lambda n=n: not state.busy and len(state.history.tokens) == n, timeout=20000)
        check()
    state.back()
    qtbot.waitUntil(lambda: not state.busy and len(state.history.tokens) == 6, timeout=20000)
    check()


def test_an_ablation_put_on_again_does_not_bring_a_lens_the_session_holds(qtbot, state, monkeypatch):
    """With an earlier token selected, an ablation and its removal each bring that position's lens with their run
    (the session holds neither); putting the ablation on and off again asks for none, and the views read the
    lens that came the first time."""
    from gpt2viz.core.interventions import HeadAblation

    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.select_position(2)
    s = state.session("A")
    sent = []
    shown = state._shown
    monkeypatch.setattr(state, "_shown", lambda sid, interventions=None: sent.append(shown(sid, interventions))
                        or sent[-1])
    ablation = (HeadAblation(1, 0),)
    held = {}
    for interventions in (ablation, (), ablation, ()):
        state.set_interventions(interventions)
        qtbot.waitUntil(lambda iv=interventions: not state.busy and state.history.current.interventions == iv,
                        timeout=20000)
        assert s.holds_lens(2, interventions)
        held.setdefault(interventions, s.lens(2))
        assert s.lens(2) is held[interventions]
    assert [x.position for x in sent] == [2, 2, None, None]
    assert not np.array_equal(held[ablation], held[()])  # the ablation changes the lens there


@pytest.mark.parametrize("grid_shown", [False, True])
def test_an_ablation_taken_off_asks_for_no_lens_the_views_do_not_read(qtbot, state, monkeypatch, grid_shown):
    """The pipeline reads the selected position's lens tops, made when it was selected: taking an ablation off
    there brings no lens unless a lens grid is on screen (its target path reads the whole lens), and the views
    then read the tops and the output made before the ablation."""
    from gpt2viz.core.interventions import HeadAblation

    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    grid = object()
    state.lens_grid_shown(grid, grid_shown)
    state.select_position(2)
    s = state.session("A")
    tops, final = s.lens_tops(2, window=False), s.output_logits(2)  # as the pipeline reads them at a token click
    sent = []
    shown = state._shown
    monkeypatch.setattr(state, "_shown", lambda sid, interventions=None: sent.append(shown(sid, interventions))
                        or sent[-1])
    for interventions in ((HeadAblation(1, 0),), ()):
        state.set_interventions(interventions)
        qtbot.waitUntil(lambda iv=interventions: not state.busy and state.history.current.interventions == iv,
                        timeout=20000)
    assert [x.position for x in sent] == [2, 2 if grid_shown else None]
    if not grid_shown:  # nothing made again
        assert s.lens_tops(2, window=False) is tops and s.output_logits(2) is final
    for a, b in zip(s.lens_tops(2, window=False), tops):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(s.lens(2)[-1], final, rtol=1e-5, atol=1e-5)  # the whole lens, made here if not brought


def test_an_idle_app_has_the_attention_maps_of_every_layer_ready_for_a_block_click(qtbot, tmp_path, monkeypatch,
                                                                                   exported):
    """PREFETCH_AFTER_MS after a result with no request since, every layer's attention map of a long text is
    computed on the worker (the kinds a shown attention view reads): a block click's map runs no sub-graph on the
    GUI thread. Nothing is asked for while playing."""
    from gpt2viz.app import state as state_module
    from gpt2viz.core.engine import ondemand

    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    monkeypatch.setattr(state_module, "PREFETCH_AFTER_MS", 300)
    st = AppState(Settings(str(tmp_path / "s.ini")))
    try:
        asked = []
        st._toPrefetch.connect(lambda *a: asked.append(a))
        st.load_model(str(exported["l3h4e32"]))
        qtbot.waitUntil(lambda: st.model is not None and not st.busy, timeout=20000)
        st.attention_shown(object(), "attn_scores")
        st.run_prompt("The capital of France is Paris, the capital of Italy is Rome")
        qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=20000)
        assert asked == []  # not while the window paints the result: PREFETCH_AFTER_MS later
        qtbot.waitUntil(lambda: asked == [("A", 0, ("attn_scores",))], timeout=5000)
        od = st.history.frames[0].trace.ondemand
        names = {f"blocks.{L}.attn.hook_attn_scores" for L in range(3)}
        qtbot.waitUntil(lambda: names <= {n for g in list(od._kept.values()) for n in g}, timeout=20000)
        calls = []
        made = ondemand.OnDemand._subgraph
        monkeypatch.setattr(ondemand.OnDemand, "_subgraph", lambda *a, **k: calls.append(a[1:3]) or made(*a, **k))
        st.select_block(2)
        assert attention_summary(st.session(), "attn_scores").layer == 2 and calls == []
        del asked[:]
        st.play()
        qtbot.waitUntil(lambda: len(st.history.tokens) >= 16, timeout=20000)
        st.pause()
        qtbot.waitUntil(lambda: not st.busy, timeout=20000)
        assert len(asked) <= 1  # the answers that came while playing asked nothing; one may come after the pause
    finally:
        st.shutdown()


def test_a_step_with_an_earlier_token_selected_leaves_the_newest_lens_for_later(qtbot, tmp_path, monkeypatch,
                                                                                 exported):
    """Following the newest token, a Step's result brings its lens; with an earlier token selected and no lens grid
    it brings none (the views show the earlier one), and PREFETCH_AFTER_MS later the worker has made it: a click on
    the newest token then draws the pipeline with no lens made on the GUI thread."""
    from gpt2viz.app import state as state_module
    from gpt2viz.core.engine.weights import Weights

    monkeypatch.setattr(state_module, "PREFETCH_AFTER_MS", 300)
    st = AppState(Settings(str(tmp_path / "s.ini")))
    try:
        st.load_model(str(exported["l3h4e32"]))
        qtbot.waitUntil(lambda: st.model is not None and not st.busy, timeout=20000)
        st.run_prompt("The capital of France is Paris and")
        qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=20000)
        s, ivs = st.session(), ()
        st.step()
        qtbot.waitUntil(lambda: not st.busy, timeout=20000)
        assert s.holds_lens(len(st.history.tokens) - 1, ivs)  # followed: brought with the result
        st.select_position(2)
        st.step()
        qtbot.waitUntil(lambda: not st.busy, timeout=20000)
        newest = len(st.history.tokens) - 1
        assert not s.holds_lens(newest, ivs, whole=False)
        qtbot.waitUntil(lambda: s.holds_lens(newest, ivs), timeout=5000)
        calls = []
        for name in ("lens", "lens_tops", "lens_with_tops", "lens_tops_with_rows"):
            real = getattr(Weights, name)
            monkeypatch.setattr(Weights, name,
                                lambda self, *a, _r=real, _n=name, **k: calls.append(_n) or _r(self, *a, **k))
        st.select_position(None)
        pipeline_summary(s)
        lens_target(s)
        assert calls == []
        st.select_position(2)  # an ablation's run brings the selected position's lens, not the newest's
        st.add_intervention(HeadAblation(0, 1))
        qtbot.waitUntil(lambda: not st.busy and st.history.current.interventions == (HeadAblation(0, 1),),
                        timeout=20000)
        assert s.holds_lens(2, (HeadAblation(0, 1),)) and not s.holds_lens(newest, (HeadAblation(0, 1),), False)
    finally:
        st.shutdown()
