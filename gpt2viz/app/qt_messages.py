"""Keep Qt's known-harmless platform chatter off stderr, and every other Qt message on it.

Qt's offscreen platform (used by `gpt2viz snapshot` and the tests) answers a window's size hints
with a plain ``qWarning("This plugin does not support propagateSizeHints()")``: it comes from the
default logging category, so a ``QLoggingCategory`` filter rule could only silence it together with
every other default-category warning. A message handler can drop exactly the known lines instead.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QtMsgType, qFormatLogMessage, qInstallMessageHandler

# Messages that say nothing a user can act on; matched as prefixes of the message text.
HARMLESS = (
    # QPlatformWindow's default for platforms without window-manager size hints (offscreen, minimal).
    "This plugin does not support propagateSizeHints()",
    # Also from QPlatformWindow defaults on the offscreen platform.
    "This plugin does not support raise()",
    "This plugin does not support grabbing the keyboard",
    "This plugin does not support setting window opacity",
    # Root without a session bus (CI containers): Qt falls back to /tmp/runtime-<user> and works.
    "QStandardPaths: XDG_RUNTIME_DIR not set",
    "QStandardPaths: runtime directory",
)

_installed = False


def is_harmless(message: str) -> bool:
    """True for a Qt message known to carry no information for the user (see ``HARMLESS``)."""
    return message.startswith(HARMLESS)


def _handler(mode: QtMsgType, context, message: str) -> None:
    if is_harmless(message):
        return
    try:
        line = qFormatLogMessage(mode, context, message)  # honours QT_MESSAGE_PATTERN like Qt's own handler
    except Exception:  # noqa: BLE001 - a logging path must never raise into Qt
        line = message
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or gone: nothing better to do with a log line
        pass


def install() -> None:
    """Route Qt's messages through the filter (idempotent). Call before the QApplication exists."""
    global _installed
    if not _installed:
        qInstallMessageHandler(_handler)
        _installed = True
