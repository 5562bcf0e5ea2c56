"""Choosing and installing the language (QtCore only: no window needed)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication, QLocale

from gpt2viz.app import i18n
from gpt2viz.app.settings import Settings


@pytest.fixture
def app(qapp):
    yield qapp
    i18n.install("en", qapp)  # the language is process-wide: leave English for the next test


def test_normalize():
    assert i18n.normalize("zh_CN") == i18n.normalize("zh-Hans") == i18n.normalize("ZH") == "zh"
    assert i18n.normalize("en_GB") == "en"
    assert i18n.normalize("fr") is None and i18n.normalize("") is None and i18n.normalize(None) is None


def test_system_language_follows_the_locale():
    assert i18n.system_language(QLocale(QLocale.Chinese, QLocale.China)) == "zh"
    assert i18n.system_language(QLocale(QLocale.Chinese, QLocale.Taiwan)) == "zh"
    assert i18n.system_language(QLocale(QLocale.German, QLocale.Germany)) == "en"


def test_choose_language_order(tmp_path):
    s = Settings(str(tmp_path / "s.ini"))
    sys_lang = i18n.system_language()
    assert i18n.choose_language(None, s) == sys_lang
    s.set(i18n.SETTINGS_KEY, "zh")
    assert i18n.choose_language(None, s) == "zh"  # remembered beats the system
    assert i18n.choose_language("en", s) == "en"  # --lang beats both
    s.set(i18n.SETTINGS_KEY, "klingon")
    assert i18n.choose_language(None, s) == sys_lang  # a bad stored value is ignored


def test_install_switches_translate(app):
    assert (i18n.translations_dir() / "gpt2viz_zh_CN.qm").is_file()
    assert i18n.install("zh", app) == "zh" and i18n.current_language() == "zh"
    assert QCoreApplication.translate("MainWindow", "Run") == "运行"
    # Qt's own strings (standard dialog buttons) come along
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") != "Cancel"
    assert i18n.install("en", app) == "en"
    assert QCoreApplication.translate("MainWindow", "Run") == "Run"


def test_missing_catalogue_falls_back_to_english(app, monkeypatch, tmp_path):
    monkeypatch.setattr(i18n, "translations_dir", lambda: tmp_path)
    assert i18n.install("zh", app) == "en"
    assert QCoreApplication.translate("MainWindow", "Run") == "Run"


def test_switch_remembers(app, tmp_path):
    s = Settings(str(tmp_path / "s.ini"))
    i18n.switch("zh", s)
    assert s.text(i18n.SETTINGS_KEY) == "zh"
