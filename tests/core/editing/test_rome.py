"""ROME on the bundled model: the update makes the edited prompt's MLP write exactly v*, the story's edit
works ("The capital of France is" -> " Rome", Germany keeps " Berlin"), seeded edits of the fact table reach
the targets, and an edited model saved as a folder reproduces the edit hook by hook."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import gpt2viz
from gpt2viz.cli import main as cli_main
from gpt2viz.core.editing.evaluation import prompt_set, score_edit, stats_text, target_prob
from gpt2viz.core.editing.rome import EditError, EditRequest, compute_edit, subject_last_index
from gpt2viz.core.editing.save import save_edited
from gpt2viz.core.engine.model import Model
from gpt2viz.core.interventions import InterventionError, RankOneEdit

pytestmark = pytest.mark.slow
STORY = EditRequest("The capital of France is", " France", " Rome")
LAYER = 0  # the causal trace's peak MLP layer at " France" on atlas (test_cli_edit_... finds it so)


@pytest.fixture(scope="module")
def atlas():
    return gpt2viz.load("atlas")


@pytest.fixture(scope="module")
def story(atlas):
    return compute_edit(atlas, STORY, LAYER, stats_texts=stats_text(), seed=0)


def test_the_update_makes_the_prompt_write_v_star(atlas, story):
    """W' k = W k + u (v* - W k)(k . u) / (k . u): at the edited prompt's subject the MLP output becomes v*."""
    ids = atlas.to_tokens(STORY.prompt)
    i = subject_last_index(atlas.tokenizer, "", STORY.prompt, STORY.subject)
    name = f"blocks.{LAYER}.hook_mlp_out"
    before, _ = atlas.run(ids, hooks=[name])
    after, _ = atlas.run(ids, hooks=[name], interventions=(story.edit,))
    np.testing.assert_allclose(after[name][i], story.v_star, rtol=1e-4, atol=1e-4)
    assert np.linalg.norm(after[name][i] - before[name][i]) == pytest.approx(story.delta_norm, rel=1e-4)
    assert story.covariance == "text" and story.stats_tokens > 1000
    assert len(story.prefixes) == 21 and story.losses[-1] < story.losses[0]


def test_the_story_edit_works_and_germany_keeps_berlin(atlas, story):
    assert target_prob(atlas, STORY.prompt, " Rome", (story.edit,)) > target_prob(atlas, STORY.prompt, " Paris",
                                                                                 (story.edit,))
    assert target_prob(atlas, STORY.prompt, " Paris") > 0.5  # without the edit, the model's own answer
    logits = atlas.run_with_hooks("The capital of Germany is", (story.edit,))
    assert atlas.tokenizer.token_text(int(np.argmax(logits[-1]))) == " Berlin"


def test_bad_requests_are_one_line(atlas):
    with pytest.raises(EditError, match="does not occur"):
        compute_edit(atlas, EditRequest(STORY.prompt, " Spain", " Rome"), 0)
    with pytest.raises(EditError, match="layer 9 is out of range"):
        compute_edit(atlas, STORY, 9)


def test_twenty_seeded_edits_of_the_fact_table(atlas):
    """The issue's bar: efficacy >= 0.95, paraphrase >= 0.8, neighbourhood >= 0.8 (ROME reports 100 / 96 / 75 %
    on GPT-2 XL). Fluency is measured by the command line and the story's test, not here (it generates)."""
    facts = prompt_set()["facts"]
    texts = stats_text()
    rng = random.Random(0)
    eff, para, near = [], [], []
    for fact in rng.sample(facts, 20):
        other = rng.choice([f for f in facts if f["true"] != fact["true"]])
        edit = compute_edit(atlas, EditRequest(fact["prompt"], fact["subject"], other["true"]), LAYER,
                            stats_texts=texts, seed=0).edit  # one set of prefixes for every edit, as ROME
        ivs = (edit,)
        eff.append(target_prob(atlas, fact["prompt"], other["true"], ivs) > target_prob(atlas, fact["prompt"],
                                                                                       fact["true"], ivs))
        para += [target_prob(atlas, q, other["true"], ivs) > target_prob(atlas, q, fact["true"], ivs)
                 for q in fact["paraphrases"]]
        near += [target_prob(atlas, n["prompt"], n["true"], ivs) > target_prob(atlas, n["prompt"], other["true"], ivs)
                 for n in rng.sample([f for f in facts if f is not fact], 5)]
    print(f"efficacy {np.mean(eff):.3f} paraphrase {np.mean(para):.3f} neighbourhood {np.mean(near):.3f}")
    assert np.mean(eff) >= 0.95 and np.mean(para) >= 0.8 and np.mean(near) >= 0.8


def test_scores_and_fluency_of_the_story_edit(atlas, story):
    facts = prompt_set()["facts"]
    fact = next(f for f in facts if f["subject"] == " France")
    neighbours = [f for f in facts if f["subject"] in (" Germany", " Spain", " Japan")]
    s = score_edit(atlas, story.edit, fact, " Rome", neighbours, new_zh="罗马")
    assert s.efficacy == 1.0 and s.p_new_after > s.p_new_before
    assert s.neighbourhood_before == 1.0 and 0.0 <= s.neighbourhood <= 1.0
    assert s.fluency_before > 1.0 and s.fluency_after > 1.0  # generations are text, not one repeated word
    assert json.dumps(s.as_json())


def test_a_saved_edit_reproduces_itself_hook_by_hook(exported, tmp_path):
    model = Model(exported["l3h4e32"])
    rng = np.random.default_rng(0)
    edit = RankOneEdit(1, rng.normal(size=model.config.d_mlp), rng.normal(size=model.config.n_embd), "test")
    out = save_edited(model, (edit,), tmp_path / "edited", request={"why": "test"})
    saved = Model(out)
    m = json.loads((out / "gpt2viz.json").read_text())
    assert m["edits"][0]["kind"] == "rank_one_edit" and m["edit_validation"]["max_relative"] <= 1e-4
    ids = [464, 3139, 286]
    a, _ = saved.run(ids, keep_all_logits=True)
    b, _ = model.run(ids, keep_all_logits=True, interventions=(edit,))
    np.testing.assert_allclose(a["logits"], b["logits"], rtol=1e-4, atol=1e-4)
    with pytest.raises(InterventionError, match="--force"):
        save_edited(model, (edit,), out)
    with pytest.raises(InterventionError, match="no model edit"):
        save_edited(model, (), tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_cli_edit_json_finds_the_layer_by_causal_trace(capsys):
    assert cli_main(["edit", "--prompt", STORY.prompt, "--subject", STORY.subject, "--target", STORY.target,
                     "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layer"] == LAYER and out["layer_from"] == "causal trace"
    for key in ("u_norm", "v_norm", "efficacy", "paraphrase", "neighbourhood", "fluency_before", "fluency_after"):
        assert out[key] is not None, key
    assert out["efficacy"] == 1.0 and out["old"] == " Paris"
