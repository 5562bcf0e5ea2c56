"""A main window on a tiny exported model, after "The capital of France is" and one step."""

from __future__ import annotations

import pytest

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.widgets.main_window import MainWindow


def run_window(qtbot, tmp_path, folder, prompt: str = "The capital of France is") -> MainWindow:
    """A shown MainWindow (1400 x 900) with ``prompt`` run on the model folder ``folder``."""
    st = AppState(Settings(str(tmp_path / "w.ini")))
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.prompt.setText(prompt)
    w.resize(1400, 900)
    w.show()
    st.load_model(str(folder))
    qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=30000)
    return w


@pytest.fixture
def stepped_window(qtbot, tmp_path, exported):
    """Factory: ``stepped_window(model_name)`` -> a shown MainWindow with 5 prompt tokens + 1 generated."""
    made = []

    def make(name: str) -> MainWindow:
        state = AppState(Settings(str(tmp_path / f"{name}.ini")))
        w = MainWindow(state)
        qtbot.addWidget(w)
        w.prompt.setText("The capital of France is")
        w.resize(1400, 900)
        w.show()
        state.load_model(str(exported[name]))
        qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
        state.step()
        qtbot.waitUntil(lambda: not state.busy and len(state.history.tokens) == 6, timeout=20000)
        made.append(w)
        return w

    yield make
    for w in made:
        w.close()
