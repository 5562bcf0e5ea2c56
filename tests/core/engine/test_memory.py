"""release_memory collects garbage on the main thread only: on the app's worker thread a collection could destroy
the GUI thread's Qt objects there (a hang seen in the tests)."""

import gc
import threading
import weakref

from gpt2viz.core.engine import memory


class _Node:
    pass


def _cycle() -> weakref.ref:
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_release_memory_collects_cycles_on_the_main_thread_only(monkeypatch):
    trims = []
    monkeypatch.setattr(memory, "trim_heap", lambda: trims.append(threading.current_thread().name))
    was_enabled = gc.isenabled()
    gc.disable()  # no automatic collection in between
    try:
        alive = _cycle()
        worker = threading.Thread(target=memory.release_memory, name="worker")
        worker.start()
        worker.join()
        assert alive() is not None  # not collected on the worker
        memory.release_memory()
        assert alive() is None  # collected on the main thread
    finally:
        if was_enabled:
            gc.enable()
    assert trims == ["worker", threading.main_thread().name]  # the heap is trimmed on either
