import numpy as np
import pytest
import torch

from gpt2viz.core.engine.errors import ContextLimitError
from gpt2viz.core.engine.model import Model
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator

PROMPT = [464, 3139, 286, 4881, 318]


@pytest.mark.parametrize("name", ["l2h2e16", "l3h4e32"])
def test_greedy_steps_equal_transformers_generate(name, exported, torch_models):
    gen = Generator(Model(exported[name]), hooks=[])
    gen.start(PROMPT)
    for _ in range(8):
        gen.step(SamplingSettings(temperature=0))
    want = torch_models[name].generate(torch.tensor([PROMPT]), max_new_tokens=8, do_sample=False,
                                       attention_mask=torch.ones(1, 5, dtype=torch.long), pad_token_id=0)
    assert list(gen.tokens) == want[0].tolist()


def test_same_seed_same_tokens_and_seed_matters(tiny_model_dir):
    model = Model(tiny_model_dir)
    s = SamplingSettings(temperature=1.5, top_k=50, seed=11)

    def run(settings):
        g = Generator(model, hooks=[])
        g.start(PROMPT)
        for _ in range(6):
            g.step(settings)
        return g.generated

    assert run(s) == run(s)
    assert run(s) != run(SamplingSettings(temperature=1.5, top_k=50, seed=12))


def test_back_restores_and_reset_returns_to_prompt(tiny_model_dir):
    g = Generator(Model(tiny_model_dir))
    first = g.start(PROMPT)
    s = SamplingSettings(temperature=1.0, seed=3)
    a = g.step(s)
    b = g.step(s)
    assert g.back() is a and g.tokens == a.tokens
    # stepping again from the restored state reuses the sliced cache and gives the same frame values
    b2 = g.step(s)
    assert b2.tokens == b.tokens
    np.testing.assert_allclose(b2.logits, b.logits, atol=1e-5)
    forced = g.step(s, token=6342)
    assert forced.forced and forced.tokens[-1] == 6342
    assert g.reset() is first and g.generated == ()
    assert g.back() is first  # nothing before the prompt


def test_context_full_is_a_message_not_a_crash(tiny_model_dir):
    model = Model(tiny_model_dir)
    g = Generator(model, hooks=[])
    g.start(list(range(1, 31)))
    g.step(SamplingSettings(temperature=0))
    g.step(SamplingSettings(temperature=0))
    assert not g.can_step()
    with pytest.raises(ContextLimitError, match="context is full"):
        g.step(SamplingSettings(temperature=0))
    with pytest.raises(ContextLimitError, match="reads at most 32"):
        Generator(model).start(list(range(40)))


def test_empty_prompt_starts_from_end_of_text(tiny_model_dir):
    g = Generator(Model(tiny_model_dir), hooks=[])
    assert g.start([]).tokens == (50256,)


def test_hook_at_joins_prefill_and_steps(tiny_model_dir):
    model = Model(tiny_model_dir)
    g = Generator(model)
    g.start(PROMPT)
    g.step(SamplingSettings(temperature=0))
    h = g.history()
    full, _ = model.run(list(h.tokens))
    for pos in (1, 4, 5):
        np.testing.assert_allclose(h.hook_at(("pattern", 1), pos), full["pattern", 1][:, pos, : pos + 1], atol=1e-5)
        np.testing.assert_allclose(h.hook_at(("resid_post", 0), pos), full["resid_post", 0][pos], atol=1e-4)
    with pytest.raises(IndexError):
        h.hook_at("hook_embed", 6)


def test_interventions_rerun_prompt_and_steps_consistently(exported):
    from gpt2viz.core.interventions import HeadAblation, NeuronAblation

    model = Model(exported["l3h4e32"])
    ivs = (HeadAblation(1, 2), HeadAblation(0, 1, mode="mean"), NeuronAblation(2, 5))
    s = SamplingSettings(temperature=0)
    g = Generator(model)
    g.start(PROMPT)
    plain = [g.step(s) for _ in range(3)]
    g.back()
    frame = g.set_interventions(ivs)
    # same text, new numbers: the prompt and the kept generated tokens were run again
    assert frame.tokens == plain[1].tokens and frame.interventions == ivs and len(g.frames) == 3
    assert not np.allclose(frame.logits, plain[1].logits)
    # a step continues the cache computed under the interventions: equal to one run of the whole text
    nxt = g.step(s)
    fresh = Generator(model, interventions=ivs)
    fresh.start(list(PROMPT))
    for t in nxt.tokens[len(PROMPT):]:
        last = fresh.step(s, token=t)
    np.testing.assert_allclose(nxt.logits, last.logits, atol=1e-5)
    assert np.all(nxt.trace["z", 1][:, 2] == 0)
    assert g.reset().interventions == ivs and g.reset().tokens == tuple(PROMPT)
    back = g.set_interventions(())
    assert back is g.frames[0] and back.interventions == ()
    np.testing.assert_allclose(g.frames[0].logits, Generator(model).start(PROMPT).logits, atol=1e-6)


