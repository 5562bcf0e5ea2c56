"""The layer-by-layer pipeline: the path a token travels, one clickable cell per stage.

Each cell carries a live glyph from the real trace for the selected position: the token, the
embedding norm, for each block the most focused head's attention over the earlier tokens and the
token the residual would predict at that depth (logit lens), then the final scores and the choice.
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPalette, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.stages import cell_text, explain, features_sentence, stage_title
from gpt2viz.app.state import AppState
from gpt2viz.core.session.session import Stage, StageKind
from gpt2viz.core.viewmodels.features import features_summary
from gpt2viz.core.viewmodels.pipeline import PipelineSummary, pipeline_summary
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.views.common import LayoutFence, StaticTexts

# Five text lines under a block's glyph, CJK too: the read-out token's line and, with interventions in force, the
# answer's rank and change each wrap in two when the token is long.
CELL_W, CELL_H, GAP = 92, 124, 14
# A glyph's bars are at least this wide: at 200 positions a block's 80 px held 200 sub-pixel bars, and the
# pipeline's paint (2,400 antialiased rectangles) took ~25 ms of every step on a GPT-2-small-sized model.
MIN_BAR_PX = 2
GLYPH_W, GLYPH_H = CELL_W - 12, 34  # a block's attention glyph, under the cell's title
FRAME_AT = 3  # room around a cell's frame in its pixmap (PipelineCells._frame): the selected pen's 1.5 px out


def pooled(values, n: int) -> np.ndarray:
    """``values`` (the last axis) in at most ``n`` bars, each the largest of the positions it covers (a peak stays
    visible)."""
    v = np.asarray(values, dtype=np.float64)
    if n <= 0 or v.shape[-1] <= n:
        return v
    edges = np.linspace(0, v.shape[-1], n + 1).round().astype(int)
    return np.maximum.reduceat(v, edges[:-1], axis=-1)


def bars_images(rows: np.ndarray, width: int, height: int, colour: QColor) -> list[QImage]:
    """Each row of ``rows`` ([glyphs, bars], 0..1) as one image ``width`` x ``height`` px: bar j fills its share of
    the width less a 1 px gap, from the bottom up to its value, in ``colour`` at opacity 0.35..1 by value.

    One image per glyph instead of a rectangle per bar (12 glyphs of 40 bars were ~500 painter calls, most of the
    pipeline's 6 ms paint of every step at 200 tokens), and every glyph in one numpy pass (one pass each was
    0.7 ms of the paint; bench/bench_latency.py)."""
    v = np.clip(np.asarray(rows, dtype=np.float64), 0.0, 1.0)
    n_img, n_bar = v.shape
    rgba = np.zeros((n_img, height, width, 4), np.uint8)
    if n_bar and width > 0 and height > 0:
        w = width / n_bar
        x = np.arange(width)
        j = np.minimum((x / w).astype(int), n_bar - 1)  # the bar each pixel column belongs to
        inside = (x - j * w) < max(1.0, w - 1)  # the last pixel of a bar wider than 1 px is the gap
        vj = v[:, j]  # [glyphs, width]
        tall = np.maximum(1.0, vj * height).round()  # every bar at least 1 px, as before
        filled = (np.arange(height)[None, :, None] >= height - tall[:, None, :]) & inside[None, None, :]
        rgba[..., 0], rgba[..., 1], rgba[..., 2] = colour.red(), colour.green(), colour.blue()
        rgba[..., 3] = np.where(filled, np.round(255 * (0.35 + 0.65 * vj))[:, None, :], 0).astype(np.uint8)
    # each image gets its own pixels (copy): ``rgba`` goes when this returns
    return [QImage(rgba[i].data, width, height, 4 * width, QImage.Format_RGBA8888).copy() for i in range(n_img)]


def bars_image(bars: np.ndarray, width: int, height: int, colour: QColor) -> QImage:
    """:func:`bars_images` of one row of bars."""
    return bars_images(np.asarray(bars, dtype=np.float64)[None], width, height, colour)[0]


class PipelineCells(QWidget):
    """Painted row of stage cells with arrows between them."""

    sigClicked = Signal(object)  # the Stage of the clicked cell

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.state = state
        self.session = state.session(session)
        self.summary: PipelineSummary | None = None
        self._texts: dict[Stage, str] = {}
        self._glyphs: dict[int, QImage] = {}
        self._drawn: tuple | None = None  # what the cells were last drawn from (see show)
        self._frames: dict[tuple, QPixmap] = {}  # a cell's frame and the arrow into it, per look (see _frame)
        self._titles = StaticTexts(256)  # the stages' titles, in every language and font met
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Minimum, QSizePolicy.Fixed)

    def sizeHint(self) -> QSize:
        n = len(self.session.stages()) or 1
        return QSize(n * (CELL_W + GAP) + GAP, CELL_H + 16)

    minimumSizeHint = sizeHint

    def cell_rect(self, i: int) -> QRectF:
        return QRectF(GAP + i * (CELL_W + GAP), 8, CELL_W, CELL_H)

    def text_font(self) -> QFont:
        """The font of the texts under the cells' titles."""
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, self.font().pointSizeF() * 0.85))
        return small

    def text_rect(self, i: int, with_glyph: bool) -> QRectF:
        """Where cell ``i`` draws its text: under its glyph, or under its title when it has none."""
        return self.cell_rect(i).adjusted(3, 60 if with_glyph else 26, -3, -2)

    def show(self, summary: PipelineSummary | None) -> None:
        """Draw ``summary`` (None: no run yet): cell texts and glyphs are made once here, not at every paint.

        Cells that would be drawn exactly as they are (the same stages, titles, selected stage, texts and
        glyph bars) are left alone: a Step or Back with an earlier position selected changes nothing that
        position's cells show, and redrawing them cost the frame ~1 ms of glyphs and ~1 ms of painting
        at 200 tokens of GPT-2-small-sized."""
        self.summary = summary
        tok = self.session.model.tokenizer if summary is not None else None
        stages = tuple(self.session.stages())
        texts = {sid: cell_text(sid, summary, tok.token_display) for sid in stages} if summary is not None else {}
        bars = [b.bars for b in summary.blocks] if summary is not None else []
        drawn = (stages, tuple(stage_title(sid) for sid in stages), self.session.selection.stage, texts)
        if self._drawn is not None and self._drawn[0] == drawn and len(self._drawn[1]) == len(bars) \
                and all(np.array_equal(a, b) for a, b in zip(self._drawn[1], bars)):
            return
        self._drawn = (drawn, bars)
        self._texts = texts
        self._glyphs = self._make_glyphs(summary)
        if self.size() != self.sizeHint():  # a model with another number of blocks (a relayout costs a frame)
            self.updateGeometry()
            self.adjustSize()
        self.update()

    def _make_glyphs(self, summary: PipelineSummary | None) -> dict[int, QImage]:
        """Each block's attention glyph (layer -> image), all blocks in one pass: every block's bars are its
        focused head's weights over the same keys (positions 0..position)."""
        rows = {L: b.bars for L, b in enumerate(summary.blocks) if b.bars is not None} if summary is not None else {}
        if not rows:
            return {}
        bars = pooled(np.stack(list(rows.values())), GLYPH_W // MIN_BAR_PX)
        return dict(zip(rows, bars_images(bars, GLYPH_W, GLYPH_H, self.palette().color(QPalette.Highlight))))

    def stage_at(self, x: float, y: float) -> Stage | None:
        for i, sid in enumerate(self.session.stages()):
            if self.cell_rect(i).contains(QPointF(x, y)):
                return sid
        return None

    def mousePressEvent(self, e):
        sid = self.stage_at(e.position().x(), e.position().y())
        if sid:
            self.sigClicked.emit(sid)

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        if e.type() == QEvent.PaletteChange:  # the glyphs are in the highlight colour
            self._glyphs = self._make_glyphs(self.summary)
        super().changeEvent(e)

    def _frame(self, selected: bool, arrow: bool) -> QPixmap:
        """A cell's rounded frame on the base colour (``selected``: in the highlight, thicker) and, ``arrow``, the
        arrow into it from the cell before, drawn once per look, palette and pixel ratio: the 17 cells' antialiased
        frames and arrows were ~0.3 ms of each paint (GPT-2 small, 2-core EPYC). Drawn at (FRAME_AT, FRAME_AT)
        past the cell's top-left corner less the gap."""
        pal, dpr = self.palette(), self.devicePixelRatioF()
        key = (selected, arrow, pal.cacheKey(), dpr)
        pm = self._frames.get(key)
        if pm is not None:
            return pm
        if len(self._frames) > 8:  # another palette or screen: the old looks are not drawn again soon
            self._frames.clear()
        pm = QPixmap(round((GAP + CELL_W + 2 * FRAME_AT) * dpr), round((CELL_H + 2 * FRAME_AT) * dpr))
        pm.setDevicePixelRatio(dpr)
        pm.fill(Qt.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.Antialiasing)
        r = QRectF(GAP + FRAME_AT, FRAME_AT, CELL_W, CELL_H)
        mid = pal.color(QPalette.Mid)
        p.setPen(QPen(pal.color(QPalette.Highlight), 3) if selected else QPen(mid, 1))
        p.setBrush(pal.color(QPalette.Base))
        p.drawRoundedRect(r, 6, 6)
        if arrow:
            y = r.center().y()
            p.setPen(QPen(mid, 1.5))
            p.drawLine(QPointF(r.left() - GAP + 2, y), QPointF(r.left() - 3, y))
            p.drawLine(QPointF(r.left() - 7, y - 3), QPointF(r.left() - 3, y))
            p.drawLine(QPointF(r.left() - 7, y + 3), QPointF(r.left() - 3, y))
        p.end()
        self._frames[key] = pm
        return pm

    def paintEvent(self, e):
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        fg = self.palette().color(QPalette.Text)
        bold = QFont(self.font())
        bold.setBold(True)
        titles = self._titles.in_font(bold)
        small = self.text_font()
        text_flags = Qt.AlignHCenter | Qt.AlignTop | Qt.TextWordWrap
        sel = self.session.selection.stage
        shown = QRectF(e.rect()).adjusted(-GAP, 0, GAP, 0)  # a cell and the arrow before it
        for i, sid in enumerate(self.session.stages()):
            r = self.cell_rect(i)
            if not shown.intersects(r):  # scrolled out of view: the strip is wider than the window
                continue
            p.drawPixmap(QPointF(r.left() - GAP - FRAME_AT, r.top() - FRAME_AT), self._frame(sid == sel, i > 0))
            p.setPen(fg)
            p.setFont(bold)
            title = titles(stage_title(sid))  # centred at the top, as Qt.AlignHCenter | Qt.AlignTop
            p.drawStaticText(QPointF(r.left() + 4 + (r.width() - 8 - title.size().width()) / 2, r.top() + 3), title)
            if sid not in self._texts:
                continue
            p.setFont(small)
            glyph = self._glyphs.get(sid.layer) if sid.is_block else None
            if glyph is not None:  # attention of the most focused head over earlier positions
                p.drawImage(QPointF(r.left() + 6, r.top() + 24), glyph)
            p.drawText(self.text_rect(i, glyph is not None), text_flags, self._texts[sid])
        p.end()


class PipelineView(Retranslating, QWidget):
    """Pipeline cells, Previous/Next stage, and the selected stage's plain-language explanation."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.state = state
        self.name = session
        self.session = state.session(session)
        self.cells = PipelineCells(state, session)
        self.cells.sigClicked.connect(self._on_cell)
        scroll = QScrollArea()
        scroll.setWidget(self.cells)
        scroll.setFixedHeight(CELL_H + 36)
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.prev_btn = QPushButton()
        self.next_btn = QPushButton()
        self.prev_btn.clicked.connect(lambda: state.move_stage(-1, session))
        self.next_btn.clicked.connect(lambda: state.move_stage(+1, session))
        self.explanation = QLabel()
        self.explanation.setWordWrap(True)
        self.explanation.setTextInteractionFlags(Qt.TextSelectableByMouse)
        self.explanation.setMinimumHeight(40)
        row = QHBoxLayout()
        row.addWidget(self.prev_btn)
        row.addWidget(LayoutFence(self.explanation), 1)  # a new text each stage and step: drawn, not laid out
        row.addWidget(self.next_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(scroll)
        lay.addLayout(row)
        for sig in (state.sigModel, state.sigHistory, state.sigSelection, state.sigSampling):
            sig.connect(lambda name: name == self.name and self.refresh())
        self.retranslate()

    def retranslate(self) -> None:
        """Buttons, cells and explanation in the current language."""
        self.prev_btn.setText(self.tr("◀ Previous stage"))
        self.next_btn.setText(self.tr("Next stage ▶"))
        self.refresh()

    def block_at(self, global_pos) -> int | None:
        """The layer of the block cell under ``global_pos`` (None elsewhere)."""
        local = self.cells.mapFromGlobal(global_pos)
        sid = self.cells.stage_at(local.x(), local.y())
        return sid.layer if sid is not None and sid.is_block else None

    def _on_cell(self, stage: Stage) -> None:
        # A block cell shows its most focused head: open the block on that head.
        if stage.is_block and self.cells.summary is not None:
            self.state.select_block(stage.layer, self.cells.summary.blocks[stage.layer].head, self.name)
        else:
            self.state.select_stage(stage, self.name)

    def refresh(self) -> None:
        s = self.session
        summary = pipeline_summary(s)
        self.cells.show(summary)
        ids = s.stages()
        stage = s.selection.stage
        i = ids.index(stage) if stage in ids else -1
        self.prev_btn.setEnabled(i > 0)
        self.next_btn.setEnabled(0 <= i < len(ids) - 1)
        if summary is None:
            self.explanation.setText(self.tr("The pipeline shows every stage a token passes through. Run a prompt, "
                                             "then click a stage or walk through them with Previous / Next."))
            return
        text = explain(stage, summary, s.model.tokenizer.token_display)
        if stage.kind is StageKind.BLOCK:  # the features at this stage, from the model's own SAE if it has one
            more = features_sentence(features_summary(s, n_rows=3, layer=stage.layer), s.model.tokenizer.token_display)
            text += (" " + more) if more else ""
        self.explanation.setText(f"<b>{stage_title(stage)}.</b> " + html.escape(text))
