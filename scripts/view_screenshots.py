"""Render every detail view of the app for one prompt to PNGs (offscreen), for the docs.

    QT_QPA_PLATFORM=offscreen python scripts/view_screenshots.py --out docs/views \
        [--prompt "The capital of France is"] [--layer 1] [--head 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--prompt", default="The capital of France is")
    ap.add_argument("--model", default=None)
    ap.add_argument("--layer", type=int, default=1)
    ap.add_argument("--head", type=int, default=2)
    a = ap.parse_args()
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
    win.prompt.setText(a.prompt)
    win.resize(1500, 940)
    win.show()
    loop = QEventLoop()
    state.sigHistory.connect(lambda: state.history is not None and loop.quit())
    state.load_model(str(resolve_model(a.model)))
    QTimer.singleShot(60000, loop.quit)
    loop.exec()
    state.select_block(a.layer, a.head)
    a.out.mkdir(parents=True, exist_ok=True)
    for name, view in win.detail.views.items():
        win.detail.setCurrentWidget(view)
        app.processEvents()
        path = a.out / f"{name.lower().replace(' ', '_')}.png"
        view.grab().save(str(path))
        print(path)
    win.grab().save(str(a.out / "window.png"))
    win.close()


if __name__ == "__main__":
    main()
