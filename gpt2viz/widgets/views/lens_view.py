"""Logit lens: what the residual would predict at every depth and position, and one token's path."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHBoxLayout, QLineEdit, QSplitter, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.lens import MAX_POSITIONS, LensGrid, LensTarget, lens_grid, lens_target
from gpt2viz.widgets.views.common import LayoutFence, LazyView, SteadyLabel, note, symbol_style, themed_plot
from gpt2viz.widgets.views.lens_grid_model import LensGridModel, LensTable
from gpt2viz.widgets.views.marked_line import MarkedLine


WIDTHS_KEPT = 4096  # texts whose widths _width keeps (a few tokens a step): cleared when more


class LensView(LazyView):
    """Layers × positions grid of top tokens; a target token's probability and rank across depth."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.caption = note()
        self.table = LensTable()
        self.cells = LensGridModel(self)
        self.table.setModel(self.cells)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.clicked.connect(lambda index: self._on_cell(index.row(), index.column()))
        self.target = QLineEdit()
        self.target.editingFinished.connect(self.refresh_target)
        # The path's title is a label over the plot, not the plot's own: its text changes at every Step and Back
        # with the newest token followed, and pyqtgraph lays a title out as HTML and the whole plot out again for
        # it (~0.5 ms of each in a profile of the GUI thread on atlas, and the plot's layout pass before the frame).
        self.path_title = SteadyLabel()
        self.path_title.setTextFormat(Qt.PlainText)  # tokens are text: "<|endoftext|>" is a token, not markup
        self.path_title.setAlignment(Qt.AlignCenter)
        self.chart = themed_plot(self)
        self.prob_curve = MarkedLine(self.chart, pen=(70, 130, 200), symbol="o", **symbol_style())
        # the run without the interventions in force, dashed grey (empty when there are none)
        self.base_curve = self.chart.plot([], [], pen=pg.mkPen((128, 128, 128), style=Qt.DashLine))
        self.rank_label = note(steady=True)  # gains lines with interventions: the plot above stays put
        self.rank_label.setTextFormat(Qt.RichText)  # its lines are joined by <br>; typed text is escaped
        right = QWidget()
        rl = QVBoxLayout(right)
        row = QHBoxLayout()
        row.addWidget(self.target)
        rl.addLayout(row)
        rl.addWidget(LayoutFence(self.path_title))
        rl.addWidget(self.chart, 1)
        rl.addWidget(LayoutFence(self.rank_label))
        split = QSplitter()
        split.addWidget(self.table)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([600, 400])  # the grid is the point of the view: give it the larger share
        lay = QVBoxLayout(self)
        lay.addWidget(LayoutFence(self.caption))  # its count of positions changes at every step
        lay.addWidget(split, 1)
        self.grid: LensGrid | None = None
        self.path: LensTarget | None = None
        self._widths: dict[tuple[str, str], int] = {}  # (font, text) -> its width in pixels (_width)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection, self.refresh_target)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language; the row headers are set again by the next refresh."""
        self.target.setPlaceholderText(self.tr("target token (default: the token the model chose next)"))
        self.chart.setLabel("bottom", self.tr("depth (0 = embeddings, then after each block)"))
        self.chart.setLabel("left", self.tr("probability"))

    def refresh(self) -> None:
        s = self.session
        self.grid = g = lens_grid(s, MAX_POSITIONS)
        if g is None:
            self.caption.setText(self.tr("Run a prompt to see the logit lens."))
            self.cells.show(None, None, [], [], [], "")  # no stale grid to click on while a model loads
            return
        tok, n_rows = s.model.tokenizer, g.tops.shape[0]
        block = self.tr("after block {layer}")
        reshaped, changed = self.cells.show(
            g, tok.token_display, [f"{p} {tok.token_display(t)}" for p, t in zip(g.positions, g.tokens)],
            [self.tr("embed")] + [self.tr("block {layer}").format(layer=L) for L in range(n_rows - 1)],
            [self.tr("after the embeddings")] + [block.format(layer=L) for L in range(n_rows - 1)],
            self.tr("{where}, position {pos} predicts {token} ({prob:.1%})"))
        if changed:
            self._size_cells()
            if not reshaped:  # the same shape, new column headers (see LensGridModel.show)
                self.table.horizontalHeader().viewport().update()
        # lay the cells out now: the view's own delayed layout ran after the window's next frame and asked for another
        if reshaped:
            self.table.doItemsLayout()
        else:
            self.table.updateGeometries()
        if changed:  # after the layout, which sets the scroll bars' ranges
            self.table.scrollTo(self.cells.index(0, len(g.positions) - 1))  # the newest positions matter most
        clip = self.tr(" Showing the newest {n} of {total} positions.").format(
            n=len(g.positions), total=g.n_tokens) if g.n_tokens > MAX_POSITIONS else ""
        self.caption.setText(self.tr("Each cell: the token the residual stream would predict if the model stopped after "
                                     "that block (final LayerNorm + unembedding applied early), and its probability. "
                                     "The last row is the model's real output. Click a column to select that "
                                     "position.") + clip)
        self.refresh_target()

    def showEvent(self, e) -> None:  # noqa: N802 - Qt's name
        # Before the catch-up refresh: the worker makes each new column while a grid is on screen.
        self.state.lens_grid_shown(self, True, self.name)
        super().showEvent(e)

    def hideEvent(self, e) -> None:  # noqa: N802 - Qt's name
        self.state.lens_grid_shown(self, False, self.name)
        super().hideEvent(e)

    def _size_cells(self) -> None:
        """Each column as wide as its widest token or header, each row two lines.

        Measured from the texts, not by asking each cell for its size hint (resizeColumnsToContents: ~1 ms per
        100 cells). Set with the header's signals blocked, right after the model's reset (which repaints the
        whole grid anyway): a resized column makes the table schedule one more repaint of itself after a 0 ms
        timer, a frame of its own after every step."""
        cell, title_w = self._width(self.table), self._width(self.table.horizontalHeader())
        pad = 2 * self.table.style().pixelMetric(self.table.style().PixelMetric.PM_FocusFrameHMargin) + 10
        least = cell("100%")
        head = self.table.horizontalHeader()
        head.blockSignals(True)
        try:
            for c, title in enumerate(self.cells.col_heads):
                head.resizeSection(c, pad + max(least, title_w(title), *(cell(row[c]) for row in self.cells.shown)))
        finally:
            head.blockSignals(False)
        rows = self.table.verticalHeader()
        line = self.table.fontMetrics().lineSpacing()
        if rows.defaultSectionSize() != 2 * line + 8:  # set again, the same size lays the rows out again
            rows.setDefaultSectionSize(2 * line + 8)

    def _width(self, widget):
        """A function giving a text's width in ``widget``'s font, each text measured once per font.

        A Step moves the grid on by one column: the other 15 columns' texts (~200 of them, 13 rows and the headers)
        were measured at the Step before (~0.5 ms of the GUI thread's ~25 ms after a Step at 200 tokens of a
        GPT-2-small-sized model with the newest token followed, 2-core EPYC)."""
        fm, font = widget.fontMetrics(), widget.font().key()
        if len(self._widths) > WIDTHS_KEPT:
            self._widths.clear()
        widths = self._widths

        def width(text: str) -> int:
            key = (font, text)
            w = widths.get(key)
            if w is None:
                w = widths[key] = fm.horizontalAdvance(text)
            return w
        return width

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
        elif self.base_curve.xData is not None and len(self.base_curve.xData):  # emptied once, not at every Step
            self.base_curve.setData([], [])
        self.chart.setYRange(0, 1)
        self.path_title.setText(self.tr("{target} at position {pos} {token}").format(
            target=tok.token_display(t.target), pos=t.position, token=tok.token_display(t.token)))
        ranks = self.tr("rank by depth (0 = top): {ranks}").format(
            ranks=", ".join(str(int(r)) for r in t.ranks)) + ("" if not text or len(ids) == 1 else self.tr(
                " · “{text}” is {n} tokens; using the default").format(text=html.escape(text), n=len(ids)))
        if t.base_probs is not None:
            ranks += "<br>" + self.tr(
                "with the interventions (solid) vs without (dashed): rank {ranks}; Δp {deltas}").format(
                ranks=", ".join(f"{int(b)}→{int(a)}" for a, b in zip(t.ranks, t.base_ranks)),
                deltas=", ".join(f"{a - b:+.2f}" for a, b in zip(t.probs, t.base_probs)))
        self.rank_label.setText(ranks)
