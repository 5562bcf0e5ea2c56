"""Edit a fact (ROME): prompt, subject and new target in; the edit is computed on the worker with progress and
Cancel, then put in force on prompt A as an intervention chip (removable like any other)."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from gpt2viz.app.state import AppState


class EditFactDialog(QDialog):
    """The form of one ROME edit; stays open to show what the edit did."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.setWindowTitle(self.tr("Edit a fact (ROME)"))
        self.prompt, self.subject, self.target = QLineEdit(), QLineEdit(), QLineEdit()
        self.prompt.setText(state.session("A").prompt or "The capital of France is")
        self.subject.setPlaceholderText(self.tr("a part of the prompt, e.g.  France"))
        self.target.setPlaceholderText(self.tr("the new continuation, e.g.  Rome"))
        self.layer = QSpinBox()
        self.layer.setRange(-1, max(0, (state.model.config.n_layer - 1) if state.model else 0))
        self.layer.setValue(-1)
        self.layer.setSpecialValueText(self.tr("from the causal trace"))
        form = QFormLayout()
        form.addRow(self.tr("Prompt"), self.prompt)
        form.addRow(self.tr("Subject"), self.subject)
        form.addRow(self.tr("New target"), self.target)
        form.addRow(self.tr("Block (MLP)"), self.layer)
        self.edit_btn, self.cancel_btn = QPushButton(self.tr("Edit")), QPushButton(self.tr("Cancel"))
        self.cancel_btn.setEnabled(False)
        self.progress = QProgressBar()
        self.message = QLabel(self.tr(
            "ROME writes the new fact into one MLP's output weight (a rank-one change) so that the subject's key "
            "now reads out the new target. The edit joins prompt A's interventions; remove its chip to undo it."))
        self.message.setWordWrap(True)
        row = QHBoxLayout()
        for w in (self.edit_btn, self.cancel_btn, self.progress):
            row.addWidget(w)
        close = QDialogButtonBox(QDialogButtonBox.Close)
        close.rejected.connect(self.close)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(row)
        lay.addWidget(self.message)
        lay.addWidget(close)
        self.edit_btn.clicked.connect(self.run)
        self.cancel_btn.clicked.connect(lambda: state.cancel_jobs("edit"))
        state.sigJobProgress.connect(self._on_progress)
        state.sigJobDone.connect(self._on_done)
        self.resize(560, 300)

    def prefill(self, prompt: str, subject: str, target: str) -> None:
        """Put a suggested edit in the form (the journey's last page); the block stays the causal trace's."""
        self.prompt.setText(prompt)
        self.subject.setText(subject)
        self.target.setText(target)

    def run(self) -> None:
        """Start the edit with the form's values (a bad subject or target is a message)."""
        if self.state.model is None:
            self.message.setText(self.tr("No model is loaded."))
            return
        layer = None if self.layer.value() < 0 else self.layer.value()
        if self.state.edit_fact(self.prompt.text(), self.subject.text(), self.target.text(), layer):
            self.edit_btn.setEnabled(False)
            self.cancel_btn.setEnabled(True)
            self.progress.setValue(0)
            self.message.setText(self.tr("Computing the edit…"))

    def _on_progress(self, channel: str, done: int, total: int) -> None:
        if channel == "edit":
            self.progress.setMaximum(total)
            self.progress.setValue(done)

    def _on_done(self, channel: str, summary) -> None:
        if channel != "edit":
            return
        self.edit_btn.setEnabled(True)
        self.cancel_btn.setEnabled(False)
        if summary is None:
            self.message.setText(self.tr("Stopped: cancelled, failed, or another request came first."))
            return
        self.progress.setValue(self.progress.maximum())
        source = self.tr("from the causal trace") if summary.layer_from == "causal trace" else self.tr("given")
        sc = summary.scores
        pct = lambda x: self.tr("n/a") if x is None else f"{x:.0%}"
        self.message.setText(self.tr(
            "In force on prompt A: block {layer}'s MLP ({source}). P({target} | prompt) {before:.2%} before, "
            "{after:.2%} after (the old answer {old}).").format(
            layer=summary.layer, source=source, target=summary.target.strip(), before=summary.p_before,
            after=summary.p_after, old=summary.old.strip()) + "\n" + self.tr(
            "Efficacy {eff}; paraphrases {para} (Chinese {zh}); other subjects kept {nb} (before the edit {nb0}); "
            "fluency {f0:.2f} → {f1:.2f} bits.").format(
            eff=pct(sc.efficacy), para=pct(sc.paraphrase if summary.n_paraphrases else None),
            zh=pct(sc.paraphrase_zh), nb=pct(sc.neighbourhood), nb0=pct(sc.neighbourhood_before),
            f0=sc.fluency_before, f1=sc.fluency_after))

