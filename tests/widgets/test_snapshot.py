"""Exported pictures and data: right size, not blank, captioned, with metadata; safe writes; the CLI."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from gpt2viz.core.session import CHOOSE
from PySide6.QtGui import QImage

from gpt2viz.cli import main as cli_main
from gpt2viz.core.files import WriteError
from gpt2viz.core.runtime import Model
from gpt2viz.core.trace_export import export_trace
from gpt2viz.widgets.snapshot import CAPTION_H, VIEWS, export_all_layers, export_view, view_widget


@pytest.fixture
def win(stepped_window):
    return stepped_window("l4h2e24")


def pixel_std(img: QImage) -> float:
    img = img.convertToFormat(QImage.Format_RGB32)
    a = np.frombuffer(img.constBits(), np.uint8, img.sizeInBytes()).reshape(img.height(), -1)
    return float(a.std())


@pytest.mark.parametrize("view", VIEWS)
def test_png_of_every_view_has_size_content_caption_and_metadata(win, tmp_path, view):
    out = export_view(win, view, tmp_path / f"{view}.png", scale=1.5)
    img = QImage(str(out))
    w = view_widget(win, view)
    assert (img.width(), img.height()) == (round(w.width() * 1.5), round((w.height() + CAPTION_H) * 1.5))
    assert pixel_std(img) > 5  # not blank
    assert img.text("Model") == "l4h2e24" and img.text("Prompt") == "The capital of France is"
    assert img.text("Step") == "1" and img.text("View") == view
    assert "gpt2viz · l4h2e24" in img.text("Title")


def test_svg_is_xml_with_the_views_text(win, tmp_path):
    win.state.select_block(2)
    out = export_view(win, "attention", tmp_path / "a.svg")
    root = ET.parse(out).getroot()
    text = " ".join("".join(e.itertext()) for e in root.iter() if e.tag.endswith("text"))
    assert "France" in text and "layer 2" in text  # token labels and the caption are real text
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
    one = QImage(str(tmp_path / index["files"][0]["file"]))
    assert sheet.width() == 2 * one.width() and sheet.height() == 2 * one.height()
    assert seen[-1] == (4, 4)
    assert win.state.stage == CHOOSE  # the selection is put back


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
    assert "layer 1 · head 1" in title  # the caption says what the picture shows
    assert cli_main([*base, "--out", str(tmp_path / "h.svg")]) == 2
    assert "--force" in capsys.readouterr().err
    assert cli_main([*base, "--out", str(tmp_path / "nope" / "h.png")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli_main([*base, "--out", "/proc/gpt2viz-test.png"]) == 2  # a folder nobody can write into
    assert "cannot write" in capsys.readouterr().err
    assert cli_main([*base, "--layer", "9", "--out", str(tmp_path / "x.png")]) == 2
    assert "--layer" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()
    d = tmp_path / "layers"
    d.mkdir()
    assert cli_main(["snapshot", "--prompt", "Hi", "--model", m, "--view", "mlp", "--all-layers", "--out", str(d)]) == 0
    assert len(json.loads((d / "index.json").read_text())["files"]) == 4
    assert cli_main(["snapshot", "--prompt", "Hi", "--model", m, "--view", "data", "--out", str(tmp_path / "t.npz")]) == 0
    assert (tmp_path / "t.json").is_file()
    assert os.path.getsize(tmp_path / "t.npz") > 1000
