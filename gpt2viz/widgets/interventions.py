"""Interventions by pointing: the chips of those in force, and the menu actions that add them."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QToolButton, QWidget

from gpt2viz.app.interventions_text import label
from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.interventions import HeadAblation, NeuronAblation, SublayerAblation
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.row_widgets import add_now, drop_now

CHIP_CSS = """
QToolButton { border: 1px solid rgb(200, 60, 60); border-radius: 9px; padding: 1px 8px;
              background: rgba(200, 60, 60, 40); }
"""


class InterventionChips(Retranslating, QScrollArea):
    """One chip per intervention in force (click a chip's ✕ to remove it) and "Remove all"."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.state, self.name, self.session = state, session, state.session(session)
        self.setWidgetResizable(True)
        self.setFixedHeight(36)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._inner = QWidget()
        self._inner.setStyleSheet(CHIP_CSS)
        self._row = QHBoxLayout(self._inner)
        self._row.setContentsMargins(4, 2, 4, 2)
        self._row.setSpacing(4)
        self.setWidget(self._inner)
        self.chips: list[QToolButton] = []
        self.clear_btn: QToolButton | None = None
        state.sigInterventions.connect(lambda name: name == self.name and self._rebuild())
        state.sigModel.connect(lambda name: name == self.name and self._rebuild())
        self._rebuild()

    def retranslate(self) -> None:
        self._rebuild()

    def _rebuild(self) -> None:
        # The old widgets go and the new ones show in the next frame (row_widgets), painted before the model
        # runs (AppState.sigSending). Shown from Qt's queued call, they were painted while it ran, and the run on
        # both cores waited for the thread that frame had taken a core from.
        while self._row.count():
            w = self._row.takeAt(0).widget()
            if w is not None:
                drop_now(w)
        self.chips = []
        ivs = self.session.interventions
        # The row stays shown when empty: a row that appeared and went with the first chip moved everything under
        # it, and every plot of the window was resized and redrawn (~40 ms of adding or removing an ablation on
        # atlas, measured by bench/bench_latency.py). Empty, it says how to add one.
        if not ivs:
            hint = QLabel(self.tr("No interventions. Right-click a block, a head or a neuron to ablate it."))
            hint.setEnabled(False)  # drawn in the palette's muted text colour
            add_now(self._row, hint)
            self._row.addStretch(1)
            self.clear_btn = None
            return
        add_now(self._row, QLabel(self.tr("Interventions in force:")))
        for iv in ivs:
            b = QToolButton()
            b.setText(label(iv) + "  ✕")
            b.setToolTip(self.tr("click to remove this intervention"))
            b.clicked.connect(lambda _=False, x=iv: self.state.remove_intervention(x, self.name))
            add_now(self._row, b)
            self.chips.append(b)
        self.clear_btn = QToolButton()
        self.clear_btn.setText(self.tr("Remove all"))
        self.clear_btn.clicked.connect(lambda: self.state.clear_interventions(self.name))
        add_now(self._row, self.clear_btn)
        self._row.addStretch(1)


def ablation_actions(menu, state: AppState, session: str, *, layer: int | None = None, head: int | None = None,
                     neuron: int | None = None, block: int | None = None) -> list:
    """Add "ablate (zero)" / "ablate (mean)" actions for a head, a neuron or a block's attention / MLP to
    ``menu``; returns the actions (tests trigger them)."""
    translate = QCoreApplication.translate
    acts = []

    def add(text, iv):
        a = menu.addAction(text)
        a.triggered.connect(lambda _=False: state.add_intervention(iv, session))
        acts.append(a)

    if head is not None and layer is not None:
        add(translate("Interventions", "Ablate head {layer}.{head} (zero)").format(layer=layer, head=head), HeadAblation(layer, head, "zero"))
        add(translate("Interventions", "Ablate head {layer}.{head} (mean)").format(layer=layer, head=head), HeadAblation(layer, head, "mean"))
    if neuron is not None and layer is not None:
        add(translate("Interventions", "Ablate neuron {layer}.{neuron} (zero)").format(layer=layer, neuron=neuron),
            NeuronAblation(layer, neuron, 0.0))
        h = state.session(session).history
        if h is not None:  # the neuron's mean activation over the prompt, as its "mean" value
            mean = float(h.frames[0].trace["post", layer][:, neuron].mean())
            add(translate("Interventions", "Ablate neuron {layer}.{neuron} (mean: {value:.3f})").format(
                layer=layer, neuron=neuron, value=mean), NeuronAblation(layer, neuron, round(mean, 6)))
    if block is not None:
        for site, name in (("attn_out", translate("Interventions", "attention")), ("mlp_out", translate("Interventions", "MLP"))):
            for mode, mname in (("zero", translate("Interventions", "zero")), ("mean", translate("Interventions", "mean"))):
                add(translate("Interventions", "Ablate block {layer} {part} ({mode})").format(layer=block, part=name, mode=mname),
                    SublayerAblation(block, site, mode))
    s = state.session(session)
    if s.interventions:
        menu.addSeparator()
        a = menu.addAction(translate("Interventions", "Remove all interventions ({n})").format(n=len(s.interventions)))
        a.triggered.connect(lambda _=False: state.clear_interventions(session))
        acts.append(a)
    return acts
