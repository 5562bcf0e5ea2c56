"""Compare two prompts: B's prompt and token strip under A's, the next-token chart as paired bars
A vs B, and the logit lens and attention of A and B side by side."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QSplitter, QTabWidget, QVBoxLayout, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.compare import PairedChart, paired_chart
from gpt2viz.widgets.interventions import InterventionChips
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.token_strip import TokenStrip
from gpt2viz.widgets.views.attention_view import AttentionView
from gpt2viz.widgets.views.common import set_ticks, themed_plot
from gpt2viz.widgets.views.lens_view import LensView

COLOR_A, COLOR_B = QColor(70, 130, 200), QColor(230, 140, 20)


class PairedBars(Retranslating, QWidget):
    """A's and B's next-token probabilities as paired bars (blue A, orange B)."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.plot = themed_plot(self)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.plot.getAxis("left").setWidth(110)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.bars_a = pg.BarGraphItem(x0=[], y=[], height=0.38, width=[], brush=COLOR_A)
        self.bars_b = pg.BarGraphItem(x0=[], y=[], height=0.38, width=[], brush=COLOR_B)
        self.plot.addItem(self.bars_a)
        self.plot.addItem(self.bars_b)
        self.labels: list[pg.TextItem] = []
        self.title = QLabel()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        self.summary: PairedChart | None = None
        for sig in (state.sigHistory, state.sigModel):
            sig.connect(lambda _name: self.redraw())
        self.retranslate()

    def retranslate(self) -> None:
        self.plot.getAxis("bottom").setLabel(self.tr("probability (the model's own)"))
        self.redraw()

    def redraw(self) -> None:
        st = self.state
        self.summary = sm = paired_chart(st.session(SessionId.A), st.sessions.get(SessionId.B))
        for t in self.labels:
            self.plot.removeItem(t)
        self.labels = []
        if sm is None:
            self.bars_a.setOpts(x0=[], y=[], width=[])
            self.bars_b.setOpts(x0=[], y=[], width=[])
            self.title.setText(self.tr("Next token: A vs B (run both prompts)"))
            return
        tok = st.model.tokenizer
        n = len(sm.rows)
        ys = list(range(n))[::-1]
        self.bars_a.setOpts(x0=[0] * n, y=[y + 0.2 for y in ys], width=[r.a for r in sm.rows])
        self.bars_b.setOpts(x0=[0] * n, y=[y - 0.2 for y in ys], width=[r.b for r in sm.rows])
        for y, r in zip(ys, sm.rows):
            for val, dy, col in ((r.a, 0.2, COLOR_A), (r.b, -0.2, COLOR_B)):
                t = pg.TextItem(f"{val:.1%}", color=self.palette().color(QPalette.Text), anchor=(0, 0.5))
                t.setPos(val, y + dy)
                self.plot.addItem(t)
                self.labels.append(t)
        set_ticks(self.plot.getAxis("left"), [[(y, tok.token_display(r.id)) for y, r in zip(ys, sm.rows)]])
        top = max(max(r.a, r.b) for r in sm.rows)
        self.plot.setXRange(0, min(1.0, top) * 1.3 + 1e-3, padding=0)
        self.plot.setYRange(-0.6, n - 0.4, padding=0)
        self.title.setText(self.tr("Next token: A (blue) top {a}, B (orange) top {b}").format(
            a=tok.token_display(sm.top_a), b=tok.token_display(sm.top_b)))


