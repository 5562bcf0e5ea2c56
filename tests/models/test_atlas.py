"""The shipped default model tells the seed story, measured on the committed files with gpt2viz's own code."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpt2viz.cli import main as cli_main
from gpt2viz.core.model_folder.locations import DEFAULT_MODEL, bundled_models_dir, resolve_model
from gpt2viz.core.engine.model import Model

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts" / "atlas"))
import evaluate  # noqa: E402
from facts import FACTS  # noqa: E402
from facts_zh import FACTS_ZH  # noqa: E402


@pytest.fixture(scope="module")
def atlas():
    return Model(resolve_model(None))


def test_atlas_is_the_default_and_small():
    folder = resolve_model(None)
    assert folder == bundled_models_dir() / DEFAULT_MODEL
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())  # saes/ and transcoders/ included
    assert size <= 50 * 2**20
    m = json.loads((folder / "gpt2viz.json").read_text())
    assert m["config"]["vocab_size"] == 50257 and m["validation"]["max_relative"] <= 1e-4


def test_cli_chooses_paris(capsys):
    code = cli_main(["run", "--prompt", "The capital of France is", "--steps", "1", "--temperature", "0", "--json"])
    out, err = capsys.readouterr()
    step = json.loads(out)
    assert code == 0 and step["token"] == " Paris" and 0.55 <= step["prob"] <= 0.9
    assert "gpt2viz export gpt2" in err  # the path to real GPT-2, in one line


def test_capitals_of_the_fact_table(atlas):
    results = evaluate.greedy_capitals(atlas)
    assert len(results) == len(FACTS) >= 100
    assert sum(r["correct"] for r in results) / len(results) >= 0.95


def test_paris_is_likely_but_not_certain(atlas):
    s = evaluate.seed_story(atlas)
    assert s["paris_is_top1"] and 0.55 <= s["p_paris"] <= 0.9
    assert s["entropy"] >= 0.8  # so temperature / top-k / top-p visibly act on the story's own prompt
    runners_up = {t for t, _ in s["top"][1:6]}
    assert len(runners_up & {" a", " the", " known", " located", " also", " one"}) >= 4


def test_chinese_prompt_continues_with_paris(atlas):
    assert evaluate.chinese_story(atlas)["continuation"].startswith("巴黎")
    results = evaluate.greedy_capitals_zh(atlas)
    assert len(results) == len(FACTS_ZH) == len(FACTS)
    assert sum(r["correct"] for r in results) / len(results) >= 0.85


def test_king_minus_man_plus_woman_is_near_queen(atlas):
    first = evaluate.analogies(atlas)[0]
    assert first["query"] == " king - man + woman" and first["hit"], first


def test_attention_and_logit_lens_tell_the_story(atlas):
    s = evaluate.seed_story(atlas)
    assert s["best_head"]["weight_on_france_and_capital"] >= 0.7
    ranks = s["lens_rank_of_paris"]
    assert ranks[-1] == 0 and ranks[0] > 10
    assert all(b <= a for a, b in zip(ranks, ranks[1:]))  # never falls back as depth grows
    assert s["lens_prob_of_paris"][-1] > s["lens_prob_of_paris"][1]


def test_open_prompts_leave_room_for_temperature(atlas):
    for prompt, entropy in evaluate.open_entropy(atlas).items():
        assert entropy >= 2.0, prompt


def test_story_world_continues_grammatically(atlas):
    samples = evaluate.world_samples(atlas, n=8, seeds=())
    assert samples["Once upon a time"][0].startswith(", there was a")
    assert samples["The king and"][0].startswith(" the queen")
    entropy = evaluate.open_entropy(atlas, ["Once upon a time, there was a", "The boy", "She was a"])
    assert all(e >= 2.0 for e in entropy.values()), entropy  # many good continuations


def test_models_lists_atlas(capsys):
    cli_main(["models", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert any(r["name"] == "atlas" and r["n_params"] == 7655552 for r in rows)


def test_tokenizer_rebuild_script_matches_committed(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    import build_tokenizer

    out = tmp_path / "tokenizer.json"
    build_tokenizer.build(out)
    a = json.loads(out.read_text())
    b = json.loads((bundled_models_dir() / "atlas" / "tokenizer.json").read_text())
    assert a == b


def test_atlas_takes_interventions_france_moves_to_is_in_the_middle_blocks(atlas):
    """The bundled folder was upgraded in place (format 3): ablation and patching work on it, and patching
    the residual stream from "Germany" shows the fact travelling from " France" to " is" between the first
    and the last block (the figures the README cites)."""
    import numpy as np

    from gpt2viz.core.interventions import HeadAblation
    from gpt2viz.core.analysis.patching import patching_table

    ids = atlas.tokenizer.encode("The capital of France is")
    paris = atlas.tokenizer.encode(" Paris")[0]

    def p_paris(ivs):
        x = atlas.run(ids, interventions=ivs)[0].last_logits.astype(np.float64)
        e = np.exp(x - x.max())
        return e[paris] / e.sum()

    c = atlas.config
    clean = p_paris(())
    probs = [p_paris((HeadAblation(L, H),)) for L in range(c.n_layer) for H in range(c.n_head)]
    assert min(probs) < clean - 0.05  # some head matters, measurably
    t = patching_table(atlas, ids, atlas.tokenizer.encode("The capital of Germany is"), paris, "resid_pre")
    france, last = 3, len(ids) - 1
    assert t.metric[0, france] > 0.99 and t.metric[c.n_layer - 1, last] > 0.95
    assert t.metric[c.n_layer - 1, france] < 0.05 and t.metric[0, last] < 0.05


def test_atlas_is_the_current_format_and_its_layernorm_hooks_are_transformerlens(atlas):
    """The bundled folder carries the LayerNorm hooks in its file (nothing made in memory): hook_scale and
    hook_normalized (before the weight and bias) are their definition from the LayerNorm's input."""
    import numpy as np

    from gpt2viz.core.model_folder.manifest import FORMAT_VERSION

    assert atlas.manifest["format_version"] == FORMAT_VERSION and atlas.unchecked_hooks == ()
    assert max(atlas.manifest["upgrades"][-1]["layernorm_relative_to_definition"].values()) <= 1e-6
    trace, _ = atlas.run(atlas.tokenizer.encode("The capital of France is"), hooks=atlas.hook_names)
    eps = atlas.manifest["config"]["layer_norm_epsilon"]
    for L in range(atlas.config.n_layer):
        for ln, source in (("ln1", "hook_resid_pre"), ("ln2", "hook_resid_mid")):
            x = trace[f"blocks.{L}.{source}"].astype(np.float64)
            centred = x - x.mean(-1, keepdims=True)
            scale = np.sqrt((centred ** 2).mean(-1, keepdims=True) + eps)
            np.testing.assert_allclose(trace[f"blocks.{L}.{ln}.hook_scale"], scale, rtol=1e-6)
            np.testing.assert_allclose(trace[f"blocks.{L}.{ln}.hook_normalized"], centred / scale, rtol=0, atol=1e-5)
