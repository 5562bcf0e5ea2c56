"""The causal trace equals the same cells made the slow way (one engine run per sample and cell, with
Steer noise and Patch restores), noise 0 gives the clean probability everywhere, and it cancels."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.analysis.causal_trace import (
    CausalTrace,
    causal_trace,
    default_subject,
    embedding_std,
    find_subject,
    noise_draws,
    window_layers,
)
from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.interventions import InterventionError, Patch, Steer

PROMPT = [464, 3139, 286, 4881, 318]  # "The capital of France is"


def restored_layers(kind, layer, window, n_layer):
    """ROME's restore window written out for the windows tested: one layer for hidden states; for MLP and
    attention, window 1 restores the layer itself, window 2 the layer before it too."""
    if kind == "hidden" or window == 1:
        return [layer]
    assert window == 2
    return [L for L in (layer - 1, layer) if 0 <= L < n_layer]


def cell(kind, layer, position, subject, noise, clean, window):
    """One sample of one cell built from the definitions: Gaussian noise added to the subject's embeddings
    (block 0's input), then the clean run's value of the site put back at ``position``."""
    site, hook = {"hidden": ("resid_pre", "hook_resid_pre"), "mlp": ("mlp_out", "hook_mlp_out"),
                  "attn": ("attn_out", "hook_attn_out")}[kind]
    ivs = [Steer(0, (s,), noise[j]) for j, s in enumerate(subject)]
    ivs += [Patch(site, L, position, clean[f"blocks.{L}.{hook}"][position])
            for L in restored_layers(kind, layer, window, 3)]
    return tuple(ivs)


def p_of(model, ids, target, ivs=()):
    trace, _ = model.run(ids, interventions=ivs)
    x = trace.last_logits.astype(np.float64)
    e = np.exp(x - x.max())
    return e[target] / e.sum()


@pytest.fixture(scope="module")
def small(exported):
    model = Model(exported["l3h4e32"])
    return model, Weights(model.folder / "model.onnx")


@pytest.mark.parametrize("window", [1, 2])
def test_every_cell_equals_engine_runs_with_steer_noise_and_patch_restores(small, window):
    model, weights = small
    subject = (2, 3)
    seen = []
    tr = causal_trace(model, weights, PROMPT, subject, samples=3, seed=5, window=window,
                      progress=lambda d, n: seen.append((d, n)))
    target = int(np.argmax(model.run(PROMPT)[0].last_logits))
    assert isinstance(tr, CausalTrace) and tr.target == target and tr.subject == subject
    draws = noise_draws(3, 2, 32, 3.0 * embedding_std(weights), 5)
    hooks = [f"blocks.{L}.{h}" for L in range(3) for h in ("hook_resid_pre", "hook_attn_out", "hook_mlp_out")]
    clean, _ = model.run(PROMPT, hooks=hooks)
    assert tr.clean_prob == pytest.approx(p_of(model, PROMPT, target), rel=1e-5)
    corrupt = np.mean([p_of(model, PROMPT, target, tuple(Steer(0, (s,), draws[i, j]) for j, s in enumerate(subject)))
                       for i in range(3)])
    assert tr.corrupt_prob == pytest.approx(corrupt, rel=1e-4)
    for kind in ("hidden", "mlp", "attn"):
        assert tr.prob[kind].shape == (3, 5)
        for L in range(3):
            for p in range(5):
                want = np.mean([p_of(model, PROMPT, target,
                                     cell(kind, L, p, subject, draws[i], clean, window))
                                for i in range(3)])
                assert tr.prob[kind][L, p] == pytest.approx(want, rel=1e-4, abs=1e-9), (kind, L, p)
    assert seen[-1][0] == seen[-1][1]


def test_noise_zero_gives_the_clean_probability_everywhere(small):
    model, weights = small
    tr = causal_trace(model, weights, PROMPT, (3,), noise=0.0, samples=2)
    assert tr.corrupt_prob == pytest.approx(tr.clean_prob, rel=1e-5)
    for kind, m in tr.prob.items():
        np.testing.assert_allclose(m, tr.clean_prob, rtol=1e-5, err_msg=kind)


def test_restoring_the_noised_embeddings_or_the_last_state_undoes_the_noise(small):
    model, weights = small
    tr = causal_trace(model, weights, PROMPT, (3,), samples=4, kinds=("hidden",))
    m = tr.prob["hidden"]
    # block 0's input at the only noised position is the embedding: restoring it is the clean run
    assert m[0, 3] == pytest.approx(tr.clean_prob, rel=1e-5)
    # positions before the subject are untouched by the noise: restoring them changes nothing
    np.testing.assert_allclose(m[:, :3], tr.corrupt_prob, rtol=1e-5)
    assert abs(tr.corrupt_prob - tr.clean_prob) > 1e-6  # the noise did something (so the checks can fail)


def test_windows_subjects_cancel_and_errors(small):
    model, weights = small
    assert list(window_layers(5, 10, 12)) == list(range(0, 10))
    assert list(window_layers(0, 1, 12)) == [0]
    assert list(window_layers(11, 4, 12)) == [9, 10, 11]
    tok = model.tokenizer
    assert find_subject(tok, PROMPT, " France") == (3,)
    assert find_subject(tok, PROMPT, "capital of") == (1, 2)
    assert default_subject(tok, PROMPT) == (3,)
    with pytest.raises(InterventionError, match="does not occur"):
        find_subject(tok, PROMPT, " Germany")
    with pytest.raises(Cancelled):
        causal_trace(model, weights, PROMPT, (3,), cancel=lambda: True)
    with pytest.raises(InterventionError, match="subject"):
        causal_trace(model, weights, PROMPT, ())
    with pytest.raises(InterventionError, match="outside"):
        causal_trace(model, weights, PROMPT, (9,))


def test_embedding_std_is_the_std_of_every_embedding_entry(small, torch_models):
    """ROME's noise unit, read in slabs (the embedding is not kept): the checkpoint's own."""
    wte = torch_models["l3h4e32"].state_dict()["transformer.wte.weight"].numpy()
    assert embedding_std(small[1]) == pytest.approx(float(np.asarray(wte, np.float64).std()), rel=1e-9)


def test_the_trace_of_an_edited_model_runs_with_the_edit_in_force(small, torch_models):
    """After a ROME-style rank-one edit (and with an ablation beside it), the clean run is the edited model's,
    as onnxruntime and transformers with the edited weight compute it, and every cell is the slow way's cell
    with the same interventions first."""
    import torch

    from gpt2viz.core.interventions import HeadAblation, RankOneEdit

    model, weights = small
    rng = np.random.default_rng(3)
    edit = RankOneEdit(1, rng.normal(size=48) * 0.5, rng.normal(size=32) * 2.0, "test edit")
    ivs = (edit, HeadAblation(0, 1))
    subject = (3,)
    plain = causal_trace(model, weights, PROMPT, subject, samples=2, seed=1)
    tr = causal_trace(model, weights, PROMPT, subject, target=plain.target, samples=2, seed=1, interventions=ivs)
    assert tr.interventions and tr.interventions[0]["kind"] == "rank_one_edit"
    assert tr.clean_prob == pytest.approx(p_of(model, PROMPT, plain.target, ivs), rel=1e-5)
    assert abs(tr.clean_prob - plain.clean_prob) > 1e-4  # the edit moved the answer (so the check can fail)

    # transformers with the edited weight and head 0.1 zeroed: the same probability
    tm = torch_models["l3h4e32"]
    w = tm.transformer.h[1].mlp.c_proj.weight
    saved = w.detach().clone()
    hook = tm.transformer.h[0].attn.c_proj.register_forward_pre_hook(
        lambda m, args: (args[0].index_fill(-1, torch.arange(8, 16), 0.0),))
    try:
        with torch.no_grad():
            w += torch.from_numpy(edit.delta())
            logits = tm(torch.tensor([PROMPT])).logits[0, -1].double()
    finally:
        hook.remove()
        with torch.no_grad():
            w.copy_(saved)
    assert tr.clean_prob == pytest.approx(float(torch.softmax(logits, -1)[plain.target]), rel=1e-4)

    draws = noise_draws(2, 1, 32, 3.0 * embedding_std(weights), 1)
    hooks = [f"blocks.{L}.{h}" for L in range(3) for h in ("hook_resid_pre", "hook_attn_out", "hook_mlp_out")]
    clean, _ = model.run(PROMPT, hooks=hooks, interventions=ivs)
    corrupt = np.mean([p_of(model, PROMPT, plain.target, (*ivs, Steer(0, (3,), draws[i, 0]))) for i in range(2)])
    assert tr.corrupt_prob == pytest.approx(corrupt, rel=1e-4)
    for kind in ("hidden", "mlp", "attn"):
        for L in range(3):
            for p in (2, 3, 4):
                want = np.mean([p_of(model, PROMPT, plain.target, (*ivs, *cell(kind, L, p, subject, draws[i], clean, 1)))
                                for i in range(2)])
                assert tr.prob[kind][L, p] == pytest.approx(want, rel=1e-4, abs=1e-9), (kind, L, p)
