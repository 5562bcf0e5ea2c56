"""Logit lens: what the residual would predict at every depth and position, and one token's path."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QHBoxLayout, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import token_rank_and_prob
from gpt2viz.widgets.views.common import LazyView, note, themed_plot

MAX_POSITIONS = 16  # each column is a [layers + 1, V] product: the newest 16 keep this view instant


class LensView(LazyView):
    """Layers × positions grid of top tokens; a target token's probability and rank across depth."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.caption = note()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.cellClicked.connect(lambda _r, c: state.select_position(self.positions[c]))
        self.target = QLineEdit()
        self.target.setPlaceholderText("target token (default: the token the model chose next)")
        self.target.editingFinished.connect(self.refresh_target)
        self.chart = themed_plot(self)
        self.chart.setLabel("bottom", "depth (0 = embeddings, then after each block)")
        self.chart.setLabel("left", "probability")
        self.prob_curve = self.chart.plot([], [], symbol="o", pen=(70, 130, 200))
        self.rank_label = note()
        right = QWidget()
        rl = QVBoxLayout(right)
        row = QHBoxLayout()
        row.addWidget(self.target)
        rl.addLayout(row)
        rl.addWidget(self.chart, 1)
        rl.addWidget(self.rank_label)
        split = QSplitter()
        split.addWidget(self.table)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 400])  # the grid is the point of the view: give it the larger share
        lay = QVBoxLayout(self)
        lay.addWidget(self.caption)
        lay.addWidget(split, 1)
        self.positions: list[int] = []
        self.tops = np.zeros((0, 0), dtype=int)
        self.probs = np.zeros((0, 0))
        self.target_ranks = np.zeros(0, dtype=int)
        self.target_probs = np.zeros(0)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection, self.refresh_target)
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.history is None or st.weights is None:
            self.caption.setText("Run a prompt to see the logit lens.")
            return
        cfg, tok, h = st.model.config, st.model.tokenizer, st.history
        n = len(h.tokens)
        self.positions = list(range(max(0, n - MAX_POSITIONS), n))
        cols = [st.lens_tops(p) for p in self.positions]  # cached per token prefix: old columns are free
        self.tops = np.stack([c[0] for c in cols], axis=1)
        self.probs = np.stack([c[1] for c in cols], axis=1)
        self.table.setRowCount(cfg.n_layer + 1)
        self.table.setColumnCount(len(self.positions))
        self.table.setHorizontalHeaderLabels([f"{p} {tok.token_display(h.tokens[p])}" for p in self.positions])
        self.table.setVerticalHeaderLabels(["embed"] + [f"block {L}" for L in range(cfg.n_layer)])
        for r in range(cfg.n_layer + 1):
            for c in range(len(self.positions)):
                p = float(self.probs[r, c])
                item = QTableWidgetItem(f"{tok.token_display(int(self.tops[r, c]))}\n{p:.0%}")
                item.setBackground(QColor(70, 130, 200, int(30 + 200 * p)))
                item.setToolTip(f"after {'the embeddings' if r == 0 else f'block {r - 1}'}, position "
                                f"{self.positions[c]} predicts {tok.token_display(int(self.tops[r, c]))} ({p:.1%})")
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self.table.resizeRowsToContents()
        self.table.scrollToItem(self.table.item(0, len(self.positions) - 1))  # the newest positions matter most
        clip = f" Showing the newest {len(self.positions)} of {n} positions." if n > MAX_POSITIONS else ""
        self.caption.setText("Each cell: the token the residual stream would predict if the model stopped after that "
                             "block (final LayerNorm + unembedding applied early), and its probability. The last row "
                             "is the model's real output. Click a column to select that position." + clip)
        self.refresh_target()

    def refresh_target(self) -> None:
        st = self.state
        if st.history is None or st.weights is None:
            return
        tok, h = st.model.tokenizer, st.history
        pos = st.selected_position
        lens = st.lens(pos)
        text = self.target.text()
        ids = tok.encode(text) if text else []
        if len(ids) == 1:
            target = ids[0]
        elif pos + 1 < len(h.tokens):
            target = h.tokens[pos + 1]  # the token that was chosen after this position
        else:
            target = int(np.argmax(lens[-1]))
        self.target_ranks, self.target_probs = token_rank_and_prob(lens, target)
        self.prob_curve.setData(np.arange(len(self.target_probs)), self.target_probs)
        self.chart.setYRange(0, 1)
        self.chart.setTitle(f"{tok.token_display(target)} at position {pos} {tok.token_display(h.tokens[pos])}")
        self.rank_label.setText("rank by depth (0 = top): " + ", ".join(str(int(r)) for r in self.target_ranks) +
                                ("" if not text or len(ids) == 1 else f" · “{text}” is {len(ids)} tokens; using the default"))