class CompareDock(Retranslating, QWidget):
    """Session B beside A: its prompt, the aligned token strips, paired bars, lens and attention side by side."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.prompt = QLineEdit()
        self.prompt.returnPressed.connect(self.run)
        self.run_btn = QPushButton()
        self.run_btn.clicked.connect(self.run)
        self.prompt_lbl = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.prompt_lbl)
        top.addWidget(self.prompt, 1)
        top.addWidget(self.run_btn)
        self.strip_a = TokenStrip(state, SessionId.A)
        self.strip_b = TokenStrip(state, SessionId.B)
        self.chips_b = InterventionChips(state, SessionId.B)
        self.a_lbl, self.b_lbl = QLabel("A"), QLabel("B")
        strips = QVBoxLayout()
        for lbl, strip in ((self.a_lbl, self.strip_a), (self.b_lbl, self.strip_b)):
            row = QHBoxLayout()
            lbl.setFixedWidth(16)
            row.addWidget(lbl)
            row.addWidget(strip, 1)
            strips.addLayout(row)
        self.bars = PairedBars(state)
        self.tabs = QTabWidget()
        self.lens = (LensView(state, SessionId.A), LensView(state, SessionId.B))
        self.attention = (AttentionView(state, SessionId.A), AttentionView(state, SessionId.B))
        for pair in (self.lens, self.attention):
            split = QSplitter(Qt.Horizontal)
            for v in pair:
                split.addWidget(v)
            self.tabs.addTab(split, "")
        # the differences B − A (same token count only): the lens for A's top tokens, the selected head's pattern
        from gpt2viz.widgets.analysis import Heatmap

        self.diff_lens, self.diff_att = Heatmap(), Heatmap()
        self.diff_note = QLabel()
        self.diff_note.setWordWrap(True)
        diff = QWidget()
        dl = QVBoxLayout(diff)
        dl.addWidget(self.diff_note)
        row = QHBoxLayout()
        row.addWidget(self.diff_lens)
        row.addWidget(self.diff_att)
        dl.addLayout(row, 1)
        self.tabs.addTab(diff, "")
        self.tabs.currentChanged.connect(lambda _i: self.refresh_diff())
        for sig in (state.sigHistory, state.sigSelection):
            sig.connect(lambda _name: self.tabs.currentIndex() == 2 and self.refresh_diff())
        main = QSplitter(Qt.Horizontal)
        main.addWidget(self.bars)
        main.addWidget(self.tabs)
        main.setStretchFactor(1, 3)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(strips)
        lay.addWidget(self.chips_b)
        lay.addWidget(main, 1)
        self.retranslate()

    def retranslate(self) -> None:
        self.prompt_lbl.setText(self.tr("Prompt B"))
        self.run_btn.setText(self.tr("Run B"))
        self.prompt.setPlaceholderText(self.tr("a second prompt, e.g. The capital of Germany is"))
        self.tabs.setTabText(0, self.tr("Logit lens: A | B"))
        self.tabs.setTabText(1, self.tr("Attention: A | B"))
        self.tabs.setTabText(2, self.tr("Differences B − A"))
        self.refresh_diff()

    def refresh_diff(self) -> None:
        """Draw B − A of the lens (A's top tokens) and of A's selected head's pattern."""
        from gpt2viz.core.viewmodels.compare import attention_difference, lens_difference

        st = self.state
        a, b = st.session(SessionId.A), st.sessions.get(SessionId.B)
        self.lens_diff = ld = lens_difference(a, b)
        if ld is None:
            self.diff_note.setText(self.tr("The differences need two texts of the same number of tokens."))
            return
        tok = st.model.tokenizer
        sel = a.selection
        self.att_diff = ad = attention_difference(a, b, sel.layer, min(sel.head, st.model.config.n_head - 1))
        cols = [tok.token_display(t) for t in a.history.tokens[ld.cols[0]:]]
        self.diff_lens.show_heat(ld, self.tr("logit lens: p_B − p_A of A's top token"),
                                 [self.tr("embed")] + [str(L) for L in range(len(ld.rows) - 1)], cols)
        toks = [tok.token_display(t) for t in a.history.tokens]
        self.diff_att.show_heat(ad, self.tr("attention {layer}.{head}: B − A (±{lim:.2f})").format(
            layer=sel.layer, head=sel.head, lim=ad.hi), toks, toks)
        self.diff_note.setText(self.tr("Yellow: B larger; dark blue: A larger; the middle of the scale: equal. The head is the one selected in "
                                       "A's attention view; the lens compares A's top token at every depth."))

    def run(self) -> None:
        """Run B's prompt (B's interventions, e.g. a patch, are cleared: they belong to the old text)."""
        self.state.set_interventions((), SessionId.B)
        self.state.run_prompt(self.prompt.text(), SessionId.B)
