"""Putting widgets into a shown row and taking them out so that they appear and go in the next frame."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QBoxLayout, QWidget


def add_now(row: QBoxLayout, w: QWidget) -> None:
    """Put ``w`` at the end of ``row``, shown at once.

    A layout shows a widget added to a visible parent from a queued call, after the frame the layout was painted
    in, so a new token chip or intervention chip was placed and painted in a frame of its own. The events a new
    widget posts to itself (its polish request, then an update) are handled here too: handled after the frame,
    they painted the widget in one more (~3 ms of a step at 200 tokens, bench/bench_latency.py)."""
    row.addWidget(w)
    show_now(w)


def show_now(w: QWidget) -> None:
    """Show ``w``, a widget just put into a shown row, and handle the events it posts to itself (see
    :func:`add_now`)."""
    w.show()
    QCoreApplication.sendPostedEvents(w)


def drop_now(w: QWidget) -> None:
    """Take ``w``, already out of its row's layout, off the screen now and delete it later. Only taken out of the
    layout, a widget stayed shown (Back painted a token chip's sliver beside the row) and left when deleted, after
    the frame: the row was painted again in a frame of its own. Hidden, it is gone from this frame, and deleting a
    hidden child paints nothing. (Taken from its parent instead, ``setParent(None)``, it cost ~0.3 ms of a Back on
    atlas on a 2-core EPYC: Qt makes a parentless widget a window of its own.)"""
    w.hide()
    w.deleteLater()
