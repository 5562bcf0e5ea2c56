"""The main window: prompt, token strip, pipeline, stage detail, next-token chart, step controls.

The Export menu's flows live in widgets/export_actions.py, Get GPT-2 in widgets/get_gpt2.py, and opening
the window from the command line in gpt2viz/launch.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QProcess, Qt, QTimer
from PySide6.QtGui import QAction, QActionGroup, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from gpt2viz.app import i18n
from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.model_folder.locations import find_models, user_models_dir
from gpt2viz.widgets.controls import StepControls
from gpt2viz.widgets.detail_tabs import DetailTabs
from gpt2viz.widgets.export_actions import ExportActions
from gpt2viz.widgets.fonts import has_cjk_font
from gpt2viz.widgets.interventions import InterventionChips, ablation_actions
from gpt2viz.widgets.journey import JourneyPanel
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.pipeline import PipelineView
from gpt2viz.widgets.prob_chart import ProbabilityChart
from gpt2viz.widgets.snapshot import view_title
from gpt2viz.widgets.token_strip import TokenStrip
from gpt2viz.widgets.views.common import LayoutFence, SteadyLabel, plots

if TYPE_CHECKING:
    from gpt2viz.widgets.compare import CompareDock

DEFAULT_PROMPT = "The capital of France is"
LAYOUT_PASSES = 8  # see MainWindow.event
# The window says "running…" only for work that lasts longer than this. A step answers in ~4-60 ms: saying
# it changed the Run button's and the status line's widths (two relayouts of the window, painted while the
# model ran on the shared cores, and once more when it answered) for text that was gone before it was read.
BUSY_SHOWN_AFTER_MS = 150


def _lay_out_pending() -> None:
    """Handle the posted layout requests, level by level up to the window (see MainWindow.event)."""
    for _ in range(LAYOUT_PASSES):
        QCoreApplication.sendPostedEvents(None, QEvent.LayoutRequest)


class MainWindow(Retranslating, QMainWindow):
    """Everything a person sees; owns no model, only the AppState."""

    def __init__(self, state: AppState):
        super().__init__()
        self.state = state
        self.model_box = QComboBox()
        self.model_box.setMinimumWidth(220)
        self.model_box.activated.connect(self._on_model_picked)
        self.prompt = QLineEdit(state.settings.text("prompt/last", DEFAULT_PROMPT))
        self.prompt.returnPressed.connect(self.run_prompt)
        self.run_btn = QPushButton()
        self.run_btn.setDefault(True)
        self.run_btn.clicked.connect(self.run_prompt)
        top = QHBoxLayout()
        self.model_lbl, self.prompt_lbl = QLabel(), QLabel()
        top.addWidget(self.model_lbl)
        top.addWidget(self.model_box)
        top.addSpacing(10)
        top.addWidget(self.prompt_lbl)
        top.addWidget(self.prompt, 1)
        top.addWidget(self.run_btn)

        self.tokens = TokenStrip(state)
        self.chips = InterventionChips(state)
        self.pipeline = PipelineView(state)
        self.detail = DetailTabs(state)
        self.chart = ProbabilityChart(state)
        self.controls = StepControls(state)
        self.splitter = QSplitter(Qt.Horizontal)
        self.splitter.addWidget(self.detail)
        self.splitter.addWidget(self.chart)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        central = QWidget()
        lay = QVBoxLayout(central)
        lay.addLayout(top)
        self.tokens_caption, self.pipeline_caption = _caption(), _caption()
        lay.addWidget(self.tokens_caption)
        lay.addWidget(self.tokens)
        lay.addWidget(self.chips)
        lay.addWidget(self.pipeline_caption)
        lay.addWidget(self.pipeline)
        lay.addWidget(self.splitter, 1)
        lay.addWidget(self.controls)
        self.setCentralWidget(central)
        self.status = SteadyLabel()  # its numbers change at every step: the status bar is not laid out again
        self.statusBar().addPermanentWidget(LayoutFence(self.status))
        # A long prompt is read in chunks on the worker thread: how far it got (Reset or a new prompt cancels)
        self.prefill_bar = QProgressBar()
        self.prefill_bar.setMaximumWidth(260)
        self.prefill_bar.hide()
        self.statusBar().addPermanentWidget(self.prefill_bar)
        self.journey = JourneyPanel(state)
        self.journey.sigOpenView.connect(self.show_view)
        self.journey.sigEditFact.connect(lambda *fact: self.open_edit_fact().prefill(*fact))
        self.journey.sigBuildGraph.connect(self.build_graph)
        self.journey_dock = QDockWidget(self)
        self.journey_dock.setObjectName("journey")
        self.journey_dock.setWidget(self.journey)
        self.journey_dock.setMinimumWidth(340)
        self.addDockWidget(Qt.RightDockWidgetArea, self.journey_dock)
        self.journey_dock.hide()
        self._analysis = None  # the patching / causal-trace views, built when first opened (a faster start)
        self._edit_dialog = None  # the Edit-a-fact dialog, built when first opened
        self.analysis_dock = QDockWidget(self)
        self.analysis_dock.setObjectName("analysis")
        self.addDockWidget(Qt.BottomDockWidgetArea, self.analysis_dock)
        self.analysis_dock.hide()
        self.compare: CompareDock | None = None
        self.compare_dock = QDockWidget(self)
        self.compare_dock.setObjectName("compare")
        self.addDockWidget(Qt.BottomDockWidgetArea, self.compare_dock)
        self.tabifyDockWidget(self.analysis_dock, self.compare_dock)  # full width each, a tab apart
        self.compare_dock.hide()
        self.exports = ExportActions(self)  # the Export menu's flows
        self._build_menu()
        self._bind_keys()
        self._context_menus()
        self._export: QProcess | None = None
        self.closing = False

        state.sigModel.connect(lambda name: name == SessionId.A and self._on_model())
        state.sigHistory.connect(lambda name: name == SessionId.A and self._update_status())
        state.sigHistory.connect(lambda name: name == SessionId.A and self._after_history())
        self._busy_shown = False  # whether the window says "running…" (see BUSY_SHOWN_AFTER_MS)
        self._busy_timer = QTimer(self, singleShot=True, interval=BUSY_SHOWN_AFTER_MS)
        self._busy_timer.timeout.connect(lambda: self.state.busy and self._show_busy(True))
        state.sigBusy.connect(self._on_busy)
        state.sigSending.connect(self.paint_pending)
        state.sigProgress.connect(lambda name, done, total: name == SessionId.A and self._on_progress(done, total))
        state.sigError.connect(self.show_error)
        self._fill_models()
        self._restore()
        self.retranslate()
        self._cjk_warned = False
        self.check_fonts()
        # A newcomer's first keystrokes go into the prompt (the model box would take them as a model choice).
        self.prompt.setFocus()
        self._focus_step_after_run = False
        problem = state.settings.problem()  # a damaged or unwritable settings file: said once, the app goes on
        if problem:
            self.show_error(problem)

    def retranslate(self) -> None:
        """Every text the window owns, in the current language (child widgets retranslate themselves)."""
        self.setWindowTitle(self.tr("gpt2viz — the life of a token in GPT-2"))
        self.prompt.setPlaceholderText(self.tr("Type a prompt, then Run (Ctrl+Enter)"))
        self.model_lbl.setText(self.tr("Model"))
        self.prompt_lbl.setText(self.tr("Prompt"))
        self.tokens_caption.setText(self.tr("Tokens — click one to follow that position; generated tokens are green"))
        self.pipeline_caption.setText(self.tr("Pipeline — the path the selected token travels; click a stage"))
        self.run_btn.setText(self.tr("Running…") if self._busy_shown else self.tr("Run"))
        m = self.menus
        m["model"].setTitle(self.tr("&Model"))
        m["export"].setTitle(self.tr("&Export"))
        m["language"].setTitle(self.tr("&Language"))
        m["journey"].setTitle(self.tr("&Journey"))
        m["analysis"].setTitle(self.tr("&Analysis"))
        self.analysis_dock.setWindowTitle(self.tr("Patching, causal trace and circuit graph"))
        self.compare_dock.setWindowTitle(self.tr("Compare A and B"))
        a = self.actions_by_name
        a["compare"].setText(self.tr("&Compare with a second prompt (B)"))
        a["patching"].setText(self.tr("Activation &patching (A clean, B corrupted)"))
        a["causal"].setText(self.tr("Causal &trace of A (ROME)"))
        a["graph"].setText(self.tr("Circuit &graph of A (transcoders)"))
        a["edit_fact"].setText(self.tr("&Edit a fact (ROME)…"))
        a["clear_ivs"].setText(self.tr("&Remove every intervention"))
        self.journey_dock.setWindowTitle(self.tr("Guided journey"))
        a = self.actions_by_name
        a["open"].setText(self.tr("&Open model folder…"))
        a["get"].setText(self.tr("&Get GPT-2…"))
        a["quit"].setText(self.tr("&Quit"))
        a["export_view"].setText(self.tr("Export &view as PNG or SVG…"))
        a["export_layers"].setText(self.tr("Export &all layers…"))
        a["export_data"].setText(self.tr("Export &data (every hook, .npz + .json)…"))
        a["save_edited"].setText(self.tr("Save &edited model (the ROME edits in force)…"))
        a["report"].setText(self.tr("&Report… (the next token's whole journey, PDF or HTML)"))
        a["dark"].setText(self.tr("Dark &figures"))
        a["journey"].setText(self.tr("&Guided journey through the stages"))
        a["journey"].setToolTip(self.tr("One page per stage of the token's life, with your prompt's numbers "
                                        "(PgDown / PgUp to turn pages)"))
        for code, act in self.language_actions.items():
            act.setChecked(code == i18n.current_language())
        self._update_status()

    def open_journey(self, page: int = 0) -> None:
        """Show the guided journey at ``page`` (0 = the text)."""
        self.journey_dock.show()
        self.actions_by_name["journey"].setChecked(True)
        self.journey.go(page)

    def open_edit_fact(self):
        """Show the Edit-a-fact dialog (one per window, kept so it can show what the edit did)."""
        from gpt2viz.widgets.edit_fact import EditFactDialog  # first use only: a faster start

        if self._edit_dialog is None:
            self._edit_dialog = EditFactDialog(self.state, self)
        self._edit_dialog.show()
        self._edit_dialog.raise_()
        return self._edit_dialog

    def open_compare(self, prompt: str | None = None) -> None:
        """Open prompt B beside A (default: A's prompt with its subject swapped, or A's prompt itself)."""
        from gpt2viz.widgets.compare import CompareDock

        st = self.state
        if SessionId.B not in st.sessions:
            if st.model is None:
                self.show_error(self.tr("No model is loaded: open a model folder from the Model menu."))
                return
            text = prompt if prompt is not None else suggest_b(self.prompt.text())
            st.open_session(SessionId.B, text)
            self.compare = CompareDock(st)
            self.compare.prompt.setText(text)
            self.compare_dock.setWidget(self.compare)
        elif prompt is not None:
            self.compare.prompt.setText(prompt)
            self.compare.run()
        self._show_dock(self.compare_dock)

    def _show_dock(self, dock) -> None:
        first = not self.analysis_dock.isVisible() and not self.compare_dock.isVisible()
        dock.show()
        dock.raise_()
        if first:  # the analyses need room: about half the window's height
            self.resizeDocks([dock], [int(self.height() * 0.48)], Qt.Vertical)

    @property
    def analysis(self):
        """The Analysis dock's tabs (patching, causal trace), built on first use."""
        if self._analysis is None:
            from gpt2viz.widgets.analysis import AnalysisTabs

            self._analysis = a = AnalysisTabs(self.state)
            a.graph.sigOpenFeature.connect(self.open_transcoder_feature)
            a.patching.sigOpenPatched.connect(lambda: self.open_compare())
            a.causal.export_btn.clicked.connect(lambda: self.export_view("causal-trace"))
            self.analysis_dock.setWidget(a)
        return self._analysis

    def build_graph(self) -> None:
        """Open Analysis → Circuit graph and build the graph of prompt A (the journey's circuit page asks)."""
        self.open_analysis(2)
        self.analysis.graph.run()

    def open_transcoder_feature(self, layer: int, feature: int) -> None:
        """Show the page of an MLP transcoder's feature (a circuit-graph node) in the Features tab."""
        view = self.detail.views["Features"]
        self.detail.setCurrentWidget(view)
        view.open_feature(layer, feature, "transcoder")

    def open_analysis(self, tab: int = 0) -> None:
        """Show the patching (0), causal-trace (1) or circuit-graph (2) view."""
        self.analysis.setCurrentIndex(tab)
        self._show_dock(self.analysis_dock)

    def show_view(self, view: str) -> None:
        """Bring ``view`` forward (a detail tab, or the focus on the chart's sliders)."""
        from gpt2viz.widgets.view_names import TAB

        if view in TAB:
            self.detail.setCurrentWidget(self.detail.views[TAB[view]])
        elif view == "chart":
            self.chart.temp.setFocus()

    def set_language(self, code: str) -> None:
        """Switch the whole window to ``code`` ("en" or "zh") now, and remember it."""
        i18n.switch(code, self.state.settings)
        for c, act in self.language_actions.items():
            act.setChecked(c == i18n.current_language())

    def check_fonts(self) -> bool:
        """Warn once, in the status bar, when no installed font can draw Chinese (tokens would be boxes)."""
        ok = has_cjk_font()
        if not ok and not self._cjk_warned:
            self._cjk_warned = True
            self.statusBar().showMessage(self.tr(
                "No font for Chinese characters was found: CJK text and tokens will show as boxes. Install "
                "a CJK font (Debian/Ubuntu: fonts-noto-cjk)."), 30000)
        return ok

    # ---- layout and persistence ----------------------------------------------------------------
    def _build_menu(self) -> None:
        # texts are set by retranslate(): keep the menus and actions by name
        self.menus, self.actions_by_name = {}, {}
        m = self.menus["model"] = self.menuBar().addMenu("")
        a = self.actions_by_name["open"] = QAction(self)
        a.triggered.connect(self.open_folder)
        m.addAction(a)
        a = self.actions_by_name["get"] = QAction(self)
        a.triggered.connect(self.get_gpt2)
        m.addAction(a)
        m.addSeparator()
        a = self.actions_by_name["quit"] = QAction(self)
        a.setShortcut(QKeySequence.Quit)
        a.triggered.connect(self.close)
        m.addAction(a)
        e = self.menus["export"] = self.menuBar().addMenu("")
        a = self.actions_by_name["export_view"] = QAction(self)
        a.setShortcut(QKeySequence("Ctrl+E"))
        a.triggered.connect(lambda _checked=False: self.export_view())
        e.addAction(a)
        a = self.actions_by_name["export_layers"] = QAction(self)
        a.triggered.connect(self.export_all_layers)
        e.addAction(a)
        a = self.actions_by_name["export_data"] = QAction(self)
        a.triggered.connect(self.export_data)
        e.addAction(a)
        a = self.actions_by_name["save_edited"] = QAction(self)
        a.triggered.connect(lambda _checked=False: self.exports.save_edited_model())
        e.addAction(a)
        e.addSeparator()
        a = self.actions_by_name["report"] = QAction(self)
        # triggered(bool) would arrive as ``path=False``: the menu action always asks where
        a.triggered.connect(lambda _checked=False: self.export_report())
        e.addAction(a)
        e.addSeparator()
        self.dark_action = a = self.actions_by_name["dark"] = QAction(self)
        a.setCheckable(True)
        a.setChecked(self.state.settings.text("export/dark", "0") == "1")
        a.toggled.connect(lambda on: self.state.settings.set("export/dark", "1" if on else "0"))
        e.addAction(a)
        j = self.menus["journey"] = self.menuBar().addMenu("")
        a = self.actions_by_name["journey"] = QAction(self, checkable=True)
        a.setShortcut(QKeySequence("F2"))
        a.toggled.connect(lambda on: self.open_journey(self.journey.index) if on else self.journey_dock.hide())
        j.addAction(a)
        self.journey_dock.visibilityChanged.connect(a.setChecked)
        an = self.menus["analysis"] = self.menuBar().addMenu("")
        for key, fn in (("compare", lambda: self.open_compare()), ("patching", lambda: self.open_analysis(0)),
                        ("causal", lambda: self.open_analysis(1)), ("graph", lambda: self.open_analysis(2)),
                        ("edit_fact", lambda: self.open_edit_fact()),
                        ("clear_ivs", lambda: self.state.clear_interventions(SessionId.A))):
            a = self.actions_by_name[key] = QAction(self)
            a.triggered.connect(fn)
            an.addAction(a)
        lang = self.menus["language"] = self.menuBar().addMenu("")
        group = QActionGroup(self)
        self.language_actions = {}
        for code, name in i18n.LANGUAGES.items():  # each language named in itself: findable from either
            act = QAction(name, self, checkable=True)
            act.triggered.connect(lambda _=False, c=code: self.set_language(c))
            group.addAction(act)
            lang.addAction(act)
            self.language_actions[code] = act

    @property
    def export_dark(self) -> bool:
        """Figures on a dark background (Export → Dark figures); light, for paper, by default."""
        return self.dark_action.isChecked()

    # ---- export (the flows live in widgets/export_actions.py) --------------------------------------
    def export_view(self, view: str | None = None) -> None:
        """Ask where, then write ``view`` (default: the focused one) as PNG or SVG."""
        self.exports.export_view(view)

    def export_all_layers(self) -> None:
        """One image per layer of the attention or MLP view, a contact sheet and index.json."""
        self.exports.export_all_layers()

    def export_data(self) -> None:
        """Every hook of the current text as .npz + .json."""
        self.exports.export_data()

    def export_report(self, path: str | None = None) -> None:
        """Ask where (unless ``path`` is given), then write the journey report of the current text."""
        self.exports.export_report(path)

    @property
    def export_scale(self) -> float:
        """PNG resolution factor of the Export menu's pictures."""
        return self.exports.scale

    @export_scale.setter
    def export_scale(self, scale: float) -> None:
        self.exports.scale = scale

    def _context_menus(self) -> None:
        """Right-click on the pipeline, the chart or a detail view: export that view."""
        for widget, view in ((self.pipeline, "pipeline"), (self.chart, "chart"), (self.detail, None)):
            widget.setContextMenuPolicy(Qt.CustomContextMenu)
            widget.customContextMenuRequested.connect(lambda pos, w=widget, v=view: self._context_menu(w, v, pos))

    def _context_menu(self, widget, view: str | None, pos) -> None:
        from PySide6.QtWidgets import QMenu

        menu = QMenu(self)
        chosen = view or self.focused_view()
        self.ablation_menu_actions = self.add_ablation_actions(menu, chosen, widget.mapToGlobal(pos))
        if self.ablation_menu_actions:
            menu.addSeparator()
        menu.addAction(self.tr("Export {view} as PNG or SVG…").format(view=view_title(chosen)),
                       lambda: self.export_view(chosen))
        if chosen in ("attention", "mlp"):
            menu.addAction(self.tr("Export all layers…"), self.export_all_layers)
        menu.addAction(self.tr("Export data (.npz)…"), self.export_data)
        menu.popup(widget.mapToGlobal(pos))

    def add_ablation_actions(self, menu, view: str, global_pos) -> list:
        """The ablation actions for what is under ``global_pos`` in ``view`` (a head, a neuron, a block)."""
        st = self.state
        if st.history is None:
            return []
        if view == "pipeline":
            layer = self.pipeline.block_at(global_pos)
            return ablation_actions(menu, st, SessionId.A, block=layer) if layer is not None else []
        if view == "attention":
            head = self.detail.views["Attention"].head_at(global_pos)
            head = st.head if head is None else head
            return ablation_actions(menu, st, SessionId.A, layer=st.layer, head=head)
        if view == "mlp":
            neuron = self.detail.views["MLP"].neuron_at(global_pos)
            return ablation_actions(menu, st, SessionId.A, layer=st.layer, neuron=neuron) if neuron is not None else []
        return ablation_actions(menu, st, SessionId.A) if st.session(SessionId.A).interventions else []

    def _bind_keys(self) -> None:
        for keys, fn in ((("Ctrl+Return", "Ctrl+Enter"), self.run_prompt), (("Space", "Right"), self._step_key),
                         (("Left",), self.state.back)):
            for k in keys:
                sc = QShortcut(QKeySequence(k), self)
                sc.setContext(Qt.WindowShortcut)
                sc.activated.connect(fn)

    def _step_key(self) -> None:
        if not self.prompt.hasFocus():  # Space and → still type in the prompt
            self.state.step()

    def _restore(self) -> None:
        geo = self.state.settings.bytes("window/geometry")
        if geo is None or not self.restoreGeometry(geo):
            self.resize(1500, 940)
        split = self.state.settings.bytes("window/splitter")
        if split is not None:
            self.splitter.restoreState(split)

    def event(self, e) -> bool:
        # The frame is painted in this event. Layout requests posted before it (a label's new text, a plot's new
        # title, a chip added) are handled first, to the top of the window: otherwise each level of layouts ran
        # after its own frame, and one step painted the window five times (~10 ms on atlas, measured by
        # bench/bench_latency.py). Each pass handles the requests the one before it posted (a layout that changes
        # size asks its parent's layout next); a window's layouts are at most ~8 levels deep.
        if e.type() == QEvent.UpdateRequest:
            _lay_out_pending()
            # Widgets just shown (a detail tab's page at a block click or tab switch) ask to be painted through a
            # posted UpdateLater, handled after this frame: the whole page was painted once more in a frame of its
            # own (~4-6 ms of a block click at 200 tokens on a 2-core EPYC). Handled now, they join this frame.
            QCoreApplication.sendPostedEvents(None, QEvent.UpdateLater)
            # A plot's changed items reach its view through a queued call of its scene (QGraphicsScene's dirty-items
            # pass), which ran after this frame and asked for one more: run it now, so this frame paints them too.
            # Likewise its text items move to the view's new matrix when the plot starts painting (prepareForPaint).
            for view in plots():
                if view.isVisible() and view.window() is self:
                    view.scene().prepareForPaint()
                    QCoreApplication.sendPostedEvents(view.scene(), QEvent.MetaCall)
        return super().event(e)

    def paint_pending(self) -> None:
        """Lay out and paint now what is waiting to be (AppState.sigSending: before the model runs, so that the
        frame does not share the cores with it)."""
        if self.isVisible():
            _lay_out_pending()  # a new chip is placed, and asks to be painted, only when its row is laid out
            QCoreApplication.sendPostedEvents(self, QEvent.UpdateRequest)

    def closeEvent(self, e) -> None:
        s = self.state.settings
        s.set("window/geometry", self.saveGeometry())
        s.set("window/splitter", self.splitter.saveState())
        s.set("prompt/last", self.prompt.text())
        s.sync()
        self.state.cancel_jobs()  # a patching table or causal trace stops at its next graph call
        if self._export is not None:
            self._export.kill()
        self.closing = True  # an export in progress stops at its next layer
        self.state.shutdown()
        super().closeEvent(e)

    # ---- actions --------------------------------------------------------------------------------
    def run_prompt(self) -> None:
        """Run the prompt box's text (Run, Enter, Ctrl+Enter); its result hands the keyboard to Step."""
        if self.state.model is None:
            self.show_error(self.tr("No model is loaded: open a model folder from the Model menu."))
            return
        self._focus_step_after_run = True
        self.state.run_prompt(self.prompt.text())

    def open_folder(self) -> None:
        d = QFileDialog.getExistingDirectory(self, self.tr("Open a gpt2viz model folder"), str(user_models_dir()))
        if d:
            self.state.load_model(d)

    def _fill_models(self) -> None:
        self.model_box.clear()
        for p in find_models():
            self.model_box.addItem(p.name, str(p))

    # ---- export -------------------------------------------------------------------------------------
    def focused_view(self) -> str:
        """The view the keyboard focus is in (pipeline, chart), else the visible detail tab."""
        from gpt2viz.widgets.view_names import view_of_tab

        w = QApplication.focusWidget()
        while w is not None:
            if w is self.chart:
                return "chart"
            if w is self.pipeline:
                return "pipeline"
            if self._analysis is not None and w is self._analysis.patching:
                return "patching"
            if self._analysis is not None and w is self._analysis.causal:
                return "causal-trace"
            if self.compare is not None and w is self.compare:
                return "compare-chart"
            w = w.parentWidget()
        return view_of_tab(next(k for k, v in self.detail.views.items() if v is self.detail.currentWidget()))

    def _on_model_picked(self, i: int) -> None:
        folder = self.model_box.itemData(i)
        if folder and (self.state.model is None or Path(folder).resolve() != self.state.model.folder):
            self.state.load_model(folder)

    def _on_model(self) -> None:
        m = self.state.model
        i = self.model_box.findData(str(m.folder))
        if i < 0:
            self.model_box.addItem(m.name, str(m.folder))
            i = self.model_box.count() - 1
        self.model_box.setCurrentIndex(i)
        self._update_status()
        self.run_prompt()
        self._focus_step_after_run = False  # a run the model's loading started: the keyboard stays in the prompt

    def _after_history(self) -> None:
        # After Run, hand the keyboard to Step so Space walks on at once; the prompt keeps Space for typing.
        if self._focus_step_after_run and self.prompt.hasFocus() and self.state.history is not None:
            self._focus_step_after_run = False
            self.controls.step_btn.setFocus()

    def _on_busy(self, busy: bool) -> None:
        if busy:
            self._busy_timer.start()
            return
        self._busy_timer.stop()
        self.prefill_bar.hide()  # done, cancelled or failed
        self._show_busy(False)

    def _show_busy(self, shown: bool) -> None:
        """Say (or stop saying) that the model is working: the Run button's text and the status line."""
        self._busy_shown = shown
        self.run_btn.setText(self.tr("Running…") if shown else self.tr("Run"))
        self._update_status()

    def _on_progress(self, done: int, total: int) -> None:
        bar = self.prefill_bar
        bar.setRange(0, total)
        bar.setValue(done)
        bar.setFormat(self.tr("reading the prompt: {done} / {total} tokens").format(done=done, total=total))
        bar.setToolTip(self.tr("A long prompt is read in chunks; Reset or a new prompt cancels it"))
        bar.setVisible(done < total)

    def _update_status(self) -> None:
        st = self.state
        if st.model is None:
            self.status.setText(self.tr("no model"))
            return
        c = st.model.config
        used = len(st.history.tokens) if st.history else 0
        self.status.setText(self.tr("{name} · {params:.1f}M params · {n_layer} layers × {n_head} heads · context "
                                    "{used}/{n_positions} · KV cache {kv:.2f} MB · last step {ms:.1f} ms").format(
            name=st.model.name, params=st.model.n_params / 1e6, n_layer=c.n_layer, n_head=c.n_head, used=used,
            n_positions=c.n_positions, kv=st.kv_cache_mb(), ms=st.last_ms)
            + (self.tr(" · running…") if self._busy_shown else ""))

    def show_error(self, message: str) -> None:
        """Tell the user what went wrong without blocking the window; the session goes on."""
        self.statusBar().showMessage(message, 15000)
        box = QMessageBox(QMessageBox.Warning, "gpt2viz", message, QMessageBox.Ok, self)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()
        self.last_error = message

    def get_gpt2(self) -> None:
        """Export real GPT-2 in a separate process, with progress and cancel; open it when it is written."""
        from gpt2viz.widgets.get_gpt2 import get_gpt2

        def ready(folder) -> None:
            self._export = None
            self._fill_models()
            self.state.load_model(str(folder))

        def failed(message: str) -> None:
            self._export = None
            self.show_error(message)
        self._export = get_gpt2(self, ready, failed)


def suggest_b(prompt: str) -> str:
    """A corrupted twin of ``prompt`` for a first comparison: the story's France/Germany swap when it applies."""
    for a, b in ((" France", " Germany"), (" Paris", " Berlin"), (" Germany", " France")):
        if a in prompt:
            return prompt.replace(a, b, 1)
    return prompt


def _caption(text: str = "") -> QLabel:
    lbl = QLabel(text)
    lbl.setStyleSheet("color: palette(mid); font-size: 9pt")
    return lbl