def test_taking_back_an_intervention_reuses_the_frames_computed_under_it(exported):
    from gpt2viz.core.interventions import HeadAblation

    model = Model(exported["l3h4e32"])
    calls = []
    run = model.run
    model.run = lambda *a, **k: calls.append(len(a[0])) or run(*a, **k)  # counts the model's calls, runs them
    ivs, other = (HeadAblation(1, 2), HeadAblation(0, 1, mode="mean")), (HeadAblation(2, 0),)
    s = SamplingSettings(temperature=0)
    g = Generator(model)
    g.start(PROMPT)
    plain = [g.frames[0], *(g.step(s) for _ in range(2))]
    g.set_interventions(ivs)
    ablated = list(g.frames)
    assert g.steps_rerun == 3 and all(a is not b for a, b in zip(ablated, plain))
    calls.clear()
    # removed: the frames from before are back as they were, without a model call; put back: the same
    g.set_interventions(())
    assert g.frames == plain and all(a is b for a, b in zip(g.frames, plain)) and g.steps_rerun == 0
    assert g.frames_kept == 3
    g.set_interventions(ivs)
    assert all(a is b for a, b in zip(g.frames, ablated)) and g.steps_rerun == 0 and calls == []
    # a step under the ablation, then removed: the kept frames are the start, only the new step runs
    nxt = g.step(s)
    calls.clear()
    g.set_interventions(())
    assert g.frames[:3] == plain and g.steps_rerun == 1 and g.frames_kept == 3 and calls == [1]
    np.testing.assert_allclose(g.frames[-1].logits, Generator(model).start(list(nxt.tokens)).logits, atol=1e-5)
    # Back under the ablation (its kept run is longer than the text), then put back, then a step continues
    # its cache: the numbers of one fresh run of the whole text under the ablation (its means included)
    g.back()
    g.back()
    g.set_interventions(ivs)
    assert g.steps_rerun == 0 and [f.tokens for f in g.frames] == [f.tokens for f in plain[:2]]
    g.set_interventions(())  # kept at the text's length: the next step reads it without a copy
    assert g.steps_rerun == 0 and g._cache.length == len(g.tokens)
    assert all(k.flags.c_contiguous for k, _ in g._cache.layers)
    g.set_interventions(ivs)
    again = g.step(s)
    fresh = Generator(model, interventions=ivs)
    fresh.start(PROMPT)
    want = [fresh.step(s, token=t) for t in again.tokens[len(PROMPT):]][-1]
    np.testing.assert_allclose(again.logits, want.logits, atol=1e-5)
    # other interventions, a forced token where one was sampled, or a new prompt: run again
    g.set_interventions(other)
    assert g.steps_rerun == 3 and g.frames_kept == 0
    g.back()
    g.step(s, token=int(again.tokens[-1]))  # the same token, now forced
    g.set_interventions(ivs)
    assert g.steps_rerun == 1 and g.frames[-1].forced
    g.start(PROMPT[:3])
    g.set_interventions(other)
    assert g.steps_rerun == 1


def test_a_run_taken_back_reads_its_on_demand_hooks_from_the_cut_cache(monkeypatch, exported):
    """A long prompt keeps hooks on demand, read with its cache: after a step taken back and an ablation added and
    removed, they still equal a fresh run's, read from the cache cut to the text (the longer one is let go)."""
    from gpt2viz.core.engine import ondemand
    from gpt2viz.core.interventions import HeadAblation

    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l3h4e32"])
    ids = PROMPT + [11, 262, 3139, 286, 8031, 318, 10598]
    g = Generator(model)
    g.start(ids)
    od = g.frames[0].trace.ondemand
    assert od is not None
    g.step(SamplingSettings(temperature=0))
    g.back()
    g.set_interventions((HeadAblation(1, 2),))
    g.set_interventions(())
    assert g.frames_kept == 1 and od.past.length == len(ids) and od.past is g._cache
    fresh, _ = model.run(ids)
    h = g.history()
    for p in (3, len(ids) - 1):
        np.testing.assert_allclose(h.hook_at(("pattern", 2), p), fresh["pattern", 2][:, p, : p + 1], atol=1e-5)
        np.testing.assert_allclose(h.hook_at(("post", 1), p), fresh["post", 1][p], atol=1e-5)
    nxt = g.step(SamplingSettings(temperature=0))
    np.testing.assert_allclose(nxt.logits, Generator(model).start(list(nxt.tokens)).logits, atol=1e-5)


