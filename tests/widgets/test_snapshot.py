"""Exported pictures and data: right size, not blank, captioned, with metadata; safe writes; the CLI."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from gpt2viz.core.session.session import CHOOSE
from PySide6.QtGui import QImage

from gpt2viz.cli import main as cli_main
from gpt2viz.core.model_folder.files import WriteError
from gpt2viz.core.engine.model import Model
from gpt2viz.core.io.trace_export import export_trace
from gpt2viz.widgets.figures.base import WIDTH, lut
from gpt2viz.widgets.snapshot import VIEWS, export_all_layers, export_view


@pytest.fixture
def win(stepped_window):
    return stepped_window("l4h2e24")


def pixel_std(img: QImage) -> float:
    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes()).reshape(img.height(), -1)
    return float(a.std())


HEATMAPS = ("embeddings", "attention", "head", "lens")
# what the widgets show and a figure must not: control values, placeholders, hover and click hints
WIDGET_TEXT = ("hover", "click", "Click", "scores (before softmax)", "pattern (after softmax)", "target token",
               "vs token", "threshold", "Previous stage", "Next stage", "Temperature", "Top-k", "Seed", " king",
               "Type three words", "% of total")


def svg_texts(path) -> str:
    root = ET.parse(path).getroot()
    return "\n".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))


@pytest.mark.parametrize("view", VIEWS)
def test_png_of_every_view_is_a_figure_with_caption_and_metadata(win, tmp_path, view):
    out = export_view(win, view, tmp_path / f"{view}.png", scale=1.5)
    img = QImage(str(out))
    assert img.width() == int(np.ceil(WIDTH * 1.5))  # drawn for the page, not the size of a widget
    assert pixel_std(img) > 5  # not blank
    assert img.pixelColor(2, 2).lightness() > 240  # light background by default
    assert img.text("Model") == "l4h2e24" and img.text("Prompt") == "The capital of France is"
    assert img.text("Step") == "1" and img.text("View") == view
    assert "gpt2viz · l4h2e24" in img.text("Description") and img.text("Title")


@pytest.mark.parametrize("view", VIEWS)
def test_svg_of_every_view_has_no_widget_text_and_says_what_it_shows(win, tmp_path, view):
    out = export_view(win, view, tmp_path / f"{view}.svg")
    text = svg_texts(out)
    assert "gpt2viz · l4h2e24" in text and "The capital of France is" in text  # title and caption are text
    for w in WIDGET_TEXT:
        assert w not in text, f"{view} figure carries widget text {w!r}"
    data = out.read_text()
    assert "<text" in data and ("<path" in data or "<rect" in data)  # vector, not one embedded screenshot
    if view in HEATMAPS:
        assert data.count("<image") <= 64  # heatmap cells only


@pytest.mark.parametrize("view", HEATMAPS)
def test_every_heatmap_has_a_colour_bar_with_its_scale(win, tmp_path, view):
    out = export_view(win, view, tmp_path / f"{view}.png", scale=2)
    img = QImage(str(out))
    bars = json.loads(img.text("Colorbars"))
    assert bars, f"{view}: no colour bar"
    for b in bars:
        x, y, w, h = b["rect"]
        table = lut(b["cmap"])
        top = img.pixelColor(int(x + w / 2), int(y + 3))
        bottom = img.pixelColor(int(x + w / 2), int(y + h - 3))
        for got, want in ((top, table[-1]), (bottom, table[0])):  # high at the top, low at the bottom
            assert abs(got.red() - int(want[0])) + abs(got.green() - int(want[1])) + abs(got.blue() - int(want[2])) < 40
        assert b["hi"] > b["lo"]
    text = svg_texts(export_view(win, view, tmp_path / f"{view}.svg"))
    assert any(b["label"] in text for b in bars)  # the scale is labelled, as text


def test_dark_on_request(win, tmp_path):
    img = QImage(str(export_view(win, "chart", tmp_path / "c.png", dark=True)))
    assert img.pixelColor(2, 2).lightness() < 60


def test_svg_is_xml_with_the_views_text(win, tmp_path):
    win.state.select_block(2)
    out = export_view(win, "attention", tmp_path / "a.svg")
    root = ET.parse(out).getroot()
    text = svg_texts(out)
    assert "France" in text and "layer 2" in text and "block 2" in text  # token labels and the caption are real text
    desc = [e.text for e in root.iter() if e.tag.endswith("desc")]
    assert desc and json.loads(desc[0])["Layer"] == "2"


def test_all_layers_export_of_a_4_layer_model(win, tmp_path):
    seen = []
    index = export_all_layers(win, "attention", tmp_path, progress=lambda d, t: seen.append((d, t)) or True)
    pngs = sorted(p.name for p in tmp_path.glob("*.png"))
    assert len(index["files"]) == 4 and [e["layer"] for e in index["files"]] == [0, 1, 2, 3]
    assert len(pngs) == 5 and index["contact_sheet"] in pngs
    on_disk = json.loads((tmp_path / "index.json").read_text())
    assert [e["file"] for e in on_disk["files"]] == [e["file"] for e in index["files"]]
    assert all((tmp_path / e["file"]).is_file() for e in on_disk["files"])
    sheet = QImage(str(tmp_path / index["contact_sheet"]))
    assert pixel_std(sheet) > 5 and index["shared_scale"] == [0.0, 1.0]
    bars = json.loads(sheet.text("Colorbars"))
    assert len(bars) == 1 and (bars[0]["lo"], bars[0]["hi"]) == (0.0, 1.0)  # one colour bar for every panel
    for e in index["files"]:  # the per-layer files use the same scale
        assert [(b["lo"], b["hi"]) for b in json.loads(QImage(str(tmp_path / e["file"])).text("Colorbars"))] == \
            [(0.0, 1.0)]
    assert seen[-1] == (4, 4)
    assert win.state.stage == CHOOSE  # the selection is untouched


def test_all_layers_shares_one_scale_and_creates_the_folder(win, tmp_path):
    win.detail.views["Attention"].mode.setCurrentIndex(1)  # scores: each layer has its own range
    index = export_all_layers(win, "head", tmp_path / "new", ext="svg")
    assert (tmp_path / "new" / "index.json").is_file() and index["contact_sheet"].endswith(".svg")
    lo, hi = index["shared_scale"]
    for e in index["files"]:
        root = ET.parse(tmp_path / "new" / e["file"]).getroot()
        assert json.loads(next(x.text for x in root.iter() if x.tag.endswith("desc")))["Layer"] == str(e["layer"])
    mlp = export_all_layers(win, "mlp", tmp_path / "mlp")
    a, b = mlp["shared_scale"]
    from gpt2viz.core.viewmodels.mlp import mlp_summary
    from gpt2viz.widgets.figures import with_layer

    s = win.state.session("A")
    posts = [mlp_summary(s, selection=with_layer(s.selection, L)).post for L in range(4)]
    assert a == pytest.approx(min(p.min() for p in posts)) and b == pytest.approx(max(p.max() for p in posts))
    with pytest.raises(WriteError, match="does not exist"):
        export_all_layers(win, "mlp", tmp_path / "no" / "such")


def test_cancel_stops_the_all_layers_export(win, tmp_path):
    index = export_all_layers(win, "mlp", tmp_path, progress=lambda d, t: d < 2)
    assert len(index["files"]) == 2


def test_safe_writes(win, tmp_path):
    with pytest.raises(WriteError, match="does not exist"):
        export_view(win, "chart", tmp_path / "missing" / "c.png")
    target = tmp_path / "c.png"
    target.write_bytes(b"keep me")
    with pytest.raises(WriteError, match="--force"):
        export_view(win, "chart", target)
    assert target.read_bytes() == b"keep me"
    with pytest.raises(WriteError, match=".png or .svg"):
        export_view(win, "chart", tmp_path / "c.jpg")
    export_view(win, "chart", target, force=True)
    assert QImage(str(target)).width() > 0
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".part")]  # no half-written leftovers


def test_data_export_equals_a_full_prefill(win, tmp_path):
    st = win.state
    npz, js = export_trace(st.history, st.model, st.sampling, tmp_path / "trace.npz")
    data = np.load(npz)
    meta = json.loads(js.read_text())
    full, _ = Model(st.model.folder).run(list(st.history.tokens), keep_all_logits=True)
    assert meta["ids"] == list(st.history.tokens) and meta["settings"]["seed"] == st.sampling.seed
    assert meta["model"]["files_sha256"]["model.onnx"] == st.model.manifest["files"]["model.onnx"]
    for name in ("blocks.3.attn.hook_pattern", "blocks.1.hook_resid_post", "blocks.2.mlp.hook_post"):
        np.testing.assert_allclose(data[name], full[name], atol=1e-4)
    s = data["blocks.0.attn.hook_attn_scores"]
    assert np.isnan(s[:, 0, 1:]).all() and not np.isnan(s[:, 5, :]).any()
    np.testing.assert_allclose(data["logits_last"], full["logits"][-1], atol=1e-3)


def test_cli_snapshot_and_exit_codes(capsys, tmp_path, exported):
    m = str(exported["l4h2e24"])
    base = ["snapshot", "--prompt", "Hello there", "--model", m, "--view", "head", "--layer", "1", "--head", "1"]
    assert cli_main([*base, "--out", str(tmp_path / "h.svg")]) == 0
    root = ET.parse(tmp_path / "h.svg").getroot()
    desc = json.loads(next(e.text for e in root.iter() if e.tag.endswith("desc")))
    assert (desc["View"], desc["Layer"], desc["Head"], desc["Prompt"]) == ("head", "1", "1", "Hello there")
    title = "".join(next(e.itertext() for e in root.iter() if e.tag.endswith("title")))
    assert "Block 1, head 1" in title  # the SVG's title is the figure's
    assert "layer 1 · head 1" in svg_texts(tmp_path / "h.svg")  # the caption says what the picture shows
    assert cli_main([*base, "--out", str(tmp_path / "h.svg")]) == 2
    assert "--force" in capsys.readouterr().err
    assert cli_main([*base, "--out", str(tmp_path / "nope" / "h.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli_main([*base, "--out", "/proc/gpt2viz-test.png"]) == 2  # a folder nobody can write into
    assert "cannot write" in capsys.readouterr().err
    assert cli_main([*base, "--layer", "9", "--out", str(tmp_path / "x.png")]) == 2
    assert "--layer" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
    d = tmp_path / "layers"  # created: its parent exists
    assert cli_main(["snapshot", "--prompt", "Hi", "--model", m, "--view", "mlp", "--all-layers", "--out", str(d)]) == 0
    assert len(json.loads((d / "index.json").read_text())["files"]) == 4
    assert cli_main(["snapshot", "--prompt", "Hi", "--model", m, "--view", "mlp", "--all-layers",
                     "--out", str(tmp_path / "a" / "b")]) == 2
    assert "exists" in capsys.readouterr().err
    assert cli_main(["snapshot", "--prompt", "Hi", "--model", m, "--view", "data", "--out", str(tmp_path / "t.npz")]) == 0
    assert (tmp_path / "t.json").is_file()
    assert os.path.getsize(tmp_path / "t.npz") > 1000
