"""What every long analysis panel shares: Run / Cancel / a progress bar for one job channel of the state, a
message line and a read-out line; and the target token a user types."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.views.common import note


def target_id(tokenizer, text: str) -> int | None:
    """The token a typed target names (its first token; "" = default)."""
    if not text:
        return None
    ids = tokenizer.encode(text)
    return int(ids[0]) if ids else None


class JobPanel(Retranslating, QWidget):
    """Run / Cancel / progress for one job channel of the state."""

    channel = ""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.run_btn, self.cancel_btn = QPushButton(), QPushButton()
        self.cancel_btn.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.message = note()
        self.readout = QLabel()
        self.run_btn.clicked.connect(self.run)
        self.cancel_btn.clicked.connect(lambda: state.cancel_jobs(self.channel))
        state.sigJobProgress.connect(self._on_progress)
        state.sigJobDone.connect(self._on_done)

    def _on_progress(self, channel: str, done: int, total: int) -> None:
        if channel == self.channel:
            self.progress.setMaximum(total)
            self.progress.setValue(done)

    def _on_done(self, channel: str, result) -> None:
        if channel != self.channel:
            return
        self.run_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        if result is None:
            self.progress.setValue(0)
            self.message.setText(QCoreApplication.translate("Analysis", "Stopped: cancelled, or another request came first."))
            return
        self.progress.setValue(self.progress.maximum())
        self.draw()

    def started(self) -> None:
        self.run_btn.setEnabled(False)
        self.cancel_btn.setEnabled(True)
        self.progress.setValue(0)

    @property
    def summary(self):
        return self.state.session(SessionId.A).analyses.get(self.channel)

    def tok(self):
        return self.state.model.tokenizer

    def run(self) -> None:  # pragma: no cover - every panel defines it
        raise NotImplementedError

    def draw(self) -> None:  # pragma: no cover
        raise NotImplementedError
