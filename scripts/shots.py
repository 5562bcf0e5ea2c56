"""What the screenshot scripts share: the main window, offscreen, on the bundled model (or MODEL), with a prompt
run, and a wait that keeps Qt's event loop turning.

    from shots import open_window
    app, state, win, wait = open_window("The capital of France is", size=(1500, 1000))
"""

from __future__ import annotations

import os
import tempfile


def open_window(prompt: str, model: str | None = None, size: tuple[int, int] = (1500, 1000), run: bool = True):
    """(app, state, window, wait): the shown main window with ``prompt`` typed and, when ``run``, run on ``model``
    (default: the bundled one). ``wait(done, ms)`` turns the event loop until ``done()`` (SystemExit on time-out)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from gpt2viz.app.settings import Settings
    from gpt2viz.app.state import AppState
    from gpt2viz.core.model_folder.locations import resolve_model
    from gpt2viz.widgets.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    state = AppState(Settings(os.path.join(tempfile.mkdtemp(), "s.ini")))
    win = MainWindow(state)
    win.prompt.setText(prompt)
    win.resize(*size)
    win.show()

    def wait(done, ms=300000):
        loop = QEventLoop()
        timer = QTimer()
        timer.timeout.connect(lambda: done() and loop.quit())
        timer.start(50)
        QTimer.singleShot(ms, loop.quit)
        loop.exec()
        timer.stop()
        if not done():
            raise SystemExit("timed out")

    if run:
        state.load_model(str(resolve_model(model)))
        wait(lambda: state.history is not None and not state.busy)
    return app, state, win, wait


def settle(app, rounds: int = 30) -> None:
    """Let queued redraws happen before a grab."""
    for _ in range(rounds):
        app.processEvents()
