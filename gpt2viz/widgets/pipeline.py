"""The layer-by-layer pipeline: the path a token travels, one clickable cell per stage.

Each cell carries a live glyph from the real trace for the selected position: the token, the
embedding norm, for each block the most focused head's attention over the earlier tokens and the
token the residual would predict at that depth (logit lens), then the final scores and the choice.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget)

from gpt2viz.app.stages import explain, stage_title
from gpt2viz.app.state import AppState
from gpt2viz.core.analysis import focused_head
from gpt2viz.core.sampling import softmax

CELL_W, CELL_H, GAP = 92, 96, 14


class PipelineCells(QWidget):
    """Painted row of stage cells with arrows between them."""

    sigClicked = Signal(str)

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.glyphs: dict[str, dict] = {}
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Minimum, QSizePolicy.Fixed)

    def sizeHint(self) -> QSize:
        n = len(self.state.stage_ids()) or 1
        return QSize(n * (CELL_W + GAP) + GAP, CELL_H + 16)

    minimumSizeHint = sizeHint

    def cell_rect(self, i: int) -> QRectF:
        return QRectF(GAP + i * (CELL_W + GAP), 8, CELL_W, CELL_H)

    def stage_at(self, x: float, y: float) -> str | None:
        for i, sid in enumerate(self.state.stage_ids()):
            if self.cell_rect(i).contains(QPointF(x, y)):
                return sid
        return None

    def mousePressEvent(self, e):
        sid = self.stage_at(e.position().x(), e.position().y())
        if sid:
            self.sigClicked.emit(sid)

    def paintEvent(self, _e):
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        pal = self.palette()
        fg, mid, hl = pal.color(QPalette.Text), pal.color(QPalette.Mid), pal.color(QPalette.Highlight)
        base = pal.color(QPalette.Base)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() * 0.85))
        for i, sid in enumerate(self.state.stage_ids()):
            r = self.cell_rect(i)
            selected = sid == self.state.stage
            p.setPen(QPen(hl if selected else mid, 3 if selected else 1))
            p.setBrush(base)
            p.drawRoundedRect(r, 6, 6)
            if i:
                y = r.center().y()
                p.setPen(QPen(mid, 1.5))
                p.drawLine(QPointF(r.left() - GAP + 2, y), QPointF(r.left() - 3, y))
                p.drawLine(QPointF(r.left() - 7, y - 3), QPointF(r.left() - 3, y))
                p.drawLine(QPointF(r.left() - 7, y + 3), QPointF(r.left() - 3, y))
            p.setPen(fg)
            f = QFont(self.font())
            f.setBold(True)
            p.setFont(f)
            p.drawText(r.adjusted(4, 3, -4, 0), Qt.AlignHCenter | Qt.AlignTop, stage_title(sid))
            g = self.glyphs.get(sid)
            if not g:
                continue
            p.setFont(small)
            if "bars" in g:  # attention of the most focused head over earlier positions
                bars = g["bars"]
                area = QRectF(r.left() + 6, r.top() + 24, r.width() - 12, 34)
                w = area.width() / max(1, len(bars))
                p.setPen(Qt.NoPen)
                for j, v in enumerate(bars):
                    c = QColor(hl)
                    c.setAlphaF(0.35 + 0.65 * float(v))
                    p.setBrush(c)
                    h = max(1.0, float(v) * area.height())
                    p.drawRect(QRectF(area.left() + j * w, area.bottom() - h, max(1.0, w - 1), h))
                p.setPen(fg)
            p.drawText(r.adjusted(3, 60 if "bars" in g else 26, -3, -2), Qt.AlignHCenter | Qt.AlignTop | Qt.TextWordWrap,
                       g.get("text", ""))
        p.end()


class PipelineView(QWidget):
    """Pipeline cells, Previous/Next stage, and the selected stage's plain-language explanation."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.cells = PipelineCells(state)
        self.cells.sigClicked.connect(self._on_cell)
        scroll = QScrollArea()
        scroll.setWidget(self.cells)
        scroll.setFixedHeight(CELL_H + 36)
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.prev_btn = QPushButton("◀ Previous stage")
        self.next_btn = QPushButton("Next stage ▶")
        self.prev_btn.clicked.connect(lambda: state.move_stage(-1))
        self.next_btn.clicked.connect(lambda: state.move_stage(+1))
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.explanation.setMinimumHeight(40)
        row = QHBoxLayout()
        row.addWidget(self.prev_btn)
        row.addWidget(self.explanation, 1)
        row.addWidget(self.next_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(scroll)
        lay.addLayout(row)
        for sig in (state.sigModel, state.sigHistory, state.sigSelection, state.sigSampling):
            sig.connect(self.refresh)
        self.refresh()

    def _on_cell(self, stage: str) -> None:
        # A block cell shows its most focused head: open the block on that head.
        g = self.cells.glyphs.get(stage)
        if g and "head" in g:
            self.state.head = g["head"]
        self.state.select_stage(stage)

    def compute_glyphs(self) -> dict[str, dict]:
        """Glyph data per stage for the selected position, from the trace (no model call)."""
        st = self.state
        if st.history is None or st.model is None or st.weights is None:
            return {}
        cfg, tok, h = st.model.config, st.model.tokenizer, st.history
        pos = st.selected_position
        out: dict[str, dict] = {"tokens": {"text": f"{tok.token_display(h.tokens[pos])}\npos {pos}"}}
        e = h.hook_at(("resid_pre", 0), pos)
        out["embed"] = {"text": f"‖x‖ {np.linalg.norm(e):.1f}\n{cfg.n_embd}-d"}
        lens = st.lens(pos)
        for L in range(cfg.n_layer):
            pat = h.hook_at(("pattern", L), pos)
            head, _, w = focused_head(pat)
            top = int(np.argmax(lens[L + 1]))
            out[f"block.{L}"] = {"bars": pat[head], "head": head, "text": f"h{head} {w:.0%}\n{tok.token_display(top)} "
                                 f"{softmax(lens[L + 1])[top]:.0%}"}
        final = lens[-1]
        top = int(np.argmax(final))
        n = h.hook_at("ln_final.hook_normalized", pos)
        out["ln_final"] = {"text": f"‖x‖ {np.linalg.norm(n):.1f}"}
        out["lm_head"] = {"text": f"{cfg.vocab_size:,} logits\nmax {final[top]:.1f}"}
        out["softmax"] = {"text": f"{tok.token_display(top)}\n{softmax(final)[top]:.1%}"}
        d = st.distribution()
        if d and pos == len(h.tokens) - 1:
            dist, chosen = d
            out["choose"] = {"text": f"{tok.token_display(chosen)}\n{dist.final[chosen]:.1%}"}
        else:
            nxt = h.tokens[pos + 1] if pos + 1 < len(h.tokens) else None
            out["choose"] = {"text": f"next was\n{tok.token_display(nxt)}" if nxt is not None else ""}
        return out

    def refresh(self) -> None:
        st = self.state
        self.cells.glyphs = self.compute_glyphs()
        self.cells.adjustSize()
        self.cells.update()
        ids = st.stage_ids()
        i = ids.index(st.stage) if st.stage in ids else -1
        self.prev_btn.setEnabled(i > 0)
        self.next_btn.setEnabled(0 <= i < len(ids) - 1)
        if st.history is None or st.model is None:
            self.explanation.setText("The pipeline shows every stage a token passes through. Run a prompt, "
                                     "then click a stage or walk through them with Previous / Next.")
            return
        d = st.distribution()
        dist, chosen = d if d else (None, None)
        self.explanation.setText(f"<b>{stage_title(st.stage)}.</b> " + html.escape(explain(
            st.stage, st.model, st.weights, st.history, st.selected_position, dist, chosen, st.sampling,
            lens=st.lens(st.selected_position))))
