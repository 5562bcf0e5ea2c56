"""The guided journey: one page per stage of the token's life, on the user's own prompt, as a dock.

Numbers come from :func:`gpt2viz.core.viewmodels.journey.journey_page`, words from :mod:`gpt2viz.app.journey_text`;
this panel only draws them, and on each page selects the stage and opens the view that shows them.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QScrollArea, QVBoxLayout

from gpt2viz.app.journey_text import page_heading, page_text
from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.journey import PAGES, JourneyPage, journey_page
from gpt2viz.widgets.views.common import LazyView

NEXT_KEYS = ("PgDown", "Alt+Right")
BACK_KEYS = ("PgUp", "Alt+Left")


class JourneyPanel(LazyView):
    """Title, the page's sentences with live numbers, Back / Next and "page i of n".

    Signals
    -------
    sigOpenView(str)
        The view (a name of ``view_names.VIEWS``) that shows this page's numbers: the window brings it forward.
    sigEditFact(str, str, str)
        "Edit this fact…" on the last page: the window opens the Edit-a-fact dialog with these values.
    """

    sigOpenView = Signal(str)
    sigEditFact = Signal(str, str, str)  # prompt, subject, new target: the last page's offer to edit the fact
    sigBuildGraph = Signal()  # the circuit page's offer to build the attribution graph

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.index = 0
        self.page: JourneyPage | None = None
        self._pending = False  # a page was asked for before any run: bring its view forward once there is one
        self.title = QLabel()
        f = self.title.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.15)
        self.title.setFont(f)
        self.title.setWordWrap(True)
        self.text = QLabel()
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.RichText)
        self.text.setAlignment(Qt.AlignTop | Qt.AlignLeft)
        self.text.setTextInteractionFlags(Qt.TextSelectableByMouse)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.text)
        scroll.setFrameShape(QScrollArea.NoFrame)
        self.back_btn, self.next_btn = QPushButton(), QPushButton()
        self.back_btn.clicked.connect(lambda: self.go(self.index - 1))
        self.next_btn.clicked.connect(lambda: self.go(self.index + 1))
        self.counter = QLabel()
        self.counter.setAlignment(Qt.AlignCenter)
        self.edit_btn = QPushButton()  # the last page only: the answer's path can be changed
        self.edit_btn.clicked.connect(self.offer_edit)
        self.graph_btn = QPushButton()  # the circuit page only
        self.graph_btn.clicked.connect(self.sigBuildGraph)
        row = QHBoxLayout()
        row.addWidget(self.back_btn)
        row.addWidget(self.counter, 1)
        row.addWidget(self.next_btn)
        lay = QVBoxLayout(self)
        lay.addWidget(self.title)
        lay.addWidget(scroll, 1)
        lay.addWidget(self.edit_btn)
        lay.addWidget(self.graph_btn)
        lay.addLayout(row)
        for keys, step in ((NEXT_KEYS, +1), (BACK_KEYS, -1)):
            for k in keys:
                sc = QShortcut(QKeySequence(k), self)
                sc.setContext(Qt.WindowShortcut)  # works wherever the focus is in the window
                sc.activated.connect(lambda d=step: self.isVisible() and self.go(self.index + d))
        # live numbers: a step, Back, a slider move or a graph built re-words the page shown (without moving the
        # views); while the panel is hidden (most of the time) it only notes that it is behind, and catches up when
        # shown (LazyView)
        for sig in (state.sigHistory, state.sigSampling, state.sigModel, state.sigAnalyses):
            self.watch(sig)
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Buttons in the current language (the page is reworded by the refresh that follows)."""
        self.back_btn.setText(self.tr("◀ Back"))
        self.next_btn.setText(self.tr("Next ▶"))
        self.back_btn.setToolTip(self.tr("Previous page (PgUp or Alt+←)"))
        self.next_btn.setToolTip(self.tr("Next page (PgDown or Alt+→)"))
        self.edit_btn.setText(self.tr("Edit this fact…"))
        self.edit_btn.setToolTip(self.tr("Open Edit a fact (ROME) with this prompt, its subject and a new answer"))
        self.graph_btn.setText(self.tr("Build the circuit graph"))
        self.graph_btn.setToolTip(self.tr("Open Analysis → Circuit graph and build the graph of this prompt"))

    def offer_edit(self) -> None:
        """Ask the window to open the Edit-a-fact dialog prefilled with the page's suggestion."""
        p = self.page
        if p is not None and "edit_prompt" in p.numbers:
            n = p.numbers
            self.sigEditFact.emit(n["edit_prompt"], n["edit_subject"], n["edit_target"])

    @property
    def key(self) -> str:
        return PAGES[self.index]

    def go(self, index: int) -> None:
        """Show page ``index`` (clamped) and bring its stage and view forward."""
        self.index = max(0, min(len(PAGES) - 1, index))
        self._pending = False
        self.refresh()
        p = self.page
        if p is None:
            self._pending = True
            return
        if p.stage.is_block:
            self.state.select_block(p.stage.layer, p.numbers.get("head"), self.name)
        else:
            self.state.select_stage(p.stage, self.name)
        self.sigOpenView.emit(p.view)

    def refresh(self) -> None:
        """Word the current page with the session's current numbers."""
        s = self.session
        i = self.index
        self._stale = False
        self.back_btn.setEnabled(i > 0)
        self.next_btn.setEnabled(i < len(PAGES) - 1)
        self.counter.setText(self.tr("page {i} of {n}").format(i=i + 1, n=len(PAGES)))
        self.title.setText(page_heading(self.key))
        self.edit_btn.setVisible(self.key == PAGES[-1] and s.history is not None)
        self.graph_btn.setVisible(self.key == "circuit" and s.history is not None and s.model is not None
                                  and (s.model.folder / "transcoders").is_dir())
        if s.history is None or s.weights is None:
            self.page = None
            self.text.setText(html.escape(self.tr("Run a prompt first: the journey tells the story of your own "
                                                  "text, with its numbers.")))
            return
        self.page = journey_page(s, self.key)
        if self._pending and self.isVisible():
            self.go(self.index)  # the run the page waited for has arrived
            return
        paras = page_text(self.key, self.page.numbers).split("\n\n")
        self.text.setText("".join(f"<p>{html.escape(p)}</p>" for p in paras))
