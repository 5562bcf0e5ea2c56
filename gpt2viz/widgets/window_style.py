"""The window's style: Qt's Fusion, its scroll bars drawn flat.

Fusion draws a scroll bar's groove, handle and arrow buttons with gradients and antialiased outlines: 0.45-1.0 ms
for one bar on a 2-core EPYC, against 0.18-0.27 ms drawn flat (a 600- and a 300-pixel bar repainted in a loop,
several runs). Bars are drawn again whenever their range or position changes: the token strip's at every Step (the
strip grows), the logit lens grid's as it scrolls to its newest column, both at each redraw while auto-stepping
(~75 ms of the GUI thread in 100 tokens of a GPT-2-small-sized model).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPolygonF
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOptionSlider

HANDLE_ALPHA = {"idle": 0.30, "hover": 0.45, "pressed": 0.60}  # the handle: the text colour over the groove
ARROW_ALPHA = 0.55
COLOURS_KEPT = 64  # (palette, state) colour sets kept; a theme change makes new palettes


def groove_colour(pal: QPalette) -> QColor:
    """A bar's groove in ``pal``: a shade under the window's background."""
    return pal.color(QPalette.Window).darker(104)


def _blend(over: QColor, under: QColor, alpha: float) -> QColor:
    """``over`` at ``alpha`` on ``under``, opaque (a blend per paint would cost more than the fill it saves)."""
    return QColor(*(round(a * alpha + b * (1 - alpha)) for a, b in zip(over.getRgb()[:3], under.getRgb()[:3])))


class WindowStyle(QProxyStyle):
    """Fusion, except scroll bars: a plain groove, a handle in the text colour (stronger under the pointer and
    while dragged) and a small triangle in each arrow button. Sizes, hit areas and behaviour stay Fusion's (only
    the drawing is replaced), so a bar is where and as large as it was, in light and dark palettes alike."""

    def __init__(self):
        super().__init__("Fusion")
        self._colours: dict[tuple, tuple[QColor, QColor, QColor]] = {}  # (palette, enabled, look) -> colours

    def _colours_for(self, pal: QPalette, enabled: bool, look: str) -> tuple[QColor, QColor, QColor]:
        """The groove's, handle's and arrows' colours in ``pal``, made once per palette and state."""
        key = (pal.cacheKey(), enabled, look)
        made = self._colours.get(key)
        if made is None:
            if len(self._colours) >= COLOURS_KEPT:
                self._colours.clear()
            groove, ink = groove_colour(pal), pal.color(QPalette.Text)
            made = self._colours[key] = (groove, _blend(ink, groove, HANDLE_ALPHA[look]),
                                         _blend(ink, groove, ARROW_ALPHA if enabled else HANDLE_ALPHA["idle"]))
        return made

    def drawComplexControl(self, control, option, painter, widget=None) -> None:  # noqa: N802 - Qt's name
        """Scroll bars flat (:class:`WindowStyle`); every other control as Fusion draws it."""
        if control != QStyle.ComplexControl.CC_ScrollBar or not isinstance(option, QStyleOptionSlider):
            super().drawComplexControl(control, option, painter, widget)
            return
        state = option.state
        enabled = bool(state & QStyle.StateFlag.State_Enabled)
        on_handle = option.activeSubControls & QStyle.SubControl.SC_ScrollBarSlider
        look = "pressed" if on_handle and state & QStyle.StateFlag.State_Sunken else \
            "hover" if on_handle and state & QStyle.StateFlag.State_MouseOver else "idle"
        groove, handle_colour, arrow = self._colours_for(option.palette, enabled, look)
        painter.save()
        painter.setRenderHint(QPainter.Antialiasing, False)
        painter.fillRect(option.rect, groove)
        handle = self.subControlRect(control, option, QStyle.SubControl.SC_ScrollBarSlider, widget)
        horizontal = option.orientation == Qt.Horizontal
        if enabled and handle.isValid() and option.maximum > option.minimum:
            inset = handle.adjusted(1, 3, -1, -3) if horizontal else handle.adjusted(3, 1, -3, -1)
            painter.fillRect(inset, handle_colour)
        painter.setPen(Qt.NoPen)
        painter.setBrush(arrow)
        painter.setRenderHint(QPainter.Antialiasing, True)  # two small triangles: smooth edges cost little
        for sub, forward in ((QStyle.SubControl.SC_ScrollBarSubLine, False),
                             (QStyle.SubControl.SC_ScrollBarAddLine, True)):
            r = self.subControlRect(control, option, sub, widget)
            if r.width() < 4 or r.height() < 4:
                continue
            c, k = QPointF(r.center()) + QPointF(0.5, 0.5), min(r.width(), r.height()) / 4.5
            s = k * 0.8 if forward else -k * 0.8  # the tip's side
            tri = [c + QPointF(s, 0), c + QPointF(-s, -k), c + QPointF(-s, k)] if horizontal else \
                [c + QPointF(0, s), c + QPointF(-k, -s), c + QPointF(k, -s)]
            painter.drawPolygon(QPolygonF(tri))
        painter.restore()
