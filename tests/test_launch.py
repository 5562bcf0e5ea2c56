"""gpt2viz.launch: what the app sets on the application and its window before the event loop.

Each test runs in a process of its own: the garbage-collection policy is process-wide and must not leak into the
other tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

COLLECTOR = r'''
import gc, threading, weakref
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gpt2viz.launch import prepare_application

app = QApplication([])
prepare_application(app)
threads = []
gc.callbacks.append(lambda phase, info: phase == "start" and threads.append(threading.current_thread().name))


class Cycle:
    pass


def make_cycles():
    # Python's automatic collection would run ~30 times here, on this thread
    for _ in range(20000):
        c = Cycle()
        c.me = c


worker = threading.Thread(target=make_cycles, name="worker")
worker.start()
worker.join()
c = Cycle()
c.me = c
ref = weakref.ref(c)
del c
QTimer.singleShot(2500, app.quit)  # the GUI thread's collector checks once a second
app.exec()
print("enabled", gc.isenabled())
print("threads", sorted(set(threads)))
print("collected", ref() is None)
'''

FREEZE = r'''
import gc
from PySide6.QtWidgets import QApplication, QMainWindow
from gpt2viz.launch import show_main_window

app = QApplication([])
win = QMainWindow()
show_main_window(win)
print("visible", win.isVisible())
print("frozen", gc.get_freeze_count() > 1000)
'''


def run(script: str) -> dict[str, str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


def test_garbage_is_collected_on_the_gui_thread_only():
    """A worker thread allocating many cycles triggers no collection there; the GUI thread's timer collects them."""
    r = run(COLLECTOR)
    assert r["enabled"] == "False"
    assert r["threads"] == "['MainThread']"
    assert r["collected"] == "True"


def test_show_main_window_freezes_the_objects_alive_at_startup():
    """After the window is shown, the startup objects are out of the collector's walk."""
    r = run(FREEZE)
    assert r == {"visible": "True", "frozen": "True"}
