"""Journey pages worded in both languages from the same numbers."""

from __future__ import annotations

import re

import pytest

from gpt2viz.app import i18n
from gpt2viz.app.journey_text import page_heading, page_text, page_title
from gpt2viz.core.viewmodels.journey import PAGES, journey
from gpt2viz.core.model_folder.locations import resolve_model
from tests.core.viewmodels.test_viewmodels import make_session

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def pages():
    return journey(make_session(resolve_model(None), steps=1))


@pytest.fixture
def zh(qapp):
    i18n.install("zh", qapp)
    yield
    i18n.install("en", qapp)


def _numbers_in(text: str) -> list[str]:
    return re.findall(r"\d+(?:[.,]\d+)*%?", text)


def test_every_page_is_worded_in_english(pages, qapp):
    i18n.install("en", qapp)
    for p in pages:
        title, text = page_title(p.key), page_text(p.key, p.numbers)
        assert title and len(text) > 80 and not CJK.search(title)
    assert [p.key for p in pages] == list(PAGES)


def test_titles_are_unnumbered_and_the_panel_heading_numbers_them_once(qapp, zh):
    # the report puts its own section numbers in front of these titles: a number in the title gave "1. 2. ..."
    for lang in ("en", "zh"):
        i18n.install(lang, qapp)
        for i, key in enumerate(PAGES):
            title = page_title(key)
            assert not re.match(r"\s*\d", title), (lang, title)
            assert page_heading(key) == f"{i + 1}. {title}"


def test_chinese_pages_carry_the_same_numbers(pages, qapp, zh):
    for p in pages:
        zh_text = page_text(p.key, p.numbers)
        assert CJK.search(page_title(p.key)) and CJK.search(zh_text), p.key
        i18n.install("en", qapp)
        en_text = page_text(p.key, p.numbers)
        i18n.install("zh", qapp)
        # numbers are formatted the same way in both languages (tokens may add digits of their own)
        assert set(_numbers_in(en_text)) - set(_numbers_in(zh_text)) <= {"0", "1"}, p.key


def test_bpe_page_shows_the_split(pages, qapp):
    i18n.install("en", qapp)
    tokens = next(p for p in pages if p.key == "tokens")
    text = page_text("tokens", tokens.numbers)
    assert "un|bel|iev|able" in text and "␣unbelievable" in text
