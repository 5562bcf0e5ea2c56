"""Opening the desktop app from the command line: the window, its model, and a prepared state.

This sits with the command line above the widgets: it reads the parsed command line (an argparse
Namespace) and drives the window through its public methods, so the widgets never see the command line.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMainWindow

from gpt2viz.app import i18n
from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.model_folder.locations import resolve_model, resources_dir
from gpt2viz.core.model_folder.manifest import ModelFolderError
from gpt2viz.widgets.main_window import MainWindow
from gpt2viz.widgets.window_style import WindowStyle


def prepare_from_args(win: MainWindow, a, pending: list) -> None:
    """Once the first run (and its ``pending[0]`` steps) are in: the command line's interventions, prompt B
    and analysis, one after the other (each waits for the state the one before it made)."""
    from gpt2viz.commands.interventions import from_args
    from gpt2viz.core.interventions import InterventionError

    st = win.state
    todo = ["ivs", "compare", "analysis"]

    def go(_name=None) -> None:
        if not todo or pending[0] > 0 or st.history is None or st.busy:
            return
        what = todo.pop(0)
        try:
            if what == "ivs":
                ivs = from_args(a, st.model)
                if ivs:
                    st.set_interventions(ivs)
                    return  # the re-run's result calls go() again
            elif what == "compare" and getattr(a, "compare", None):
                win.open_compare(a.compare)
                return
            elif what == "analysis" and getattr(a, "analysis", None):
                if a.analysis == "patching":
                    win.open_analysis(0)
                    win.analysis.patching.run()
                else:
                    win.open_analysis(1)
                    if getattr(a, "subject", None):
                        win.analysis.causal.subject.setText(a.subject)
                    win.analysis.causal.run()
        except InterventionError as e:
            win.show_error(str(e))
        go()

    st.sigHistory.connect(go)


def close_on_signals(win: QMainWindow) -> None:
    """Ctrl+C in the terminal or SIGTERM closes the window as its close button would (settings saved, worker stopped).

    Python runs signal handlers only between bytecodes, never while Qt waits for events: the signal's
    wake-up byte on a socket pair wakes the event loop, and the handler then runs.
    """
    import signal
    import socket

    from PySide6.QtCore import QSocketNotifier, QTimer

    try:
        r, w = socket.socketpair()
        r.setblocking(False)
        w.setblocking(False)
        signal.set_wakeup_fd(w.fileno())
    except (OSError, ValueError):  # not the main thread, or no socket pairs: keep the defaults
        return
    notifier = QSocketNotifier(r.fileno(), QSocketNotifier.Read, win)

    def drain() -> None:
        try:
            r.recv(64)
        except OSError:
            pass

    notifier.activated.connect(drain)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_a: QTimer.singleShot(0, win.close))
    win._signal_wakeup = (r, w, notifier)  # kept alive with the window


def prepare_application(app: QApplication) -> None:
    """What the app sets on the application before its window; the benches and the soak set it too, to measure
    the app as it runs."""
    app.setStyle(WindowStyle())  # Fusion (it follows the system's light or dark colour scheme), scroll bars flat
    collect_garbage_on_gui_thread(app)


def collect_garbage_on_gui_thread(app: QApplication) -> None:
    """Python's cyclic garbage collector runs only on the GUI thread: automatic collection off, and a timer of the
    GUI thread collecting each generation when Python's own thresholds are passed (pyqtgraph's GarbageCollector,
    checking once a second).

    An automatic collection runs on whichever thread allocates: in a 600-step soak of atlas, 119 of them ran on
    the worker thread. One that frees a cycle holding Qt objects destroys them there; Qt's destructor then holds a
    connection lock while shiboken waits for the GIL, and the GUI thread, holding the GIL, waits for that lock in
    its next ``connect``: the app hangs (seen in a test; see gpt2viz.core.engine.memory.release_memory).
    Garbage cycles wait up to a second to be collected. Idempotent; the collector lives as long as ``app``."""
    from pyqtgraph.util.garbage_collector import GarbageCollector

    if getattr(app, "_gpt2viz_gc", None) is None:
        app._gpt2viz_gc = GarbageCollector(interval=1.0)


def show_main_window(win: QMainWindow) -> None:
    """Show the window, then collect once and freeze every object alive (``gc.freeze``): the modules' and the
    window's ~88,000 objects live as long as the app, and once frozen a full collection no longer walks them.

    On atlas (EPYC machine) a full collection, which holds the GIL and so stops the GUI thread and the worker's
    Python, takes ~45 ms with them and ~1 ms frozen. A cycle among the frozen objects that becomes garbage later is
    never collected: the window's widgets are kept until the app ends anyway."""
    win.show()
    gc.collect()
    gc.freeze()


def run_app(model_spec: str | None = None, settings_path: str | None = None, prompt: str | None = None,
            steps: int = 0, lang: str | None = None, journey: int | None = None, args=None,
            device: str = "cpu") -> int:
    """Open the main window with ``model_spec`` (a folder or name), else the last or the default model.

    ``prompt`` replaces the remembered prompt; it runs as soon as the model is loaded, then ``steps``
    tokens are generated (a lesson can open on a prepared state). ``lang`` ("en" / "zh") overrides the
    remembered or system language for this run; ``journey`` opens the guided journey at that page (1-based);
    ``args`` (the parsed command line) adds its interventions, prompt B and analysis; ``device`` ("cpu" /
    "cuda") is where the models run.
    """
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("gpt2viz")
    prepare_application(app)
    icon = resources_dir() / "icons" / "gpt2viz.svg"
    if icon.is_file():
        app.setWindowIcon(QIcon(str(icon)))
    settings = Settings(settings_path)
    i18n.install(i18n.choose_language(lang, settings), app)
    state = AppState(settings, device=device)
    win = MainWindow(state)
    if prompt is not None:
        win.prompt.setText(prompt)
    if journey is not None:
        win.open_journey(journey - 1)
    pending = [steps]

    def auto_step(_name=None):
        if pending[0] > 0 and state.history is not None and not state.busy:
            pending[0] -= 1
            state.step()
    state.sigHistory.connect(auto_step)
    if args is not None:
        prepare_from_args(win, args, pending)
    close_on_signals(win)
    show_main_window(win)
    try:
        last = state.settings.text("model/last") if model_spec is None else ""
        folder = resolve_model(model_spec) if (model_spec or not last or not Path(last).is_dir()) else Path(last)
        state.load_model(str(folder))
    except ModelFolderError as e:
        win.show_error(str(e))
    return app.exec()
