"""A long prompt is read in chunks on the worker: progress reaches the window, and a new prompt, Reset or
closing cancels it at its next chunk (issue 11)."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QCoreApplication, QThread

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.engine import model as runtime
from gpt2viz.core.model_folder.locations import resolve_model

CHUNK = 32
SLOW_S = 0.12  # per chunk: the 8 chunks of the long prompt take ~1 s, so there is time to cancel


@pytest.fixture
def slow_chunks(monkeypatch):
    """Chunks of CHUNK positions, each made slower by SLOW_S (the real run still computes every number)."""
    monkeypatch.setattr(runtime, "CHUNK", CHUNK)
    real = runtime.Model._call

    def call(self, session, ids, *args, **kwargs):
        if len(ids) > 1:
            time.sleep(SLOW_S)
        return real(self, session, ids, *args, **kwargs)

    monkeypatch.setattr(runtime.Model, "_call", call)


@pytest.fixture
def atlas_state(qtbot, tmp_path, slow_chunks):
    st = AppState(Settings(str(tmp_path / "s.ini")))
    st.load_model(str(resolve_model(None)))
    qtbot.waitUntil(lambda: st.model is not None and not st.busy, timeout=30000)
    yield st
    st.shutdown()


def long_text(state, n: int = 250) -> tuple[str, tuple[int, ...]]:
    """A prompt of exactly ``n`` tokens (" a b c ..." words are one token each)."""
    words = (" the", " cat", " sat", " on", " a", " mat", " and", " then")
    text = "".join(words[i % len(words)] for i in range(n))
    ids = tuple(state.model.tokenizer.encode(text))
    assert len(ids) == n
    return text, ids


def test_progress_arrives_chunk_by_chunk_and_the_prompt_completes(qtbot, atlas_state):
    st = atlas_state
    text, ids = long_text(st)
    seen = []
    st.sigProgress.connect(lambda name, done, total: seen.append((name, done, total)))
    st.run_prompt(text)
    qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=30000)
    assert st.history.tokens == ids
    assert seen[0] == ("A", 0, len(ids))
    assert [d for _, d, _ in seen] == [0, *range(CHUNK, len(ids), CHUNK), len(ids)]
    assert {t for _, _, t in seen} == {len(ids)}


def test_a_new_prompt_cancels_a_long_one_within_a_second(qtbot, atlas_state):
    st = atlas_state
    text, ids = long_text(st)
    shown, progress = [], []
    st.sigHistory.connect(lambda name: st.history is not None and shown.append(st.history.tokens))
    st.sigProgress.connect(lambda name, done, total: progress.append(done))
    st.run_prompt(text)
    qtbot.waitUntil(lambda: len(progress) >= 2, timeout=30000)  # a chunk is done: the prefill is running
    t0 = time.perf_counter()
    st.run_prompt("The capital of France is")
    qtbot.waitUntil(lambda: not st.busy, timeout=5000)
    assert time.perf_counter() - t0 < 1.0
    new = tuple(st.model.tokenizer.encode("The capital of France is"))
    assert st.history.tokens == new and shown == [new]  # the long prompt never appeared
    assert max(progress) < len(ids)  # it stopped before its end


def test_a_cancelled_prompt_is_counted_on_the_gui_thread(qtbot, atlas_state):
    """The worker's "skipped" answer must reach the state on the GUI thread: "busy" turning false there
    hides the progress bar; counted on the worker thread, it raced the window (seen as a bar left showing)."""
    st = atlas_state
    text, _ = long_text(st)
    progress, threads = [], []
    st.sigProgress.connect(lambda name, done, total: progress.append(done))
    st.sigBusy.connect(lambda busy: threads.append((busy, QThread.currentThread() is QCoreApplication.instance().thread())))
    st.run_prompt(text)
    qtbot.waitUntil(lambda: len(progress) >= 2, timeout=30000)
    st.cancel()
    qtbot.waitUntil(lambda: not st.busy, timeout=5000)
    assert threads[-1] == (False, True) and all(on_gui for _, on_gui in threads)


def test_reset_cancels_the_first_long_prompt(qtbot, tmp_path, slow_chunks):
    from gpt2viz.widgets.main_window import MainWindow

    st = AppState(Settings(str(tmp_path / "w.ini")))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.show()
    text = "".join((" the", " cat", " sat", " on")[i % 4] for i in range(250))
    w.prompt.setText(text)
    st.load_model(str(resolve_model(None)))  # runs the prompt once loaded
    qtbot.waitUntil(lambda: w.prefill_bar.isVisible() and w.prefill_bar.value() >= CHUNK, timeout=30000)
    assert w.prefill_bar.maximum() == 250 and "250" in w.prefill_bar.text()
    assert w.controls.reset_btn.isEnabled()  # nothing to reset to yet, but it cancels
    t0 = time.perf_counter()
    w.controls.reset_btn.click()
    qtbot.waitUntil(lambda: not st.busy, timeout=5000)
    assert time.perf_counter() - t0 < 1.0
    assert st.history is None and not w.prefill_bar.isVisible()
    w.close()


def test_closing_the_window_cancels_a_long_prompt(qtbot, tmp_path, slow_chunks):
    from gpt2viz.widgets.main_window import MainWindow

    st = AppState(Settings(str(tmp_path / "c.ini")))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.show()
    w.prompt.setText("".join((" the", " cat")[i % 2] for i in range(250)))
    st.load_model(str(resolve_model(None)))
    qtbot.waitUntil(lambda: w.prefill_bar.isVisible() and w.prefill_bar.value() >= CHUNK, timeout=30000)
    t0 = time.perf_counter()
    w.close()  # shutdown waits for the worker thread: the prefill must stop at its next chunk
    assert time.perf_counter() - t0 < 1.0
    assert not st._thread.isRunning()
