"""Tokenization: the text cut into BPE tokens, each with its id, bytes and readable form."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QFrame, QScrollArea, QTableWidget, QTableWidgetItem, QVBoxLayout

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.core.viewmodels.tokens import TokensSummary, tokens_summary
from gpt2viz.widgets.views.common import LazyView, note

_BG = ("rgba(70,130,200,70)", "rgba(230,140,20,70)")  # alternate so boundaries show at a glance


class TokensView(LazyView):
    """Boundaries over the text, and a table: position, id, token (visible spaces), bytes, readable."""

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.bind(state, session)
        self.summary_label = note()
        self.text = note()
        self.text.setTextFormat(Qt.RichText)
        self.table = QTableWidget(0, 5)
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellClicked.connect(lambda r, _c: state.select_position(r, session))
        lay = QVBoxLayout(self)
        lay.addWidget(self.summary_label)
        # A long text scrolls inside a few lines' height instead of pushing the table away.
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        scroll.setWidget(self.text)
        scroll.setMaximumHeight(180)
        lay.addWidget(scroll)
        lay.addWidget(self.table, 1)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection, self._select)
        self.summary: TokensSummary | None = None
        self.retranslate()
        self.refresh()

    def retranslate(self) -> None:
        """Table headers in the current language."""
        self.table.setHorizontalHeaderLabels([self.tr("position"), self.tr("id"), self.tr("token"), self.tr("bytes"),
                                              self.tr("kind")])

    def refresh(self) -> None:
        self.summary = sm = tokens_summary(self.session)
        if sm is None:
            self.summary_label.setText(self.tr("Run a prompt to see its tokens."))
            self.table.setRowCount(0)
            self.text.setText("")
            return
        rows = sm.rows
        self.summary_label.setText(
            self.tr("{n} tokens for {n_bytes} bytes of UTF-8 · context {n}/{n_positions}. A leading space belongs "
                    "to the token (␣): “unbelievable” is 4 pieces (un|bel|iev|able) but “␣unbelievable” is one. "
                    "Tokens marked [i-j/n] hold bytes i..j of an n-byte character.").format(
                n=len(rows), n_bytes=sm.n_bytes, n_positions=sm.n_positions))
        spans = [f'<span style="background:{_BG[i % 2]}">{html.escape(r.display)}</span>' for i, r in enumerate(rows)]
        # Zero-width spaces let a line break between tokens: visible spaces (␣) do not, and a long text
        # was one unbreakable word that widened the window to fit it (48,000 px for 1000 tokens).
        self.text.setText("<p style='font-family:monospace; font-size:12pt'>" + "\u200b".join(spans) + "</p>")
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            kind = (self.tr("generated") if row.generated else self.tr("prompt")) + \
                (self.tr(" · partial character") if row.partial else "")
            for c, v in enumerate((row.position, row.id, row.display, row.bytes_hex, kind)):
                self.table.setItem(r, c, QTableWidgetItem(str(v)))
        self.table.resizeColumnsToContents()
        self._select()

    def _select(self) -> None:
        if self.summary is not None:
            self.table.selectRow(self.session.selected_position)
