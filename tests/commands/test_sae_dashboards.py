"""`gpt2viz sae-dashboards`: builds dashboard.npz beside each SAE folder named, the JSON line says what it did, and
a model folder without SAEs is one line and status 2."""

from __future__ import annotations

import json

import numpy as np

from gpt2viz.cli import main
from gpt2viz.core.features.activations import shipped_texts
from gpt2viz.core.features.dashboards import load_dashboards
from gpt2viz.core.features.saelens_folder import read_sae, write_sae
from tests.core.features.test_steering import random_sae


def test_builds_the_dashboards_of_a_folder(exported, tmp_path, capsys):
    tiny_folder = exported["l3h4e32"]
    folder = write_sae(random_sae(1, "topk", seed=2), tmp_path / "sae")
    text = tmp_path / "t.txt"
    text.write_text("\n".join(shipped_texts()[:2]) + "\n", encoding="utf-8")
    code = main(["sae-dashboards", "--model", str(tiny_folder), "--sae", str(folder), "--text", str(text),
                 "--context", "24", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["hook"] == "blocks.1.hook_resid_pre" and out["features"] == 64
    dash = load_dashboards(read_sae(folder))
    assert dash.meta["corpus"] == str(text) and dash.meta["tokens"] == out["tokens"]
    assert out["fired"] == int((dash.arrays["density"] > 0).sum()) > 0
    assert np.isfinite(dash.arrays["promote_values"]).all()


def test_a_model_without_saes_is_one_line(exported, capsys):
    tiny_folder = exported["l3h4e32"]
    assert main(["sae-dashboards", "--model", str(tiny_folder)]) == 2
    err = capsys.readouterr().err.strip()
    assert "ships no SAE" in err and len(err.splitlines()) == 1
