"""Auto-play: steps run ahead of the redraws, stop at the context, and pausing shows what landed."""

from __future__ import annotations

import time

import numpy as np

from gpt2viz.app.player import FRAME_S
from tests.app.test_state import state  # noqa: F401, F811 - the same loaded AppState fixture


def test_playing_at_full_speed_runs_ahead_and_stops_at_the_context(qtbot, state):
    """At pace 0 several steps are in flight (the worker never waits for a redraw), never more than
    PLAY_AHEAD, and never past the context: play stops by itself at 32 tokens without an error.
    While playing, each step brings its lens-grid column (the tops the lens graph makes)."""
    from gpt2viz.app.player import PLAY_AHEAD
    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.numeric import lens_top

    errors, in_flight = [], []
    state.sigError.connect(errors.append)
    grid = object()  # a lens grid on screen, as LensView reports itself
    state.lens_grid_shown(grid, True)
    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.sigBusy.connect(lambda _b: in_flight.append(state.requests.pending))
    state.set_pace(0)
    state.play()
    qtbot.waitUntil(lambda: not state.playing, timeout=60000)
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    assert errors == [] and len(state.history.tokens) == 32
    assert max(in_flight) == PLAY_AHEAD > 1
    s = state.session("A")
    for p in (10, 31):  # columns that came with auto-steps: the lens of that position, exactly
        key = s._lens_key(p)
        assert key in s._tops_cache
        top, prob = lens_top(lens_at(s.history, s.weights, 2, p))
        np.testing.assert_array_equal(s._tops_cache[key][0], top)
        np.testing.assert_allclose(s._tops_cache[key][1], prob, rtol=1e-6)
    state.lens_grid_shown(grid, False)


def test_playing_with_a_lens_grid_following_the_newest_token_brings_its_whole_lens(qtbot, state, monkeypatch):
    """A lens grid on screen and the newest token followed: each auto-step brings the new position's whole lens, so
    the grid's target path at a redraw reads held rows (no onnxruntime call on the GUI thread); with an earlier token
    selected, the steps bring only the grid's columns."""
    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.engine.weights import Weights
    from gpt2viz.core.viewmodels.lens import lens_target

    grid = object()
    state.lens_grid_shown(grid, True)
    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    s = state.session("A")
    state.set_pace(0)
    state.play()
    qtbot.waitUntil(lambda: len(state.history.tokens) >= 12, timeout=20000)
    state.pause()
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    newest = len(state.history.tokens) - 1
    assert s.holds_lens(newest, ())
    np.testing.assert_allclose(s.lens(newest), lens_at(s.history, s.weights, 2, newest), rtol=1e-5, atol=1e-5)
    calls = []
    for name in ("lens", "lens_tops", "lens_with_tops", "lens_tops_with_rows", "lens_path"):
        real = getattr(Weights, name)
        monkeypatch.setattr(Weights, name, lambda self, *a, _r=real, _n=name, **k: calls.append(_n) or _r(self, *a, **k))
    lens_target(s)
    assert calls == []
    monkeypatch.undo()
    state.select_position(2)
    state.play()
    qtbot.waitUntil(lambda: len(state.history.tokens) >= newest + 5, timeout=20000)
    state.pause()
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    played = range(newest + 2, len(state.history.tokens))  # the last one may have come after the pause
    assert all(s.holds_lens(p, (), whole=False) and not s.holds_lens(p, ()) for p in played[:-1])
    state.lens_grid_shown(grid, False)


def test_playing_with_no_lens_grid_on_screen_makes_no_columns_until_one_is_asked_for(qtbot, state):
    """No lens grid shown: auto-steps bring no lens columns (the worker skips 13 LM-head rows per token); a view
    that asks later gets each position's exact column, made then."""
    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.numeric import lens_top

    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    s = state.session("A")
    made = []
    tops = s.weights.lens_tops
    state.worker.weights["A"].lens_tops = lambda x: made.append(len(x)) or tops(x)  # the worker's calls
    state.set_pace(0)
    state.play()
    qtbot.waitUntil(lambda: len(state.history.tokens) >= 12, timeout=20000)
    state.pause()
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    del state.worker.weights["A"].lens_tops
    assert made == [] and s._lens_key(10) not in s._tops_cache
    for p in (6, 10):
        top, prob = lens_top(lens_at(s.history, s.weights, 2, p))
        np.testing.assert_array_equal(s.lens_tops(p)[0], top)
        np.testing.assert_allclose(s.lens_tops(p)[1], prob, rtol=1e-6)


def test_pausing_with_steps_in_flight_shows_them(qtbot, state):
    """Pause at full speed: the steps already requested still land, and the views get the newest one."""
    shown = []
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.sigHistory.connect(lambda name: shown.append(len(state.history.tokens)))
    state.set_pace(0)
    state.play()
    qtbot.waitUntil(lambda: len(state.history.tokens) >= 5, timeout=20000)
    state.pause()
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    n = len(state.history.tokens)
    assert not state.playing and n < 32 and shown[-1] == n
    qtbot.wait(300)
    assert len(state.history.tokens) == n  # nothing steps on by itself after that


def test_views_redraw_at_most_a_few_times_a_second_while_playing(qtbot, state):
    """Results land faster than FRAME_S at pace 0; the history signal of A follows the frame time."""
    stamps = []
    state.run_prompt("Hello")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    state.sigHistory.connect(lambda name: stamps.append(time.perf_counter()))
    state.set_pace(0)
    t0 = time.perf_counter()
    state.play()
    qtbot.waitUntil(lambda: not state.playing, timeout=60000)
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    # the first frame at once, then one per FRAME_S at most, and the newest when play stops by itself
    assert len(stamps) <= 2 + (stamps[-1] - t0) / FRAME_S
    assert len(stamps) < state.session("A").model_runs - 1 and len(state.history.tokens) == 32


def test_the_window_is_asked_to_paint_before_each_request_but_not_while_playing(qtbot, state):
    """sigSending comes before a Step, a Back and an intervention's request reach the worker (the window paints
    then, not while the model runs on the shared cores); auto-steps send none, so the frames stay throttled."""
    from gpt2viz.core.interventions import HeadAblation

    state.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    order = []
    state.sigSending.connect(lambda: order.append("paint"))
    for name in ("_toStep", "_toBack", "_toIntervene"):
        getattr(state, name).connect(lambda *_a, name=name: order.append(name))
    for act in (state.step, state.back, lambda: state.add_intervention(HeadAblation(0, 0))):
        act()
        qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    assert order == ["paint", "_toStep", "paint", "_toBack", "paint", "_toIntervene"]
    order.clear()
    state.set_pace(0)
    state.play()
    qtbot.waitUntil(lambda: len(state.history.tokens) >= 10, timeout=60000)
    state.pause()
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    assert order.count("_toStep") >= 3 and order.count("paint") <= 1  # at most the first step's, before playing
