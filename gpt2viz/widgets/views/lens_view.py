"""Logit lens: what the residual would predict at every depth and position, and one token's path."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QHBoxLayout, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.lens import MAX_POSITIONS, LensGrid, LensTarget, lens_grid, lens_target
from gpt2viz.widgets.views.common import LazyView, note, symbol_style, themed_plot


class LensView(LazyView):
    """Layers × positions grid of top tokens; a target token's probability and rank across depth."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.caption = note()
        self.table = QTableWidget()
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.cellClicked.connect(self._on_cell)
        self.target = QLineEdit()
        self.target.editingFinished.connect(self.refresh_target)
        self.chart = themed_plot(self)
        self.prob_curve = self.chart.plot([], [], symbol="o", pen=(70, 130, 200), **symbol_style())
        # the run without the interventions in force, dashed grey (empty when there are none)
        self.base_curve = self.chart.plot([], [], pen=pg.mkPen((128, 128, 128), style=Qt.DashLine))
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
        self.grid: LensGrid | None = None
        self.path: LensTarget | None = None
        self._headers = None
        self.watch(state.sigHistory)
        self.watch(state.sigSelection, self.refresh_target)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language; the row headers are set again by the next refresh."""
        self.target.setPlaceholderText(self.tr("target token (default: the token the model chose next)"))
        self.chart.setLabel("bottom", self.tr("depth (0 = embeddings, then after each block)"))
        self.chart.setLabel("left", self.tr("probability"))
        self._headers = None

    def refresh(self) -> None:
        s = self.session
        self.grid = g = lens_grid(s, MAX_POSITIONS)
        if g is None:
            self.caption.setText(self.tr("Run a prompt to see the logit lens."))
            self.table.setRowCount(0)  # no stale grid to click on while a model loads or after a failed run
            self.table.setColumnCount(0)
            self._headers = None
            return
        tok, n_rows, n_cols = s.model.tokenizer, g.tops.shape[0], len(g.positions)
        headers = ([f"{p} {tok.token_display(t)}" for p, t in zip(g.positions, g.tokens)], n_rows)
        resize = headers != self._headers
        if resize:
            self._headers = headers
            self.table.setRowCount(n_rows)
            self.table.setColumnCount(n_cols)
            self.table.setHorizontalHeaderLabels(headers[0])
            self.table.setVerticalHeaderLabels([self.tr("embed")] + [self.tr("block {layer}").format(layer=L)
                                                                   for L in range(n_rows - 1)])
        # translated once per refresh, not per cell (a grid is up to 16 x 49 cells, redrawn while playing)
        tip = self.tr("{where}, position {pos} predicts {token} ({prob:.1%})")
        block = self.tr("after block {layer}")
        wheres = [self.tr("after the embeddings")] + [block.format(layer=L) for L in range(n_rows - 1)]
        for r in range(n_rows):
            for c in range(n_cols):
                p, top = float(g.probs[r, c]), int(g.tops[r, c])
                item = self.table.item(r, c)
                if item is None:  # items are reused: only their text and colour change
                    item = QTableWidgetItem()
                    self.table.setItem(r, c, item)
                shown = tok.token_display(top)
                item.setText(f"{shown}\n{p:.0%}")
                item.setBackground(QColor(70, 130, 200, int(30 + 200 * p)))
                item.setToolTip(tip.format(where=wheres[r], pos=g.positions[c], token=shown, prob=p))
        if resize:
            self.table.resizeColumnsToContents()
            self.table.resizeRowsToContents()
            self.table.scrollToItem(self.table.item(0, n_cols - 1))  # the newest positions matter most
        # lay the cells out now: the view's own delayed layout ran after the window's next frame and asked for another
        self.table.doItemsLayout()
        clip = self.tr(" Showing the newest {n} of {total} positions.").format(n=n_cols, total=g.n_tokens) \
            if g.n_tokens > MAX_POSITIONS else ""
        self.caption.setText(self.tr("Each cell: the token the residual stream would predict if the model stopped after "
                                     "that block (final LayerNorm + unembedding applied early), and its probability. "
                                     "The last row is the model's real output. Click a column to select that "
                                     "position.") + clip)
        self.refresh_target()

    def _on_cell(self, _row: int, col: int) -> None:
        if self.grid is not None and 0 <= col < len(self.grid.positions):
            self.state.select_position(self.grid.positions[col], self.name)

    def refresh_target(self) -> None:
        s = self.session
        if s.history is None or s.weights is None:
            return
        tok = s.model.tokenizer
        text = self.target.text()
        ids = tok.encode(text) if text else []
        self.path = t = lens_target(s, ids[0] if len(ids) == 1 else None)
        self.prob_curve.setData(np.arange(len(t.probs)), t.probs)
        if t.base_probs is not None:
            self.base_curve.setData(np.arange(len(t.base_probs)), t.base_probs)
        else:
            self.base_curve.setData([], [])
        self.chart.setYRange(0, 1)
        self.chart.setTitle(self.tr("{target} at position {pos} {token}").format(
            target=tok.token_display(t.target), pos=t.position, token=tok.token_display(t.token)))
        self.rank_label.setText(self.tr("rank by depth (0 = top): {ranks}").format(
            ranks=", ".join(str(int(r)) for r in t.ranks)) + ("" if not text or len(ids) == 1 else self.tr(
                " · “{text}” is {n} tokens; using the default").format(text=text, n=len(ids))))
        if t.base_probs is not None:
            self.rank_label.setText(self.rank_label.text() + "<br>" + self.tr(
                "with the interventions (solid) vs without (dashed): rank {ranks}; Δp {deltas}").format(
                ranks=", ".join(f"{int(b)}→{int(a)}" for a, b in zip(t.ranks, t.base_ranks)),
                deltas=", ".join(f"{a - b:+.2f}" for a, b in zip(t.probs, t.base_probs))))
