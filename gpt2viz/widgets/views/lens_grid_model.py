"""The logit-lens grid as a Qt item model and the table that paints it: cells are formatted when the table
paints them, not per step.

The grid was a QTableWidget whose 13 x 16 items each got a new text, colour and tooltip after every step,
and whose columns were sized by measuring every cell (resizeColumnsToContents): ~7 ms of the GUI thread
per step on a GPT-2-small-sized model, most of the view's share of a Step (bench/bench_latency.py). A
model answers the table's questions from the grid's arrays, and :class:`LensTable` paints the cells in view
straight from them, all in one call (Qt's own delegate asked the model ~10 questions per cell: 6 ms of a
frame; a delegate of ours, called once per cell, still 1.8 ms).
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyle, QStyleOptionViewItem, QTableView

from gpt2viz.core.viewmodels.lens import LensGrid
from gpt2viz.widgets.views.common import StaticTexts

CELL_COLOUR = (70, 130, 200)
TEXTS_KEPT = 4096  # laid-out texts LensTable keeps (a few new tokens a step): cleared when more
SIZES_KEPT = 4096  # header texts' sizes a MeasuredHeader keeps: cleared when more
HINT_SECTIONS = 100  # QHeaderView's size hint reads the first and the last this many shown sections


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

    @staticmethod
    def alpha(prob: float) -> int:
        """The opacity of a cell's colour over the table's base: deeper for a likelier token."""
        return int(30 + 200 * prob)

    def colour(self, r: int, c: int) -> QColor:
        """A cell's background: deeper for a likelier token."""
        return QColor(*CELL_COLOUR, self.alpha(float(self.grid.probs[r, c])))

    def data(self, index: QModelIndex, role: int = Qt.DisplayRole):
        """A cell's text, colour and tooltip (:class:`LensTable` paints the cells from the arrays)."""
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
        heads = self.titles(orientation)
        return heads[section] if 0 <= section < len(heads) else None

    def titles(self, orientation) -> list[str]:
        """The column (Qt.Horizontal) or row headers' texts, in order."""
        return self.col_heads if orientation == Qt.Horizontal else self.row_heads


class MeasuredHeader(QHeaderView):
    """A header whose size hint is QHeaderView's, made from each section's size measured once per text.

    QHeaderView forgets its size hint whenever a section is resized or the cells change, and makes it again by
    asking the model about every section (five roles each) and the style to size each one. The lens grid resizes
    its columns and shows new cells at every Step, and the table asks both headers for their hints to lay itself
    out: ~1 ms of the GUI thread after a Step at 200 tokens of a GPT-2-small-sized model on a 2-core EPYC, for
    16 column and 13 row titles of which one is new. Here each section's size is Qt's own
    (``sectionSizeFromContents``), kept per text, font, style and sort indicator, and the hint, their union over
    the sections QHeaderView's own hint reads, per list of titles. The model must give its headers a text alone
    (no font, icon or size roles) and list them (``titles(orientation)``), as :class:`LensGridModel`; with
    another model this is QHeaderView."""

    def __init__(self, orientation, parent=None):
        super().__init__(orientation, parent)
        self._sizes: dict[tuple, QSize] = {}
        self._hint: tuple[tuple, QSize] | None = None  # (what it was made for, the hint)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt's name
        """The union of the shown sections' sizes, as QHeaderView's own hint."""
        model = self.model()
        titles = getattr(model, "titles", None)
        if titles is None or self.hiddenSectionCount():
            return super().sizeHint()
        texts = titles(self.orientation())
        if not texts:
            return super().sizeHint()
        look = (self.font().key(), id(self.style()), self.isSortIndicatorShown())
        made_for = (look, tuple(texts))
        if self._hint is not None and self._hint[0] == made_for:
            return QSize(self._hint[1])
        shown = range(len(texts))
        if len(texts) > 2 * HINT_SECTIONS:
            shown = [*range(HINT_SECTIONS), *range(len(texts) - HINT_SECTIONS, len(texts))]
        if len(self._sizes) > SIZES_KEPT:
            self._sizes.clear()
        w = h = 0
        for i in shown:
            key = (look, texts[i])
            size = self._sizes.get(key)
            if size is None:
                size = self._sizes[key] = self.sectionSizeFromContents(i)
            w, h = max(w, size.width()), max(h, size.height())
        self._hint = (made_for, QSize(w, h))
        return QSize(w, h)


