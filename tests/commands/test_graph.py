"""`gpt2viz graph`: a transcoder set on disk (circuit-tracer's or SAELens folders) -> a graph JSON file; its target,
thresholds and scores; bad input is one line and status 2."""

from __future__ import annotations

import json

import pytest

from gpt2viz.cli import main
from gpt2viz.core.features.transcoder import random_transcoder, write_circuit_tracer, write_saelens_transcoder

PROMPT = "The capital of France is"


@pytest.fixture(scope="module")
def tiny(checkpoints, tmp_path_factory):
    from gpt2viz.core.export.exporter import export_model

    return str(export_model(str(checkpoints["l2h2e16"]), tmp_path_factory.mktemp("graph") / "l2h2e16",
                            progress=lambda m: None))


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    root = tmp_path_factory.mktemp("tcs")
    tcs = [random_transcoder(L, 16, 48, k=4, seed=L) for L in range(2)]
    write_circuit_tracer(tcs, root / "ct")
    for tc in tcs:
        write_saelens_transcoder(tc, root / "sl" / tc.cfg.hook_name)
    return root


def _graph(capsys, tiny, tcs, out, *extra):
    code = main(["graph", "--model", tiny, "--prompt", PROMPT, "--transcoders", str(tcs), "--out", str(out), *extra])
    o, e = capsys.readouterr()
    return code, o, e


def test_both_formats_give_the_same_graph_and_the_target_leads(capsys, tiny, sets, tmp_path):
    code, out, _ = _graph(capsys, tiny, sets / "ct", tmp_path / "a.json", "--target", " Paris")
    assert code == 0 and "replacement score" in out
    a = json.loads((tmp_path / "a.json").read_text())
    code, _, _ = _graph(capsys, tiny, sets / "sl", tmp_path / "b.json", "--target", " Paris")
    b = json.loads((tmp_path / "b.json").read_text())
    assert a["nodes"] == b["nodes"] and a["links"] == b["links"]
    target = [n for n in a["nodes"] if n["is_target_logit"]]
    assert len(target) == 1 and target[0]["feature"] == 6342  # " Paris"
    info = a["metadata"]["info"]
    assert 0 < info["replacement_score"] <= 1 and 0 < info["completeness_score"] <= 1


def test_thresholds_shrink_the_graph(capsys, tiny, sets, tmp_path):
    _graph(capsys, tiny, sets / "ct", tmp_path / "big.json", "--node-threshold", "1", "--edge-threshold", "1")
    _graph(capsys, tiny, sets / "ct", tmp_path / "small.json", "--node-threshold", "0.3", "--edge-threshold", "0.6")
    big, small = (json.loads((tmp_path / f).read_text()) for f in ("big.json", "small.json"))
    assert len(small["links"]) < len(big["links"]) and len(small["nodes"]) <= len(big["nodes"])
    assert small["metadata"]["node_threshold"] == 0.3


@pytest.mark.parametrize("extra,message", [
    (["--target", "unbelievable"], "tokens"),
    (["--node-threshold", "2"], "between 0 and 1"),
])
def test_bad_input_is_one_line(capsys, tiny, sets, tmp_path, extra, message):
    code, _, err = _graph(capsys, tiny, sets / "ct", tmp_path / "x.json", *extra)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_another_suffix_or_a_missing_set_is_refused(capsys, tiny, sets, tmp_path):
    code, _, err = _graph(capsys, tiny, sets / "ct", tmp_path / "x.pdf")
    assert code == 2 and ".json, .png or .svg" in err
    code, _, err = _graph(capsys, tiny, tmp_path, tmp_path / "x.json")
    assert code == 2 and "no transcoders" in err
    code = main(["graph", "--model", tiny, "--prompt", PROMPT, "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and "ships no transcoders" in err and "train-sae --transcoder" in err


def test_png_and_svg_draw_the_graph_the_json_holds(capsys, tiny, sets, tmp_path, qapp):
    from PySide6.QtGui import QImage

    _graph(capsys, tiny, sets / "ct", tmp_path / "g.json", "--target", " Paris")
    data = json.loads((tmp_path / "g.json").read_text())
    code, out, _ = _graph(capsys, tiny, sets / "ct", tmp_path / "g.png", "--target", " Paris")
    assert code == 0 and "g.png" in out
    img = QImage(str(tmp_path / "g.png"))
    assert not img.isNull() and img.width() > 1000
    from gpt2viz.core.viewmodels.graph_layout import graph_layout

    lay = graph_layout(data)
    assert img.text("nodes") == str(len(lay.nodes)) and img.text("links") == str(len(lay.edges))
    code, _, _ = _graph(capsys, tiny, sets / "ct", tmp_path / "g.svg", "--target", " Paris")
    svg = (tmp_path / "g.svg").read_text(encoding="utf-8")
    assert code == 0 and "<svg" in svg and "Paris" in svg and "block 1" in svg
