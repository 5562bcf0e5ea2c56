"""Long analyses on their own channels: a job never shares a name with a session, and a newer one wins."""

from __future__ import annotations

import threading

import pytest

from gpt2viz.app.jobs import Job
from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.engine.errors import Cancelled


@pytest.fixture
def state(qtbot, tmp_path):
    st = AppState(Settings(str(tmp_path / "s.ini")))
    yield st
    st.shutdown()


def test_a_job_result_is_stored_on_a_and_announced(qtbot, state):
    with qtbot.waitSignal(state.sigJobDone, timeout=10000) as done:
        state.run_job(Job.CAUSAL, lambda progress, cancel: (progress(1, 1), "summary")[1])
    assert done.args == ["causal", "summary"] and state.session("A").analyses["causal"] == "summary"
    assert not state.jobs


def test_a_newer_job_cancels_the_running_one_and_sessions_are_untouched(qtbot, state):
    started, release = threading.Event(), threading.Event()

    def slow(progress, cancel):
        started.set()
        release.wait(5)
        if cancel():
            raise Cancelled()
        return "old"

    done = []
    state.sigJobDone.connect(lambda job, result: done.append((job, result)))
    state.run_job("patching", slow)
    assert started.wait(5)
    state.run_job(Job.PATCHING, lambda progress, cancel: "new")
    release.set()
    qtbot.waitUntil(lambda: not state.jobs, timeout=10000)
    assert done == [("patching", "new")]  # the cancelled one's answer is dropped
    assert state.session("A").analyses == {"patching": "new"} and not state.busy
    assert "patching" not in state.sessions  # a job channel is no session


def test_a_failing_job_is_a_message(qtbot, state):
    errors = []
    state.sigError.connect(errors.append)

    def broken(progress, cancel):
        raise RuntimeError("no table today")
    with qtbot.waitSignal(state.sigJobDone, timeout=10000) as done:
        state.run_job(Job.PATCHING, broken)
    assert done.args == ["patching", None] and errors == ["no table today"]


def test_job_kinds_refuse_unknown_names():
    with pytest.raises(ValueError):
        Job("A")
