"""Embeddings: the selected token's vector, its position's vector, their sum; neighbours; analogies."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.embeddings import EmbeddingSummary, analogy_summary, embedding_summary
from gpt2viz.widgets.views.common import LazyView, note, set_ticks, themed_plot


class EmbeddingsView(LazyView):
    """Heat strips of token, position and sum vectors with norms; 10 nearest tokens; a − b + c."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.caption = note()
        self.plot = themed_plot(self)
        self.plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setColorMap(pg.colormap.get("CET-D1"))
        self.plot.addItem(self.image)
        self.neighbours = note()
        self.a, self.b, self.c = QLineEdit(" king"), QLineEdit(" man"), QLineEdit(" woman")
        go = QPushButton("=")
        go.clicked.connect(self.run_analogy)
        self.analogy_out = note()
        row = QHBoxLayout()
        for w, sep in ((self.a, "−"), (self.b, "+"), (self.c, None)):
            row.addWidget(w)
            if sep:
                row.addWidget(QLabel(sep))
        row.addWidget(go)
        grid = QGridLayout()
        grid.addWidget(self.neighbours, 0, 0)
        box = QVBoxLayout()
        self.analogy_title = note()
        box.addWidget(self.analogy_title)
        box.addLayout(row)
        box.addWidget(self.analogy_out)
        grid.addLayout(box, 0, 1)
        lay = QVBoxLayout(self)
        lay.addWidget(self.caption)
        lay.addWidget(self.plot, 2)
        lay.addLayout(grid, 1)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection)
        self.summary: EmbeddingSummary | None = None
        self.analogy: tuple = ()
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language; an analogy already computed is shown again."""
        set_ticks(self.plot.getAxis("left"), [[(0, self.tr("token")), (1, self.tr("position")), (2, self.tr("sum"))]])
        self.plot.setLabel("bottom", self.tr("dimension"))
        self.analogy_title.setText(self.tr("<b>Analogy</b> over the embedding matrix: nearest tokens to a − b + c"))
        if not self.analogy:
            self.analogy_out.setText(self.tr("Type three words (a leading space makes the usual word-initial token)."))

    def refresh(self) -> None:
        s = self.session
        self.summary = sm = embedding_summary(s)
        if sm is None:
            self.caption.setText(self.tr("Run a prompt to see its embeddings."))
            self.image.clear()
            return
        tok = s.model.tokenizer
        m = np.stack([sm.token_vec, sm.pos_vec, sm.sum_vec])
        lim = float(np.abs(m).max()) or 1.0
        self.image.setImage(m, levels=(-lim, lim))
        self.image.setRect(0, -0.5, m.shape[1], 3)
        ne, npos, ns = sm.norms
        self.caption.setText(
            self.tr("Position {pos}, {token} (id {id}): token vector ‖{ne:.2f}‖ + position vector ‖{npos:.2f}‖ = "
                    "‖{ns:.2f}‖, the residual stream entering block 0 ({n} numbers; blue negative, red "
                    "positive).").format(pos=sm.position, token=tok.token_display(sm.token), id=sm.token, ne=ne,
                                         npos=npos, ns=ns, n=m.shape[1]))
        # rich text (bold, line breaks): tokens escaped, or "␣<!--" began a comment that hid the rest of the list
        shown = lambda i: html.escape(tok.token_display(i))  # noqa: E731
        self.neighbours.setText(self.tr("<b>Nearest tokens</b> to {token} (cosine):").format(
            token=shown(sm.token)) + "<br>" + "<br>".join(f"{shown(i)} &nbsp; {c:.3f}" for i, c in sm.nearest))

    def run_analogy(self) -> None:
        s = self.session
        if s.weights is None or s.model is None:
            return
        tok = s.model.tokenizer
        ids = []
        for w in (self.a, self.b, self.c):
            enc = tok.encode(w.text())
            if len(enc) != 1:
                self.analogy_out.setText(self.tr("“{text}” is {n} tokens; each term must be one token.").format(
                    text=w.text(), n=len(enc)))
                return
            ids.append(enc[0])
        self.analogy = res = analogy_summary(s, *ids, k=5)
        self.analogy_out.setText(" · ".join(f"{tok.token_display(i)} {c:.3f}" for i, c in res))