def test_old_folder_says_how_to_upgrade_and_upgrade_works(exported, tmp_path):
    import shutil

    from gpt2viz.core.export.upgrade import upgrade_folder
    from gpt2viz.core.interventions import HeadAblation, InterventionError
    from tests.core.export.upgrade_helpers import downgrade

    old = tmp_path / "old"
    shutil.copytree(exported["l2h2e16"], old)
    downgrade(old)
    m = Model(old)
    assert not m.supports_interventions
    before, _ = m.run(PROMPT)  # reading still works
    with pytest.raises(InterventionError, match="--upgrade"):
        Generator(m, interventions=(HeadAblation(0, 0),))
    upgrade_folder(old, progress=lambda s: None)
    m2 = Model(old)  # sha256 in the manifest was updated
    after, _ = m2.run(PROMPT)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])
    abl, _ = m2.run(PROMPT, interventions=(HeadAblation(0, 0),))
    assert np.all(abl["z", 0][:, 0] == 0)


def test_a_step_can_take_its_logits_from_the_callers_lens(exported):
    """``logits_from`` gets the new state (its frame without logits) and gives the new position's logits: the
    model's LM head does not run. The lens graph's last row over that position is the model's logits bit for bit,
    so the step, its token and its hooks are the plain step's. A failure there leaves the generator as it was."""
    from gpt2viz.core.analysis.lens import residual_stack_at
    from gpt2viz.core.engine.weights import Weights

    model = Model(exported["l3h4e32"])
    weights, seen = Weights.of(model), []

    def lens_logits(h):
        seen.append((h.tokens, h.current.trace.last_logits))
        return weights.lens_with_tops(residual_stack_at(h, 3, len(h.tokens) - 1))[0][-1]

    plain, lensed = Generator(model), Generator(model)
    for g in (plain, lensed):
        g.start([464, 3139, 286, 4881, 318])
    for seed in range(3):
        s = SamplingSettings(1.0, 0, 1.0, seed)
        a, b = plain.step(s), lensed.step(s, None, lens_logits)
        assert a.tokens == b.tokens and seen[-1] == (b.tokens, None)
        np.testing.assert_array_equal(a.logits, b.logits)
        np.testing.assert_array_equal(a.trace["resid_post", 2], b.trace["resid_post", 2])
    frames, tokens = len(lensed.frames), lensed.tokens

    def broken(_h):
        raise RuntimeError("lens failed")
    with pytest.raises(RuntimeError, match="lens failed"):
        lensed.step(SamplingSettings(0.0), None, broken)
    assert len(lensed.frames) == frames and lensed.tokens == tokens
    np.testing.assert_array_equal(lensed.step(SamplingSettings(0.0)).logits, plain.step(SamplingSettings(0.0)).logits)


def test_a_preview_is_made_once_per_state_and_settings_and_the_step_samples_from_it(tiny_model_dir, monkeypatch):
    """The next-token distribution of a state under some settings is made once: a preview asked again, or the step
    under those settings, uses it (the app's worker makes the new state's after each step). Another state or other
    settings make their own, and each equals a fresh pick of that state's logits."""
    from gpt2viz.core.generation import sampling, stepper

    picks = []
    made = sampling.pick
    monkeypatch.setattr(stepper, "pick", lambda *a: picks.append(a[2]) or made(*a))
    gen = Generator(Model(tiny_model_dir))
    gen.start([1, 2, 3])
    hot = SamplingSettings(temperature=1.5, top_k=5, top_p=0.9, seed=3)
    dist, token = gen.preview(hot)
    assert gen.preview(hot)[0] is dist and picks == [3]
    want_dist, want_token = made(gen.current.logits, hot, 3)
    assert token == want_token
    np.testing.assert_array_equal(dist.final, want_dist.final)
    frame = gen.step(hot)
    assert frame.tokens[-1] == token and picks == [3]  # the step sampled from the preview
    gen.preview(hot)
    gen.preview(SamplingSettings(temperature=0))
    assert picks == [3, 4, 4]
    gen.back()
    assert gen.preview(hot)[1] == token and picks == [3, 4, 4]  # Back: the state's preview is kept


def test_a_new_prompt_makes_its_own_preview_even_for_the_same_tokens(tiny_model_dir):
    """A mean ablation averages over the prompt: the same tokens run as a longer prompt have other logits, and the
    preview kept for the shorter prompt's state is not used for them."""
    from gpt2viz.core.generation.sampling import pick
    from gpt2viz.core.interventions import HeadAblation

    gen = Generator(Model(tiny_model_dir), interventions=(HeadAblation(0, 0, mode="mean"),))
    gen.start([1, 2, 3])
    gen.step(SamplingSettings(temperature=0))
    hot = SamplingSettings(temperature=1.0, seed=1)
    stepped = gen.preview(hot)[0]
    gen.start(list(gen.tokens))  # the same four tokens, all of them the prompt now
    fresh = gen.preview(hot)[0]
    np.testing.assert_array_equal(fresh.raw, pick(gen.current.logits, hot, 4)[0].raw)
    assert not np.allclose(fresh.raw, stepped.raw)  # the means differ, and so do the logits
