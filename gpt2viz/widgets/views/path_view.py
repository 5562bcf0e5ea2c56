"""The path: a contribution graph over layers × positions and ranked bars of what pushed the next token.

Everything drawn comes from :func:`gpt2viz.core.analysis.path_graph.build_path_summary`; this module only draws it
and turns clicks into selections.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QSizePolicy, QSlider, QSplitter, QVBoxLayout, QWidget

from gpt2viz.app import attribution_text as at
from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.analysis.path_graph import DEFAULT_THRESHOLD, PathSummary
from gpt2viz.core.viewmodels.path import path_summary
from gpt2viz.widgets.views.common import LazyView, note, place_token_ticks, set_ticks, set_title, themed_plot

PUSH = QColor(46, 120, 200)  # positive: pushed the target up
PULL = QColor(215, 80, 50)  # negative: pulled it down
MAX_WIDTH = 9.0  # pen width of the largest kept edge, in pixels
NODE_LEVELS = 16  # shades of a node's colour, from faint to full


def _colour(value: float, alpha: int = 255) -> QColor:
    c = QColor(PUSH if value >= 0 else PULL)
    c.setAlpha(alpha)
    return c


@functools.lru_cache(maxsize=64)
def _node_brush(push: bool, level: int) -> QBrush:
    """The brush of a node whose |value| is ``level`` / NODE_LEVELS of the largest: one object per look, because
    pyqtgraph's scatter items render a symbol once per brush object (a new brush per node re-rendered every symbol
    at each draw: ~4 ms of a Path tab show at 200 tokens on a 2-core EPYC)."""
    return pg.mkBrush(_colour(1.0 if push else -1.0, int(80 + 175 * level / NODE_LEVELS)))


class PathView(LazyView):
    """Contribution graph (left) and ranked bars (right) for the selected position's next token.

    Signals
    -------
    sigOpenTab(str)
        Asks the tab widget to show another view (an edge opens Attention or MLP, a node the Logit lens).
    """

    sigOpenTab = Signal(str)

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.target = QLineEdit()
        self.target.editingFinished.connect(self.refresh)
        self.vs = QLineEdit()
        self.vs.editingFinished.connect(self.refresh)
        self.slider = QSlider(Qt.Horizontal)
        self.slider.setRange(1, 40)  # half-percent steps: 0.5 % .. 20 %
        self.slider.setValue(round(DEFAULT_THRESHOLD * 200))
        self.slider.valueChanged.connect(self.refresh)
        self.slider_label = QLabel()
        self.slider_label.setMinimumWidth(110)
        top = QHBoxLayout()
        top.addWidget(self.target, 2)
        top.addWidget(self.vs, 2)
        self.threshold_name = QLabel()
        top.addWidget(self.threshold_name)
        top.addWidget(self.slider, 1)
        top.addWidget(self.slider_label)
        self.caption = note()
        self.method = note()
        self.method.setStyleSheet("font-size: 8pt")
        for lbl in (self.caption, self.method):
            lbl.setSizePolicy(QSizePolicy.Preferred, QSizePolicy.Minimum)  # never squeezed under the text
        self.bars_title = note()
        self.bars_title.setAlignment(Qt.AlignCenter)
        self.readout = note()
        self.graph = themed_plot(self)
        self._token_ticks: list = []  # every token axis label (position, text); as many as fit are shown
        self.graph.getPlotItem().vb.sigResized.connect(
            lambda _vb: place_token_ticks(self.graph, "bottom", self._token_ticks))
        self.graph.setMouseEnabled(False, False)
        self.graph.hideButtons()
        self.graph.scene().sigMouseMoved.connect(self._on_move)
        self.graph.scene().sigMouseClicked.connect(self._on_click)
        # The nodes' two scatter items are made once and given new points at each draw, above the edges: made anew,
        # each rendered its symbols again (see _node_brush).
        self.others = pg.ScatterPlotItem(size=6, pen=None)
        self.nodes = pg.ScatterPlotItem()
        for z, item in enumerate((self.others, self.nodes), start=1):
            item.setZValue(z)
            self.graph.addItem(item)
        self._theme: tuple | None = None  # the palette's colours the next two were made with
        self._grey_brush, self._node_pen = None, None
        self.bars = themed_plot(self)
        self.bars.setMouseEnabled(False, False)
        self.bars.hideButtons()
        self.bars.getAxis("left").setWidth(190)
        self.bars.getAxis("bottom").enableAutoSIPrefix(False)
        self.graph.setMinimumHeight(120)
        self.bars.setMinimumHeight(120)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.bars_title)
        rl.addWidget(self.bars, 1)
        self.bars_panel = right  # what `snapshot --view attribution` draws
        split = QSplitter()
        split.addWidget(self.graph)
        split.addWidget(right)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([620, 420])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.caption)
        lay.addWidget(split, 1)
        lay.addWidget(self.readout)
        lay.addWidget(self.method)
        self.summary: PathSummary | None = None
        self._items: list = []
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language (the read-out goes back to its hint)."""
        self.target.setPlaceholderText(self.tr("target token (default: the next token)"))
        self.vs.setPlaceholderText(self.tr("vs token (optional: a logit difference)"))
        self.threshold_name.setText(self.tr("threshold"))
        self.method.setText(self.tr(
            "Edges are DLA-weighted (not LLM-TT's vector shares): signed, blue pushed and red pulled down, and before "
            "pruning they add up to the logit; only direct paths into this position are edges. Attribution freezes the "
            "final LayerNorm's scale at the real residual; the logit lens recomputes it at every depth, so their "
            "numbers differ."))
        self.readout.setText(self.tr("hover an edge or a node for its numbers; click an edge to open its head, "
                                     "a node to see the logit lens there"))
        self.graph.setLabel("left", self.tr("depth"))
        self.bars.setLabel("bottom", self.tr("direct contribution"))

    @property
    def threshold(self) -> float:
        return self.slider.value() / 200

    # ---- drawing ----------------------------------------------------------------------------------
    def refresh(self) -> None:
        st = self.session
        self.slider_label.setText(self.tr("{0:.1f} % of total").format(self.threshold * 100))
        self.summary = s = path_summary(st, self.target.text().strip("\n"), self.vs.text().strip("\n"),
                                        self.threshold)
        if s is None:
            self.caption.setText(self.tr("Run a prompt to see which parts of the model pushed the next token."))
            return
        self._draw_graph(s)
        self._draw_bars(s)
        what = s.target_text + (f" − {s.vs_text}" if s.vs_text else "")
        self.caption.setText(self.tr(
            "Direct logit attribution of {what} at position {pos}: logit {logit:.3f} = the parts + final LayerNorm "
            "bias {bias:+.3f}. {dropped} parts at or under the threshold are hidden (the kept ones are {kept:.0%} of "
            "the total |contribution|; widths renormalised). Largest source: {head}.").format(
            what=what, pos=s.position, logit=s.logit, bias=s.ln_bias_term, dropped=s.dropped,
            kept=s.kept_fraction, head=at.headline(s)) + (f" ({s.message})" if s.message else "")
            + ("" if s.before_logit is None else " " + self.tr(
                "With the interventions in force; before them this logit was {before:.3f} ({change:+.3f} now).").format(
                before=s.before_logit, change=s.logit - s.before_logit)))
        self.layout().activate()  # the caption's new height now, not after the next event (exports grab at once)

    def _clear(self) -> None:
        for item in self._items:
            self.graph.removeItem(item)
        self._items = []

    def _edge_points(self, e) -> tuple[tuple[float, float], tuple[float, float]]:
        """Where an edge is drawn: heads fan out a little so parallel ones stay apart."""
        n_head = self.session.model.config.n_head
        dx = 0.0
        if e.kind == "head":
            dx = (e.head - (n_head - 1) / 2) * min(0.12, 0.6 / max(n_head, 1))
        elif e.kind in ("embed", "pos_embed"):
            dx = -0.15 if e.kind == "embed" else 0.15
        elif e.kind == "attn_bias":
            dx = 0.3
        return (e.source + dx, e.y0), (e.target, e.y1)

    def _draw_graph(self, s: PathSummary) -> None:
        self._clear()
        pal = self.palette()
        theme = (pal.color(QPalette.Mid), pal.color(QPalette.Text))
        if theme != self._theme:  # one brush and pen object while the theme stays (see _node_brush)
            self._theme, self._grey_brush, self._node_pen = theme, pg.mkBrush(theme[0]), pg.mkPen(theme[1])
        others = [n for n in s.nodes if math.isnan(n.value)]
        self.others.setData([n.position for n in others], [n.depth for n in others], brush=self._grey_brush)
        big = max(abs(e.value) for e in s.edges) if s.edges else 1.0
        for e in reversed(s.edges):  # largest drawn last, on top
            (x0, y0), (x1, y1) = self._edge_points(e)
            # square root: one dominant part (often the block-0 MLP) would leave every other edge a hairline
            width = max(1.5, MAX_WIDTH * math.sqrt(abs(e.value) / big))
            item = pg.PlotCurveItem([x0, x1], [y0, y1], pen=pg.mkPen(_colour(e.value, 200), width=width))
            self.graph.addItem(item)
            self._items.append(item)
        col = [n for n in s.nodes if not math.isnan(n.value)]
        vals = np.array([n.value for n in col])
        span = max(np.abs(vals).max(), 1e-9) if len(vals) else 1.0
        brushes = [_node_brush(bool(v >= 0), round(NODE_LEVELS * min(1.0, abs(v) / span))) for v in vals]
        self.nodes.setData([n.position for n in col], [n.depth for n in col],
                           size=[12 if float(n.depth).is_integer() else 7 for n in col], brush=brushes,
                           pen=self._node_pen)
        self._token_ticks = [(s.first + i, t) for i, t in enumerate(s.token_labels)]
        place_token_ticks(self.graph, "bottom", self._token_ticks)
        set_ticks(self.graph.getAxis("left"), [[(d, self.tr("embed") if d == 0 else str(d)) for d in range(s.n_layer + 1)]])
        self.graph.setXRange(s.first - 0.6, s.position + 0.6, padding=0)
        self.graph.setYRange(-0.7, s.n_layer + 0.2, padding=0)
        title = self.tr("how {0} got its logit: layers × positions (depth n = after block n−1)")
        set_title(self.graph, title.format(s.target_text), size="10pt")

    def _draw_bars(self, s: PathSummary) -> None:
        self.bars.clear()
        n = len(s.bars)
        if not n:
            return
        y = np.arange(n)[::-1]  # the biggest push on top
        vals = np.array([b.value for b in s.bars])
        ghosts = np.array(s.before_bars) if s.before_bars else None
        if ghosts is not None:
            # the same part before the interventions (an edit): a wider grey outline behind each bar, as the
            # next-token chart draws its ghosts
            grey = self.palette().color(QPalette.Text)
            self.bars.addItem(pg.BarGraphItem(x0=np.minimum(ghosts, 0), y=y, height=0.9, width=np.abs(ghosts),
                                              brush=QColor(128, 128, 128, 70), pen=pg.mkPen(grey, width=1)))
        self.bars.addItem(pg.BarGraphItem(x0=np.minimum(vals, 0), y=y, height=0.6 if ghosts is not None else 0.7,
                                          width=np.abs(vals), brushes=[_colour(v) for v in vals], pen=None))
        # the number in the label, not only the length: small bars are otherwise unreadable
        labels = [f"{at.bar_label(b)}  {b.value:+.2f}" for b in s.bars]
        if ghosts is not None:
            labels = [self.tr("{label} (before {before:+.2f})").format(label=t, before=g) for t, g in zip(labels, ghosts)]
        # room for the longest label: pyqtgraph drops a tick label that does not fit
        fm = self.bars.getAxis("left").fontMetrics() if hasattr(self.bars.getAxis("left"), "fontMetrics") \
            else self.fontMetrics()
        self.bars.getAxis("left").setWidth(max(190, 12 + max(fm.horizontalAdvance(t) for t in labels)))
        set_ticks(self.bars.getAxis("left"), [list(zip((int(yy) for yy in y), labels))])
        self.bars.setYRange(-0.6, n - 0.4, padding=0)
        both = vals if ghosts is None else np.concatenate([vals, ghosts])
        lo, hi = min(0.0, both.min()), max(0.0, both.max())
        self.bars.setXRange(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo), padding=0)
        title = self.tr("what pushed {0} (and what pulled it down)").format(s.target_text)
        if ghosts is not None:
            title += "\n" + self.tr("with the interventions · grey outline = before them")
        self.bars_title.setText(title)

    # ---- hover and click --------------------------------------------------------------------------
    def edge_at(self, x: float, y: float, tol: float = 0.15) -> int | None:
        """Index of the kept edge nearest to the data point (x, y), if within ``tol``."""
        if self.summary is None:
            return None
        best, dist = None, tol
        p = np.array([x, y])
        for i, e in enumerate(self.summary.edges):
            a, b = (np.array(pt) for pt in self._edge_points(e))
            t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-12), 0, 1)
            d = float(np.linalg.norm(p - (a + t * (b - a))))
            if d < dist:
                best, dist = i, d
        return best

    def node_at(self, x: float, y: float, tol: float = 0.2) -> int | None:
        """Index of the node nearest to the data point (x, y), if within ``tol``."""
        if self.summary is None:
            return None
        d = [math.hypot(n.position - x, n.depth - y) for n in self.summary.nodes]
        i = int(np.argmin(d)) if d else 0
        return i if d and d[i] < tol else None

    def describe_edge(self, i: int) -> str:
        s, tok = self.summary, self.session.model.tokenizer
        e = s.edges[i]
        toks = self.session.history.tokens
        src = self.tr(" reading {0} (position {1})").format(tok.token_display(toks[e.source]), e.source) \
            if e.kind == "head" else ""
        return self.tr("{label}{src}: {value:+.4f} to {target} ({share:.0%} of the kept edges)").format(
            label=at.part_label(e.kind, e.layer, e.head), src=src, value=e.value, target=s.target_text, share=e.share)

    def describe_node(self, i: int) -> str:
        n = self.summary.nodes[i]
        tok, st = self.session.model.tokenizer, self.session
        if n.depth == 0:
            where = self.tr("after the embeddings")
        elif float(n.depth).is_integer():
            where = self.tr("after block {0}").format(int(n.depth) - 1)
        else:
            where = self.tr("after block {0}'s attention").format(int(n.depth))
        text = self.tr("{0} (position {1}) {2}").format(tok.token_display(st.history.tokens[n.position]),
                                                        n.position, where)
        if not math.isnan(n.value):
            text += self.tr(": the parts so far add {0:+.4f}").format(n.value)
        if float(n.depth).is_integer():
            tops, probs = st.lens_tops(n.position)
            d = int(n.depth)
            text += self.tr(" · lens there predicts {0} ({1:.1%})").format(tok.token_display(int(tops[d])),
                                                                          float(probs[d]))
        return text

    def _data_point(self, pos):
        vb = self.graph.getPlotItem().vb
        if not vb.sceneBoundingRect().contains(pos):
            return None
        p = vb.mapSceneToView(pos)
        return p.x(), p.y()

    def _on_move(self, pos) -> None:
        xy = self._data_point(pos)
        if xy is None or self.summary is None:
            return
        n = self.node_at(*xy)
        if n is not None:
            self.readout.setText(self.describe_node(n))
            return
        e = self.edge_at(*xy)
        if e is not None:
            self.readout.setText(self.describe_edge(e))

    def _on_click(self, ev) -> None:
        xy = self._data_point(ev.scenePos())
        if xy is None or self.summary is None:
            return
        n = self.node_at(*xy)
        if n is not None:
            self.click_node(n)
            return
        e = self.edge_at(*xy)
        if e is not None:
            self.click_edge(e)

    def click_edge(self, i: int) -> None:
        """Open what made the edge: a head in the attention view (query selected), or the MLP view."""
        e = self.summary.edges[i]
        st, name = self.state, self.name
        st.select_position(e.target, name)
        if e.layer is None:
            self.sigOpenTab.emit("Embeddings")
            return
        st.select_block(e.layer, e.head, session=name)
        self.sigOpenTab.emit("MLP" if e.kind == "mlp" else "Attention")

    def click_node(self, i: int) -> None:
        """Select the node's position and show the logit lens there."""
        n = self.summary.nodes[i]
        self.readout.setText(self.describe_node(i))
        self.state.select_position(n.position, self.name)
        self.sigOpenTab.emit("Logit lens")
