"""Live language switching for widgets: a mixin that calls ``retranslate()`` on ``QEvent.LanguageChange``."""

from __future__ import annotations

from PySide6.QtCore import QEvent


class Retranslating:
    """Mix into a QWidget subclass (before the Qt base) that defines ``retranslate()``.

    Qt sends LanguageChange to every widget when a translator is installed or removed; texts set
    once in ``__init__`` would otherwise stay in the old language until the window is rebuilt.
    """

    def changeEvent(self, e) -> None:  # noqa: N802 - Qt's name
        if e.type() == QEvent.LanguageChange:
            self.retranslate()
        super().changeEvent(e)

    def retranslate(self) -> None:  # pragma: no cover - every user defines it
        raise NotImplementedError
