"""Step-through controls: Back, Step, Play/Pause, Reset, and the auto-step pace."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSlider, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.widgets.language import Retranslating


class StepControls(Retranslating, QWidget):
    """Buttons that drive generation; the keys are bound by the main window."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.back_btn, self.step_btn, self.play_btn, self.reset_btn = (QPushButton() for _ in range(4))
        self.pace_name = QLabel()
        self.pace = QSlider(Qt.Horizontal)
        self.pace.setRange(0, 1500)
        self.pace.setValue(400)
        self.pace.setFixedWidth(120)
        self.pace_lbl = QLabel()
        self.back_btn.clicked.connect(lambda: state.back())
        self.step_btn.clicked.connect(lambda: state.step())
        self.play_btn.clicked.connect(self._toggle)
        self.reset_btn.clicked.connect(lambda: state.reset())
        self.pace.valueChanged.connect(self._pace)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        for w in (self.back_btn, self.step_btn, self.play_btn, self.reset_btn):
            lay.addWidget(w)
        lay.addSpacing(12)
        lay.addWidget(self.pace_name)
        lay.addWidget(self.pace)
        lay.addWidget(self.pace_lbl)
        lay.addStretch(1)
        state.sigPlaying.connect(lambda _on: self._play_text())
        state.sigHistory.connect(lambda _name: self._enable())
        state.sigBusy.connect(lambda _busy: self._enable())
        # Reset also cancels a long prompt still being read (even the first one, with nothing to reset to)
        state.sigProgress.connect(lambda name, done, total: name == SessionId.A and done < total
                                  and self.reset_btn.setEnabled(True))
        self.retranslate()
        self._pace(self.pace.value())
        self._enable()

    def retranslate(self) -> None:
        """Set every text in the current language."""
        self.back_btn.setText(self.tr("◀ Back"))
        self.step_btn.setText(self.tr("Step ▶"))
        self.reset_btn.setText(self.tr("Reset"))
        self.back_btn.setToolTip(self.tr("Undo the last step (←): restores the stored state, no recomputation"))
        self.step_btn.setToolTip(self.tr("Append one token using the KV cache (Space or →)"))
        self.play_btn.setToolTip(self.tr("Step automatically at the pace on the right"))
        self.reset_btn.setToolTip(self.tr("Back to the prompt"))
        self.pace_name.setText(self.tr("Pace"))
        self.pace_lbl.setText(self.tr("{ms} ms").format(ms=self.pace.value()))
        self._play_text()

    def _play_text(self) -> None:
        self.play_btn.setText(self.tr("Pause") if self.state.playing else self.tr("Play"))

    def _toggle(self) -> None:
        (self.state.pause if self.state.playing else self.state.play)()

    def _pace(self, ms: int) -> None:
        self.state.set_pace(ms)
        self.pace_lbl.setText(self.tr("{ms} ms").format(ms=ms))

    def _enable(self) -> None:
        h = self.state.history
        self.step_btn.setEnabled(h is not None)
        self.play_btn.setEnabled(h is not None)
        self.back_btn.setEnabled(h is not None and len(h.frames) > 1)
        self.reset_btn.setEnabled(h is not None and len(h.frames) > 1)
