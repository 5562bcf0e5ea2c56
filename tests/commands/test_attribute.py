"""`gpt2viz attribute`: the JSON contract, the table, logit differences and bad tokens."""

from __future__ import annotations

import json

import pytest

from gpt2viz.cli import main


def _run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_contract(capsys, exported):
    code, out, _ = _run(capsys, "attribute", "--prompt", "The capital of France is", "--model",
                        str(exported["l3h4e32"]), "--steps", "1", "--json")
    assert code == 0
    js = json.loads(out)
    assert {"target_id", "target", "logit", "ln_bias_term", "components", "by_source", "top_neurons"} <= set(js)
    assert js["position"] == 5  # the newest position after one greedy step
    for c in js["components"]:
        assert c["kind"] in ("embed", "pos_embed", "head", "attn_bias", "mlp")
        assert ("layer" in c) == (c["kind"] != "embed" and c["kind"] != "pos_embed")
        assert ("head" in c) == (c["kind"] == "head")
    total = sum(c["value"] for c in js["components"]) + js["ln_bias_term"]
    assert abs(total - js["logit"]) <= 1e-4 * abs(js["logit"])
    s = js["by_source"][0]
    assert set(s) == {"layer", "head", "source_position", "source_token", "value"}


def test_vs_makes_every_value_a_difference(capsys, exported):
    base = ["attribute", "--prompt", "The capital of France is", "--model", str(exported["l2h2e16"]), "--json"]
    a = json.loads(_run(capsys, *base, "--target", " Paris")[1])
    b = json.loads(_run(capsys, *base, "--target", " London")[1])
    d = json.loads(_run(capsys, *base, "--target", " Paris", "--vs", " London")[1])
    assert abs(d["logit"] - (a["logit"] - b["logit"])) <= 1e-4
    for ca, cb, cd in zip(a["components"], b["components"], d["components"]):
        assert abs(cd["value"] - (ca["value"] - cb["value"])) <= 1e-5
    assert d["vs"] == " London"


def test_table_shows_the_top_15(capsys, exported):
    model = str(exported["l3h4e32"])  # 20 components: more than the table shows
    code, out, _ = _run(capsys, "attribute", "--prompt", "The capital of France is", "--model", model,
                        "--target", " Paris")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("logit of ␣Paris")
    rows = [ln for ln in lines if ln[:4].strip().isdigit()]
    assert len(rows) == 15 and rows[0].split()[0] == "1"
    values = [abs(float(r.split()[-2])) for r in rows]
    assert values == sorted(values, reverse=True)


@pytest.mark.parametrize("flag", ["--target", "--vs"])
def test_a_target_that_is_not_one_token_exits_2(capsys, tiny_model_dir, flag):
    code, out, err = _run(capsys, "attribute", "--prompt", "Hi", "--model", str(tiny_model_dir), flag, " Paris France")
    assert code == 2 and out == ""
    assert err.startswith("gpt2viz: error:") and len(err.strip().splitlines()) == 1
