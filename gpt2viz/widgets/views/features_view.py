"""Features: the sparse-autoencoder features active at the selected position and block, and a feature's page
(its dashboard, "test your own text", steering and ablation)."""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpt2viz.app.jobs import Job
from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.features import FeaturePage, FeaturesSummary, feature_page, features_summary
from gpt2viz.widgets.views.common import LazyView, layer_box, note, sync_layer_box, themed_plot

HIGHLIGHT = (255, 140, 0)  # token background, its alpha the activation's share of the feature's maximum


def highlighted(pieces, top: float, center: int | None = None) -> str:
    """HTML of tokens with a background as strong as each one's activation (share of ``top``); the chosen token
    underlined; hovering a token shows its activation."""
    out = []
    top = top if top > 0 else 1.0
    for i, (text, a) in enumerate(pieces):
        alpha = int(min(1.0, max(0.0, a / top)) * 200)
        style = f"background-color: rgba({HIGHLIGHT[0]},{HIGHLIGHT[1]},{HIGHLIGHT[2]},{alpha});"
        if i == center:
            style += " text-decoration: underline; font-weight: bold;"
        out.append(f'<span style="{style}" title="{a:.3f}">{html.escape(text)}</span>')
    return "".join(out)


class FeaturePageWidget(QWidget):
    """One feature's dashboard with its controls; shows nothing until a feature is chosen."""

    def __init__(self, state: AppState, session: SessionId, parent=None):
        super().__init__(parent)
        self.state, self.name = state, session
        self.page: FeaturePage | None = None
        self.layer: int | None = None
        self.feature: int | None = None
        self.kind = "sae"  # or "transcoder": a feature of the block's MLP transcoder (the circuit graph's nodes)
        self.title = note()
        self.stats = note()
        self.hist = themed_plot(self)
        self.hist.setFixedHeight(120)
        self.bars = pg.BarGraphItem(x=[], height=[], width=1.0, brush=(230, 140, 20))
        self.hist.addItem(self.bars)
        self.contexts = QTextBrowser()
        self.contexts.setOpenLinks(False)
        self.contexts.setMinimumHeight(220)
        self.logits = note()
        self.neighbours = note()
        self.neighbours.setTextFormat(Qt.RichText)
        self.neighbours.linkActivated.connect(lambda href: self.show_feature(self.layer, int(href)))
        self.scale = QDoubleSpinBox()
        self.scale.setRange(-200.0, 200.0)
        self.scale.setDecimals(1)
        self.scale.setValue(8.0)
        self.steer = QPushButton()
        self.steer.clicked.connect(self._steer)
        self.ablate_here = QPushButton()
        self.ablate_here.clicked.connect(lambda: self._ablate(here=True))
        self.ablate_all = QPushButton()
        self.ablate_all.clicked.connect(lambda: self._ablate(here=False))
        self.text = QLineEdit()
        self.text.returnPressed.connect(self._read_text)
        self.read = QPushButton()
        self.read.clicked.connect(self._read_text)
        self.text_result = QLabel()
        self.text_result.setWordWrap(True)
        self.text_result.setTextFormat(Qt.RichText)
        self.steer_note = note()

        act = QHBoxLayout()
        self.scale_label = QLabel()
        for w in (self.scale_label, self.scale, self.steer):
            act.addWidget(w)
        act.addStretch(1)
        ablate = QHBoxLayout()
        for w in (self.ablate_here, self.ablate_all):
            ablate.addWidget(w)
        ablate.addStretch(1)
        test = QHBoxLayout()
        test.addWidget(self.text, 1)
        test.addWidget(self.read)
        lay = QVBoxLayout(self)
        self.h_contexts, self.h_logits, self.h_neighbours, self.h_test, self.h_steer = (note() for _ in range(5))
        for w in (self.title, self.stats, self.hist, self.h_contexts, self.contexts, self.h_logits, self.logits,
                  self.h_neighbours, self.neighbours, self.h_steer, self.steer_note):
            lay.addWidget(w)
        lay.addLayout(act)
        lay.addLayout(ablate)
        lay.addWidget(self.h_test)
        lay.addLayout(test)
        lay.addWidget(self.text_result)
        lay.addStretch(1)
        state.sigJobDone.connect(self._on_job)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Fixed texts in the current language."""
        self.h_contexts.setText("<b>" + self.tr("Where it fires most (text gpt2viz ships)") + "</b>")
        self.h_logits.setText("<b>" + self.tr("What it writes: its direction read by the unembedding") + "</b>")
        self.h_neighbours.setText("<b>" + self.tr("Nearest features (decoder cosine)") + "</b>")
        self.h_steer.setText("<b>" + self.tr("Change it inside the model") + "</b>")
        self.steer_note.setText(self.tr(
            "Steer adds scale × its direction to this block's input at every position, tokens generated next "
            "included; ablate sets its activation to 0. Each becomes a chip above the chart; the chart's ghost bars "
            "show the run without it."))
        self.h_test.setText("<b>" + self.tr("Test your own text") + "</b>")
        self.scale_label.setText(self.tr("scale"))
        self.steer.setText(self.tr("Steer"))
        self.ablate_here.setText(self.tr("Ablate at this position"))
        self.ablate_all.setText(self.tr("Ablate everywhere"))
        self.text.setPlaceholderText(self.tr("a sentence to read this feature on"))
        self.read.setText(self.tr("Read"))
        self.hist.setLabel("bottom", self.tr("activation"))
        self.hist.setLabel("left", self.tr("count"))

    def show_feature(self, layer: int | None, feature: int | None, kind: str = "sae") -> None:
        """Show ``feature`` of block ``layer``'s SAE (``kind`` "sae") or MLP transcoder ("transcoder"); None:
        nothing."""
        if (layer, feature, kind) != (self.layer, self.feature, self.kind):
            self.text_result.clear()
        self.layer, self.feature, self.kind = layer, feature, kind
        self.refresh()

    def refresh(self) -> None:
        """Redraw from the feature's dashboard and the session's current run."""
        s = self.state.session(self.name)
        self.page = p = None if self.feature is None else feature_page(s, self.layer, self.feature, kind=self.kind)
        for w in (self.read, self.text):
            w.setEnabled(p is not None)
        for w in (self.steer, self.ablate_here, self.ablate_all, self.scale):  # SAE features steer the block input
            w.setEnabled(p is not None and p.kind == "sae")
        if p is None:
            self.title.setText(self.tr("Click a feature to open its page.") if self.feature is None else
                               self.tr("Feature {f} of block {L} has no dashboard: build them with gpt2viz "
                                       "sae-dashboards.").format(f=self.feature, L=self.layer))
            for w in (self.stats, self.logits, self.neighbours):
                w.clear()
            self.contexts.clear()
            self.bars.setOpts(x=[], height=[])
            return
        head = (self.tr("Block {L} · feature {f}") if p.kind == "sae" else
                self.tr("Block {L} · MLP transcoder feature {f}")).format(L=p.layer, f=p.feature)
        self.title.setText("<b>" + head + "</b>  " +
                           html.escape(p.label or self.tr("(never fired on the text)")))
        here = "" if p.here is None else self.tr("; here {value:.2f}").format(value=p.here)
        self.stats.setText(self.tr("Fires on {density:.2%} of the {n:,} tokens of {corpus}; strongest {top:.2f}{here}. "
                                   "Histogram: its non-zero activations.").format(
            density=p.density, n=p.corpus_tokens, corpus=p.corpus, top=p.max_activation, here=here))
        width = p.max_activation / max(1, len(p.histogram))
        self.bars.setOpts(x=(np.arange(len(p.histogram)) + 0.5) * width, height=list(p.histogram), width=width * 0.9)
        rows = []
        band = -1
        for c in p.contexts:
            if c.band != band:
                band = c.band
                head = self.tr("Top activations") if band == 0 else self.tr(
                    "Activations between {lo:.0%} and {hi:.0%} of the strongest").format(
                    lo=p.bands[band - 1][0], hi=p.bands[band - 1][1])
                rows.append(f"<p style='margin:6px 0 2px 0'><i>{html.escape(head)}</i></p>")
            rows.append("<div style='margin:1px 0'>" + highlighted(c.pieces, p.max_activation, c.center) +
                        f" <span style='color:gray'>({c.pieces[c.center][1]:.2f})</span></div>")
        self.contexts.setHtml("".join(rows))
        fmt = ", ".join
        self.logits.setText(self.tr("promotes {up}<br>suppresses {down}").format(
            up=html.escape(fmt(f"{t} ({v:+.2f})" for t, v in p.promotes)),
            down=html.escape(fmt(f"{t} ({v:+.2f})" for t, v in p.suppresses))))
        self.neighbours.setText("<br>".join(
            f'<a href="{n}">{n}</a> ({c:.2f}) {html.escape(label)}' for n, c, label in p.neighbours))

    def _steer(self) -> None:
        if self.page is not None:
            self.state.steer_feature(self.page.layer, self.page.feature, float(self.scale.value()))

    def _ablate(self, here: bool) -> None:
        if self.page is None:
            return
        positions = None
        if here:
            s = self.state.session(self.name)
            if s.history is None:
                return
            positions = (s.selection.position_in(len(s.history.tokens)),)
        self.state.clamp_feature(self.page.layer, self.page.feature, 0.0, positions)

    def _read_text(self) -> None:
        if self.page is not None and self.text.text().strip():
            self.text_result.setText(self.tr("reading…"))
            self.state.read_feature_on_text(self.page.layer, self.page.feature, self.text.text(), self.page.kind)

    def _on_job(self, job, result) -> None:
        if job != Job.FEATURE_TEXT or result is None or self.page is None:
            return
        if (result.layer, result.feature, result.kind) != (self.page.layer, self.page.feature, self.page.kind):
            return
        top = max([self.page.max_activation] + [a for _, a in result.pieces])
        strongest = max(result.pieces, key=lambda p: p[1])
        self.text_result.setText(highlighted(result.pieces, top) + "<br>" + html.escape(self.tr(
            "strongest: {token} ({value:.2f})").format(token=strongest[0], value=strongest[1])))


class FeaturesView(LazyView):
    """The SAE features at the selected position and block, ranked, with the reconstruction error; a feature's
    page beside them."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.layer = layer_box(state, session)
        self.caption = note()
        self.table = QTableWidget(0, 4)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setWordWrap(False)
        for c, w in enumerate((64, 76, 72)):
            self.table.setColumnWidth(c, w)
        self.table.cellClicked.connect(self._on_cell)
        self.page = FeaturePageWidget(state, session)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)  # the page wraps to the width it is given
        scroll.setWidget(self.page)
        top = QHBoxLayout()
        top.addWidget(self.layer)
        top.addWidget(self.caption, 1)
        split = QSplitter()
        split.addWidget(self.table)
        split.addWidget(scroll)
        split.setSizes([520, 600])
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(split, 1)
        self.summary: FeaturesSummary | None = None
        for sig in (state.sigHistory, state.sigSelection, state.sigModel):
            self.watch(sig)
        self.watch(state.sigModel, lambda: self.page.show_feature(None, None))
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Table headers in the current language."""
        self.table.setHorizontalHeaderLabels([self.tr("feature"), self.tr("activation"), self.tr("fires on"),
                                              self.tr("label: fires on → writes")])
        self.page.retranslate()

    def refresh(self) -> None:
        """Redraw the active features from the session's current run."""
        s = self.session
        self.summary = sm = features_summary(s)
        if sm is None:
            self.caption.setText(self.tr("Run a prompt to see the features active at each block."))
            self.table.setRowCount(0)
            self.page.refresh()
            return
        sync_layer_box(self.layer, s.n_layer, sm.layer)
        tok = s.model.tokenizer
        if sm.missing:
            self.caption.setText(self.tr("This model has no sparse autoencoder for block {L}'s input, so there are "
                                         "no features to show: train one with gpt2viz train-sae --hook "
                                         "blocks.{L}.hook_resid_pre and put it in the model folder's saes/.").format(
                L=sm.layer))
            self.table.setRowCount(0)
            self.page.refresh()
            return
        self.caption.setText(self.tr(
            "Block {L}'s input at position {pos} {token}, read by a {arch} sparse autoencoder of {n:,} features: "
            "{l0} active. They rebuild the vector up to an error of {err:.1%} of its length (what the features "
            "leave out). Click a feature for its page.").format(
            L=sm.layer, pos=sm.position, token=tok.token_display(sm.token), arch=sm.architecture, n=sm.d_sae,
            l0=sm.l0, err=sm.relative_error))
        self.table.setRowCount(len(sm.rows))
        for r, row in enumerate(sm.rows):
            density = "" if row.density is None else f"{row.density:.2%}"
            for c, v in enumerate((str(row.feature), f"{row.activation:.2f}", density, row.label)):
                item = self.table.item(r, c)
                if item is None:
                    self.table.setItem(r, c, QTableWidgetItem(v))
                else:
                    item.setText(v)
        if self.page.layer is not None and self.page.layer != sm.layer:
            self.page.show_feature(None, None)  # the page belonged to another block's SAE
        else:
            self.page.refresh()

    def _on_cell(self, row: int, _col: int) -> None:
        if self.summary is not None and 0 <= row < len(self.summary.rows):
            self.open_feature(self.summary.layer, self.summary.rows[row].feature)

    def open_feature(self, layer: int, feature: int, kind: str = "sae") -> None:
        """Open ``feature`` of block ``layer``'s SAE (or MLP transcoder, ``kind``) on the page (the block becomes
        the selected one)."""
        if self.summary is None or self.summary.layer != layer:
            self.state.select_block(layer, session=self.name)
        self.page.show_feature(layer, feature, kind)
