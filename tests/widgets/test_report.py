"""The journey report: one section per stage, the prompt and the chosen token in its text, no blank page."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import unicodedata

import numpy as np
import pytest
from PySide6.QtGui import QImage

from gpt2viz.app import report_text as rt
from gpt2viz.cli import main as cli_main
from gpt2viz.core.engine.model import Model

needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None or shutil.which("pdftoppm") is None,
                                   reason="poppler-utils (pdftotext, pdftoppm) not installed")
PROMPT = "The capital of France is"


def pdf_text(path) -> str:
    return subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def greedy_next(folder, prompt: str) -> str:
    m = Model(folder)
    out, _ = m.run(m.tokenizer.encode(prompt), keep_all_logits=True)
    return m.tokenizer.token_display(int(np.argmax(out["logits"][-1])))


@pytest.fixture(scope="module")
def report(exported, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "journey.pdf"
    assert cli_main(["report", "--prompt", PROMPT, "--model", str(exported["l4h2e24"]), "--temperature", "0",
                     "--out", str(out)]) == 0
    return out


@needs_poppler
def test_report_has_one_section_per_stage_in_order_with_prompt_and_chosen_token(report, exported):
    text = pdf_text(report)
    flat = re.sub(r"\s+", " ", text)
    where = [flat.find(f"{i + 1}. {rt.section_title(k)}") for i, k in enumerate(rt.SECTIONS)]
    assert all(w >= 0 for w in where), [k for k, w in zip(rt.SECTIONS, where) if w < 0]
    assert where == sorted(where)  # tokens first, the KV cache last
    assert "Who wrote the answer" in flat and "Reproducibility" in flat
    assert PROMPT in flat
    assert greedy_next(exported["l4h2e24"], PROMPT) in flat  # the chosen token, as the report names it
    sha = Model(exported["l4h2e24"]).manifest["files"]["model.onnx"]
    assert sha[:40] in flat.replace(" ", "")  # the reproducibility footer: the model's hash


@needs_poppler
def test_every_page_of_the_report_is_drawn(report, tmp_path):
    subprocess.run(["pdftoppm", "-r", "20", "-png", str(report), str(tmp_path / "p")], check=True)
    pages = sorted(tmp_path.glob("p-*.png"))
    assert len(pages) >= len(rt.SECTIONS) + 2  # title page, sections, footer
    for page in pages:
        img = QImage(str(page)).convertToFormat(QImage.Format_Grayscale8)
        a = np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes())
        assert (a < 200).sum() > 50, f"{page.name} is blank"


def test_html_report_is_self_contained(exported, tmp_path):
    out = tmp_path / "r.html"
    assert cli_main(["report", "--prompt", PROMPT, "--model", str(exported["l3h4e32"]), "--steps", "1",
                     "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count("data:image/png;base64,") >= 8 and "src='fig-" not in page
    assert PROMPT in page and all(rt.section_title(k) in page for k in rt.SECTIONS)
    # each section numbered once, in order: "3. Where it stands", not "3. 4. Where it stands"
    headings = re.findall(r"<h2 style='page-break-before: always'>(.*?)</h2>", page)[:len(rt.SECTIONS)]
    assert headings == [f"{i + 1}. {html.escape(rt.section_title(k))}" for i, k in enumerate(rt.SECTIONS)]
    assert not any(re.match(r"\d+\.\s*\d+\.", h) for h in headings), headings
    contents = re.findall(r"<li>(.*?)</li>", page)  # an <ol>: the list numbers them
    assert contents and not any(re.match(r"\s*\d", c) for c in contents), contents


def test_report_refuses_bad_output(exported, tmp_path, capsys):
    m = str(exported["l2h2e16"])
    assert cli_main(["report", "--prompt", "Hi", "--model", m, "--out", str(tmp_path / "r.docx")]) == 2
    assert ".pdf" in capsys.readouterr().err
    (tmp_path / "r.pdf").write_bytes(b"keep")
    assert cli_main(["report", "--prompt", "Hi", "--model", m, "--out", str(tmp_path / "r.pdf")]) == 2
    assert "--force" in capsys.readouterr().err and (tmp_path / "r.pdf").read_bytes() == b"keep"


@needs_poppler
def test_report_from_the_app(stepped_window, tmp_path):
    win = stepped_window("l2h2e16")
    win.export_report(str(tmp_path / "app.pdf"))
    text = re.sub(r"\s+", " ", pdf_text(tmp_path / "app.pdf"))
    assert PROMPT in text and rt.section_title("kv_cache") in text


@needs_poppler
def test_lang_zh_gives_chinese_text(exported, tmp_path):
    out = tmp_path / "zh.pdf"
    assert cli_main(["report", "--prompt", "法国的首都是", "--model", str(exported["l2h2e16"]), "--lang", "zh",
                     "--out", str(out)]) == 0
    text = unicodedata.normalize("NFKC", pdf_text(out))  # pdftotext may give CJK radicals (⾸) for 首
    assert "法国的首都是" in text  # Chinese survives into the PDF (a CJK font is embedded)
    from gpt2viz.headless import install_language

    # the catalogue is committed: a report left in English is a bug, not a reason to skip
    loaded = install_language("zh") == "zh" and rt.section_title("tokens") != "Tokens: the text becomes numbers"
    install_language("en")
    assert loaded, "the committed Chinese catalogue did not translate the report's texts"
    assert re.search(r"[\u4e00-\u9fff]{2,}", text.replace("法国的首都是", ""))  # the report's own words


def test_reproducibility_settings_line_is_translated(exported, tmp_path):
    from gpt2viz.headless import install_language

    assert install_language("zh") == "zh", "the committed Chinese catalogue did not load"
    install_language("en")
    out = tmp_path / "zh.html"
    assert cli_main(["report", "--prompt", PROMPT, "--model", str(exported["l2h2e16"]), "--lang", "zh",
                     "--temperature", "0", "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    row = re.search(r"<tr><td><b>采样设置</b></td><td>(.*?)</td></tr>", page)
    assert row and "温度 0" in row.group(1) and "随机种子" in row.group(1) and "temperature" not in row.group(1)
    assert re.search(r"第\d+层·", page)  # the attribution's part names too ("第1层·头0", not "L1.H0")
    assert "carried by head" not in page


def test_report_and_figures_write_top_k_the_same_way(stepped_window):
    # top-k 0 was "none" in the report's sampling section, "0" in its Settings row and "off" in the figures
    from gpt2viz.app.stages import explain
    from gpt2viz.core.session.session import CHOOSE, Selection
    from gpt2viz.core.viewmodels.pipeline import pipeline_summary
    from gpt2viz.widgets.report import build_document
    from gpt2viz.widgets.snapshot import figure_of

    win = stepped_window("l2h2e16")
    st = win.state
    for top_k, shown in ((0, "off"), (3, "3")):
        st.set_sampling(temperature=0.7, top_k=top_k, top_p=1.0, seed=1)
        page, _ = build_document(st, scale=0.5)
        assert page.count(f"top-k {shown}") == 2, top_k  # the sampling section and the Settings row
        assert "top-k none" not in page and "top-k 0," not in page
        assert f"top-k {shown}," in figure_of(st, "chart").caption
        s = st.session("A")
        ps = pipeline_summary(s, Selection(position=None, stage=CHOOSE, layer=0, head=0))
        assert f"top-k {shown}," in explain(CHOOSE, ps, s.model.tokenizer.token_display)
