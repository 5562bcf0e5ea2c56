"""Giving memory back to the system after a long call (glibc keeps freed heap otherwise)."""

from __future__ import annotations

import ctypes
import gc
import threading

# A released call (Model.run's ``release``) whose new KV cache, its largest output, is at most this size may leave
# that cache's region in onnxruntime's arena, where the calls after it reuse it; a larger one is handed back to the
# system (74 MB at 1000 tokens of GPT-2 small, 0.2 GB on gpt2-medium). Handing back outputs made in the arena
# (a call under interventions) takes one more forward pass: ~15 ms of every 200-token re-run of GPT-2 small.
ARENA_KEEPS = 32 << 20


def release_memory() -> None:
    """Collect garbage (on the main thread only), then give freed heap memory back to the system (see
    :func:`trim_heap`).

    On another thread (the app's worker) a collection may free a cycle holding Qt objects of the GUI thread and
    destroy them there. Qt's destructor then holds a connection lock while shiboken waits for the GIL, and the GUI
    thread, holding the GIL, waits for that lock in its next ``connect``: the app hung so, in a test, when the
    worker loaded a model. The app also turns Python's automatic collection off and collects on the GUI thread
    (gpt2viz.launch.collect_garbage_on_gui_thread)."""
    if threading.current_thread() is threading.main_thread():
        gc.collect()
    trim_heap()


def trim_heap() -> None:
    """Give freed heap memory back to the system (glibc keeps it otherwise; a no-op elsewhere)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
