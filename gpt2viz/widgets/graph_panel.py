"""The answer's circuit: the transcoder attribution graph of prompt A, built on the worker with progress and
Cancel, drawn as the exported figure is; hover a node for its numbers, click nodes to pin their links,
save the graph as circuit-tracer's JSON, PNG or SVG."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFileDialog,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.graph_layout import GraphLayout, graph_layout
from gpt2viz.widgets.figures.base import Theme, render_png, svg_bytes
from gpt2viz.widgets.figures.graph import centres_in_figure, graph_figure
from gpt2viz.widgets.job_panel import JobPanel, target_id
from gpt2viz.widgets.views.common import set_title, themed_plot

HIT_PX = 9.0  # how near the pointer must be to a node's centre (in figure units)


class GraphCanvas(QWidget):
    """Paints a graph figure at the widget's width; reports the node under the pointer and clicks on nodes."""

    sigHover = Signal(int)  # node index in the layout, -1 for none
    sigClicked = Signal(int)
    sigDoubleClicked = Signal(int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMouseTracking(True)
        self.layout_: GraphLayout | None = None
        self.title = ""
        self.pinned: frozenset[int] = frozenset()
        self._fig = None
        self._centres: list[QPointF] = []

    def show_graph(self, layout: GraphLayout | None, title: str, pinned: frozenset[int] = frozenset()) -> None:
        """Draw ``layout`` (None: nothing) with ``pinned`` nodes' links kept strong."""
        self.layout_, self.title, self.pinned = layout, title, pinned
        self._fig = None if layout is None else graph_figure(layout, title=title, pinned=pinned)
        self._centres = [] if layout is None else centres_in_figure(layout, self._fig)
        self.update()

    def _scale(self) -> float:
        # the whole figure fits the widget (a dock is often short; a floating one can grow)
        if self._fig is None:
            return 1.0
        return max(0.2, min(self.width() / self._fig.width, self.height() / self._fig.height))

    def _offset(self) -> float:
        return max(0.0, (self.width() - self._fig.width * self._scale()) / 2) if self._fig is not None else 0.0

    def paintEvent(self, _e) -> None:
        if self._fig is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.Antialiasing)
        s = self._scale()
        p.translate(self._offset(), 0)
        p.scale(s, s)
        self._fig.paint(p, Theme(dark=self.palette().window().color().lightness() < 128))
        p.end()

    def node_at(self, pos: QPointF) -> int:
        """The node within reach of widget point ``pos``, or -1."""
        if not self._centres:
            return -1
        s = self._scale()
        x, y = (pos.x() - self._offset()) / s, pos.y() / s
        best = min(range(len(self._centres)), key=lambda i: (self._centres[i].x() - x) ** 2
                   + (self._centres[i].y() - y) ** 2)
        c = self._centres[best]
        return best if (c.x() - x) ** 2 + (c.y() - y) ** 2 <= HIT_PX ** 2 else -1

    def mouseMoveEvent(self, e) -> None:
        self.sigHover.emit(self.node_at(e.position()))

    def mousePressEvent(self, e) -> None:
        if e.button() == Qt.LeftButton:
            self.sigClicked.emit(self.node_at(e.position()))

    def mouseDoubleClickEvent(self, e) -> None:  # noqa: N802 - Qt's name
        if e.button() == Qt.LeftButton:
            self.sigDoubleClicked.emit(self.node_at(e.position()))


