"""Languages: which one to show, loading its translations, and switching while the app runs. QtCore only.

The English texts in the sources are the catalogue's keys, so English needs no file; Simplified
Chinese is ``resources/translations/gpt2viz_zh_CN.qm`` (built from the ``.ts`` next to it by
``scripts/update_translations.py``), plus Qt's own ``qtbase_zh_CN`` for the buttons of standard dialogs.
Installing a translator makes Qt send ``QEvent.LanguageChange`` to every widget: widgets reset their
texts in ``retranslate()`` when they receive it, so a switch needs no restart.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QTranslator

from gpt2viz.core.model_folder.locations import resources_dir

LANGUAGES = {"en": "English", "zh": "中文"}  # code -> its name in itself (the menu shows both as they are)
DEFAULT = "en"
SETTINGS_KEY = "ui/language"
_QM = {"zh": "gpt2viz_zh_CN.qm"}
_QT_QM = {"zh": "qtbase_zh_CN"}

_installed: list[QTranslator] = []  # kept referenced: a collected translator silently stops translating
_current = DEFAULT


def translations_dir() -> Path:
    """Where the compiled catalogues are, from a checkout or an installed wheel."""
    return resources_dir() / "translations"


def normalize(code: str | None) -> str | None:
    """``"zh"``, ``"zh_CN"``, ``"zh-Hans"`` -> ``"zh"``; ``"en_GB"`` -> ``"en"``; unknown or empty -> None."""
    if not code:
        return None
    base = code.replace("-", "_").split("_")[0].lower()
    return base if base in LANGUAGES else None


def system_language(locale: QLocale | None = None) -> str:
    """The language of the system locale if we have it (any Chinese locale shows Simplified Chinese), else English."""
    loc = locale or QLocale.system()
    return "zh" if loc.language() == QLocale.Chinese else DEFAULT


def choose_language(requested: str | None = None, settings=None) -> str:
    """The language to start in: ``--lang`` if given, else the remembered choice, else the system's.

    Parameters
    ----------
    requested : str, optional
        A language code from the command line (``en``, ``zh``, ``zh_CN`` ...).
    settings : gpt2viz.app.settings.Settings, optional
        Where the last choice of the Language menu is remembered.
    """
    return (normalize(requested) or (normalize(settings.text(SETTINGS_KEY)) if settings is not None else None)
            or system_language())


def current_language() -> str:
    """The language installed last by :func:`install` (``"en"`` before any)."""
    return _current


def install(language: str, app: QCoreApplication | None = None) -> str:
    """Show ``language`` from now on: replaces the installed translators (widgets get LanguageChange).

    Returns the language actually installed: English when the catalogue is missing or unreadable
    (the app must still start), so a caller can tell the user.
    """
    global _current
    app = app or QCoreApplication.instance()
    lang = normalize(language) or DEFAULT
    for t in _installed:
        if app is not None:
            app.removeTranslator(t)
    _installed.clear()
    if lang != DEFAULT:
        ours = QTranslator()
        if not ours.load(str(translations_dir() / _QM[lang])):
            lang = DEFAULT
        else:
            qt = QTranslator()
            if qt.load(_QT_QM[lang], QLibraryInfo.path(QLibraryInfo.TranslationsPath)):
                _installed.append(qt)
            _installed.append(ours)
            if app is not None:
                for t in _installed:
                    app.installTranslator(t)
    _current = lang
    if app is not None:
        # Qt posts LanguageChange to each window; deliver now so the window is in the new language when
        # this returns (a switch from the menu, a snapshot taken right after, a test asserting).
        QCoreApplication.sendPostedEvents(None, QEvent.LanguageChange)
    return lang


def switch(language: str, settings=None) -> str:
    """The Language menu's action: install ``language`` and remember it."""
    lang = install(language)
    if settings is not None:
        settings.set(SETTINGS_KEY, lang)
    return lang