class LensTable(QTableView):
    """The grid's table: paints every cell in view in one call, from :class:`LensGridModel`'s arrays.

    A cell is its colour by probability (the highlight when selected), the token over its probability, both
    centred, and Qt's grid lines between cells: pixel for pixel what the per-cell delegate it replaces drew.
    Texts are laid out once (``QStaticText``) and kept: after a Step 15 of the 16 columns show texts shown
    before. At 200 tokens of a GPT-2-small-sized model the ~60 cells in view are painted in 0.8 ms, where the
    delegate took 1.8 ms (a Python call, a style option and a text layout per cell; repeated repaints on a
    2-core EPYC).
    """

    def __init__(self, parent=None):
        super().__init__(parent)
        for orientation, set_header in ((Qt.Horizontal, self.setHorizontalHeader),
                                        (Qt.Vertical, self.setVerticalHeader)):
            old = self.horizontalHeader() if orientation == Qt.Horizontal else self.verticalHeader()
            head = MeasuredHeader(orientation, self)
            # as QTableView set up its own headers
            head.setSectionsClickable(old.sectionsClickable())
            head.setHighlightSections(old.highlightSections())
            set_header(head)
        self._texts = StaticTexts(TEXTS_KEPT)
        self._fills: dict[tuple[int, int], QColor] = {}  # (base rgba, alpha) -> the opaque colour
        self._laid_out: tuple | None = None  # what updateGeometries last laid the table out for

    def _fill(self, base: QColor, prob: float) -> QColor:
        """The cell colour of ``prob`` over ``base``, made opaque once (a blend per cell and paint costs more)."""
        alpha = LensGridModel.alpha(prob)
        key = (base.rgba(), alpha)
        c = self._fills.get(key)
        if c is None:
            a = alpha / 255
            c = self._fills[key] = QColor(*(round(v * a + b * (1 - a)) for v, b in zip(
                CELL_COLOUR, (base.red(), base.green(), base.blue()))))
        return c

    def updateGeometries(self) -> None:  # noqa: N802 - Qt's name
        """Qt's layout of the headers and scroll bars; when only the columns' widths changed, the horizontal bar's
        range and page alone.

        The view sizes its columns to their tokens at every Step. Qt's updateGeometries sets the viewport's
        margins, the same or not, and that draws both scroll bars again: ~0.5-1.3 ms of a Step's frame at 200
        tokens of a GPT-2-small-sized model on a 2-core EPYC, for bars that look the same. With the same rows,
        columns, viewport and headers' room, what changes is the number of columns that fit at the right end,
        which is the bar's page and range when scrolling by item (QTableView::updateGeometries' rule)."""
        cells, bar, head = self.model(), self.horizontalScrollBar(), self.horizontalHeader()
        laid_out = (cells.rowCount(), cells.columnCount(), self.viewport().size(), self.verticalHeader().sizeHint(),
                    head.sizeHint().height(), self.horizontalScrollMode(), self.verticalScrollBar().isVisible())
        if laid_out != self._laid_out or self.horizontalScrollMode() != QAbstractItemView.ScrollPerItem:
            self._laid_out = laid_out
            super().updateGeometries()
            self._whole_columns()
            return
        n, room, width, fit = cells.columnCount(), self.viewport().width(), 0, 0
        for c in reversed(range(n)):
            width += self.columnWidth(c)
            if width > room:
                break
            fit += 1
        fit = max(fit, 1)
        bar.setRange(0, n - fit)
        bar.setPageStep(fit)
        if fit >= n:
            head.setOffset(0)
        self._whole_columns()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 - Qt's name
        super().scrollContentsBy(dx, dy)
        self._whole_columns()

    def _whole_columns(self) -> None:
        """At the right end of the bar, the first column shown starts at the left edge.

        Scrolling by item, Qt puts the last column flush with the right edge there, so the column before the
        first whole one shows a sliver of its cells (a token cut to "pital" and "4%"); its range gives the
        columns that fit from the right, so starting at the bar's value they all fit whole, with room after
        the newest."""
        bar, head = self.horizontalScrollBar(), self.horizontalHeader()
        if (self.horizontalScrollMode() != QAbstractItemView.ScrollPerItem or bar.maximum() <= 0
                or bar.value() != bar.maximum()):
            return
        x = head.sectionPosition(head.logicalIndex(bar.value()))
        if head.offset() != x:
            head.setOffset(x)
            self.viewport().update()

    def paintEvent(self, e) -> None:  # noqa: N802 - Qt's name
        """The cells in ``e``'s rectangle, then the grid lines between them."""
        cells = self.model()
        if not isinstance(cells, LensGridModel) or cells.grid is None or not cells.rowCount():
            super().paintEvent(e)
            return
        area = e.rect()
        n_rows, n_cols = cells.rowCount(), cells.columnCount()
        r0, c0 = max(0, self.rowAt(area.top())), max(0, self.columnAt(area.left()))
        r1 = self.rowAt(area.bottom())
        c1 = self.columnAt(area.right())
        r1, c1 = (n_rows - 1 if r1 < 0 else r1), (n_cols - 1 if c1 < 0 else c1)
        pal = self.palette()
        base, text, hl, hl_text = (pal.color(QPalette.Base), pal.color(QPalette.Text),
                                   pal.color(QPalette.Highlight), pal.color(QPalette.HighlightedText))
        opt = QStyleOptionViewItem()
        self.initViewItemOption(opt)
        grid_colour = QColor.fromRgba(self.style().styleHint(QStyle.SH_Table_GridLineColor, opt, self) & 0xFFFFFFFF)
        line = 1 if self.showGrid() else 0
        selected = {(i.row(), i.column()) for i in self.selectionModel().selectedIndexes()}
        laid_out, fm = self._texts.in_font(self.font()), self.fontMetrics()
        ls = fm.lineSpacing()
        probs, shown = cells.grid.probs, cells.shown
        xs = [(c, self.columnViewportPosition(c), self.columnWidth(c)) for c in range(c0, c1 + 1)]
        p = QPainter(self.viewport())
        p.setFont(self.font())
        right = bottom = 0
        for r in range(r0, r1 + 1):
            y, h = self.rowViewportPosition(r), self.rowHeight(r)
            top = y + (h - line - 2 * ls) / 2  # the two lines centred in the cell, as Qt.AlignCenter
            for c, x, w in xs:
                rect = QRect(x, y, w - line, h - line)
                prob = float(probs[r, c])
                sel = (r, c) in selected
                p.fillRect(rect, hl if sel else self._fill(base, prob))
                p.setPen(hl_text if sel else text)
                for k, s in enumerate((shown[r][c], f"{prob:.0%}")):
                    st = laid_out(s)
                    p.drawStaticText(QPointF(x + (w - line - st.size().width()) / 2, top + k * ls), st)
                right = max(right, x + w)
            bottom = max(bottom, y + h)
        if line:
            p.setPen(grid_colour)
            for _c, x, w in xs:
                p.drawLine(x + w - 1, area.top(), x + w - 1, min(bottom, area.bottom() + 1) - 1)
            for r in range(r0, r1 + 1):
                y = self.rowViewportPosition(r) + self.rowHeight(r) - 1
                p.drawLine(area.left(), y, min(right, area.right() + 1) - 1, y)
        p.end()
