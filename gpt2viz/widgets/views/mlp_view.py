"""MLP as key→value memory: every neuron's activation, the biggest writers, and what each writes."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import project_to_vocab, top_neurons
from gpt2viz.widgets.views.common import LazyView, layer_box, note, sync_layer_box, themed_plot


class MlpView(LazyView):
    """All d_mlp activations; top neurons by activation × ‖value‖; a neuron's value vector read as tokens."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.layer = layer_box(state)
        self.caption = note()
        self.acts = themed_plot(self)
        self.acts.setLabel("bottom", "neuron")
        self.acts.setLabel("left", "activation (after GELU)")
        self.curve = self.acts.plot([], [], pen=pg.mkPen((70, 130, 200), width=1))
        self.marker = self.acts.plot([], [], pen=None, symbol="o", symbolBrush=(230, 140, 20))
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["neuron", "activation", "× ‖value‖"])
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.cellClicked.connect(lambda r, _c: self.select_neuron(self.top[r][0]))
        self.neuron_info = note()
        self.whole = note()
        top = QHBoxLayout()
        top.addWidget(self.layer)
        top.addWidget(self.caption, 1)
        lower = QSplitter()
        lower.addWidget(self.table)
        info = QWidget()
        il = QVBoxLayout(info)
        il.addWidget(self.neuron_info)
        il.addWidget(self.whole)
        il.addStretch(1)
        lower.addWidget(info)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.acts, 2)
        lay.addWidget(lower, 3)
        self.top: list[tuple[int, float, float]] = []
        self.neuron: int | None = None
        self.projection: tuple[list, list] = ([], [])
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.history is None or st.weights is None:
            self.caption.setText("Run a prompt to see the MLP neurons.")
            return
        cfg, tok, h = st.model.config, st.model.tokenizer, st.history
        L, pos = st.layer, st.selected_position
        sync_layer_box(self.layer, cfg.n_layer, st.layer)
        post = h.hook_at(("post", L), pos)
        W_out = st.weights.W_out(L)
        self.curve.setData(np.arange(post.size), post)
        self.top = top_neurons(post, W_out, 15)
        self.marker.setData([n for n, _, _ in self.top], [a for _, a, _ in self.top])
        self.table.setRowCount(len(self.top))
        for r, (n, a, s) in enumerate(self.top):
            for c, v in enumerate((n, f"{a:+.3f}", f"{s:+.3f}")):
                self.table.setItem(r, c, QTableWidgetItem(str(v)))
        active = int((post > 0.1).sum())
        self.caption.setText(
            f"Layer {L}, position {pos} {tok.token_display(h.tokens[pos])}: {post.size:,} neurons, {active} above 0.1. "
            "Each neuron is a key (its input weights decide when it fires) and a value (its output weights: what it "
            "adds to the residual). Orange: the biggest writers. Click one to read its value as tokens.")
        up, down = project_to_vocab(st.weights, h.hook_at(("mlp_out", L), pos), 8)
        self.whole.setText("<b>The whole MLP output</b> through the unembedding promotes " + ", ".join(
            tok.token_display(i) for i, _ in up) + "; suppresses " + ", ".join(tok.token_display(i) for i, _ in down))
        self.select_neuron(self.neuron if self.neuron is not None and self.neuron < post.size else self.top[0][0])

    def select_neuron(self, n: int) -> None:
        st = self.state
        self.neuron = int(n)
        tok = st.model.tokenizer
        self.projection = project_to_vocab(st.weights, st.weights.W_out(st.layer)[n], 10)
        up, down = self.projection
        self.neuron_info.setText(
            f"<b>Neuron {n}</b> of layer {st.layer}: its value vector W_out[{n}] · W_U<br>promotes: " +
            ", ".join(f"{tok.token_display(i)} ({v:+.2f})" for i, v in up) + "<br>suppresses: " +
            ", ".join(f"{tok.token_display(i)} ({v:+.2f})" for i, v in down))
