"""The real window on a damaged or unwritable settings file: defaults, one clear message, and it keeps running."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QMessageBox

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.widgets.main_window import DEFAULT_PROMPT, MainWindow
from tests.app.test_settings import GARBAGE, _read_only


def _boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]


def _open(qtbot, ini, model) -> MainWindow:
    for b in _boxes():
        b.done(QMessageBox.Ok)
    w = MainWindow(AppState(Settings(str(ini))))
    qtbot.addWidget(w)
    w.show()
    return w


def _works(qtbot, w, model) -> None:
    st = w.state
    st.load_model(str(model))
    qtbot.waitUntil(lambda: not st.busy and st.history is not None, timeout=20000)
    n = len(st.history.tokens)
    st.step()
    qtbot.waitUntil(lambda: not st.busy and len(st.history.tokens) == n + 1, timeout=20000)


def test_damaged_settings_start_with_defaults_and_one_message(qtbot, tmp_path, tiny_model_dir):
    ini = tmp_path / "settings.ini"
    ini.write_bytes(GARBAGE)
    w = _open(qtbot, ini, tiny_model_dir)
    assert "damaged" in (w.last_error or "") and "settings.ini.corrupt" in w.last_error
    assert len(_boxes()) == 1
    assert w.prompt.text() == DEFAULT_PROMPT and w.state.sampling == SamplingSettings()
    _works(qtbot, w, tiny_model_dir)
    assert len(_boxes()) == 1  # said once
    w.prompt.setText("remembered")
    w.close()
    assert (tmp_path / "settings.ini.corrupt").read_bytes() == GARBAGE
    again = Settings(str(ini))
    assert again.problem() is None and again.text("prompt/last") == "remembered"


def test_wrong_kinds_of_values_in_the_window(qtbot, tmp_path, tiny_model_dir):
    ini = tmp_path / "settings.ini"
    ini.write_text("[sampling]\ntemperature=-4\ntop_k=many\n\n[window]\ngeometry=12\n\n[export]\ndark=yes\n")
    w = _open(qtbot, ini, tiny_model_dir)
    assert "wrong kind" in (w.last_error or "") and "sampling/temperature" in w.last_error
    assert w.state.sampling == SamplingSettings() and not w.export_dark
    _works(qtbot, w, tiny_model_dir)
    w.close()


def test_read_only_settings_the_app_runs_and_the_file_is_untouched(qtbot, tmp_path, tiny_model_dir, request):
    ini = tmp_path / "settings.ini"
    ini.write_text("[General]\nprompt%2Flast=kept\n")
    _read_only(ini, request)
    w = _open(qtbot, ini, tiny_model_dir)
    assert "cannot be written" in (w.last_error or "")
    assert w.prompt.text() == "kept"
    _works(qtbot, w, tiny_model_dir)
    w.prompt.setText("new")
    w.close()
    assert ini.read_text() == "[General]\nprompt%2Flast=kept\n"


def test_a_sound_settings_file_shows_no_message(qtbot, tmp_path, tiny_model_dir):
    w = _open(qtbot, tmp_path / "settings.ini", tiny_model_dir)
    assert getattr(w, "last_error", None) is None and not _boxes()
    w.close()
