"""AppState and its worker thread: superseded requests are dropped, errors become messages."""

from __future__ import annotations

import pytest

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState


@pytest.fixture
def state(qtbot, tmp_path, exported):
    st = AppState(Settings(str(tmp_path / "s.ini")))
    st.load_model(str(exported["l2h2e16"]))
    qtbot.waitUntil(lambda: st.model is not None and not st.busy, timeout=20000)
    yield st
    st.shutdown()


def test_a_newer_prompt_supersedes_queued_work(qtbot, state):
    seen = []
    state.sigHistory.connect(lambda: state.history and seen.append(state.history.tokens))
    state.run_prompt("Hello")
    state.step()
    state.step()
    state.run_prompt("The capital of France is")  # everything before this is now stale
    qtbot.waitUntil(lambda: not state.busy, timeout=20000)
    tok = state.model.tokenizer
    assert state.history.tokens == tuple(tok.encode("The capital of France is"))
    assert seen[-1] == state.history.tokens


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
