"""Residual stream: how big it is after each block, what attention and the MLP add, how final it already is."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.residual import residual_summary
from gpt2viz.widgets.views.common import LazyView, note, symbol_style, themed_plot


class ResidualView(LazyView):
    """Norms per layer (residual, attention write, MLP write) and cosine to the final residual."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.caption = note()
        self.norms = themed_plot(self)
        self.legend = self.norms.addLegend(offset=(10, 10))
        self.resid_curve = self.norms.plot([], [], pen=pg.mkPen((70, 130, 200), width=2), symbol="o", **symbol_style())
        self.attn_curve = self.norms.plot([], [], pen=pg.mkPen((230, 140, 20), width=2), symbol="t", **symbol_style())
        self.mlp_curve = self.norms.plot([], [], pen=pg.mkPen((46, 160, 67), width=2), symbol="s", **symbol_style())
        self.cos = themed_plot(self)
        self.cos_curve = self.cos.plot([], [], pen=pg.mkPen((150, 80, 200), width=2), symbol="o", **symbol_style())
        lay = QVBoxLayout(self)
        lay.addWidget(self.caption)
        lay.addWidget(self.norms, 1)
        lay.addWidget(self.cos, 1)
        self.summary = None
        self.watch(state.sigHistory)
        self.watch(state.sigSelection)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Axis labels and the legend in the current language (legend entries are re-added: they hold their text)."""
        self.norms.setLabel("left", self.tr("norm"))
        self.cos.setLabel("left", self.tr("cosine to final residual"))
        self.cos.setLabel("bottom", self.tr("depth (0 = embeddings, then after each block)"))
        self.legend.clear()
        for curve, name in ((self.resid_curve, self.tr("residual after")), (self.attn_curve, self.tr("attention adds")),
                            (self.mlp_curve, self.tr("MLP adds"))):
            self.legend.addItem(curve, name)

    def refresh(self) -> None:
        s = self.session
        self.summary = pr = residual_summary(s)
        if pr is None:
            self.caption.setText(self.tr("Run a prompt to see the residual stream."))
            return
        depth = np.arange(pr.resid_norm.size)
        self.resid_curve.setData(depth, pr.resid_norm)
        self.attn_curve.setData(depth[1:] - 0.1, pr.attn_norm)
        self.mlp_curve.setData(depth[1:] + 0.1, pr.mlp_norm)
        self.cos_curve.setData(depth, pr.cos_to_final)
        self.cos.setYRange(-0.2, 1.05)
        tok = s.model.tokenizer
        self.caption.setText(
            self.tr("Position {pos} {token}: the residual stream is the sum every block writes into. Top: its size "
                    "after each block and the size of what attention and the MLP of that block added. Bottom: how "
                    "close its direction already is to the final one (1 = same direction).").format(
                pos=pr.position, token=tok.token_display(pr.token)))
