"""The logit-lens grid as a Qt item model: cells are formatted when the table paints them, not per step.

The grid was a QTableWidget whose 13 x 16 items each got a new text, colour and tooltip after every step,
and whose columns were sized by measuring every cell (resizeColumnsToContents): ~7 ms of the GUI thread
per step on a GPT-2-small-sized model, most of the view's share of a Step (bench/bench_latency.py). A
model answers the table's questions from the grid's arrays, for the cells in view only, and a delegate paints
each cell straight from them (Qt's own delegate asked the model ~10 questions per cell: 6 ms of a frame).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

from gpt2viz.core.viewmodels.lens import LensGrid

CELL_COLOUR = (70, 130, 200)


class LensGridModel(QAbstractTableModel):
    """Rows = depths (embeddings, then after each block), columns = positions, of one :class:`LensGrid`."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.grid: LensGrid | None = None
        self.shown: list[list[str]] = []  # [row][col] the top token, as the tokenizer displays it
        self.col_heads: list[str] = []
        self.row_heads: list[str] = []
        self.wheres: list[str] = []  # "after block 3", per row: the tooltips' first words
        self.tip = ""

    def show(self, grid: LensGrid | None, display, col_heads: list[str], row_heads: list[str],
             wheres: list[str], tip: str) -> tuple[bool, bool]:
        """Show ``grid`` (None: empty); ``display`` turns a token id into its shown text. Returns (reshaped,
        changed): whether the model was reset for a new shape, and whether the shape or headers changed (the
        view then sizes its columns again).

        Only a new shape resets the model. After a step the grid keeps its 16 columns and their headers move
        on by one position: only new data is announced (and new row headers, in another language), and the
        view sizes its columns and repaints their header itself. A reset, or a headerDataChanged, made the
        table lay out its headers again and repaint the row headers and the scroll bars as well, ~2 ms of every
        step's frame."""
        shown = [[display(int(t)) for t in row] for row in grid.tops] if grid is not None else []
        reshaped = (len(col_heads) != len(self.col_heads) or len(row_heads) != len(self.row_heads)
                    or (grid is None) != (self.grid is None))
        cols_new, rows_new = col_heads != self.col_heads, row_heads != self.row_heads
        if reshaped:
            self.beginResetModel()
        self.grid, self.shown, self.col_heads, self.row_heads = grid, shown, col_heads, row_heads
        self.wheres, self.tip = wheres, tip
        if reshaped:
            self.endResetModel()
        elif grid is not None:
            if rows_new:  # another language: the row headers' width changes
                self.headerDataChanged.emit(Qt.Vertical, 0, len(row_heads) - 1)
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, self.columnCount() - 1))
        return reshaped, reshaped or cols_new or rows_new

    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt's name
        return 0 if parent.isValid() or self.grid is None else len(self.row_heads)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: N802 - Qt's name
        return 0 if parent.isValid() or self.grid is None else len(self.col_heads)

    def text(self, r: int, c: int) -> str:
        """A cell's two lines: the top token and its probability."""
        return f"{self.shown[r][c]}\n{float(self.grid.probs[r, c]):.0%}"

    def colour(self, r: int, c: int) -> QColor:
        """A cell's background: deeper for a likelier token."""
        return QColor(*CELL_COLOUR, int(30 + 200 * float(self.grid.probs[r, c])))

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        """A cell's text, colour and tooltip (the table paints cells with :class:`LensCellDelegate`)."""
        if self.grid is None or not index.isValid():
            return None
        r, c = index.row(), index.column()
        if role == Qt.DisplayRole:
            return self.text(r, c)
        if role == Qt.BackgroundRole:
            return self.colour(r, c)
        if role == Qt.ToolTipRole:
            return self.tip.format(where=self.wheres[r], pos=self.grid.positions[c], token=self.shown[r][c],
                                   prob=float(self.grid.probs[r, c]))
        return None

    def headerData(self, section: int, orientation, role: int = Qt.DisplayRole):  # noqa: N802 - Qt's name
        if role != Qt.DisplayRole:
            return None
        heads = self.col_heads if orientation == Qt.Horizontal else self.row_heads
        return heads[section] if 0 <= section < len(heads) else None


class LensCellDelegate(QStyledItemDelegate):
    """Paints a grid cell from :class:`LensGridModel`'s arrays: its colour, then the token over its probability."""

    def __init__(self, cells: LensGridModel, parent=None):
        super().__init__(parent)
        self.cells = cells

    def paint(self, painter, option, index) -> None:
        """One cell: the background by probability, a highlight when selected, two centred lines of text."""
        if self.cells.grid is None:
            return
        r, c = index.row(), index.column()
        painter.fillRect(option.rect, self.cells.colour(r, c))
        pal = option.palette
        text_role = QPalette.Text
        if option.state & QStyle.State_Selected:
            painter.fillRect(option.rect, pal.color(QPalette.Highlight))
            text_role = QPalette.HighlightedText
        painter.setPen(pal.color(text_role))
        painter.drawText(option.rect, Qt.AlignCenter, self.cells.text(r, c))
