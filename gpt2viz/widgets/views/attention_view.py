"""Attention: every head of a layer at once, one head large with exact values, and the selected query's bars."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSplitter, QVBoxLayout

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.attention import MAX_SIDE, AttentionSummary, attention_summary
from gpt2viz.widgets.views.common import (
    HoverImage,
    LazyView,
    PlainLabel,
    layer_box,
    note,
    place_token_ticks,
    repaint_whole,
    set_title,
    sync_layer_box,
    themed_plot,
    to_rgba,
)


class AttentionView(LazyView):
    """Head grid (query × key, causal mask grey), a large heatmap with read-out, and key bars."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.layer = layer_box(state, session)
        self.mode = QComboBox()
        self.mode.addItems(["", ""])
        self.mode.currentIndexChanged.connect(self.refresh)
        self.mode.currentIndexChanged.connect(lambda _i: self.isVisible() and self._report(True))
        self.readout = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.layer)
        top.addWidget(self.mode)
        top.addWidget(self.readout, 1)
        self.caption = note()
        self.grid = repaint_whole(pg.GraphicsLayoutWidget())
        self.grid.setBackground(self.palette().color(QPalette.Base))
        self.big = themed_plot(self)
        self.big.invertY(True)
        # The token axis keeps the room of its widest label so far: fitted to each step's labels it changed width,
        # which resized the map and placed its ticks again (~1.5 ms of a step at 200 tokens, a sampled profile).
        self.big.getAxis("left").setStyle(autoReduceTextSpace=False)
        self.big_img = HoverImage()
        self.big.addItem(self.big_img)
        self.big_img.sigHover.connect(self._hover)
        self.big_img.sigClicked.connect(lambda r, _c: state.select_position(self._first + r, session))
        self.bars = themed_plot(self)
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
        self._shape: tuple | None = None  # the maps' shape their ranges were set for (see refresh)
        self._big = np.zeros((0, 0))
        self.cells: list[HoverImage] = []
        self.summary: AttentionSummary | None = None
        self._ticks_key = None
        self._bars_key = None  # what the bars plot shows (see refresh)
        self._map_labels: list = []  # every token axis label (position, text); as many as fit are shown
        self._bar_labels: list = []
        self.big.getPlotItem().vb.sigResized.connect(lambda _vb: self._place_map_ticks())
        self.bars.getPlotItem().vb.sigResized.connect(lambda _vb: place_token_ticks(self.bars, "bottom",
                                                                                    self._bar_labels))
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language (the head labels are redrawn by refresh)."""
        self.mode.setItemText(0, self.tr("pattern (after softmax)"))
        self.mode.setItemText(1, self.tr("scores (before softmax)"))
        self.readout.setText(self.tr("hover a cell for its exact value"))
        self.bars.setLabel("left", self.tr("weight"))

    def showEvent(self, e) -> None:  # noqa: N802 - Qt's name
        # Before the catch-up refresh: an intervention's run brings the rows this view reads while it is shown.
        self._report(True)
        super().showEvent(e)

    def hideEvent(self, e) -> None:  # noqa: N802 - Qt's name
        self._report(False)
        super().hideEvent(e)

    def _report(self, shown: bool) -> None:
        self.state.attention_shown(self, self.which if shown else None, self.name)

    @property
    def which(self) -> str:
        return "pattern" if self.mode.currentIndex() == 0 else "attn_scores"

    def _build_grid(self, n_head: int) -> None:
        self.grid.clear()
        self.cells = []
        self._shape = None
        self.head_labels = []
        cols = math.ceil(math.sqrt(n_head))
        for hd in range(n_head):
            r, c = divmod(hd, cols)
            label = PlainLabel(self.tr("head {head}").format(head=hd), color=self.palette().color(QPalette.Text))
            self.grid.addItem(label, row=2 * r, col=c)
            self.head_labels.append(label)
            vb = self.grid.addViewBox(row=2 * r + 1, col=c, lockAspect=True, invertY=True)
            img = HoverImage()
            img.sigClicked.connect(lambda _r, _c, h=hd: self.state.select_head(h, self.name))
            vb.addItem(img)
            self.cells.append(img)

    def refresh(self) -> None:
        s = self.session
        self.summary = sm = attention_summary(s, self.which)
        if sm is None:
            self.caption.setText(self.tr("Run a prompt to see attention."))
            return
        tok = s.model.tokenizer
        sync_layer_box(self.layer, s.n_layer, sm.layer)
        if len(self.cells) != sm.n_head:
            self._build_grid(sm.n_head)
        pos, L, head = sm.position, sm.layer, sm.head
        self._first = sm.first
        shape = sm.matrices.shape[1:]
        if shape != self._shape:
            # The maps' ranges are set when their shape changes, as auto-ranging would set them: left to
            # auto-range, every map's view measured its children before each paint of a short text, where the
            # shape changes at every Step and Back (~8 % of the GUI thread's time on atlas, py-spy on a 2-core EPYC).
            self._shape = shape
            rows, cols = shape
            for img in self.cells:
                img.getViewBox().setRange(xRange=(0, cols), yRange=(0, rows))
            self.big.setRange(xRange=(-0.5, cols - 0.5), yRange=(-0.5, rows - 0.5))
        lo, hi = (np.array(v).reshape(-1, 1, 1) for v in zip(*sm.levels))
        rgba = to_rgba(sm.matrices, lo, hi)  # every head in one pass; the large map is its head's colours
        for hd, img in enumerate(self.cells):
            img.set_rgba(rgba[hd])
            tip = self.tr("head {head} · entropy at position {pos}: {entropy:.2f} nats · click to enlarge").format(
                head=hd, pos=pos, entropy=sm.entropies[hd])
            if tip != img.toolTip():  # unchanged by a Step or Back with an earlier position selected (causal)
                img.setToolTip(tip)
            self.head_labels[hd].setText(("▶ " if hd == head else "") + self.tr("head {head} · {entropy:.2f} nats").format(
                head=hd, entropy=sm.entropies[hd]))
        self._big = sm.matrices[head]
        self.big_img.set_rgba(rgba[head])
        self.big_img.setRect(-0.5, -0.5, self._big.shape[1], self._big.shape[0])  # cells centred on ticks
        if self._ticks_key != sm.tokens:  # tick labels cost text layout: only when the tokens change
            self._ticks_key = sm.tokens
            self._map_labels = [(i, tok.token_display(t)) for i, t in enumerate(sm.tokens)]
            self._place_map_ticks()
        what = self.tr("pattern") if self.which == "pattern" else self.tr("scores")
        set_title(self.big, self.tr("layer {layer}, head {head}: {what} (rows read columns)").format(
            layer=L, head=head, what=what))
        # The selected query's weights over its keys. They are drawn again only when they change: a Step or
        # Back with an earlier position selected leaves them as they were (causal attention), and drawing
        # the plot again cost ~1.3 ms of the frame at 200 tokens of GPT-2-small-sized.
        keys = tuple(s.history.tokens[: pos + 1])
        title = self.tr("what {token} (position {pos}) reads, head {head}").format(
            token=tok.token_display(keys[pos]), pos=pos, head=head)
        if self._bars_key is None or self._bars_key[:3] != (keys, title, self.which) \
                or not np.array_equal(self._bars_key[3], sm.bars):
            self._bar_labels = [(i, tok.token_display(t)) for i, t in enumerate(keys)]
            place_token_ticks(self.bars, "bottom", self._bar_labels)
            self._bars_key = (keys, title, self.which, sm.bars)
            self.bar_item.setOpts(x=np.arange(sm.bars.size), height=sm.bars)
            if self.which == "pattern":
                self.bars.setYRange(0, 1.02, padding=0)
            else:
                self.bars.enableAutoRange(axis="y")
            set_title(self.bars, title)
        clip = self.tr(" Showing the newest {n} of {total} positions.").format(n=MAX_SIDE, total=sm.n_tokens) \
            if self._first else ""
        ent = ", ".join(f"h{i} {e:.2f}" for i, e in enumerate(sm.entropies))
        self.caption.setText(self.tr("Layer {layer}: each small map is one head's attention, query (row) × key (column); "
                                     "grey cells are the future, masked. Click a head to enlarge it. Entropy at "
                                     "position {pos} (nats; 0 = one token gets everything): {entropies}.").format(
            layer=L, pos=pos, entropies=ent) + clip)

    def _place_map_ticks(self) -> None:
        for ax in ("left", "bottom"):
            place_token_ticks(self.big, ax, self._map_labels)

    def head_at(self, global_pos) -> int | None:
        """The head whose small map (or the large one: the selected head) is under ``global_pos``."""
        if self.summary is None:
            return None
        for w, heads in ((self.grid, range(len(self.cells))), (self.big, None)):
            local = w.mapFromGlobal(global_pos)
            if not w.rect().contains(local):
                continue
            if heads is None:
                return self.summary.head
            scene = w.mapToScene(local)
            for hd in heads:
                vb = self.cells[hd].getViewBox()
                if vb is not None and vb.sceneBoundingRect().contains(scene):
                    return hd
        return None

    def _hover(self, r: int, c: int) -> None:
        st = self.session
        if st.history is None or r >= self._big.shape[0]:
            return
        tok, toks = st.model.tokenizer, st.history.tokens
        v = self._big[r, c]
        q, k = self._first + r, self._first + c
        val = self.tr("masked (future)") if np.isnan(v) else f"{v:.4f}"
        self.readout.setText(self.tr("query {q} {q_token} → key {k} {k_token}: {value}").format(
            q=q, q_token=tok.token_display(toks[q]), k=k, k_token=tok.token_display(toks[k]), value=val))
