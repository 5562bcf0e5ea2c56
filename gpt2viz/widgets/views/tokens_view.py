"""Tokenization: the text cut into BPE tokens, each with its id, bytes and readable form."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from gpt2viz.app.state import AppState
from gpt2viz.widgets.views.common import LazyView, note

_BG = ("rgba(70,130,200,70)", "rgba(230,140,20,70)")  # alternate so boundaries show at a glance


class TokensView(LazyView):
    """Boundaries over the text, and a table: position, id, token (visible spaces), bytes, readable."""

    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.state = state
        self.summary = note()
        self.text = note()
        self.text.setTextFormat(Qt.RichText)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["position", "id", "token", "bytes", "kind"])
        self.table.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.cellClicked.connect(lambda r, _c: state.select_position(r))
        lay = QVBoxLayout(self)
        lay.addWidget(self.summary)
        lay.addWidget(self.text)
        lay.addWidget(self.table, 1)
        self.watch(state.sigHistory)
        self.watch(state.sigSelection, self._select)
        self.rows: list[dict] = []
        self.refresh()

    def refresh(self) -> None:
        st = self.state
        if st.history is None or st.model is None:
            self.summary.setText("Run a prompt to see its tokens.")
            self.table.setRowCount(0)
            self.text.setText("")
            self.rows = []
            return
        h, tok = st.history, st.model.tokenizer
        infos = tok.describe(list(h.tokens))
        self.rows = [{"position": i, "id": t.id, "display": t.display, "bytes": t.bytes.hex(" "),
                      "partial": t.partial, "generated": i >= h.prompt_len} for i, t in enumerate(infos)]
        n_bytes = sum(len(t.bytes) for t in infos)
        self.summary.setText(
            f"{len(infos)} tokens for {n_bytes} bytes of UTF-8 · context {len(infos)}/{st.model.config.n_positions}. "
            "A leading space belongs to the token (␣): “unbelievable” is 4 pieces (un|bel|iev|able) but "
            "“␣unbelievable” is one. Tokens marked [i-j/n] hold bytes i..j of an n-byte character.")
        spans = []
        for i, t in enumerate(infos):
            spans.append(f'<span style="background:{_BG[i % 2]}">{html.escape(t.display)}</span>')
        self.text.setText("<p style='font-family:monospace; font-size:12pt'>" + "".join(spans) + "</p>")
        self.table.setRowCount(len(self.rows))
        for r, row in enumerate(self.rows):
            kind = ("generated" if row["generated"] else "prompt") + (" · partial character" if row["partial"] else "")
            for c, v in enumerate((row["position"], row["id"], row["display"], row["bytes"], kind)):
                self.table.setItem(r, c, QTableWidgetItem(str(v)))
        self.table.resizeColumnsToContents()
        self._select()

    def _select(self) -> None:
        if self.rows:
            self.table.selectRow(self.state.selected_position)
