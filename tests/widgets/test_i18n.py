"""Language switching live, Chinese pictures, the CJK font warning, and the journey panel."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt

from gpt2viz.app import i18n
from gpt2viz.cli import main as cli_main
from gpt2viz.core.viewmodels.journey import PAGES, journey_page
from gpt2viz.widgets.fonts import has_cjk_font
from gpt2viz.widgets.view_names import TAB

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def english(qapp):
    i18n.install("en", qapp)
    yield
    i18n.install("en", qapp)  # the language is process-wide: leave English for the next test


@pytest.fixture
def win(stepped_window, english):
    return stepped_window("l2h2e16")


def test_switching_language_changes_the_window_live(win, qtbot):
    assert win.run_btn.text() == "Run" and win.menus["model"].title() == "&Model"
    win.set_language("zh")
    assert win.run_btn.text() == "运行"
    assert win.menus["model"].title() == "模型(&M)"
    assert win.windowTitle().startswith("gpt2viz —— ")
    assert win.detail.tabText(0) == "词元"
    assert win.controls.step_btn.text() == "单步 ▶"
    assert CJK.search(win.chart.title.text())  # drawn texts are re-rendered, not only fixed labels
    assert CJK.search(win.pipeline.explanation.text())
    assert CJK.search(win.status.text())
    assert win.language_actions["zh"].isChecked() and not win.language_actions["en"].isChecked()
    assert win.state.settings.text(i18n.SETTINGS_KEY) == "zh"  # remembered for the next start
    win.detail.setCurrentWidget(win.detail.views["MLP"])
    qtbot.waitUntil(lambda: bool(CJK.search(win.detail.views["MLP"].caption.text())), timeout=5000)
    win.set_language("en")
    assert win.run_btn.text() == "Run" and win.detail.tabText(0) == "Tokens"
    assert not CJK.search(win.pipeline.explanation.text())


def test_hidden_views_catch_up_after_a_switch(win, qtbot):
    win.detail.setCurrentWidget(win.detail.views["Tokens"])
    win.set_language("zh")
    lens = win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(lens)
    qtbot.waitUntil(lambda: bool(CJK.search(lens.caption.text())), timeout=5000)
    assert lens.table.model().headerData(0, Qt.Vertical) == "嵌入"


def test_zh_svg_snapshot_has_chinese_text(tmp_path, exported, english):
    out = tmp_path / "p.svg"
    assert cli_main(["snapshot", "--prompt", "The capital of France is", "--model", str(exported["l2h2e16"]),
                     "--view", "pipeline", "--lang", "zh", "--out", str(out)]) == 0
    svg = out.read_text(encoding="utf-8")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert any(CJK.search(t) for t in texts), texts[:10]
    assert "模块" in texts  # a cell title ("模块 0"; Qt writes each script run as its own <text>)
    assert "流水线" in svg  # the caption (also the SVG's title)
    # the default stays English: the same command gives the same picture on every machine
    assert cli_main(["snapshot", "--prompt", "The capital of France is", "--model", str(exported["l2h2e16"]),
                     "--view", "pipeline", "--out", str(tmp_path / "e.svg")]) == 0
    assert not CJK.search((tmp_path / "e.svg").read_text(encoding="utf-8").split("<desc>")[0])


def test_cjk_font_detection():
    assert has_cjk_font(["Noto Sans CJK SC"])
    assert not has_cjk_font([])
    assert not has_cjk_font(["", "Fallback"])


def test_missing_cjk_font_warns_once(stepped_window, english, monkeypatch):
    import gpt2viz.widgets.main_window as mw

    monkeypatch.setattr(mw, "has_cjk_font", lambda: False)
    w = stepped_window("l2h2e16")
    assert "fonts-noto-cjk" in w.statusBar().currentMessage()
    w.statusBar().clearMessage()
    assert w.check_fonts() is False
    assert w.statusBar().currentMessage() == ""  # once, not at every check


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_journey_visits_every_stage_with_the_view_models_numbers(win, qtbot, lang):
    i18n.install(lang)
    win.open_journey()
    j = win.journey
    assert win.journey_dock.isVisible()
    seen = []
    for k, key in enumerate(PAGES):
        if k:
            qtbot.keyClick(win, Qt.Key_PageDown)
        assert j.key == key
        seen.append(key)
        expected = journey_page(win.state.session("A"), key)
        assert j.page.numbers == expected.numbers
        # the view that shows these numbers is in front, and the pipeline has the stage selected
        if expected.view in TAB:
            assert win.detail.currentWidget() is win.detail.views[TAB[expected.view]], key
        stage = win.state.selection.stage
        assert stage == expected.stage, key
        assert (CJK.search(j.title.text()) is not None) == (lang == "zh")
    assert seen == list(PAGES) and not j.next_btn.isEnabled()
    qtbot.keyClick(win, Qt.Key_PageUp)
    assert j.key == PAGES[-2]
    qtbot.keyClick(win, Qt.Key_Left, Qt.AltModifier)
    assert j.key == PAGES[-3]


def test_journey_follows_the_sliders(win):
    win.open_journey(PAGES.index("choose"))
    before = win.journey.text.text()
    win.state.set_sampling(temperature=1.5, top_k=3)
    assert win.journey.page.numbers["top_k"] == 3 and win.journey.text.text() != before


def test_every_menu_text_switches_language_live(win):
    """Every action of every menu is retitled by the switch, "Report…" and "Dark figures" included."""
    names = ("report", "dark", "open", "get", "quit", "export_view", "export_layers", "export_data", "journey",
             "compare", "patching", "causal", "clear_ivs")
    english = {n: win.actions_by_name[n].text() for n in names}
    assert english["report"].startswith("&Report") and english["dark"] == "Dark &figures"
    win.set_language("zh")
    for n in names:
        assert CJK.search(win.actions_by_name[n].text()), (n, win.actions_by_name[n].text())
    menu_texts = [a.text() for m in win.menus.values() for a in m.actions() if a.text() and not a.isSeparator()]
    language_names = set(i18n.LANGUAGES.values())
    assert all(CJK.search(t) or t in language_names for t in menu_texts), menu_texts
    win.set_language("en")
    assert {n: win.actions_by_name[n].text() for n in names} == english
