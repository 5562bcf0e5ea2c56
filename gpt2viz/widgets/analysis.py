"""Activation patching (A clean, B corrupted), the causal trace (ROME) and the circuit graph as views: heatmaps computed
on the worker with a progress bar and Cancel, hover for the numbers, click a patching cell to open
that patched run (in session B, beside A)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.compare import HeatmapSummary, align_tokens
from gpt2viz.widgets.graph_panel import GraphPanel
from gpt2viz.widgets.job_panel import JobPanel, target_id
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.views.common import HoverImage, set_ticks, set_title, themed_plot, to_rgba

SITES = ("resid_pre", "attn_out", "mlp_out", "head")


class Heatmap(QWidget):
    """One heatmap with token / layer tick labels, a hover read-out callback and click signal."""

    sigClicked = Signal(int, int)
    sigHover = Signal(int, int)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = themed_plot(self)
        self.plot.invertY(True)
        self.plot.setMouseEnabled(False, False)
        self.plot.hideButtons()
        self.img = HoverImage()
        self.plot.addItem(self.img)
        self.img.sigClicked.connect(self.sigClicked)
        self.img.sigHover.connect(self.sigHover)
        # the colour scale beside the map (the image is coloured here; the bar only shows the mapping)
        self.bar = pg.ColorBarItem(values=(0, 1), colorMap=pg.colormap.get("viridis"), interactive=False, width=12)
        self.plot.getPlotItem().layout.addItem(self.bar, 2, 5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.plot)
        self.heat: HeatmapSummary | None = None

    def show_heat(self, heat: HeatmapSummary, title: str, row_labels, col_labels) -> None:
        self.heat = heat
        self.img.set_rgba(to_rgba(heat.values, heat.lo, heat.hi))
        self.bar.setLevels((heat.lo, heat.hi))
        r, c = heat.values.shape
        self.img.setRect(-0.5, -0.5, c, r)
        set_ticks(self.plot.getAxis("left"), [list(enumerate(row_labels))])
        set_ticks(self.plot.getAxis("bottom"), [list(enumerate(col_labels))])
        self.plot.setXRange(-0.5, c - 0.5, padding=0)
        self.plot.setYRange(-0.5, r - 0.5, padding=0)
        set_title(self.plot, title, size="9pt")


class PatchingPanel(JobPanel):
    """Layers x positions (or heads) of the normalised patching effect for a site."""

    channel = "patching"
    sigOpenPatched = Signal()  # a cell was clicked: its patched run is now session B's

    def __init__(self, state: AppState, parent=None):
        super().__init__(state, parent)
        self.site = QComboBox()
        self.site.addItems(SITES)
        self.target = QLineEdit()
        self.target.setMaximumWidth(140)
        self.site_lbl, self.target_lbl = QLabel(), QLabel()
        top = QHBoxLayout()
        for w in (self.site_lbl, self.site, self.target_lbl, self.target, self.run_btn, self.cancel_btn, self.progress):
            top.addWidget(w)
        top.addStretch(1)
        self.heatmap = Heatmap()
        self.heatmap.sigHover.connect(self._hover)
        self.heatmap.sigClicked.connect(self.open_cell)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.message)
        lay.addWidget(self.heatmap, 1)
        lay.addWidget(self.readout)
        self.retranslate()

    def retranslate(self) -> None:
        self.site_lbl.setText(self.tr("Site"))
        self.target_lbl.setText(self.tr("Target"))
        self.target.setPlaceholderText(self.tr("A's top token"))
        self.run_btn.setText(self.tr("Patch every cell"))
        self.cancel_btn.setText(self.tr("Cancel"))
        self.readout.setText(self.tr("hover a cell for its numbers; click it to open that patched run beside A"))
        if self.summary is not None:
            self.draw()
        else:
            self.message.setText(self.tr("Activation patching: A is the clean prompt, B the corrupted one (open B "
                                         "with Compare). Each cell copies one state of A's run into B's run and "
                                         "measures how much of A's answer comes back: (p − p_B) / (p_A − p_B)."))

    def check(self) -> str | None:
        """Why patching cannot run now (None: it can)."""
        st = self.state
        b = st.sessions.get(SessionId.B)
        if st.history is None:
            return self.tr("Run prompt A first.")
        if b is None or b.history is None:
            return self.tr("Open a second prompt B (Compare) to patch A's states into it.")
        al = align_tokens(st.prompt_ids(SessionId.A), st.prompt_ids(SessionId.B))
        if not al.equal_length:
            tok = self.tok()
            show = lambda ids: " | ".join(tok.token_display(t) for t in ids)
            return self.tr("Patching needs prompts of the same number of tokens: A has {na}, B has {nb}.\n"
                           "A: {ta}\nB: {tb}").format(na=len(st.prompt_ids(SessionId.A)), nb=len(st.prompt_ids(SessionId.B)),
                                                      ta=show(st.prompt_ids(SessionId.A)), tb=show(st.prompt_ids(SessionId.B)))
        return None

    def run(self) -> None:
        why = self.check()
        if why:
            self.message.setText(why)
            return
        target = target_id(self.tok(), self.target.text())
        if self.state.run_patching(self.site.currentText(), target):
            self.started()
            self.message.setText(self.tr("Patching {site} of every layer and position…").format(
                site=self.site.currentText()))

    def draw(self) -> None:
        sm = self.summary
        if sm is None:
            return
        tok = self.tok()
        if sm.heat.col_kind == "position":
            cols = [tok.token_display(a) if a == b else f"{tok.token_display(a)}/{tok.token_display(b)}"
                    for a, b in zip(sm.clean_ids, sm.corrupt_ids)]
        else:
            cols = list(sm.heat.cols)
        rows = [self.tr("L{layer}").format(layer=L) for L in sm.heat.rows]
        self.heatmap.show_heat(sm.heat, self.tr("{site}: normalised effect on p({target}) (scale {lo:.2f} … {hi:.2f})")
                               .format(site=sm.site, target=tok.token_display(sm.target), lo=sm.heat.lo,
                                       hi=sm.heat.hi), rows, cols)
        L, c, eff, p = sm.best
        self.message.setText(self.tr(
            "p({target}): A (clean) {pa:.4f}, B (corrupted) {pb:.4f}. Best cell: layer {layer}, {kind} {col}: "
            "effect {effect:.3f}, p = {p:.4f}. {calls} graph calls, {ms:.0f} ms.").format(
            target=tok.token_display(sm.target), pa=sm.clean_prob, pb=sm.corrupt_prob, layer=L,
            kind=self.tr("position") if sm.heat.col_kind == "position" else self.tr("head"), col=cols[c], effect=eff,
            p=p, calls=sm.calls, ms=sm.ms))

    def _hover(self, r: int, c: int) -> None:
        sm = self.summary
        if sm is None:
            return
        self.readout.setText(self.tr("layer {layer}, {kind} {col}: effect {effect:.4f}, p({target}) = {p:.4f}").format(
            layer=r, kind=self.tr("position") if sm.heat.col_kind == "position" else self.tr("head"), col=c,
            effect=sm.heat.values[r, c], target=self.tok().token_display(sm.target), p=sm.prob[r, c]))

    def open_cell(self, r: int, c: int) -> None:
        """Put the patched run of cell (layer ``r``, column ``c``) in session B: B's prompt with A's state copied in."""
        from gpt2viz.core.interventions import Patch

        sm, st = self.summary, self.state
        a = st.session(SessionId.A)
        if sm is None or a.history is None or SessionId.B not in st.sessions:
            return
        if not st.patching_is_current(sm):
            self.message.setText(self.tr("This table was made for earlier prompts: run it again to open its cells."))
            return
        if sm.heat.col_kind == "position":
            src = a.history.hook_at((sm.site, r), c)
            ivs = (Patch(sm.site, r, c, src),)
        else:
            ivs = tuple(Patch("head", r, p, a.history.hook_at(("z", r), p)[c], head=c)
                        for p in range(len(sm.clean_ids)))
        st.set_interventions(ivs, SessionId.B)
        self.sigOpenPatched.emit()


class CausalPanel(JobPanel):
    """Three heatmaps (hidden state, MLP, attention) of p(target) with one state restored, as in ROME."""

    channel = "causal"

    def __init__(self, state: AppState, parent=None):
        super().__init__(state, parent)
        self.subject = QLineEdit()
        self.subject.setMaximumWidth(160)
        self.target = QLineEdit()
        self.target.setMaximumWidth(120)
        self.noise = QDoubleSpinBox()
        self.noise.setRange(0.0, 20.0)
        self.noise.setSingleStep(0.5)
        self.noise.setValue(3.0)
        self.samples = QSpinBox()
        self.samples.setRange(1, 100)
        self.samples.setValue(10)
        self.window = QSpinBox()
        self.window.setRange(1, 48)
        self.window.setValue(1)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.export_btn = QPushButton()
        self.export_btn.setEnabled(False)
        self.labels = [QLabel() for _ in range(6)]
        top = QHBoxLayout()
        for lbl, w in zip(self.labels, (self.subject, self.target, self.noise, self.samples, self.window, self.seed)):
            top.addWidget(lbl)
            top.addWidget(w)
        top.addStretch(1)
        row2 = QHBoxLayout()
        for w in (self.run_btn, self.cancel_btn, self.progress, self.export_btn):
            row2.addWidget(w)
        row2.addStretch(1)
        self.maps = {k: Heatmap() for k in ("hidden", "mlp", "attn")}
        maps = QHBoxLayout()
        for k, m in self.maps.items():
            m.sigHover.connect(lambda r, c, kind=k: self._hover(kind, r, c))
            maps.addWidget(m)
        # the same trace without A's interventions (after an edit: the model before it), under the maps it
        # compares with, on the same colour scale; shown only when the trace ran under interventions
        self.before_maps = {k: Heatmap() for k in ("hidden", "mlp", "attn")}
        self.before_row = QWidget()
        before = QHBoxLayout(self.before_row)
        before.setContentsMargins(0, 0, 0, 0)
        for k, m in self.before_maps.items():
            m.sigHover.connect(lambda r, c, kind=k: self._hover(kind, r, c, before=True))
            before.addWidget(m)
        self.after_label, self.before_label = QLabel(), QLabel()  # which row is which, when there are two
        for lbl in (self.after_label, self.before_label):
            f = lbl.font()
            f.setBold(True)
            lbl.setFont(f)
            lbl.setVisible(False)
        self.before_row.setVisible(False)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addLayout(row2)
        lay.addWidget(self.message)
        lay.addWidget(self.after_label)
        lay.addLayout(maps, 1)
        lay.addWidget(self.before_label)
        lay.addWidget(self.before_row, 1)
        lay.addWidget(self.readout)
        state.sigSelection.connect(lambda name: name == SessionId.A and self._show_subject())
        state.sigHistory.connect(lambda name: name == SessionId.A and self._show_subject())
        self.retranslate()
        self._show_subject()  # built after tokens were Shift+clicked: show them at once

    def retranslate(self) -> None:
        for lbl, text in zip(self.labels, (self.tr("Subject"), self.tr("Target"), self.tr("Noise ×σ"),
                                           self.tr("Samples"), self.tr("Window"), self.tr("Seed"))):
            lbl.setText(text)
        self.subject.setPlaceholderText(self.tr("Shift+click tokens, or type"))
        self.target.setPlaceholderText(self.tr("A's top token"))
        self.run_btn.setText(self.tr("Trace"))
        self.cancel_btn.setText(self.tr("Cancel"))
        self.export_btn.setText(self.tr("Export…"))
        self.readout.setText(self.tr("hover a cell for its numbers"))
        if self.summary is not None:
            self.draw()
        else:
            self.message.setText(self.tr(
                "Causal trace (ROME): the subject's embeddings get Gaussian noise (noise × the embedding's standard "
                "deviation, averaged over the samples); then one state of the clean run is restored at a time. "
                "Bright cells are where restoring brings the answer back."))

    def _show_subject(self) -> None:
        st = self.state
        s = st.session(SessionId.A)
        if s.subject and s.history is not None:
            tok = self.tok()
            self.subject.setText("".join(tok.token_text(int(s.history.tokens[p])) for p in s.subject
                                         if p < len(s.history.tokens)))

    def subject_positions(self) -> tuple[int, ...] | None:
        """The subject: the tokens Shift+clicked in the strip, else the typed text, else the default guess."""
        from gpt2viz.core.analysis.causal_trace import default_subject, find_subject
        from gpt2viz.core.interventions import InterventionError

        st = self.state
        ids = st.prompt_ids(SessionId.A)
        s = st.session(SessionId.A)
        if s.subject and all(p < len(ids) for p in s.subject):
            return s.subject
        text = self.subject.text()
        if text.strip():
            try:
                return find_subject(self.tok(), ids, text)
            except InterventionError as e:
                self.message.setText(str(e))
                return None
        return default_subject(self.tok(), ids)

    def run(self) -> None:
        if self.state.history is None:
            self.message.setText(self.tr("Run prompt A first."))
            return
        subject = self.subject_positions()
        if subject is None:
            return
        target = target_id(self.tok(), self.target.text())
        if self.state.run_causal_trace(subject, target, self.noise.value(), self.samples.value(), self.window.value(),
                                       self.seed.value()):
            self.started()
            tok = self.tok()
            ids = self.state.prompt_ids(SessionId.A)
            self.message.setText(self.tr("Tracing with {subject} corrupted…").format(
                subject="".join(tok.token_text(ids[p]) for p in subject)))

    def draw(self) -> None:
        sm = self.summary
        if sm is None:
            return
        self.export_btn.setEnabled(True)
        tok = self.tok()
        rows = [("* " if i in sm.subject else "") + tok.token_display(t) for i, t in enumerate(sm.ids)]
        names = {"hidden": self.tr("hidden state (block input)"), "mlp": self.tr("MLP output"),
                 "attn": self.tr("attention output")}
        under = ", ".join(sm.interventions)
        for heat in sm.heats:
            self.maps[heat.title].show_heat(heat, self.tr("{kind}: p({target}) {lo:.3f} … {hi:.3f}").format(
                kind=names[heat.title], target=tok.token_display(sm.target), lo=heat.lo, hi=heat.hi),
                rows, [str(c) for c in heat.cols])
        two = sm.before is not None
        for w in (self.before_row, self.after_label, self.before_label):
            w.setVisible(two)
        if two:
            self.after_label.setText(self.tr("With A's interventions in force: {interventions}").format(
                interventions=under))
            self.before_label.setText(self.tr("Before them (the model as shipped), on the same colour scale"))
            for heat in sm.before.heats:
                self.before_maps[heat.title].show_heat(heat, self.tr("{kind}: p({target})").format(
                    kind=names[heat.title], target=tok.token_display(sm.target)), rows, [str(c) for c in heat.cols])
        best = "; ".join(self.tr("{kind}: layer {layer}, {token} → {p:.3f}").format(
            kind=names[k], layer=L, token=tok.token_display(sm.ids[p]), p=v) for k, (L, p, v) in sm.best.items())
        text = self.tr(
            "p({target}): clean {clean:.4f}, corrupted {corrupt:.4f} (noise {noise:g}σ, {samples} samples, window "
            "{window}, {ms:.0f} ms). Best restores: {best}.").format(
            target=tok.token_display(sm.target), clean=sm.clean_prob, corrupt=sm.corrupt_prob, noise=sm.noise,
            samples=sm.samples, window=sm.window, ms=sm.ms, best=best)
        if sm.before is not None:
            b = sm.before
            text = self.tr("Traced with A's interventions in force ({interventions}); the lower row is the same trace "
                           "without them. p({target}) clean: {clean:.4f} with, {clean0:.4f} before; corrupted: "
                           "{corrupt:.4f} with, {corrupt0:.4f} before.").format(
                interventions=under, target=tok.token_display(sm.target), clean=sm.clean_prob, clean0=b.clean_prob,
                corrupt=sm.corrupt_prob, corrupt0=b.corrupt_prob) + "\n" + text
        self.message.setText(text)

    def _hover(self, kind: str, r: int, c: int, before: bool = False) -> None:
        sm = self.summary
        if sm is None:
            return
        shown = sm.before if before and sm.before is not None else sm
        heat = next(h for h in shown.heats if h.title == kind)
        tok = self.tok()
        text = self.tr("{kind}: restoring layer {layer} at {token} (position {pos}): p({target}) = "
                       "{p:.4f} (clean {clean:.4f}, corrupted {corrupt:.4f})").format(
            kind=kind, layer=c, token=tok.token_display(sm.ids[r]), pos=r, target=tok.token_display(sm.target),
            p=heat.values[r, c], clean=shown.clean_prob, corrupt=shown.corrupt_prob)
        if sm.before is not None:
            other = (sm if before else sm.before).heats
            p_other = next(h for h in other if h.title == kind).values[r, c]
            text += " " + (self.tr("(with the interventions: {p:.4f})") if before else
                           self.tr("(before: {p:.4f})")).format(p=p_other)
        self.readout.setText(text)


class AnalysisTabs(Retranslating, QTabWidget):
    """Patching, causal trace and the circuit graph, in a dock of the main window."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.patching = PatchingPanel(state)
        self.causal = CausalPanel(state)
        self.graph = GraphPanel(state)
        self.addTab(self.patching, "")
        self.addTab(self.causal, "")
        self.addTab(self.graph, "")
        self.retranslate()

    def retranslate(self) -> None:
        self.setTabText(0, self.tr("Activation patching"))
        self.setTabText(1, self.tr("Causal trace"))
        self.setTabText(2, self.tr("Circuit graph"))