class GraphPanel(JobPanel):
    """Target, thresholds, Build / Cancel / progress, the graph, a read-out line and Save."""

    channel = "graph"
    sigOpenFeature = Signal(int, int)  # layer, feature: a double-clicked feature node (its page, in the window)

    def __init__(self, state: AppState, parent=None):
        super().__init__(state, parent)
        self.target = QLineEdit()
        self.target.setMaximumWidth(120)
        self.node_t, self.edge_t = QDoubleSpinBox(), QDoubleSpinBox()
        for box, v in ((self.node_t, 0.8), (self.edge_t, 0.98)):
            box.setRange(0.05, 1.0)
            box.setSingleStep(0.01)
            box.setDecimals(2)
            box.setValue(v)
        self.save_btn = QPushButton()
        self.save_btn.setEnabled(False)
        self.save_btn.clicked.connect(self.save)
        self.labels = [QLabel() for _ in range(3)]
        top = QHBoxLayout()
        for lbl, w in zip(self.labels, (self.target, self.node_t, self.edge_t)):
            top.addWidget(lbl)
            top.addWidget(w)
        for w in (self.run_btn, self.cancel_btn, self.progress, self.save_btn):
            top.addWidget(w)
        top.addStretch(1)
        # what to do with the pinned nodes: scale or ablate them in the model (checked against the graph), group them
        self.scale = QDoubleSpinBox()
        self.scale.setRange(-10.0, 10.0)
        self.scale.setSingleStep(0.5)
        self.scale.setDecimals(2)
        self.scale.setValue(2.0)
        self.ablate_btn, self.scale_btn, self.group_btn = QPushButton(), QPushButton(), QPushButton()
        self.ablate_btn.clicked.connect(lambda: self.check_pinned(0.0))
        self.scale_btn.clicked.connect(lambda: self.check_pinned(self.scale.value()))
        self.group_btn.clicked.connect(lambda: self.group_pinned())
        self.pinned_lbl = QLabel()
        row2 = QHBoxLayout()
        for w in (self.pinned_lbl, self.ablate_btn, self.scale_btn, self.scale, self.group_btn):
            row2.addWidget(w)
        row2.addStretch(1)
        self.canvas = GraphCanvas()
        self.canvas.sigHover.connect(self._hover)
        self.canvas.sigClicked.connect(self._click)
        self.canvas.sigDoubleClicked.connect(self._open_feature)
        self.canvas.setMinimumHeight(160)
        # the graph's predicted change of each target logit against the model's (core computes the pairs)
        self.scatter = themed_plot(self)
        self.scatter.setMouseEnabled(False, False)
        self.scatter.hideButtons()
        self.scatter.setMinimumWidth(340)
        for axis in ("bottom", "left"):
            self.scatter.getAxis(axis).enableAutoSIPrefix(False)
        self.scatter.setVisible(False)
        split = QSplitter()
        split.addWidget(self.canvas)
        split.addWidget(self.scatter)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setChildrenCollapsible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(row2)
        lay.addWidget(self.message)
        lay.addWidget(split, 1)
        lay.addWidget(self.readout)
        self.layout_: GraphLayout | None = None
        state.sigJobDone.connect(self._on_check)
        self.retranslate()

    def retranslate(self) -> None:
        for lbl, text in zip(self.labels, (self.tr("target"), self.tr("keep nodes"), self.tr("keep links"))):
            lbl.setText(text)
        self.target.setPlaceholderText(self.tr("top token"))
        self.node_t.setToolTip(self.tr("Keep the nodes holding this share of the influence on the logits"))
        self.edge_t.setToolTip(self.tr("Keep the links holding this share of the influence"))
        self.run_btn.setText(self.tr("Build graph"))
        self.cancel_btn.setText(self.tr("Cancel"))
        self.save_btn.setText(self.tr("Save…"))
        self.pinned_lbl.setText(self.tr("pinned nodes:"))
        self.ablate_btn.setText(self.tr("Ablate"))
        self.scale_btn.setText(self.tr("Scale ×"))
        self.group_btn.setText(self.tr("Group as supernode…"))
        self.ablate_btn.setToolTip(self.tr("Remove the pinned nodes' writes in the model and compare each target "
                                           "logit's change with the graph's prediction"))
        self.scale_btn.setToolTip(self.tr("Multiply the pinned nodes' writes by this factor in the model and compare "
                                          "each target logit's change with the graph's prediction"))
        self.group_btn.setToolTip(self.tr("Group the pinned nodes into one named box (saved in the graph JSON as "
                                          "circuit-tracer's supernodes)"))
        if self.check is not None:
            self.draw_check()
        self.readout.setText(self.tr("hover a node for its numbers; click nodes to pin their links; double-click a "
                                     "feature for its page"))
        if self.summary is not None:
            self.draw(self.canvas.pinned)  # a language switch keeps the pinned nodes
        else:
            self.message.setText(self.tr(
                "The answer's circuit: every MLP is replaced by its transcoder, attention patterns and LayerNorm "
                "scales are frozen, and each link is one node's direct effect on another, from the tokens to the "
                "answer's logits. Needs the model folder's transcoders/."))

    def run(self) -> None:
        if self.state.history is None:
            self.message.setText(self.tr("Run prompt A first."))
            return
        target = target_id(self.tok(), self.target.text())
        if self.state.run_graph(target, self.node_t.value(), self.edge_t.value()):
            self.started()
            self.message.setText(self.tr("Building the graph…"))

    def _title(self) -> str:
        data = self.summary
        target = next((n for n in data["nodes"] if n["is_target_logit"]), None)
        tok = "" if target is None else self.tok().token_display(int(target["feature"]))
        return f"{data['metadata']['prompt']} → {tok}"

    def draw(self, pinned: frozenset[int] = frozenset()) -> None:
        data = self.summary
        if data is None:
            return
        self.layout_ = graph_layout(data)
        self.canvas.show_graph(self.layout_, self._title(), pinned)
        self.save_btn.setEnabled(True)
        info = data["metadata"].get("info", {})
        self.message.setText(self.tr("{n} nodes and {e} links kept; replacement score {r:.3f}, completeness score "
                                     "{c:.3f}.").format(n=len(data["nodes"]), e=len(data["links"]),
                                                        r=info.get("replacement_score", float("nan")),
                                                        c=info.get("completeness_score", float("nan"))))

    def _hover(self, i: int) -> None:
        if self.layout_ is None or i < 0:
            return
        n = self.layout_.nodes[i]
        into = sum(e.weight for e in self.layout_.edges if e.target == i)
        out = sum(e.weight for e in self.layout_.edges if e.source == i)
        kinds = {"feature": self.tr("feature"), "error": self.tr("MLP error"), "embedding": self.tr("token"),
                 "logit": self.tr("logit")}
        act = "" if n.activation is None else self.tr(", activation {a:.3f}").format(a=n.activation)
        self.readout.setText(self.tr("{kind} {label} at position {pos}{act}; drawn links in {i:+.3f}, out {o:+.3f}"
                                     ).format(kind=kinds[n.kind], label=n.label or n.node_id, pos=n.column, act=act,
                                              i=into, o=out))

    def _click(self, i: int) -> None:
        if self.layout_ is None:
            return
        pinned = self.canvas.pinned
        pinned = frozenset() if i < 0 else (pinned - {i} if i in pinned else pinned | {i})
        self.draw(pinned)

    def _open_feature(self, i: int) -> None:
        # a feature node's id is circuit-tracer's "layer_feature_position"
        if self.layout_ is None or i < 0 or self.layout_.nodes[i].kind != "feature":
            return
        layer, feature, _pos = (int(v) for v in self.layout_.nodes[i].node_id.split("_"))
        self.sigOpenFeature.emit(layer, feature)

    # ---- pinned nodes: ablate / scale in the model, group --------------------------------------------------
    def pinned_ids(self) -> list[str]:
        """The node ids of the pinned nodes, in the order drawn."""
        if self.layout_ is None:
            return []
        return [self.layout_.nodes[i].node_id for i in sorted(self.canvas.pinned)]

    @property
    def check(self):
        """The newest ablation check (core.circuits.ablation.AblationCheck), or None."""
        return self.state.session("A").analyses.get("graph-ablation")

    def check_pinned(self, scale: float) -> None:
        """Scale (0: ablate) the pinned nodes in the model, on the worker; the scatter shows the result."""
        ids = self.pinned_ids()
        if not ids:
            self.message.setText(self.tr("Pin nodes first: click them in the graph."))
            return
        if self.state.run_graph_ablation(ids, scale):
            self.message.setText(self.tr("Running the model with {n} nodes scaled by {s:g}…").format(n=len(ids), s=scale))

    def _on_check(self, channel: str, result) -> None:
        if channel == "graph-ablation" and result is not None:
            self.draw_check()

    def draw_check(self) -> None:
        """The scatter of predicted vs real change per target logit, with the Pearson correlation."""
        c = self.check
        if c is None:
            return
        pl = self.scatter
        pl.clear()
        pl.setVisible(True)
        x, y = np.asarray(c.predicted), np.asarray(c.real)
        lo = float(min(x.min(), y.min(), 0.0))
        hi = float(max(x.max(), y.max(), 0.0))
        pad = 0.08 * (hi - lo or 1.0)
        pl.plot([lo - pad, hi + pad], [lo - pad, hi + pad], pen=pg.mkPen((128, 128, 128), width=1, style=Qt.DashLine))
        pl.addItem(pg.ScatterPlotItem(x, y, size=9, brush=pg.mkBrush(46, 110, 190), pen=None))
        tok = self.tok()
        for xi, yi, t in zip(x, y, c.logit_tokens):
            label = pg.TextItem(tok.token_display(int(t)), anchor=(0, 1), color=self.palette().text().color())
            label.setPos(float(xi), float(yi))
            pl.addItem(label)
        pl.setXRange(lo - pad, hi + 3 * pad, padding=0)  # room on the right for the last point's token
        pl.setYRange(lo - pad, hi + pad, padding=0)
        pl.setLabel("bottom", self.tr("predicted by the graph"))
        pl.setLabel("left", self.tr("real (model)"))
        r = "n/a" if not np.isfinite(c.pearson) else f"{c.pearson:.3f}"
        what = self.tr("ablated") if c.scale == 0 else self.tr("scaled ×{s:g}").format(s=c.scale)
        count = self.tr("1 node") if len(c.nodes) == 1 else self.tr("{n} nodes").format(n=len(c.nodes))
        set_title(pl, self.tr("{count} {what}: Pearson r = {r}").format(count=count, what=what, r=r), size="9pt")
        skipped = self.tr(" Not scaled (logits): {ids}.").format(ids=", ".join(c.skipped)) if c.skipped else ""
        self.message.setText(self.tr(
            "{count} {what} inside the model: each target logit's real change (demeaned, onnxruntime) against the "
            "graph's prediction, (scale − 1) × the nodes' direct effects; Pearson r = {r}.").format(
            count=count, what=what, r=r) + skipped)

    def group_pinned(self, name: str | None = None) -> None:
        """Group the pinned nodes as a supernode, asking its name (``name`` given: no dialog)."""
        ids = self.pinned_ids()
        if not ids:
            self.message.setText(self.tr("Pin nodes first: click them in the graph."))
            return
        if name is None:
            name, ok = QInputDialog.getText(self, self.tr("Supernode"), self.tr("Name of the group of {n} nodes:")
                                            .format(n=len(ids)))
            if not ok:
                return
        if self.state.add_supernode(name, ids):
            self.draw(self.canvas.pinned)

    def save(self) -> None:
        """Save the graph as circuit-tracer's JSON, or the figure as PNG / SVG (by the chosen name's suffix)."""
        if self.summary is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Save the graph"), "graph.json",
                                              self.tr("Graph JSON (*.json);;PNG image (*.png);;SVG image (*.svg)"))
        if path:
            self.save_to(Path(path))

    def save_to(self, path: Path) -> None:
        """Write the graph to ``path`` (.json, .png or .svg); a failure is a message, never a crash."""
        try:
            suffix = path.suffix.lower()
            if suffix == ".json":
                path.write_text(json.dumps(self.summary, ensure_ascii=False), encoding="utf-8")
                return
            fig = graph_figure(self.layout_, title=self._title(), pinned=self.canvas.pinned)
            if suffix == ".svg":
                path.write_bytes(svg_bytes(fig))
            elif not render_png(fig, scale=2.0).save(str(path)):
                raise OSError(self.tr("could not write {path}").format(path=path))
        except OSError as e:
            self.state.report_error(str(e))
