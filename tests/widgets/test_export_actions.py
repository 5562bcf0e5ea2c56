"""The Export menu's four flows (widgets/export_actions.py): each starts in, and remembers, the folder of the last export."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gpt2viz.widgets.export_actions import FOLDER_KEY

FLOWS = {"export_view": "view.png", "export_layers": "", "export_data": "data.npz", "report": "report.html"}


@pytest.fixture
def win(stepped_window):
    return stepped_window("l2h2e16")


@pytest.mark.parametrize("action", list(FLOWS))
def test_each_export_flow_starts_in_the_last_folder_and_remembers_its_own(win, tmp_path, monkeypatch, action):
    before = tmp_path / "before"
    before.mkdir()
    win.state.settings.set(FOLDER_KEY, str(before))
    chosen = tmp_path / f"chosen-{action}"
    chosen.mkdir()
    starts = []

    def save(parent, title, start, *filters):
        starts.append(start)
        return str(chosen / FLOWS[action]), ""

    def folder(parent, title, start, *rest):
        starts.append(start)
        return str(chosen)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(folder))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Yes))
    win.last_error = None
    win.actions_by_name[action].trigger()
    assert win.last_error is None
    assert len(starts) == 1 and Path(starts[0]).parts[:len(before.parts)] == before.parts
    assert any(chosen.iterdir()), "nothing was written"
    assert win.state.settings.text(FOLDER_KEY) == str(chosen)
    assert "saved" in win.statusBar().currentMessage()


def test_a_cancelled_dialog_changes_nothing(win, tmp_path, monkeypatch):
    win.state.settings.set(FOLDER_KEY, str(tmp_path))
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: ""))
    for action in FLOWS:
        win.actions_by_name[action].trigger()
    assert win.state.settings.text(FOLDER_KEY) == str(tmp_path)
    assert not [f for f in tmp_path.iterdir() if f.suffix in (".png", ".svg", ".npz", ".json", ".pdf", ".html")]
