"""Embeddings: the selected token's vector, its position's vector, their sum; neighbours; analogies."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QLabel, QLineEdit, QPushButton, QHBoxLayout, QVBoxLayout, QWidget

from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import analogy, nearest_tokens
from gpt2viz.widgets.views.common import LazyView, note, themed_plot


class EmbeddingsView(LazyView):
    """Heat strips of token, position and sum vectors with norms; 10 nearest tokens; a − b + c."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.caption = note()
        self.plot = themed_plot(self)
        self.plot.getAxis("left").setTicks([[(0, "token"), (1, "position"), (2, "sum")]])
        self.plot.setLabel("bottom", "dimension")
        self.plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.colormap.get("CET-D1"))
        self.plot.addItem(self.image)
        self.neighbours = note()
        self.a, self.b, self.c = QLineEdit(" king"), QLineEdit(" man"), QLineEdit(" woman")
        go = QPushButton("=")
        go.clicked.connect(self.run_analogy)
        self.analogy_out = note("Type three words (a leading space makes the usual word-initial token).")
        row = QHBoxLayout()
        for w, sep in ((self.a, "−"), (self.b, "+"), (self.c, None)):
            row.addWidget(w)
            if sep:
                row.addWidget(QLabel(sep))
        row.addWidget(go)
        grid = QGridLayout()
        grid.addWidget(self.neighbours, 0, 0)
        box = QVBoxLayout()
        box.addWidget(note("<b>Analogy</b> over the embedding matrix: nearest tokens to a − b + c"))
        box.addLayout(row)
        box.addWidget(self.analogy_out)
        grid.addLayout(box, 0, 1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.caption)
        lay.addWidget(self.plot, 2)
        lay.addLayout(grid, 1)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection)
        self.data: dict = {}
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.history is None or st.weights is None:
            self.caption.setText("Run a prompt to see its embeddings.")
            self.image.clear()
            return
        h, tok = st.history, st.model.tokenizer
        pos = st.selected_position
        tid = h.tokens[pos]
        e, p = h.hook_at("hook_embed", pos), h.hook_at("hook_pos_embed", pos)
        s = e + p
        self.data = {"token": e, "position": p, "sum": s}
        m = np.stack([e, p, s])
        lim = float(np.abs(m).max()) or 1.0
        self.image.setImage(m, levels=(-lim, lim))
        self.image.setRect(0, -0.5, m.shape[1], 3)
        self.caption.setText(
            f"Position {pos}, {tok.token_display(tid)} (id {tid}): token vector ‖{np.linalg.norm(e):.2f}‖ + "
            f"position vector ‖{np.linalg.norm(p):.2f}‖ = ‖{np.linalg.norm(s):.2f}‖, the residual stream entering "
            f"block 0 ({e.size} numbers; blue negative, red positive).")
        near = nearest_tokens(st.weights, st.weights.W_U[tid], 11, exclude=(tid,))[:10]
        self.data["nearest"] = near
        self.neighbours.setText("<b>Nearest tokens</b> to " + tok.token_display(tid) + " (cosine):<br>" + "<br>".join(
            f"{tok.token_display(i)} &nbsp; {c:.3f}" for i, c in near))

    def run_analogy(self) -> None:
        st = self.state
        if st.weights is None or st.model is None:
            return
        tok = st.model.tokenizer
        ids = []
        for w in (self.a, self.b, self.c):
            enc = tok.encode(w.text())
            if len(enc) != 1:
                self.analogy_out.setText(f"“{w.text()}” is {len(enc)} tokens; each term must be one token.")
                return
            ids.append(enc[0])
        res = analogy(st.weights, *ids, k=5)
        self.data["analogy"] = res
        self.analogy_out.setText(" · ".join(f"{tok.token_display(i)} {c:.3f}" for i, c in res))
