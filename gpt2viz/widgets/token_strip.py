"""The token strip: one chip per token; click a chip to select that position for every view."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLayout, QScrollArea, QToolButton, QWidget

from gpt2viz.app.sessions import SessionId
from gpt2viz.app.state import AppState
from gpt2viz.widgets.language import Retranslating
from gpt2viz.widgets.row_widgets import add_now, drop_now, show_now

# Prompt tokens on the palette's button colour; generated tokens tinted so they stand apart.
CHIP_CSS = """
QToolButton { border: 1px solid palette(mid); border-radius: 4px; padding: 2px 5px; font-family: monospace; }
QToolButton[generated="true"] { background: rgba(46, 160, 67, 60); border-color: rgb(46, 160, 67); }
QToolButton[subject="true"] { border: 2px dashed rgb(200, 60, 60); }
QToolButton:checked { border: 2px solid palette(highlight); background: palette(highlight); color: palette(highlighted-text); }
"""


TAIL_CONTEXT = 8  # tokens described again after a step: the last 3 chips and the bytes before them
CHIP_PX = 60  # a typical chip's width with its spacing (a word of a few letters in the chips' monospace font)
SPARE_CHIPS = 6  # room the row may keep after its last chip, in typical chips (see TokenStrip._fit)
SPARE_AFTER_MS = 100  # after a new chip, the next one is made ready this much later (TokenStrip._make_spare)


class TokenStrip(Retranslating, QScrollArea):
    """Chips for the tokens of the current history; the selected position is checked."""

    MAX_CHIPS = 400  # a 1024-token text would make the strip unusable; the newest are what matters

    def __init__(self, state: AppState, session: SessionId = SessionId.A, parent=None):
        super().__init__(parent)
        self.state = state
        self.name = session
        self.session = state.session(session)
        self.setFixedHeight(48)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self._inner = QWidget()
        self._row = QHBoxLayout(self._inner)
        self._row.setContentsMargins(4, 2, 4, 2)
        self._row.setSpacing(3)
        # The row's width is set by _fit (the layout leaves it alone), always before its chips are placed: a
        # new chip squeezed into the old width moved every chip left and back (~3 ms at 200 tokens).
        self._row.setSizeConstraint(QLayout.SetNoConstraint)
        self.setWidget(self._inner)
        self._inner.setStyleSheet(CHIP_CSS)
        self.chips: list[QToolButton] = []
        self._offset = 0
        self._tokens: tuple[int, ...] = ()
        self._prompt_len = -1
        # What _mark last drew: the checked chip's index and the positions drawn as subject tokens. A step or
        # Back then sets two chips at most, not every chip (~0.5 ms of each at 200 tokens on a 2-core EPYC).
        self._checked: int | None = None
        self._subject_drawn: set[int] = set()
        # The next step's chip, made while the app is idle (see _make_spare).
        self._spare: QToolButton | None = None
        self._spare_timer = QTimer(self)
        self._spare_timer.setSingleShot(True)
        self._spare_timer.setInterval(SPARE_AFTER_MS)
        self._spare_timer.timeout.connect(self._make_spare)
        # The strip follows the newest token: the bar's range grows only when the layout places a new chip,
        # which happens after _on_history (scrolling then went to the old end, and the next frame repainted
        # every chip once more to scroll again); following the range keeps it to one frame. Moving the bar
        # by hand stops following until the next token.
        self._follow = True
        bar = self.horizontalScrollBar()
        bar.rangeChanged.connect(lambda _lo, hi: self._follow and bar.setValue(hi))
        bar.actionTriggered.connect(self._stop_following)
        state.sigHistory.connect(lambda name: name == self.name and self._on_history())
        state.sigSelection.connect(lambda name: name == self.name and self._mark())
        self._rebuild()

    def retranslate(self) -> None:
        """Chip tooltips and the empty-strip hint in the current language."""
        self._rebuild()

    def _on_history(self) -> None:
        """Add or drop chips at the end when a step or Back only changed the tail; else rebuild."""
        h, old = self.session.history, self._tokens
        if (h is None or self.session.model is None or not old or h.prompt_len != self._prompt_len
                or self._offset or len(h.tokens) > self.MAX_CHIPS):
            self._rebuild()
            return
        new = h.tokens
        if new[: len(old)] == old:
            # Only the tail is described again (describing all 200 tokens of a long text was ~2 ms of every
            # step): a character still incomplete at the old end started in its last 3 tokens (UTF-8: at
            # most 4 bytes), so only those chips can change, and 8 tokens of context describe them whole.
            first = max(0, len(old) - TAIL_CONTEXT)
            infos = dict(enumerate(self.session.model.tokenizer.describe(list(new[first:])), start=first))
            self._append([self._chip(pos, infos[pos], pos >= h.prompt_len) for pos in range(len(old), len(new))])
            self._spare_timer.start()
            for pos in range(max(0, len(old) - 3), len(old)):  # a partial character may now be complete
                text = infos[pos].display.replace("&", "&&")
                if self.chips[pos].text() != text:
                    self.chips[pos].setText(text)
        elif old[: len(new)] == new:
            for b in self.chips[len(new):]:
                self._row.removeWidget(b)
                drop_now(b)
            del self.chips[len(new):]
        else:
            self._rebuild()
            return
        self._fit()  # a chip dropped, or one whose character is now complete (a new text, a new width)
        self._tokens = new
        self._mark()
        self._to_end()

    def _fit(self, extra: int = 0, height: int = 0) -> None:
        """Make the row as wide as its shown chips and ``extra`` pixels more, plus room for a few chips, unless
        its width already lies between; as high as its shown chips, and at least ``height``.

        The strip shows the row's right end. When the row's width changes, every chip in view moves and Qt paints
        the whole view again (~1.5 ms at 200 tokens on a 2-core EPYC, and its scroll bar ~0.7); a Step that adds
        a chip into room the row already has, or a Back that leaves room, moves nothing."""
        need = self._row.sizeHint()  # of the shown chips: the layout leaves out those not shown yet
        width, height, spare = need.width() + extra, max(need.height(), height), SPARE_CHIPS * CHIP_PX
        if not width <= self._inner.width() <= width + spare:
            self._inner.resize(width + spare // 2, height)
        elif self._inner.height() != height:
            self._inner.resize(self._inner.width(), height)

    def _to_end(self) -> None:
        self._follow = True
        self.horizontalScrollBar().setValue(self.horizontalScrollBar().maximum())

    def _stop_following(self, _action: int) -> None:
        self._follow = False

    def _chip(self, pos: int, info, generated: bool) -> QToolButton:
        """Position ``pos``'s chip: the spare one if it is generated and there is one (see _make_spare)."""
        if generated and self._spare is not None:
            b, self._spare = self._spare, None
        else:
            b = self._new_chip(generated)
        b.position = pos
        b.setText(info.display.replace("&", "&&"))
        kind = self.tr("generated") if generated else self.tr("prompt")
        b.setToolTip(self.tr("position {pos} · id {id} · bytes {bytes} · {kind}").format(
            pos=pos, id=info.id, bytes=info.bytes.hex(' '), kind=kind))
        return b

    def _new_chip(self, generated: bool) -> QToolButton:
        b = QToolButton()
        b.setCheckable(True)
        b.setProperty("generated", generated)
        b.clicked.connect(lambda _=False, b=b: self._on_chip(b.position))
        return b

    def _make_spare(self) -> None:
        """Make the next generated token's chip now, while the app is idle, styled and hidden in the row's widget.

        Made and styled at a Step, a chip took ~0.4 ms of the GUI thread's time after the answer at 200 tokens of a
        GPT-2-small-sized model on a 2-core EPYC, against ~0.03 ms when made again at once: the model's read of
        its weights leaves Qt's code and data out of the caches. The Step then only gives it its text."""
        if self._spare is None and self.session.history is not None:
            b = self._new_chip(True)
            b.setParent(self._inner)  # hidden: a child made after its parent was shown waits for show()
            b.ensurePolished()  # the style sheet's rules for generated chips, applied now
            self._spare = b

    def _append(self, chips: list[QToolButton]) -> None:
        """Put ``chips`` after the last chip (before the row's stretch), the row made wide enough for them first
        (:meth:`_fit`), then shown at once (see :func:`show_now`). Showing a chip places the row's chips: in
        the old width, every chip was squeezed and then moved back."""
        extra = height = 0
        for chip in chips:
            self._row.insertWidget(self._row.count() - 1, chip)
            chip.ensurePolished()  # the style sheet's padding and borders are part of its size
            hint = chip.sizeHint()
            extra += hint.width() + self._row.spacing()
            height = max(height, hint.height())
        m = self._row.contentsMargins()
        self._fit(extra, height + m.top() + m.bottom())
        for chip in chips:
            show_now(chip)
        self.chips.extend(chips)

    def _on_chip(self, pos: int) -> None:
        from PySide6.QtWidgets import QApplication

        # A click toggles a checkable button: on the already selected chip it would uncheck it while the
        # selection (unchanged, so no signal) stays, and a Shift+click checks a chip it does not select;
        # re-mark the clicked chip from the session either way.
        if QApplication.keyboardModifiers() & (Qt.ShiftModifier | Qt.ControlModifier):
            self.toggle_subject(pos)
        else:
            self.state.select_position(pos, self.name)
        self._mark(clicked=pos)

    def _rebuild(self) -> None:
        while self._row.count():
            w = self._row.takeAt(0).widget()
            if w is not None:
                drop_now(w)
        self.chips = []
        self._checked, self._subject_drawn = None, set()
        h = self.session.history
        self._tokens = h.tokens if h is not None else ()
        self._prompt_len = h.prompt_len if h is not None else -1
        self._inner.resize(0, 0)
        if h is None or self.session.model is None:
            add_now(self._row, QLabel(self.tr("Type a prompt and press Run (Ctrl+Enter).")))  # shown: measured
            self._row.addStretch(1)
            self._fit()
            return
        tok = self.session.model.tokenizer
        infos = tok.describe(list(h.tokens))
        self._offset = max(0, len(infos) - self.MAX_CHIPS)
        if self._offset:
            add_now(self._row, QLabel(self.tr("… {n} earlier").format(n=self._offset)))
        self._row.addStretch(1)  # the chips go before it: they keep their widths in a row with room to spare
        self._append([self._chip(pos, info, pos >= h.prompt_len)
                      for pos, info in enumerate(infos[self._offset:], start=self._offset)])
        self._mark()
        self._to_end()

    def toggle_subject(self, pos: int) -> None:
        """Add ``pos`` to the subject tokens of the causal trace, or take it out (Shift+click a chip)."""
        subj = set(self.session.subject)
        subj.symmetric_difference_update({pos})
        self.state.set_subject(tuple(sorted(subj)), self.name)
        self._mark()

    def _mark(self, clicked: int | None = None) -> None:
        """Check the selected position's chip (and only it) and draw the subject tokens' chips dashed.

        Only the chips whose state may change are touched: the one checked before, the one checked now and the
        ``clicked`` position's (a click toggles its chip itself), and the subject positions that came or went."""
        sel = self.session.selected_position
        want = None if sel is None else sel - self._offset
        for i in {self._checked, want, None if clicked is None else clicked - self._offset} - {None}:
            if 0 <= i < len(self.chips):
                self.chips[i].setChecked(i == want)
        self._checked = want
        subj = set(self.session.subject)
        for pos in subj ^ self._subject_drawn:
            i = pos - self._offset
            if 0 <= i < len(self.chips):
                b = self.chips[i]
                b.setProperty("subject", pos in subj)
                b.style().unpolish(b)
                b.style().polish(b)
        # a subject position whose chip Back dropped is drawn again when a step makes its chip
        self._subject_drawn = {p for p in subj if 0 <= p - self._offset < len(self.chips)}
