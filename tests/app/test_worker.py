"""The inference worker's slots called directly (no thread): what a run hands the views."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.app import worker as worker_module
from gpt2viz.app.worker import InferenceWorker, Shown
from gpt2viz.core.engine import ondemand
from gpt2viz.core.interventions import HeadAblation


def _worker(folder) -> tuple[InferenceWorker, list]:
    """A worker with ``folder`` loaded as session A (request 1), and the list its results and failures go to."""
    w = InferenceWorker()
    got: list = []
    w.sigResult.connect(lambda _r, _s, res: got.append(res))
    w.sigFailed.connect(lambda _r, _s, msg: got.append(msg))
    w.load_model(1, "A", str(folder))
    return w, got


def test_a_new_run_hands_over_the_newest_positions_hooks_computed(monkeypatch, exported):
    """A run long enough to leave hooks on demand computes the newest position's block on the worker: the
    views' first read (the pipeline's, on the GUI thread) runs no model call."""
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    w, got = _worker(exported["l3h4e32"])
    model_runs = []
    for call in (lambda: w.start(2, "A", "The capital of France is a city", ()),
                 lambda: w.intervene(3, "A", (HeadAblation(1, 2),))):
        call()
        h = got[-1].history
        assert h.frames[0].trace.ondemand is not None
        model = w.gens["A"].model
        run = model.run
        model.run = lambda *a, **k: model_runs.append(a)  # a view's read must not get here
        newest = len(h.tokens) - 1
        for L in range(3):
            h.hook_at(("pattern", L), newest)
            h.hook_at(("post", L), newest)
        model.run = run
        assert model_runs == []


def test_back_and_reset_hand_over_the_lens_made_for_that_state_without_making_it_again(exported):
    """A step's lens is remembered: Back to a state emitted before answers with the same lens, made once;
    a state under other interventions gets its own."""
    import numpy as np

    from gpt2viz.core.analysis.lens import residual_stack_at
    from gpt2viz.core.generation.sampling import SamplingSettings

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    first = got[-1]
    weights = w.weights["A"]
    made = []
    lens_with_tops = weights.lens_with_tops
    weights.lens_with_tops = lambda stack: made.append(1) or lens_with_tops(stack)
    w.step(3, "A", SamplingSettings(1.0, 0, 1.0, 0), None, (), True)
    assert made == [1]
    w.back(4, "A")
    back = got[-1]
    assert made == [1] and back.lens is first.lens and back.lens_tops is first.lens_tops
    h = back.history
    np.testing.assert_array_equal(back.lens, lens_with_tops(residual_stack_at(h, 3, len(h.tokens) - 1))[0])
    w.intervene(5, "A", (HeadAblation(1, 2),))
    # the same tokens, another run: its own lens; the run without the ablation is the one shown before, and so
    # is its lens (the baseline's), made no second time
    assert made == [1, 1] and got[-1].lens is not first.lens
    assert got[-1].baseline[1] is first.lens and got[-1].baseline[2].frames == first.history.frames


def test_an_ablation_taken_back_hands_over_the_run_from_before_without_running_the_model(monkeypatch, exported):
    """Removing an ablation comes back to the run before it, kept by the generator: no model call, the same frames
    and lens as before, and the result says no model ran (the status line keeps the last run's time). The rows a
    shown attention view reads of it are computed on the worker, as for a new run: its reads run no sub-graph."""
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    w, got = _worker(exported["l3h4e32"])
    text = "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is Madrid"
    w.start(2, "A", text, ())
    first = got[-1]
    shown = Shown(None, 2, ("pattern",))
    w.intervene(3, "A", (HeadAblation(1, 2),), shown)
    ablated = got[-1]
    assert ablated.ran_model and first.history.frames[0].trace.ondemand is not None
    model = w.gens["A"].model
    calls = []
    run = model.run
    model.run = lambda *a, **k: calls.append(a) or run(*a, **k)
    w.intervene(4, "A", (), shown)
    back = got[-1]
    assert calls == [] and not back.ran_model and back.baseline is None
    made = []
    for name in ("_block", "_subgraph"):
        fn = getattr(ondemand.OnDemand, name)
        monkeypatch.setattr(ondemand.OnDemand, name, lambda *a, fn=fn, **k: made.append(a) or fn(*a, **k))
    n = len(back.history.tokens)
    back.history.hook_rows(("pattern", 2), 0, n)  # the shown layer, as the view reads it
    assert made == []
    assert back.history.frames == first.history.frames and back.lens is first.lens
    w.intervene(5, "A", (HeadAblation(1, 2),))  # put back: the ablated run, its baseline too
    assert calls == [] and got[-1].history.frames == ablated.history.frames and got[-1].lens is ablated.lens
    assert got[-1].baseline[2] is ablated.baseline[2]


def test_a_model_loaded_again_forgets_the_lenses_of_the_one_before(exported):
    """The remembered lenses are keyed by the model object's id, which a new model can reuse: a load clears them."""
    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    assert len(w._lens_memo) == 1
    w.load_model(3, "A", str(exported["l2h2e16"]))
    assert len(w._lens_memo) == 0
    w.start(4, "A", "The capital of France is", ())
    assert got[-1].lens.shape[0] == 3  # the new model's depths (2 blocks + embeddings), made for it


def test_an_intervention_brings_the_lens_of_the_selected_earlier_position(exported):
    """The views show the selected position; after an ablation its lens (tops and output) comes from the worker,
    made on the new run: the same numbers as the lens graph on that run's residual stream."""
    import numpy as np

    from gpt2viz.core.analysis.lens import residual_stack_at

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    w.intervene(3, "A", (HeadAblation(1, 2),), Shown(2))
    res = got[-1]
    position, lens, (top, p_top) = res.selected
    want, (want_top, want_p) = w.weights["A"].lens_with_tops(residual_stack_at(res.history, 3, 2))
    assert position == 2 and res.history.current.interventions == (HeadAblation(1, 2),)
    np.testing.assert_array_equal(lens, want)
    np.testing.assert_array_equal(top, want_top)
    np.testing.assert_array_equal(p_top, want_p)
    newest = len(res.history.tokens) - 1
    for req, position in ((4, None), (5, newest), (6, newest + 3)):  # the newest's comes with every result
        w.intervene(req, "A", (), Shown(position))
        assert got[-1].selected is None
    # the views showing neither the newest position's lens nor its tops: only the selected position's comes
    w.intervene(7, "A", (HeadAblation(0, 1),), Shown(2, newest_lens=False, newest_tops=False))
    res = got[-1]
    assert res.lens is None and res.lens_tops is None and res.selected[0] == 2
    np.testing.assert_array_equal(res.selected[1], w.weights["A"].lens(residual_stack_at(res.history, 3, 2)))


def test_an_intervention_brings_the_rows_a_shown_attention_view_reads(monkeypatch, exported):
    """With an attention view on screen, an intervention's run of a long text computes the shown layer's rows
    (the newest MAX_SIDE positions) on the worker: the view's first read runs no model call."""
    from gpt2viz.core.viewmodels.attention import MAX_SIDE

    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    w, got = _worker(exported["l3h4e32"])
    text = "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is Madrid"
    w.start(2, "A", text, ())
    w.intervene(3, "A", (HeadAblation(1, 2),), Shown(None, 2, ("pattern", "attn_scores")))
    h = got[-1].history
    n = len(h.tokens)
    assert h.frames[0].trace.ondemand is not None and n > 16  # rows outside the newest position's block
    calls = []
    made = ondemand.OnDemand._subgraph
    monkeypatch.setattr(ondemand.OnDemand, "_subgraph", lambda *a, **k: calls.append(a[1:3]) or made(*a, **k))
    for which in ("pattern", "attn_scores"):
        assert len(h.hook_rows((which, 2), max(0, n - MAX_SIDE), n)) == n
    assert calls == []  # a view's read ran no sub-graph
    h.hook_rows(("pattern", 1), 0, n)  # a layer not shown: read on demand, as before
    assert calls


def test_an_ablation_runs_the_text_once_and_back_under_it_runs_nothing_more(exported):
    """The chart's ghost and the deltas compare with the text run without the ablation: the first ablation on a
    text takes the run shown before it (the text runs once, ablated), Back under it takes the shorter run's
    frames, and a step runs one cached position for each."""
    import numpy as np

    from gpt2viz.core.generation.sampling import SamplingSettings

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    prompt = got[-1]
    w.step(3, "A", SamplingSettings(0.0), None, (), True)
    stepped = got[-1]
    model = w.gens["A"].model
    calls = []
    run = model.run
    model.run = lambda ids, *a, **k: calls.append(len(ids)) or run(ids, *a, **k)
    w.intervene(4, "A", (HeadAblation(1, 2),))
    assert calls == [5, 1]  # the prompt and the step, ablated; nothing more
    assert got[-1].baseline[2].frames == stepped.history.frames and got[-1].baseline[1] is stepped.lens
    w.back(5, "A")
    assert calls == [5, 1] and got[-1].baseline[2].frames == prompt.history.frames
    np.testing.assert_array_equal(got[-1].baseline[0], prompt.history.current.logits)
    w.step(6, "A", SamplingSettings(0.0), 3139, (HeadAblation(1, 2),), True)
    assert calls == [5, 1, 1, 1]  # the ablated step, and the same token without the ablation
    clean, _ = run(list(got[-1].history.tokens), hooks=[])
    np.testing.assert_allclose(got[-1].baseline[0], clean.last_logits, atol=1e-5)


def test_a_new_text_without_interventions_lets_the_old_baseline_go(exported):
    """The run without interventions of the text before is not held once a new text runs without them (the first
    ablation on the new text takes the generator's own run), nor once another model is loaded."""
    from gpt2viz.core.generation.sampling import SamplingSettings

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    w.intervene(3, "A", (HeadAblation(1, 2),))
    w.step(4, "A", SamplingSettings(0.0), None, (HeadAblation(1, 2),), True)
    assert "A" in w._base and "A" in w._base_result
    w.start(5, "A", "The capital of France is", (HeadAblation(1, 2),))  # under the ablation: still needed
    assert "A" in w._base
    w.start(6, "A", "Paris is the capital of", ())
    assert "A" not in w._base and "A" not in w._base_result
    w.intervene(7, "A", (HeadAblation(1, 2),))  # the new text's baseline: its run from before the ablation
    assert all(a is b for a, b in zip(got[-1].baseline[2].frames, got[-2].history.frames, strict=True))
    w.load_model(8, "A", str(exported["l3h4e32"]))
    assert "A" not in w._base


def test_the_worker_prepares_the_attention_sub_graphs_of_the_open_model_when_idle(qtbot, exported):
    """One sub-graph a turn of the worker's event loop, after the requests queued, then each block's MLP output
    norms (the MLP view's ranking), equal to the rows' lengths; a model replaced meanwhile is left alone."""
    w, _ = _worker(exported["l2h2e16"])
    first, first_weights = w.gens["A"].model, w.weights["A"]
    w.load_model(2, "A", str(exported["l3h4e32"]))
    model, weights = w.gens["A"].model, w.weights["A"]
    assert not model._prepared and not weights._norms  # nothing before the loop turns
    qtbot.waitUntil(lambda: len(weights._norms) == 3, timeout=10000)
    assert sorted(model._prepared) == [(L, "attn") for L in range(3)]
    for L in range(3):
        W = weights.W_out(L).astype(np.float64)
        np.testing.assert_allclose(weights.W_out_norms(L), np.sqrt((W * W).sum(1)), rtol=1e-6)
    assert not first._prepared and not first_weights._norms


def test_the_worker_prepares_nothing_while_requests_keep_coming(qtbot, monkeypatch, exported):
    """Auto-stepping asks for a step every few ms: the preparation waits until no request has come for QUIET_MS, so
    a Play right after a load runs no piece of it between its steps; it is done once the requests stop."""
    from gpt2viz.core.generation.sampling import SamplingSettings

    monkeypatch.setattr(worker_module, "QUIET_MS", 1000)
    w, got = _worker(exported["l3h4e32"])
    model, weights = w.gens["A"].model, w.weights["A"]
    w.start(2, "A", "The capital of France is", ())
    for i in range(12):  # ~0.6 s of steps, the event loop turning between them
        w.step(3 + i, "A", SamplingSettings(0.0), None, (), False)
        qtbot.wait(50)
    assert not model._prepared and not weights._norms
    qtbot.waitUntil(lambda: len(weights._norms) == 3, timeout=10000)
    assert sorted(model._prepared) == [(L, "attn") for L in range(3)]


def _attention_groups(h) -> set[tuple]:
    """(layer, first, stop, hooks) of the attention rows a run's on-demand store holds."""
    od = h.frames[0].trace.ondemand
    return {(k[0], k[2], k[3], tuple(sorted(g))) for k, g in od._kept.items() if len(k) == 4}


def test_an_idle_worker_computes_every_layers_attention_map_nearest_the_shown_layer_first(qtbot, monkeypatch,
                                                                                          exported):
    """Asked, the worker computes the rows a block click reads (the newest MAX_SIDE positions) of every layer, one a
    turn of its event loop, nearest the shown layer first: a block click then runs no sub-graph. A request that
    comes before the loop turns stops it."""
    from gpt2viz.core.viewmodels.attention import MAX_SIDE

    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    w, got = _worker(exported["l4h2e24"])
    text = "The capital of France is Paris, the capital of Italy is Rome and the capital of Spain is Madrid"
    w.start(2, "A", text, ())
    h = got[-1].history
    n = len(h.tokens)
    first = max(0, n - MAX_SIDE)
    assert _attention_groups(h) == set()
    w.work_ahead("A", 2, ("pattern",))  # the nearest layer at once, the others a turn each
    assert {g[0] for g in _attention_groups(h)} == {2}
    w.start(3, "A", text + " and", ())  # a request before the loop turns: no other layer is computed
    qtbot.wait(100)
    assert {g[0] for g in _attention_groups(h)} == {2} and _attention_groups(got[-1].history) == set()

    w.start(4, "A", text, ())
    h = got[-1].history
    order = []
    prefetch = ondemand.OnDemand.prefetch
    monkeypatch.setattr(ondemand.OnDemand, "prefetch",
                        lambda self, name, *a: order.append(name) or prefetch(self, name, *a))
    w.work_ahead("A", 2, ("pattern",))
    qtbot.waitUntil(lambda: len(order) == 4, timeout=10000)
    assert order == [f"blocks.{L}.attn.hook_pattern" for L in (2, 1, 3, 0)]
    assert _attention_groups(h) == {(L, first, n, ("blocks.%d.attn.hook_pattern" % L,)) for L in range(4)}
    calls = []
    made = ondemand.OnDemand._subgraph
    monkeypatch.setattr(ondemand.OnDemand, "_subgraph", lambda *a, **k: calls.append(a[1:3]) or made(*a, **k))
    for L in range(4):
        h.hook_rows(("pattern", L), first, n)
    assert calls == []


def test_a_step_asked_for_no_lens_brings_none_and_the_worker_makes_it_ahead(exported):
    """A Step or Back the state asks for no lens of the newest position (an earlier token selected, no lens grid)
    brings none; asked to work ahead, the worker then makes it (sigLens), the lens graph's on that state's residual
    stream, and only once: not again, nor for a state whose result brought it."""
    from gpt2viz.core.analysis.lens import residual_stack_at
    from gpt2viz.core.generation.sampling import SamplingSettings

    w, got = _worker(exported["l3h4e32"])
    ahead = []
    w.sigLens.connect(lambda _s, a: ahead.append(a))
    w.start(2, "A", "The capital of France is", ())
    w.step(3, "A", SamplingSettings(0.0), None, (), False, False)
    stepped = got[-1]
    assert stepped.lens is None and stepped.lens_tops is None
    w.work_ahead("A", 0, ("pattern",))  # its first piece at once
    assert len(ahead) == 1
    h = stepped.history
    want, (top, p) = w.weights["A"].lens_with_tops(residual_stack_at(h, 3, len(h.tokens) - 1))
    assert ahead[0].model is w.gens["A"].model and ahead[0].tokens == h.tokens and ahead[0].interventions == ()
    np.testing.assert_array_equal(ahead[0].lens, want)
    np.testing.assert_array_equal(ahead[0].tops[0], top)
    w.work_ahead("A", 0, ("pattern",))
    w.back(4, "A", False, False)
    assert got[-1].lens is None
    w.work_ahead("A", 0, ("pattern",))  # the prompt's state: its result brought the lens
    w.step(5, "A", SamplingSettings(0.0), None, (), True, True)  # the same state again, now shown: its lens
    assert len(ahead) == 1 and got[-1].lens is ahead[0].lens


def test_a_step_showing_its_lens_reads_the_unembedding_once(exported):
    """A Step whose lens the views show (whole, or its tops for a lens grid) runs no LM head: the new position's
    logits are its lens's last row, the model's own bit for bit, so the token and every number are the plain
    step's. The result brings that lens; its tops are the lens graph's."""
    from gpt2viz.core.analysis.lens import residual_stack_at
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.generation.stepper import Generator

    w, got = _worker(exported["l3h4e32"])
    heads = []
    model = w.gens["A"].model
    run = model.run
    model.run = lambda *a, **k: (heads.append(k.get("lm_head", True)), run(*a, **k))[1]
    plain = Generator(Model(exported["l3h4e32"]))
    prompt = "The capital of France is"
    w.start(2, "A", prompt, ())
    plain.start(model.tokenizer.encode(prompt))
    for req, (whole, tops) in enumerate(((True, True), (False, True), (False, False)), start=3):
        heads.clear()
        s = SamplingSettings(1.0, 0, 1.0, req)
        w.step(req, "A", s, None, (), whole, tops)
        res, want = got[-1], plain.step(s)
        assert heads == [not tops], (whole, tops)  # the LM head runs only when no lens is made with the step
        assert res.history.tokens == want.tokens
        np.testing.assert_array_equal(res.history.current.logits, want.logits)
        if whole:
            np.testing.assert_array_equal(res.lens[-1], want.logits)
        if tops:
            _, (top, p) = w.weights["A"].lens_with_tops(residual_stack_at(res.history, 3, len(want.tokens) - 1))
            np.testing.assert_array_equal(res.lens_tops[0], top)
            np.testing.assert_allclose(res.lens_tops[1], p)
        else:
            assert res.lens_tops is None
    # A lens left to numpy (a graph of another shape) is not the model's head bit for bit: the LM head runs.
    w.weights["A"]._lens_session = None
    assert not w.weights["A"].lens_is_the_models_head
    heads.clear()
    s = SamplingSettings(1.0, 0, 1.0, 99)
    w.step(9, "A", s, None, (), True, True)
    assert heads == [True]
    np.testing.assert_array_equal(got[-1].history.current.logits, plain.step(s).logits)


def _counted_picks(monkeypatch):
    """sampling.pick, and the list of the positions the generator picks at from now on."""
    from gpt2viz.core.generation import sampling, stepper

    picks, made = [], sampling.pick
    monkeypatch.setattr(stepper, "pick", lambda *a: picks.append(a[2]) or made(*a))
    return made, picks


def test_a_steps_result_brings_the_new_states_distribution_and_the_next_step_samples_from_it(exported,
                                                                                             monkeypatch):
    """The worker makes the new state's next-token distribution after a step, once: the result brings it (the
    session's distribution() then makes none under the same settings) and the next step samples from it."""
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.session.session import Session

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    made, picks = _counted_picks(monkeypatch)
    s = SamplingSettings(1.2, 0, 0.95, 5)
    w.step(3, "A", s, None, (), False, False)
    res = got[-1]
    n = len(res.history.tokens)
    settings, dist, chosen = res.distribution
    want, want_chosen = made(res.history.current.logits, s, n)
    assert settings == s and chosen == want_chosen and picks == [n - 1, n]
    np.testing.assert_array_equal(dist.final, want.final)
    session = Session("A")
    session.set_model(w.gens["A"].model, w.weights["A"])
    session.set_sampling(temperature=1.2, top_p=0.95, seed=5)
    monkeypatch.setattr("gpt2viz.core.session.session.pick", lambda *a: pytest.fail("made again"))
    session.accept(res.history, res.elapsed_ms, res.lens, True, res.lens_tops, res.baseline, res.selected,
                   res.distribution)
    assert session.distribution() == (dist, chosen)
    w.step(4, "A", s, None, (), False, False)
    assert got[-1].history.tokens[-1] == chosen and picks == [n - 1, n, n + 1]  # sampled from it, not made again


def test_an_interventions_result_brings_the_new_states_distribution_under_the_shown_settings(exported, monkeypatch):
    """As a step's: a run under new interventions brings the newest position's distribution under the settings
    the chart shows (Shown.sampling), made once: the session makes none, and the next step samples from it."""
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.session.session import Session

    w, got = _worker(exported["l3h4e32"])
    w.start(2, "A", "The capital of France is", ())
    made, picks = _counted_picks(monkeypatch)
    s = SamplingSettings(0.8, 0, 0.9, 3)
    w.intervene(3, "A", (HeadAblation(1, 2),), Shown(newest_lens=False, newest_tops=False, sampling=s))
    res = got[-1]
    n = len(res.history.tokens)
    settings, dist, chosen = res.distribution
    want, want_chosen = made(res.history.current.logits, s, n)
    assert settings == s and chosen == want_chosen and picks == [n]
    np.testing.assert_array_equal(dist.final, want.final)
    session = Session("A")
    session.set_model(w.gens["A"].model, w.weights["A"])
    session.set_sampling(temperature=0.8, top_p=0.9, seed=3)
    session.set_interventions((HeadAblation(1, 2),))
    monkeypatch.setattr("gpt2viz.core.session.session.pick", lambda *a: pytest.fail("made again"))
    session.accept(res.history, res.elapsed_ms, res.lens, True, res.lens_tops, res.baseline, res.selected,
                   res.distribution)
    assert session.distribution() == (dist, chosen)
    w.step(4, "A", s, None, (HeadAblation(1, 2),), False, False)
    assert got[-1].history.tokens[-1] == chosen and picks == [n, n + 1]  # sampled from it, not made again
    w.intervene(5, "A", (), Shown(newest_lens=False, newest_tops=False))  # no settings given: none made
    assert got[-1].distribution is None and picks == [n, n + 1]


def test_a_deleted_worker_leaves_nothing_of_its_model_in_pending_timers(qtbot, monkeypatch, exported):
    """Preparing a model's views goes on in timer turns on the worker's thread, waiting for a quiet spell after a
    request. A turn still pending when the thread ends (a window closed) holds the model only through a timer the
    worker owns: the model is freed with the worker, not kept for good by a timer no event loop will run."""
    import gc
    import time
    import weakref

    import shiboken6
    from PySide6.QtCore import QThread, QTimer

    monkeypatch.setattr(worker_module, "QUIET_MS", 60_000)
    w, thread = InferenceWorker(), QThread()
    w.moveToThread(thread)
    thread.start()
    # queued on the worker's thread in this order: the load (which queues the first turn), then a request
    QTimer.singleShot(0, w, lambda: w.load_model(1, "A", str(exported["l3h4e32"])))
    asked = []
    QTimer.singleShot(0, w, lambda: asked.append(w.interrupt_background()))
    qtbot.waitUntil(lambda: bool(asked) and "A" in w.gens, timeout=20000)
    time.sleep(0.3)  # the first turn sees the request and waits QUIET_MS
    model = weakref.ref(w.gens["A"].model)
    thread.quit()
    thread.wait()
    shiboken6.delete(w)
    del w
    gc.collect()
    assert model() is None
