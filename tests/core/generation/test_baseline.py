"""The text run without interventions beside an intervened generation (core.generation.baseline)."""

import numpy as np
import pytest
import torch

from gpt2viz.core.engine import ondemand
from gpt2viz.core.engine.model import Model
from gpt2viz.core.generation.baseline import Baseline
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.hooks import block_hook
from gpt2viz.core.interventions import HeadAblation

PROMPT = [464, 3139, 286, 4881, 318]
GREEDY = SamplingSettings(temperature=0)


def _counting(model: Model) -> list:
    """Record the token count of every model.run call from now on."""
    calls = []
    run = model.run

    def counted(ids, *a, **k):
        calls.append(len(ids))
        return run(ids, *a, **k)
    model.run = counted
    return calls


def _assert_transformers(history, torch_model) -> None:
    """Every frame's output and final residual are transformers' for that context, without interventions."""
    for frame in history.frames:
        with torch.no_grad():
            out = torch_model(torch.tensor([frame.tokens]), output_hidden_states=True)
        np.testing.assert_allclose(frame.logits, out.logits[0, -1].numpy(), atol=1e-4)
        n_layer = len(out.hidden_states) - 1
        np.testing.assert_allclose(history.hook_at(block_hook(0, "hook_resid_pre"), len(frame.tokens) - 1),
                                   out.hidden_states[0][0, -1].numpy(), atol=1e-5)
        assert n_layer == torch_model.config.n_layer


def test_a_baseline_follows_an_intervened_generation_step_by_step(exported, torch_models):
    """Beside a generation under an ablation, the baseline is its text run without it (transformers' numbers);
    Back and the same state again run nothing, a step after them one cached position."""
    from gpt2viz.core.generation.stepper import Generator

    model = Model(exported["l3h4e32"])
    gen = Generator(model, interventions=(HeadAblation(1, 2),))
    gen.start(PROMPT)
    base = Baseline(model, hooks=None)
    calls = _counting(model)
    clean = base.history(gen.history())
    assert calls == [len(PROMPT)] and clean.tokens == gen.tokens and clean.prompt_len == gen.prompt_len
    for _ in range(3):
        gen.step(GREEDY)
        calls.clear()
        clean = base.history(gen.history())
        assert calls == [1] and base.frames_run == 1 and clean.tokens == gen.tokens
    _assert_transformers(clean, torch_models["l3h4e32"])
    assert not np.allclose(clean.current.logits, gen.current.logits, atol=1e-3)  # the ablation changes the output
    calls.clear()
    gen.back()
    back = base.history(gen.history())
    assert calls == [] and back.frames == clean.frames[:-1]
    again = base.history(gen.history())
    assert calls == [] and again.frames == back.frames and base.frames_run == 0
    gen.step(GREEDY, token=6342)  # another token than the one taken back: a new context
    calls.clear()
    stepped = base.history(gen.history())
    assert calls == [1] and stepped.frames[:-1] == back.frames and stepped.tokens[-1] == 6342
    _assert_transformers(stepped, torch_models["l3h4e32"])
    gen.start([464, 3139])  # a new prompt: run again from the start
    calls.clear()
    assert base.history(gen.history()).tokens == (464, 3139) and calls == [2]


@pytest.mark.parametrize("long_prompt", [False, True])
def test_the_first_intervention_takes_over_the_run_from_before_it(monkeypatch, exported, torch_models, long_prompt):
    """An ablation added to a text: the run without it is the one the generator kept from before the change, taken
    as it is (no model call); a step under the ablation then adds one cached position to it. A long prompt's
    on-demand hooks read the baseline's own newest cache."""
    from gpt2viz.core.generation.stepper import Generator

    if long_prompt:
        monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(PROMPT)
    gen.step(GREEDY)
    before = gen.history()
    gen.set_interventions((HeadAblation(1, 2),))
    assert gen.kept(()) is not None and gen.kept((HeadAblation(0, 0),)) is None
    base = Baseline(model, hooks=None)
    calls = _counting(model)
    clean = base.history(gen.history(), gen.kept(()))
    assert calls == [] and all(a is b for a, b in zip(clean.frames, before.frames, strict=True))
    gen.step(GREEDY)
    calls.clear()
    clean = base.history(gen.history(), gen.kept(()))
    assert calls == [1] and clean.frames[:2] == before.frames and clean.tokens == gen.tokens
    _assert_transformers(clean, torch_models["l3h4e32"])
    if long_prompt:
        # a hook the prompt's run left on demand, read after the baseline's step: transformers' attention
        with torch.no_grad():
            out = torch_models["l3h4e32"](torch.tensor([clean.tokens]), output_attentions=True)
        np.testing.assert_allclose(clean.hook_at(("pattern", 1), 2), out.attentions[1][0, :, 2, :3].numpy(),
                                   atol=1e-5)
