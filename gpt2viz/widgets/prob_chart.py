"""The live next-token chart: the model's distribution and what the sampling settings leave of it.

Grey ghost bars are the model's own probabilities; solid bars are the probabilities after
temperature, top-k and top-p; tokens those cut are struck out; the token a step will take is
highlighted. Slider moves re-transform the stored logits: no model run.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (QFormLayout, QHBoxLayout, QLabel, QSlider, QSpinBox, QVBoxLayout,
                               QWidget)

from gpt2viz.app.state import AppState

N_BARS = 12


class ProbabilityChart(QWidget):
    """Bar chart of the top next-token candidates, with temperature / top-k / top-p / seed controls."""

    sigForced = Signal(int)  # a bar was clicked: force this token as the next one

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.rows: list[dict] = []  # what is drawn, top row first (tests read it)
        pal = self.palette()
        self.plot = pg.PlotWidget(background=pal.color(QPalette.Base))
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.getAxis("bottom").setLabel("probability")
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
        # Percentage labels are created once and reused: removing plot items on every redraw costs
        # signal disconnections and churn on a path that runs at every slider tick.
        self.labels: list[pg.TextItem] = []
        for _ in range(N_BARS):
            t = pg.TextItem("", color=pal.color(QPalette.Text), anchor=(0, 0.5))
            self.plot.addItem(t)
            self.labels.append(t)
        self.plot.scene().sigMouseClicked.connect(self._on_click)

        self.title = QLabel("Next token")
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.legend = QLabel("ghost bar = model's own probability · solid = after settings · "
                             "struck out = cut by top-k/top-p · ★ = what Step picks · click a bar to force it")
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
        for name, slider, lbl in (("Temperature", self.temp, self.temp_lbl), ("Top-k", self.topk, self.topk_lbl),
                                  ("Top-p", self.topp, self.topp_lbl)):
            row = QHBoxLayout()
            row.addWidget(slider, 1)
            lbl.setMinimumWidth(70)
            row.addWidget(lbl)
            form.addRow(name, row)
        form.addRow("Seed", self.seed)
        self.temp.valueChanged.connect(lambda v: self._set(temperature=v / 100))
        self.topk.valueChanged.connect(lambda v: self._set(top_k=v))
        self.topp.valueChanged.connect(lambda v: self._set(top_p=v / 100))
        self.seed.valueChanged.connect(lambda v: self._set(seed=v))

        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.legend)
        lay.addLayout(form)
        self.sigForced.connect(lambda t: state.step(t))
        state.sigHistory.connect(self.redraw)
        state.sigSampling.connect(self._sync_controls)
        state.sigSampling.connect(self.redraw)
        state.sigModel.connect(self.redraw)
        self._sync_controls()
        self.redraw()

    def _set(self, **kw) -> None:
        try:
            self.state.set_sampling(**kw)
        except ValueError as e:
            self.state.sigError.emit(str(e))

    def _sync_controls(self) -> None:
        s = self.state.sampling
        for w, v in ((self.temp, round(s.temperature * 100)), (self.topk, s.top_k), (self.topp, round(s.top_p * 100)),
                     (self.seed, s.seed)):
            w.blockSignals(True)
            w.setValue(v)
            w.blockSignals(False)
        self.temp_lbl.setText("0 (greedy)" if s.greedy else f"{s.temperature:.2f}")
        self.topk_lbl.setText("off" if s.top_k == 0 else str(s.top_k))
        self.topp_lbl.setText("off (1.0)" if s.top_p >= 1 else f"{s.top_p:.2f}")
        self.seed.setEnabled(not s.greedy)

    def redraw(self) -> None:
        st = self.state
        for t in self.labels:
            t.setVisible(False)
        d = st.distribution()
        if d is None or st.model is None:
            self.rows = []
            self.ghost.setOpts(x0=[], y=[], width=[])
            self.bars.setOpts(x0=[], y=[], width=[], brushes=[])
            self.plot.getAxis("left").setTicks([[]])
            self.title.setText("Next token")
            return
        dist, chosen = d
        tok = st.model.tokenizer
        ids = [int(i) for i in dist.top(N_BARS, "raw")]
        if chosen not in ids:  # a sampled token from the tail still gets its bar
            ids[-1] = chosen
        self.rows = [{"id": i, "token": tok.token_display(i), "raw": float(dist.raw[i]),
                      "final": float(dist.final[i]), "kept": bool(dist.kept[i]), "chosen": i == chosen} for i in ids]
        ys = list(range(len(ids)))[::-1]  # first row at the top
        normal = QColor(70, 130, 200)
        self.ghost.setOpts(x0=[0] * len(ids), y=ys, width=[r["raw"] for r in self.rows])
        self.bars.setOpts(x0=[0] * len(ids), y=ys, width=[r["final"] for r in self.rows],
                          brushes=[QColor(230, 140, 20) if r["chosen"] else normal for r in self.rows])
        ticks = []
        for y, r, item in zip(ys, self.rows, self.labels):
            label = r["token"] if r["kept"] else "".join(ch + "\u0336" for ch in r["token"])
            ticks.append((y, ("★ " if r["chosen"] else "") + label))
            txt = f"{r['final']:.1%}" + (f"  (model {r['raw']:.1%})" if abs(r["final"] - r["raw"]) > 5e-4 else "")
            item.setText(txt)
            item.setPos(max(r["final"], r["raw"]), y)
            item.setVisible(True)
        self.plot.getAxis("left").setTicks([ticks])
        self.plot.setYRange(-0.6, len(ids) - 0.4, padding=0)
        # Scale to the largest bar, leaving room for its label: a flat distribution stays readable.
        top = max(max(r["raw"], r["final"]) for r in self.rows)
        xmax = min(1.0, top) * 1.75 + 1e-3
        self.plot.setXRange(0, xmax, padding=0)
        # ticks only up to 100 %: the space beyond is room for labels, not probability
        step = next(s for s in (0.01, 0.02, 0.05, 0.1, 0.2, 0.25) if min(xmax, 1.0) / s <= 6)
        ticks = [(v, f"{v:.0%}") for v in np.arange(0, min(xmax, 1.0) + 1e-9, step)]
        self.plot.getAxis("bottom").setTicks([ticks])
        n = len(st.history.tokens)
        self.title.setText(f"Next token after position {n - 1} · {int(dist.kept.sum()):,} of {dist.raw.size:,} "
                           f"tokens kept · entropy {dist.entropy('raw'):.2f} nats")

    def _on_click(self, ev) -> None:
        if not self.rows:
            return
        vb = self.plot.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(ev.scenePos()) and \
                not self.plot.getAxis("left").sceneBoundingRect().contains(ev.scenePos()):
            return
        y = vb.mapSceneToView(ev.scenePos()).y()
        self.click_row(len(self.rows) - 1 - int(round(y)))

    def click_row(self, index: int) -> None:
        """Force the token of row ``index`` (0 = top) as the next one."""
        if 0 <= index < len(self.rows):
            self.sigForced.emit(self.rows[index]["id"])
