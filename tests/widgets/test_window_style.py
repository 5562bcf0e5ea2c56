"""The window's style: Fusion, its scroll bars drawn flat."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import QScrollBar, QSlider, QStyle, QStyleFactory, QStyleOptionSlider

from gpt2viz.widgets.window_style import WindowStyle, groove_colour


@pytest.fixture
def styles():
    return QStyleFactory.create("Fusion"), WindowStyle()


def _shown(qtbot, widget, style, size):
    widget.setStyle(style)
    widget.resize(*size)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def _bar(qtbot, style, orientation=Qt.Horizontal, value=40):
    bar = QScrollBar(orientation)
    bar.setRange(0, 100)
    bar.setPageStep(30)
    bar.setValue(value)
    return _shown(qtbot, bar, style, (400, 16) if orientation == Qt.Horizontal else (16, 300))


def _handle_rect(bar):
    opt = QStyleOptionSlider()
    bar.initStyleOption(opt)
    return bar.style().subControlRect(QStyle.CC_ScrollBar, opt, QStyle.SC_ScrollBarSlider, bar)


def test_other_controls_are_drawn_as_fusion_draws_them(qtbot, styles):
    fusion, ours = styles
    grabs = []
    for style in styles:
        slider = QSlider(Qt.Horizontal)
        slider.setRange(0, 100)
        slider.setValue(30)
        grabs.append(_shown(qtbot, slider, style, (200, 24)).grab().toImage())
    assert grabs[0] == grabs[1]


@pytest.mark.parametrize("orientation", [Qt.Horizontal, Qt.Vertical])
def test_a_bar_keeps_fusions_sizes_and_hit_areas(qtbot, styles, orientation):
    fusion, ours = styles
    a, b = _bar(qtbot, fusion, orientation), _bar(qtbot, ours, orientation)
    assert a.sizeHint() == b.sizeHint()
    opt_a, opt_b = QStyleOptionSlider(), QStyleOptionSlider()
    a.initStyleOption(opt_a)
    b.initStyleOption(opt_b)
    for sub in (QStyle.SC_ScrollBarSlider, QStyle.SC_ScrollBarAddLine, QStyle.SC_ScrollBarSubLine):
        assert fusion.subControlRect(QStyle.CC_ScrollBar, opt_a, sub, a) == \
            ours.subControlRect(QStyle.CC_ScrollBar, opt_b, sub, b)


@pytest.mark.parametrize("orientation", [Qt.Horizontal, Qt.Vertical])
def test_the_handle_is_drawn_where_the_bar_says_it_is(qtbot, styles, orientation):
    _, ours = styles
    bar = _bar(qtbot, ours, orientation, value=0)
    first = _handle_rect(bar)
    img = bar.grab().toImage()
    groove = QColor(groove_colour(bar.palette()).rgb())  # as drawn: 8 bits a channel
    handle = img.pixelColor(first.center())
    assert handle != groove  # the handle stands out from its groove
    bar.setValue(100)  # the handle moves to the other end: where it was is groove now
    last = _handle_rect(bar)
    assert not last.intersects(first)
    img = bar.grab().toImage()
    assert img.pixelColor(first.center()) == groove
    assert img.pixelColor(last.center()) == handle


def test_no_handle_when_there_is_nothing_to_scroll(qtbot, styles):
    _, ours = styles
    bar = _bar(qtbot, ours)
    bar.setRange(0, 0)
    img = bar.grab().toImage()
    groove = QColor(groove_colour(bar.palette()).rgb())  # as drawn: 8 bits a channel
    assert img.pixelColor(img.rect().center()) == groove


def test_the_handle_stands_out_more_under_the_pointer_and_when_dragged(qtbot, styles):
    _, ours = styles
    bar = _bar(qtbot, ours)
    opt = QStyleOptionSlider()
    bar.initStyleOption(opt)
    centre = _handle_rect(bar).center()
    looks = []
    for active, state in ((QStyle.SC_None, QStyle.State_Enabled),
                          (QStyle.SC_ScrollBarSlider, QStyle.State_Enabled | QStyle.State_MouseOver),
                          (QStyle.SC_ScrollBarSlider, QStyle.State_Enabled | QStyle.State_Sunken)):
        pix = bar.grab()  # a canvas of the bar's size
        opt.activeSubControls, opt.state = active, state
        p = QPainter(pix)
        ours.drawComplexControl(QStyle.CC_ScrollBar, opt, p, bar)
        p.end()
        looks.append(pix.toImage().pixelColor(centre).lightness())
    idle, hover, pressed = looks
    assert idle != hover != pressed
    # the text colour is blended in more strongly: towards it, whichever way it lies from the groove
    text = bar.palette().color(QPalette.Text).lightness()
    assert abs(pressed - text) < abs(hover - text) < abs(idle - text)
