"""Soak: many generation steps in the real main window; resident memory and live-object counts before and after.

Play in stretches (pace 0) and single Steps, with Back / Reset / new prompts in between, tab switches so
every lazy view redraws, on the bundled model. After a warm-up and at the end the window is brought to
the same state (the same prompt run again, every tab shown once, deferred deletes flushed, gc run) and
measured: VmRSS, threads (OS, Python, QThreads), QTimers, widgets, and the items of every plot.

    nice python bench/soak_app.py [--model atlas] [--steps 2000] [--warmup 2500] [--seed 0]
(under a display, or QT_QPA_PLATFORM=offscreen)

``tests/widgets/test_soak.py`` runs a short version of :func:`soak` and asserts the counts do not grow.

Measured, atlas, offscreen, seed 0, on a 2-core EPYC VM (2026-12-07):

- ``--warmup 2500 --steps 2000`` (the default): 2004 steps after a 2530-step warm-up in 55 s; VmRSS 499.8 MB after
  the warm-up, 506.6 MB at the end (+1.4 %); after malloc_trim 438.1 -> 441.0 MB (+0.7 %). Threads (2 Python, 1
  QThread), QTimers (5), widgets (1075), plot items and scene items (278), OS threads besides Qt's own pool's
  equal; Python objects 90992 -> 91164.
- Resident memory rises for the first ~2500 steps of a session, as texts of new lengths run, and then stays; hence
  the warm-up. From 300 to 2800 steps it grows by 74 MB (read off /proc/self/smaps at the checkpoints): the C heap,
  two onnxruntime arena regions, other anonymous memory (+18, +18, +17, +10 MB); tracemalloc traces Python's and
  numpy's memory flat (12.6 -> 12.8 MB). With the lens in one call rather than 48 rows a call (weights.LENS_ROWS), a
  lens grid's 32 columns (224 rows of [50,257] logits) would add a 192 MB arena region and 134-144 MB of growth.
- Found by this soak and fixed: the marker curves (residual, MLP, lens views) handed pyqtgraph colours as tuples, which
  it turns into new pen and brush objects on every redraw; its marker cache is keyed by object, so it gained a
  picture per redraw (regression test in tests/widgets/test_soak.py).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import threading
import time
from pathlib import Path

PROMPTS = ("The capital of France is", "Once upon a time", "In 1492, Columbus", "def fib(n):",
           "The quick brown fox", "My favourite city is", "Water boils at")
BASE = PROMPTS[0]


def rss_mb() -> float:
    """Resident memory of this process (VmRSS), in MB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def trimmed_rss_mb() -> float:
    """VmRSS after handing glibc's free heap back to the system (malloc_trim): what is really held."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return rss_mb()


def os_threads() -> int:
    """The process's OS threads but Qt's global pool's ("Thread (pooled)"), which Qt starts when work comes and
    retires after 30 s idle by itself: counted, they made a soak's count 8 -> 9 (or 37 -> 38 in the test process)
    in some runs without any leak."""
    n = 0
    for comm in Path("/proc/self/task").glob("*/comm"):
        try:
            n += comm.read_text().strip() != "Thread (pooled)"
        except OSError:  # the thread ended while being listed
            pass
    return n


def wait_until(pred, timeout: float = 60.0) -> None:
    """Process events until ``pred()`` holds; TimeoutError after ``timeout`` seconds."""
    from PySide6.QtCore import QCoreApplication, QEventLoop

    end = time.monotonic() + timeout
    while not pred():
        QCoreApplication.processEvents(QEventLoop.AllEvents, 20)
        if time.monotonic() > end:
            raise TimeoutError(f"condition not met within {timeout} s")
        time.sleep(0.002)  # let the worker thread have the GIL


def settle() -> None:
    """Run pending events and deferred deletes, then collect garbage."""
    from PySide6.QtCore import QCoreApplication, QEvent

    for _ in range(3):
        QCoreApplication.processEvents()
        QCoreApplication.sendPostedEvents(None, QEvent.DeferredDelete)
    gc.collect()


def idle(state):
    return lambda: not state.busy and state.history is not None


def counts(win) -> dict[str, int]:
    """Live objects that a leak would multiply."""
    import pyqtgraph as pg
    from PySide6.QtCore import QThread, QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    out = {"os threads (not Qt's pool)": os_threads(), "python threads": threading.active_count(),
           "QThreads": len({id(t) for o in (app, win, win.state) for t in o.findChildren(QThread)}) +
           (1 if win.state._thread.isRunning() else 0),
           "QTimers": len({id(t) for o in (app, win, win.state) for t in o.findChildren(QTimer)}),
           "widgets": len(QApplication.allWidgets())}
    plots = 0
    for i, pw in enumerate(win.findChildren(pg.PlotWidget)):
        plots += len(pw.getPlotItem().items)
        out[f"plot {i} items"] = len(pw.getPlotItem().items)
    out["plot items (all plots)"] = plots
    out["python objects (gc)"] = len(gc.get_objects()) + gc.get_freeze_count()  # the frozen ones too
    out["scene items (all scenes)"] = sum(len(v.scene().items()) for v in win.findChildren(pg.GraphicsView))
    return out


def checkpoint(win) -> dict[str, int]:
    """The same state every time: the base prompt, newest position, every tab shown, first tab last."""
    state = win.state
    win.prompt.setText(BASE)
    win.run_prompt()
    wait_until(idle(state))
    state.select_position(None)
    for i in range(win.detail.count()):
        win.detail.setCurrentIndex(i)
        settle()
    win.detail.setCurrentIndex(0)
    settle()
    return counts(win)


def soak(win, steps: int, warmup: int, seed: int = 0, log=None, fill: bool = True) -> dict:
    """Drive ``win`` (loaded, idle) for ``warmup`` then ``steps`` more generation steps.

    ``fill``: start the warm-up with one Play that fills the context. Returns {"rss": (warm, end),
    "trimmed": (warm, end) (VmRSS after malloc_trim: memory the process really holds), "counts": (warm, end),
    "peak": MB, "steps": n, "seconds": s, "actions": {...}}.
    """
    state = win.state
    rng = random.Random(seed)
    actions: dict[str, int] = {}
    done = [0]
    marks = {}

    def stepped() -> int:
        return state.session().model_runs

    def play_stretch(n: int) -> None:
        start = stepped()
        win.controls.pace.setValue(0)
        state.play()
        wait_until(lambda: stepped() - start >= n or not state.playing, timeout=120)
        state.pause()
        wait_until(idle(state))

    def single_steps(n: int) -> None:
        for _ in range(n):
            win.controls.step_btn.click()
            wait_until(idle(state))

    def one_round():
        h = state.history
        room = state.model.config.n_positions - len(h.tokens) - 1
        if room < 40:
            what = rng.choice(["reset", "prompt"])
        else:
            what = rng.choices(["play", "steps", "back", "reset", "prompt", "tab", "select"],
                               weights=[5, 2, 2, 1, 1, 2, 1])[0]
        actions[what] = actions.get(what, 0) + 1
        before = stepped()
        if what == "play":
            play_stretch(min(room - 2, rng.randint(10, 60)))
        elif what == "steps":
            single_steps(rng.randint(1, 5))
        elif what == "back":
            for _ in range(rng.randint(1, 8)):
                win.controls.back_btn.click()
            wait_until(idle(state))
        elif what == "reset":
            win.controls.reset_btn.click()
            wait_until(idle(state))
        elif what == "prompt":
            win.prompt.setText(rng.choice(PROMPTS))
            win.run_prompt()
            wait_until(idle(state))
        elif what == "tab":
            win.detail.setCurrentIndex(rng.randrange(win.detail.count()))
            settle()
        elif what == "select":
            n = len(state.history.tokens)
            state.select_position(rng.randrange(n))
            settle()
        # prefills are model runs too: count only steps (a prompt run is one model call)
        done[0] += max(0, stepped() - before - (1 if what == "prompt" else 0))

    t0 = time.perf_counter()
    if fill:
        # The largest working set first: one Play until the context is full, so the allocator's high-water
        # mark (glibc keeps freed heap for reuse) is reached in the warm-up, not in the measured part.
        before = stepped()
        play_stretch(state.model.config.n_positions)
        done[0] += stepped() - before
        win.controls.reset_btn.click()
        wait_until(idle(state))
    while done[0] < warmup:
        one_round()
    settle()
    warm_counts = checkpoint(win)
    warm_rss, warm_trim = rss_mb(), trimmed_rss_mb()
    peak = warm_rss
    marks["warm"] = done[0]
    if log:
        log(f"warm-up: {done[0]} steps, RSS {warm_rss:.1f} MB")
    target = done[0] + steps
    last_log = time.perf_counter()
    while done[0] < target:
        one_round()
        peak = max(peak, rss_mb())
        if log and time.perf_counter() - last_log > 15:
            last_log = time.perf_counter()
            log(f"  {done[0] - marks['warm']}/{steps} steps, RSS {rss_mb():.1f} MB")
    end_counts = checkpoint(win)
    end_rss, end_trim = rss_mb(), trimmed_rss_mb()
    return {"rss": (warm_rss, end_rss), "trimmed": (warm_trim, end_trim), "peak": peak, "counts": (warm_counts, end_counts), "steps": done[0] - marks["warm"],
            "warmup": marks["warm"], "seconds": time.perf_counter() - t0, "actions": actions}


def open_window(folder, ini: str):
    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.launch import show_main_window
    from gpt2viz.widgets.main_window import MainWindow

    state = AppState(Settings(ini))
    win = MainWindow(state)
    win.prompt.setText(BASE)
    win.resize(1400, 900)
    show_main_window(win)  # as gpt2viz.launch.run_app shows it
    state.load_model(str(folder))
    wait_until(idle(state), timeout=120)
    return win


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=2500, help="steps before the first measurement; the first "
                    "Play fills the context; resident memory settles by about 2300 (default 2500)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import tempfile

    from PySide6.QtWidgets import QApplication

    from gpt2viz.app import qt_messages
    from gpt2viz.core.model_folder.locations import resolve_model
    from gpt2viz.launch import prepare_application

    qt_messages.install()  # the offscreen platform's size-hint chatter, once per redraw, would bury the log

    folder = resolve_model(a.model)
    app = QApplication.instance() or QApplication([])
    prepare_application(app)  # as gpt2viz.launch.run_app sets it
    ini = os.path.join(tempfile.mkdtemp(), "soak.ini")
    win = open_window(folder, ini)
    r = soak(win, a.steps, a.warmup, a.seed, log=lambda m: print(m, flush=True))
    (w_rss, e_rss), (wc, ec) = r["rss"], r["counts"]
    print(f"model {folder.name}; platform {app.platformName()}; seed {a.seed}")
    print(f"{r['steps']} steps after a {r['warmup']}-step warm-up in {r['seconds']:.0f} s; actions {r['actions']}")
    print(f"RSS after warm-up {w_rss:.1f} MB, at the end {e_rss:.1f} MB: {100 * (e_rss / w_rss - 1):+.2f} %")
    (w_t, e_t) = r["trimmed"]
    print(f"after malloc_trim: {w_t:.1f} MB vs {e_t:.1f} MB: {100 * (e_t / w_t - 1):+.2f} %; "
          f"peak VmRSS while running {r['peak']:.1f} MB")
    print(f"{'':28s} {'warm-up':>8s} {'end':>8s}")
    for k in wc:
        flag = "" if wc[k] == ec.get(k) else "   <-- changed"
        print(f"{k:28s} {wc[k]:8d} {ec.get(k, -1):8d}{flag}")
    win.close()


if __name__ == "__main__":
    main()
