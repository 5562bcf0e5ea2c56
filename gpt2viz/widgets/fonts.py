"""Is there a font that can draw Chinese? Asked once at start: without one, CJK text and tokens are boxes."""

from __future__ import annotations

from PySide6.QtGui import QFontDatabase


def cjk_families() -> list[str]:
    """Installed font families that support Simplified Chinese (needs a QGuiApplication)."""
    return list(QFontDatabase.families(QFontDatabase.SimplifiedChinese))


def has_cjk_font(families: list[str] | None = None) -> bool:
    """True when some font covers Simplified Chinese.

    Parameters
    ----------
    families : list of str, optional
        The families to judge (tests pass their own); default: :func:`cjk_families`.
    """
    fams = cjk_families() if families is None else families
    # Qt may list a "fallback" pseudo-family even when nothing real covers the script
    return any(f and not f.lower().startswith(("unknown", "fallback")) for f in fams)
