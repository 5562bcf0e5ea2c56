"""Attention: every head of a layer at once, one head large with exact values, and the selected query's bars."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout, QWidget

from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import attention_matrix, pattern_entropy
from gpt2viz.widgets.views.common import HoverImage, LazyView, layer_box, note, sync_layer_box, themed_plot, to_rgba

MAX_SIDE = 128  # positions drawn per head: the newest 128 (said on screen when the text is longer)


class AttentionView(LazyView):
    """Head grid (query × key, causal mask grey), a large heatmap with read-out, and key bars."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.layer = layer_box(state)
        self.mode = QComboBox()
        self.mode.addItems(["pattern (after softmax)", "scores (before softmax)"])
        self.mode.currentIndexChanged.connect(self.refresh)
        self.readout = QLabel("hover a cell for its exact value")
        top = QHBoxLayout()
        top.addWidget(self.layer)
        top.addWidget(self.mode)
        top.addWidget(self.readout, 1)
        self.caption = note()
        self.grid = pg.GraphicsLayoutWidget()
        self.grid.setBackground(self.palette().color(QPalette.Base))
        self.big = themed_plot(self)
        self.big.invertY(True)
        self.big_img = HoverImage()
        self.big.addItem(self.big_img)
        self.big_img.sigHover.connect(self._hover)
        self.big_img.sigClicked.connect(lambda r, _c: state.select_position(self._first + r))
        self.bars = themed_plot(self)
        self.bars.setLabel("left", "weight")
        self.bars.getAxis("left").enableAutoSIPrefix(False)
        self.bar_item = pg.BarGraphItem(x=[], height=[], width=0.8, brush=(70, 130, 200))
        self.bars.addItem(self.bar_item)
        split = QSplitter()
        split.addWidget(self.grid)
        right = QSplitter()
        right.setOrientation(pg.QtCore.Qt.Vertical)
        right.addWidget(self.big)
        right.addWidget(self.bars)
        split.addWidget(right)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.caption)
        lay.addWidget(split, 1)
        self._first = 0
        self._big = np.zeros((0, 0))
        self.cells: list[HoverImage] = []
        self.bar_values = np.zeros(0)
        self.entropies = np.zeros(0)
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.refresh()

    @property
    def which(self) -> str:
        return "pattern" if self.mode.currentIndex() == 0 else "attn_scores"

    def _build_grid(self, n_head: int) -> None:
        self.grid.clear()
        self.cells = []
        self.head_labels = []
        cols = math.ceil(math.sqrt(n_head))
        for hd in range(n_head):
            r, c = divmod(hd, cols)
            self.head_labels.append(self.grid.addLabel(f"head {hd}", row=2 * r, col=c,
                                                       color=self.palette().color(QPalette.Text)))
            vb = self.grid.addViewBox(row=2 * r + 1, col=c, lockAspect=True, invertY=True)
            img = HoverImage()
            img.sigClicked.connect(lambda _r, _c, h=hd: self.state.select_head(h))
            vb.addItem(img)
            self.cells.append(img)

    def refresh(self) -> None:
        st = self.state
        if st.history is None or st.model is None:
            self.caption.setText("Run a prompt to see attention.")
            return
        cfg, tok, h = st.model.config, st.model.tokenizer, st.history
        sync_layer_box(self.layer, cfg.n_layer, st.layer)
        if len(self.cells) != cfg.n_head:
            self._build_grid(cfg.n_head)
        pos, L, head = st.selected_position, st.layer, min(st.head, cfg.n_head - 1)
        mats = [attention_matrix(h, L, hd, self.which, MAX_SIDE) for hd in range(cfg.n_head)]
        self._first = mats[0][1]
        row = h.hook_at(("pattern", L), pos)  # [H, pos + 1]
        self.entropies = pattern_entropy(row)
        scores = self.which != "pattern"
        for hd, ((m, _), img) in enumerate(zip(mats, self.cells)):
            lo, hi = (np.nanmin(m), np.nanmax(m)) if scores else (0.0, 1.0)
            img.setImage(to_rgba(m, lo, hi))
            img.setToolTip(f"head {hd} · entropy at position {pos}: {self.entropies[hd]:.2f} nats · click to enlarge")
            self.head_labels[hd].setText(("▶ " if hd == head else "") + f"head {hd} · {self.entropies[hd]:.2f} nats")
        self._big = mats[head][0]
        lo, hi = (np.nanmin(self._big), np.nanmax(self._big)) if scores else (0.0, 1.0)
        self.big_img.setImage(to_rgba(self._big, lo, hi))
        self.big_img.setRect(-0.5, -0.5, self._big.shape[1], self._big.shape[0])  # cells centred on ticks
        labels = [(i, tok.token_display(t)) for i, t in enumerate(h.tokens[self._first:])]
        step = max(1, len(labels) // 24)
        for ax in ("left", "bottom"):
            self.big.getAxis(ax).setTicks([labels[::step]])
        self.big.setTitle(f"layer {L}, head {head}: {self.which.replace('attn_', '')} (rows read, columns are read)")
        # the selected query's weights over its keys
        self.bar_values = h.hook_at((self.which, L), pos)[head]
        self.bar_item.setOpts(x=np.arange(self.bar_values.size), height=self.bar_values)
        if not scores:
            self.bars.setYRange(0, 1.02, padding=0)
        else:
            self.bars.enableAutoRange(axis="y")
        klabels = [(i, tok.token_display(t)) for i, t in enumerate(h.tokens[: pos + 1])]
        self.bars.getAxis("bottom").setTicks([klabels[:: max(1, len(klabels) // 24)]])
        self.bars.setTitle(f"what {tok.token_display(h.tokens[pos])} (position {pos}) reads, head {head}")
        clip = f" Showing the newest {MAX_SIDE} of {len(h.tokens)} positions." if self._first else ""
        ent = ", ".join(f"h{i} {e:.2f}" for i, e in enumerate(self.entropies))
        self.caption.setText(f"Layer {L}: each small map is one head's attention, query (row) × key (column); grey "
                             f"cells are the future, masked. Click a head to enlarge it. Entropy at position {pos} "
                             f"(nats; 0 = one token gets everything): {ent}.{clip}")

    def _hover(self, r: int, c: int) -> None:
        st = self.state
        if st.history is None or r >= self._big.shape[0]:
            return
        tok, toks = st.model.tokenizer, st.history.tokens
        v = self._big[r, c]
        q, k = self._first + r, self._first + c
        val = "masked (future)" if np.isnan(v) else f"{v:.4f}"
        self.readout.setText(f"query {q} {tok.token_display(toks[q])} → key {k} {tok.token_display(toks[k])}: {val}")
