"""The main area: a summary of the selected stage for the selected position.

For a block, the most focused head's full attention pattern (query × key, causal mask shown in
grey) and the logit lens of every layer; for other stages, the lens across depth. The next issue
replaces this with full per-stage views.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import focused_head
from gpt2viz.core.sampling import softmax

MAX_SIDE = 256  # the heatmap shows at most the last 256 positions: a 1024² image is unreadable anyway


_CMAP = pg.colormap.get("viridis")
MASKED_RGBA = (110, 110, 110, 255)


def _to_rgba(m: np.ndarray) -> np.ndarray:
    """Weights in [0, 1] through viridis; NaN (future positions, masked) as flat grey."""
    lut = _CMAP.getLookupTable(0.0, 1.0, 256, alpha=True)
    idx = np.clip(np.nan_to_num(m, nan=0.0) * 255, 0, 255).astype(np.uint8)
    rgba = lut[idx]
    rgba[np.isnan(m)] = MASKED_RGBA
    return rgba


class StageDetail(QWidget):
    """Attention heatmap of one head (for blocks) and a logit-lens chart of the selected position."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        pal = self.palette()
        self.caption = QLabel()
        self.caption.setWordWrap(True)
        self.heat = pg.PlotWidget(background=pal.color(QPalette.Base))
        self.heat.setMenuEnabled(False)
        self.heat.setAspectLocked(False)
        self.heat.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.heat.addItem(self.image)
        self.lens = pg.PlotWidget(background=pal.color(QPalette.Base))
        self.lens.setMenuEnabled(False)
        self.lens.setLabel("left", "probability")
        self.lens.setLabel("bottom", "depth (0 = embeddings, then after each block)")
        self.lens_curve = self.lens.plot([], [], pen=pg.mkPen(width=2), symbol="o")
        self.lens_text: list[pg.TextItem] = []
        for w in (self.heat, self.lens):
            for ax in ("left", "bottom"):
                w.getAxis(ax).setTextPen(pal.color(QPalette.Text))
        lay = QVBoxLayout(self)
        lay.addWidget(self.caption)
        lay.addWidget(self.heat, 3)
        lay.addWidget(self.lens, 2)
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            sig.connect(self.refresh)
        self.refresh()

    def pattern_matrix(self, layer: int, head: int) -> tuple[np.ndarray, int]:
        """[Q, K] attention of one head over the whole text (last MAX_SIDE positions), NaN where masked."""
        h = self.state.history
        n = len(h.tokens)
        first = max(0, n - MAX_SIDE)
        m = np.full((n - first, n - first), np.nan, dtype=np.float32)
        for q in range(first, n):
            row = h.hook_at(("pattern", layer), q)[head]  # [K = q + 1]
            m[q - first, : q + 1 - first] = row[first: q + 1]
        return m, first

    def refresh(self) -> None:
        st = self.state
        for t in self.lens_text:
            t.setVisible(False)
        if st.history is None or st.model is None or st.weights is None:
            self.caption.setText("Select a stage in the pipeline to see its numbers here.")
            self.image.clear()
            self.lens_curve.setData([], [])
            return
        tok, h = st.model.tokenizer, st.history
        pos = st.selected_position
        layer = st.layer  # the last block selected in the pipeline (block 0 until one is)
        head, key, w = focused_head(h.hook_at(("pattern", layer), pos))
        m, first = self.pattern_matrix(layer, head)
        self.image.setImage(_to_rgba(m))
        self.image.setRect(-0.5, -0.5, m.shape[1], m.shape[0])  # pixel centres on the integer ticks
        labels = [(i, tok.token_display(t)) for i, t in enumerate(h.tokens[first:])]
        step = max(1, len(labels) // 30)
        self.heat.getAxis("left").setTicks([labels[::step]])
        self.heat.getAxis("bottom").setTicks([labels[::step]])
        self.heat.setLabel("left", "query position (reads)")
        self.heat.setLabel("bottom", "key position (is read)")
        self.heat.setTitle(f"Block {layer}, head {head}: attention pattern (dark grey = future, masked)")

        lens = st.lens(pos)
        target = int(np.argmax(lens[-1]))
        probs = np.array([softmax(row)[target] for row in lens])
        self.lens_curve.setData(np.arange(len(probs)), probs)
        self.lens.setYRange(0, 1.15)  # room for the top label
        self.lens.setTitle(f"Logit lens at position {pos}: probability of {tok.token_display(target)} "
                           "(the model's final top token) read out after each stage")
        while len(self.lens_text) < len(lens):  # one label per depth, made once and reused
            t = pg.TextItem("", color=self.palette().color(QPalette.Text), anchor=(0.5, 1.2))
            self.lens.addItem(t)
            self.lens_text.append(t)
        for i, (row, t) in enumerate(zip(lens, self.lens_text)):
            t.setText(tok.token_display(int(np.argmax(row))))
            t.setPos(i, probs[i])
            t.setVisible(True)
        self.caption.setText(f"Position {pos} {tok.token_display(h.tokens[pos])!s}: block {layer}'s most focused "
                             f"head is {head}, with {w:.0%} on {tok.token_display(h.tokens[key])} (position {key}). "
                             "Labels on the lens curve: the top token at each depth.")
