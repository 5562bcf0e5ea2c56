"""MLP as key→value memory: every neuron's activation, the biggest writers, and what each writes."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.mlp import ACTIVE, MlpSummary, mlp_summary
from gpt2viz.widgets.views.common import LazyView, layer_box, note, symbol_style, sync_layer_box, themed_plot


TABLE_WIDTH = 320  # px of the neuron table at first: its three columns; the text beside it takes the rest


class MlpView(LazyView):
    """All d_mlp activations; top neurons by activation × ‖value‖; a neuron's value vector read as tokens."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.layer = layer_box(state, session)
        self.caption = note()
        self.acts = themed_plot(self)
        self.curve = self.acts.plot([], [], pen=pg.mkPen((70, 130, 200), width=1))
        self.marker = self.acts.plot([], [], pen=None, symbol="o", **symbol_style((230, 140, 20)))
        self.table = QTableWidget(0, 3)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.cellClicked.connect(self._on_cell)
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
        # The table's three columns need ~300 px; the rest is for the neuron's and the whole MLP's tokens, which
        # were squeezed into ~80 px beside an empty half of the table (seen in a window grab, both languages).
        self.table.horizontalHeader().setStretchLastSection(True)
        lower.setStretchFactor(0, 0)
        lower.setStretchFactor(1, 1)
        lower.setSizes([TABLE_WIDTH, 2 * TABLE_WIDTH])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.acts, 2)
        lay.addWidget(lower, 3)
        self.neuron: int | None = None  # the neuron the user picked (view-local: not part of the session)
        self.summary: MlpSummary | None = None
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Axis labels and table headers in the current language."""
        self.acts.setLabel("bottom", self.tr("neuron"))
        self.acts.setLabel("left", self.tr("activation (after GELU)"))
        self.table.setHorizontalHeaderLabels([self.tr("neuron"), self.tr("activation"), self.tr("× ‖value‖")])

    def refresh(self) -> None:
        s = self.session
        self.summary = sm = mlp_summary(s, self.neuron)
        if sm is None:
            self.caption.setText(self.tr("Run a prompt to see the MLP neurons."))
            self.table.setRowCount(0)  # nothing stale to click on while a model loads
            return
        tok = s.model.tokenizer
        sync_layer_box(self.layer, s.n_layer, sm.layer)
        self.curve.setData(np.arange(sm.post.size), sm.post)
        self.marker.setData([n for n, _, _ in sm.top], [a for _, a, _ in sm.top])
        self.table.setRowCount(len(sm.top))
        for r, (n, a, sc) in enumerate(sm.top):
            for c, v in enumerate((n, f"{a:+.3f}", f"{sc:+.3f}")):
                item = self.table.item(r, c)
                if item is None:
                    self.table.setItem(r, c, QTableWidgetItem(str(v)))
                else:
                    item.setText(str(v))  # reuse the items: no allocation per redraw
        self.caption.setText(
            self.tr("Layer {layer}, position {pos} {token}: {n:,} neurons, {active} above {threshold}. Each neuron is "
                    "a key (its input weights decide when it fires) and a value (its output weights: what it adds to "
                    "the residual). Orange: the biggest writers. Click one to read its value as tokens.").format(
                layer=sm.layer, pos=sm.position, token=tok.token_display(sm.token), n=sm.post.size,
                active=sm.n_active, threshold=ACTIVE))
        # rich text (bold, line breaks): tokens escaped, or "␣<!--" began a comment that hid the rest
        shown = lambda i: html.escape(tok.token_display(i))  # noqa: E731
        self.whole.setText(self.tr("<b>The whole MLP output</b> through the unembedding promotes {promotes}; "
                                   "suppresses {suppresses}").format(
            promotes=", ".join(shown(i) for i, _ in sm.promotes),
            suppresses=", ".join(shown(i) for i, _ in sm.suppresses)))
        self.neuron_info.setText(self.tr(
            "<b>Neuron {neuron}</b> of layer {layer}: its value vector W_out[{neuron}] · W_U<br>promotes: {promotes}"
            "<br>suppresses: {suppresses}").format(
            neuron=sm.neuron, layer=sm.layer,
            promotes=", ".join(f"{shown(i)} ({v:+.2f})" for i, v in sm.neuron_promotes),
            suppresses=", ".join(f"{shown(i)} ({v:+.2f})" for i, v in sm.neuron_suppresses)))

    def neuron_at(self, global_pos) -> int | None:
        """The neuron of the table row under ``global_pos``, else the neuron being read (None before a run)."""
        if self.summary is None:
            return None
        vp = self.table.viewport()
        local = vp.mapFromGlobal(global_pos)
        if vp.rect().contains(local):
            item = self.table.itemAt(local)
            if item is not None and 0 <= item.row() < len(self.summary.top):
                return int(self.summary.top[item.row()][0])
        return int(self.summary.neuron)

    def _on_cell(self, row: int, _col: int) -> None:
        if self.summary is not None and 0 <= row < len(self.summary.top):
            self.select_neuron(self.summary.top[row][0])

    def select_neuron(self, n: int) -> None:
        """Read neuron ``n``'s value vector as tokens."""
        self.neuron = int(n)
        self.refresh()
