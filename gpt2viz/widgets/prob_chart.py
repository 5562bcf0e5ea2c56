"""The live next-token chart: the model's distribution and what the sampling settings leave of it.

Grey ghost bars are the model's own probabilities; solid bars are the probabilities after
temperature, top-k and top-p; tokens those cut are struck out; the token a step will take is
highlighted. Slider moves re-transform the stored logits: no model run.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPalette
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QSlider, QSpinBox, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.generation.sampling import top_k_text
from gpt2viz.core.viewmodels.chart import N_BARS, ChartSummary, chart_summary
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.views.common import LayoutFence, SteadyLabel, repaint_whole, set_ticks
from gpt2viz.widgets.views.kept_axis import kept_axes
from gpt2viz.widgets.views.point_labels import PointLabels

REACH_SLACK = 1.2  # how much further than it must the probability axis may reach before it is fitted again


def axis_reach(current: float, need: float) -> float:
    """How far the probability axis reaches: where it does (``current``) while that is at least ``need`` (every
    label fits) and at most ``REACH_SLACK`` times it, else ``need``.

    An ablation's labels ("before …, −…%") need more room than the plain ones: fitted every time, the axis moved
    when the ablation came and when it went, so before and after were drawn to different scales, and each time
    its ticks were made and drawn again and every bar label moved (the chart is ~1 ms of such a frame on atlas)."""
    return current if need <= current <= need * REACH_SLACK else need


def probability_step(reach: float, px_per_unit: float, label_px: float) -> float:
    """The step between the probability axis' ticks: at most 6 ticks up to 100 % (or ``reach``, if less), and
    ``label_px`` pixels apart at least (a label's width with a gap), so that no two labels overlap on a narrow chart
    (the Chinese window's, with an ablation's wider bar labels: five labels ran into one). 100 % at most."""
    top = min(reach, 1.0)
    for step in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5):
        if top / step <= 6 and step * px_per_unit >= label_px:
            return step
    return 1.0


class ProbabilityChart(Retranslating, QWidget):
    """Bar chart of the top next-token candidates, with temperature / top-k / top-p / seed controls."""

    sigForced = Signal(int)  # a bar was clicked: force this token as the next one

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.state = state
        self.name = session
        self.session = state.session(session)
        self.summary: ChartSummary | None = None  # what is drawn
        pal = self.palette()
        self.plot = repaint_whole(pg.PlotWidget(background=pal.color(QPalette.Base), axisItems=kept_axes()))
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.getAxis("left").setWidth(120)
        for ax in ("left", "bottom"):
            self.plot.getAxis(ax).setTextPen(pal.color(QPalette.Text))
            self.plot.getAxis(ax).setPen(pal.color(QPalette.Mid))
        self.ghost = pg.BarGraphItem(x0=[], y=[], height=0.8, width=[], brush=QColor(128, 128, 128, 60),
                                     pen=pg.mkPen(QColor(128, 128, 128, 160), style=Qt.DashLine))
        self.bars = pg.BarGraphItem(x0=[], y=[], height=0.55, width=[], brushes=[])
        self.plot.addItem(self.ghost)
        self.plot.addItem(self.bars)
        # each bar's probability at its end, all in one item (see PointLabels)
        self.labels = PointLabels(pal.color(QPalette.Text))
        self.plot.addItem(self.labels, ignoreBounds=True)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self._top = 0.0
        self.plot.getPlotItem().vb.sigResized.connect(lambda _vb: self._fit_x())

        self.title = SteadyLabel()  # a second line with interventions: the plot under it stays in place
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.legend = QLabel()
        self.legend.setWordWrap(True)
        self.legend.setStyleSheet("color: palette(mid); font-size: 9pt")

        self.temp = QSlider(Qt.Horizontal)
        self.temp.setRange(0, 200)  # hundredths
        self.temp_lbl = QLabel()
        self.topk = QSlider(Qt.Horizontal)
        self.topk.setRange(0, 100)
        self.topk_lbl = QLabel()
        self.topp = QSlider(Qt.Horizontal)
        self.topp.setRange(1, 100)
        self.topp_lbl = QLabel()
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        form = QFormLayout()
        self.row_names = [QLabel() for _ in range(4)]  # Temperature, Top-k, Top-p, Seed: renamed on a language switch
        for name, slider, lbl in zip(self.row_names, (self.temp, self.topk, self.topp),
                                     (self.temp_lbl, self.topk_lbl, self.topp_lbl)):
            row = QHBoxLayout()
            row.addWidget(slider, 1)
            lbl.setMinimumWidth(70)
            row.addWidget(lbl)
            form.addRow(name, row)
        form.addRow(self.row_names[3], self.seed)
        self.temp.valueChanged.connect(lambda v: self._set(temperature=v / 100))
        self.topk.valueChanged.connect(lambda v: self._set(top_k=v))
        self.topp.valueChanged.connect(lambda v: self._set(top_p=v / 100))
        self.seed.valueChanged.connect(lambda v: self._set(seed=v))

        lay = QVBoxLayout(self)
        lay.addWidget(LayoutFence(self.title))
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.legend)
        lay.addLayout(form)
        self.sigForced.connect(lambda t: state.step(t, session))
        mine = self._mine
        state.sigHistory.connect(mine(self.redraw))
        state.sigSampling.connect(mine(self._sync_controls))
        state.sigSampling.connect(mine(self.redraw))
        state.sigModel.connect(mine(self.redraw))
        self.retranslate()

    def retranslate(self) -> None:
        """Fixed texts, slider read-outs and the chart's title in the current language."""
        self.plot.getAxis("bottom").setLabel(self.tr("probability"))
        self.legend.setText(self.tr("ghost bar = model's own probability · solid = after settings · "
                                    "struck out = cut by top-k/top-p · ★ = what Step picks · click a bar to force it"))
        for lbl, text in zip(self.row_names, (self.tr("Temperature"), self.tr("Top-k"), self.tr("Top-p"),
                                              self.tr("Seed"))):
            lbl.setText(text)
        self._sync_controls()
        self.redraw()

    def _mine(self, slot):
        return lambda name: name == self.name and slot()

    def _set(self, **kw) -> None:
        try:
            self.state.set_sampling(self.name, **kw)
        except ValueError as e:
            self.state.report_error(str(e))

    def _sync_controls(self) -> None:
        s = self.session.sampling
        for w, v in ((self.temp, round(s.temperature * 100)), (self.topk, s.top_k), (self.topp, round(s.top_p * 100)),
                     (self.seed, s.seed)):
            w.blockSignals(True)
            w.setValue(v)
            w.blockSignals(False)
        self.temp_lbl.setText(self.tr("0 (greedy)") if s.greedy else f"{s.temperature:.2f}")
        self.topk_lbl.setText(top_k_text(s.top_k, self.tr("off")))
        self.topp_lbl.setText(self.tr("off (1.0)") if s.top_p >= 1 else f"{s.top_p:.2f}")
        self.seed.setEnabled(not s.greedy)

    def redraw(self) -> None:
        self.summary = sm = chart_summary(self.session, N_BARS)
        if sm is None:
            self.labels.set_labels([])
            self.ghost.setOpts(x0=[], y=[], width=[])
            self.bars.setOpts(x0=[], y=[], width=[], brushes=[])
            set_ticks(self.plot.getAxis("left"), [[]])
            self.title.setText(self.tr("Next token"))
            return
        tok = self.session.model.tokenizer
        rows = sm.rows
        ids = [r.id for r in rows]
        ys = list(range(len(ids)))[::-1]  # first row at the top
        normal = QColor(70, 130, 200)
        # With interventions in force the ghost is the run without them: before (ghost) and after (solid).
        before = sm.interventions and all(r.before is not None for r in rows)
        self.ghost.setOpts(x0=[0] * len(ids), y=ys, width=[r.before if before else r.raw for r in rows])
        self.bars.setOpts(x0=[0] * len(ids), y=ys, width=[r.final for r in rows],
                          brushes=[QColor(230, 140, 20) if r.chosen else normal for r in rows])
        ticks, labels = [], []
        for y, r in zip(ys, rows):
            token = tok.token_display(r.id)
            label = token if r.kept else "".join(ch + "\u0336" for ch in token)
            ticks.append((y, ("★ " if r.chosen else "") + label))
            txt = f"{r.final:.1%}" + (self.tr("  (model {raw:.1%})").format(raw=r.raw) if abs(r.final - r.raw) > 5e-4
                                      else "")
            if before:
                txt += self.tr("  (before {before:.1%}, {delta:+.1%})").format(before=r.before, delta=r.raw - r.before)
            labels.append((max(r.final, r.raw, r.before if before else 0.0), y, txt))
        self.labels.set_labels(labels)
        set_ticks(self.plot.getAxis("left"), [ticks])
        self.plot.setYRange(-0.6, len(ids) - 0.4, padding=0)
        self._top = max(max(r.raw, r.final, r.before or 0.0) for r in rows)
        self._fit_x()
        title = self.tr("Next token after position {position} · {kept:,} of {vocab:,} tokens kept · "
                        "entropy {entropy:.2f} nats").format(position=sm.position, kept=sm.n_kept,
                                                              vocab=sm.vocab_size, entropy=sm.entropy)
        if before:
            from gpt2viz.app.interventions_text import summary

            title += "\n" + self.tr("with {interventions} · ghost = before").format(
                interventions=summary(sm.interventions))
        self.title.setText(title)

    def _fit_x(self) -> None:
        """Scale to the largest bar, leaving room for every bar's label at its end: a flat distribution stays
        readable, and no label is cut at the plot's edge. A label's room is its width in pixels against the plot's
        (Chinese labels, and the "before …" ones with interventions, are wider); measured again on a resize."""
        labels = self.labels.labels()  # each starts at its bar's end
        if not labels:
            return
        xmax = min(1.0, self._top) * 1.75 + 1e-3
        width = self.plot.getPlotItem().vb.width()
        for end, _y, text in labels:
            share = (self.labels.extent(text) + 4) / width if width > 0 else 0.5
            xmax = max(xmax, end / (1 - min(share, 0.8)))
        xmax = axis_reach(self.plot.getPlotItem().vb.viewRange()[0][1], xmax)
        self.plot.setXRange(0, xmax, padding=0)
        # ticks only up to 100 %: the space beyond is room for labels, not probability
        axis = self.plot.getAxis("bottom")
        label_px = QFontMetrics(axis.style.get("tickFont") or axis.font()).horizontalAdvance("100%") + 12
        step = probability_step(xmax, width / xmax if width > 0 else 1e9, label_px)
        ticks = [(v, f"{v:.0%}") for v in np.arange(0, min(xmax, 1.0) + 1e-9, step)]
        set_ticks(self.plot.getAxis("bottom"), [ticks])

    def _on_click(self, ev) -> None:
        if self.summary is None:
            return
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(ev.scenePos()) and \
                not self.plot.getAxis("left").sceneBoundingRect().contains(ev.scenePos()):
            return
        y = vb.mapSceneToView(ev.scenePos()).y()
        self.click_row(len(self.summary.rows) - 1 - int(round(y)))

    def click_row(self, index: int) -> None:
        """Force the token of row ``index`` (0 = top) as the next one."""
        if self.summary is not None and 0 <= index < len(self.summary.rows):
            self.sigForced.emit(self.summary.rows[index].id)
