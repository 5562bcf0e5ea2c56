"""`gpt2viz train-sae` and `gpt2viz features`: a trained folder is an SAE the features command reads, seeded runs
give the same SAE, the JSON contract holds against the SAE's own encode, bad input is one line and status 2."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from gpt2viz.cli import main
from gpt2viz.core.features.activations import shipped_texts
from gpt2viz.core.features.saelens_folder import read_sae

PROMPT = "The capital of France is"


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def tiny(checkpoints, tmp_path_factory):
    from gpt2viz.core.export.exporter import export_model

    return str(export_model(str(checkpoints["l2h2e16"]), tmp_path_factory.mktemp("cmd") / "l2h2e16",
                            progress=lambda m: None))


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    path = tmp_path_factory.mktemp("text") / "t.txt"
    path.write_text("\n".join(shipped_texts()[:3]) + "\n", encoding="utf-8")
    return str(path)


def train_args(tiny, text, out, *extra):
    return ["train-sae", "--model", tiny, "--hook", "blocks.1.hook_resid_pre", "--d-sae", "32", "--k", "4",
            "--text", text, "--tokens", "800", "--context", "32", "--steps", "30", "--batch", "128",
            "--threads", "1", "--seed", "3", "--out", str(out), *extra]


def test_train_sae_writes_a_folder_the_features_command_reads(capsys, tiny, text, tmp_path):
    pytest.importorskip("torch")
    code, out, _ = _run(capsys, *train_args(tiny, text, tmp_path / "a", "--json"))
    assert code == 0
    js = json.loads(out)
    assert js["hook"] == "blocks.1.hook_resid_pre" and js["d_sae"] == 32 and js["architecture"] == "topk"
    assert js["train_tokens"] >= 800 and 0 < js["eval_tokens"] and js["mean_l0"] <= 4
    assert {"variance_explained", "dead_features", "seconds"} <= set(js)
    sae = read_sae(tmp_path / "a")
    assert sae.cfg.metadata["gpt2viz_training"]["variance_explained"] == js["variance_explained"]
    assert sae.cfg.metadata["context_size"] == 32 and sae.cfg.k == 4

    # the same seed: the same SAE, byte for byte; the table form prints the numbers
    code, out, err = _run(capsys, *train_args(tiny, text, tmp_path / "b"))
    assert code == 0 and "variance explained" in out and "gathering blocks.1.hook_resid_pre" in err
    assert (tmp_path / "a" / "sae_weights.safetensors").read_bytes() == \
        (tmp_path / "b" / "sae_weights.safetensors").read_bytes()
    code, _, err = _run(capsys, *train_args(tiny, text, tmp_path / "b"))
    assert code == 2 and "exists" in err and err.count("\n") == 1

    # features: the JSON contract, checked against the SAE's own encode of the graph's hook values
    import gpt2viz

    code, out, _ = _run(capsys, "features", "--prompt", PROMPT, "--model", tiny, "--sae", str(tmp_path / "a"),
                        "--top", "3", "--json")
    assert code == 0
    js = json.loads(out)
    assert js["hook"] == "blocks.1.hook_resid_pre" and js["sae"] == str((tmp_path / "a").resolve())
    model = gpt2viz.load(tiny)
    _, trace = model.run_with_cache(PROMPT, names=["blocks.1.hook_resid_pre"])
    f = sae.encode(trace["blocks.1.hook_resid_pre"])
    assert [r["position"] for r in js["positions"]] == list(range(len(f)))
    for r, row in zip(js["positions"], f):
        want = np.argsort(-row)[:3]
        assert [d["feature"] for d in r["features"]] == [int(i) for i in want if row[i] > 0]
        assert [d["activation"] for d in r["features"]] == pytest.approx([float(row[i]) for i in want if row[i] > 0],
                                                                        abs=1e-4)
        assert r["l0"] == int((row > 0).sum()) and 0 <= r["relative_error"]
    code, out, _ = _run(capsys, "features", "--prompt", PROMPT, "--model", tiny, "--sae", str(tmp_path / "a"),
                        "--position", "-1", "--json")
    assert [r["position"] for r in json.loads(out)["positions"]] == [len(f) - 1]
    code, out, _ = _run(capsys, "features", "--prompt", PROMPT, "--model", tiny, "--sae", str(tmp_path / "a"))
    assert code == 0 and "blocks.1.hook_resid_pre: topk SAE, 32 features" in out


def test_features_on_atlas_reads_its_own_saes(capsys):
    code, out, _ = _run(capsys, "features", "--prompt", PROMPT, "--layer", "4", "--position", "3", "--json")
    assert code == 0
    js = json.loads(out)
    assert js["hook"] == "blocks.4.hook_resid_pre" and js["sae"].endswith("saes/blocks.4.hook_resid_pre")
    (row,) = js["positions"]
    assert row["token"] == " France" and 0 < row["l0"] <= 32 and len(row["features"]) == 10
    acts = [d["activation"] for d in row["features"]]
    assert acts == sorted(acts, reverse=True) and acts[-1] > 0


@pytest.mark.parametrize("args,msg", [
    (["features", "--layer", "1"], "has no SAE for blocks.1.hook_resid_pre (it has: none)"),
    (["features", "--position", "9"], "outside the prompt's 5 tokens"),
    (["train-sae", "--hook", "blocks.7.hook_resid_pre", "--out", "X"], "the model has blocks 0..1"),
    (["train-sae", "--hook", "blocks.0.attn.hook_pattern", "--out", "X"], "not one vector per position"),
])
def test_bad_input_is_one_line(capsys, tiny, tmp_path, args, msg):
    args = [a if a != "X" else str(tmp_path / "x") for a in args]
    extra = ["--prompt", PROMPT] if args[0] == "features" else []
    code, out, err = _run(capsys, *args, *extra, "--model", tiny)
    assert code == 2 and msg in err and err.strip().count("\n") == 0 and not out


def test_train_sae_without_torch_says_so(capsys, tiny, text, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    code, _, err = _run(capsys, *train_args(tiny, text, tmp_path / "c"))
    assert code == 2 and "training an SAE needs torch: pip install 'gpt2viz[export]'" in err


def test_run_steer_feature_adds_the_decoder_direction(capsys):
    import gpt2viz
    from gpt2viz.core.features.shipped import open_sae
    from gpt2viz.core.interventions import Steer
    from gpt2viz.core.numeric import softmax

    model = gpt2viz.load("atlas")
    sae = open_sae(model, layer=3)
    ids = model.to_tokens(PROMPT)
    args = ["run", "--prompt", PROMPT, "--steps", "1", "--temperature", "0", "--json"]
    clean = json.loads(_run(capsys, *args)[1])
    code, out, _ = _run(capsys, *args, "--steer-feature", "3.17=12")
    assert code == 0
    js = json.loads(out)
    want = softmax(model.run_with_hooks(ids, [Steer(3, None, sae.W_dec[17], 12.0)])[-1])
    assert [t["prob"] for t in js["top"]] == pytest.approx([float(want[t["id"]]) for t in js["top"]], abs=1e-5)
    assert js["interventions"][0]["kind"] == "steer" and js["interventions"][0]["scale"] == 12.0
    assert abs(js["top"][0]["prob"] - clean["top"][0]["prob"]) > 1e-3 or js["token"] != clean["token"]
    code, _, err = _run(capsys, *args, "--steer-feature", "3.5000=1")
    assert code == 2 and "feature 5000 is out of range" in err
    code, _, err = _run(capsys, *args, "--steer-feature", "3.5")
    assert code == 2 and "LAYER.FEATURE=VALUE" in err
