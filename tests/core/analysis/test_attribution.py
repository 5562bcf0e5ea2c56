"""Direct logit attribution: the parts add up to the model's logit and equal an independent PyTorch computation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gpt2viz.core.analysis.attribution import TargetError, attribute, attribution_json, needed_hooks, token_id
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from tests.conftest import REPO

PROMPT = [464, 3139, 286, 4881, 318]  # "The capital of France is"
TINY = ("l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24")


def _setup(folder, steps=2, hooks=None):
    model = Model(folder)
    gen = Generator(model, hooks=hooks)
    gen.start(PROMPT)
    for _ in range(steps):  # generated positions live in their own frames: attribution must join them
        gen.step(SamplingSettings(temperature=0.0))
    w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
    return model, gen.history(), w


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-6)


@pytest.mark.parametrize("name", TINY)
def test_parts_sum_to_the_models_logit(exported, name):
    model, h, w = _setup(exported[name])
    c = model.config
    a = attribute(h, w, c.n_layer, c.n_head)
    assert a.target == int(np.argmax(h.current.logits)) and a.position == len(h.tokens) - 1
    assert _rel(a.total(), float(h.current.logits[a.target])) <= 1e-4
    # any target, and a logit difference
    b = attribute(h, w, c.n_layer, c.n_head, target=6342, vs=3576)
    want = float(h.current.logits[6342] - h.current.logits[3576])
    assert _rel(b.total(), want) <= 1e-4 and _rel(b.logit, want) <= 1e-6
    # an earlier position: its default target is the token that came next
    e = attribute(h, w, c.n_layer, c.n_head, position=2)
    assert e.target == PROMPT[3] and _rel(e.total(), e.logit) <= 1e-4
    # the same with the model's logits there given (as an app session keeps them): no LM-head call, the same parts
    lens = w.lens
    w.lens = lambda *a: pytest.fail("the logits were given")
    try:
        g = attribute(h, w, c.n_layer, c.n_head, position=2, logits=lens(h.hook_at(("resid_post", c.n_layer - 1), 2)))
    finally:
        del w.lens
    assert g.target == e.target and g.logit == e.logit
    np.testing.assert_array_equal(g.heads, e.heads)


def test_atlas_parts_sum_to_the_models_logit():
    model, h, w = _setup(REPO / "models" / "atlas", steps=0, hooks=needed_hooks(6))
    c = model.config
    assert c.n_layer == 6  # needed_hooks above assumed it
    a = attribute(h, w, c.n_layer, c.n_head, target=6342)
    assert _rel(a.total(), float(h.current.logits[6342])) <= 1e-4


@pytest.mark.parametrize("name", TINY)
def test_source_split_and_neurons_sum_to_their_totals(exported, name):
    model, h, w = _setup(exported[name])
    a = attribute(h, w, model.config.n_layer, model.config.n_head)
    assert a.by_source.shape == (model.config.n_layer, model.config.n_head, len(h.tokens))
    np.testing.assert_allclose(a.by_source.sum(-1), a.heads, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(a.neurons.sum(1) + a.mlp_out_bias, a.mlp, rtol=1e-4, atol=1e-6)
    # without its neurons (the Path view's): every other number the same, and asking for neurons says why not
    b = attribute(h, w, model.config.n_layer, model.config.n_head, neurons=False)
    assert b.neurons is None and b.components() == a.components() and b.total() == a.total()
    np.testing.assert_array_equal(b.by_source, a.by_source)
    with pytest.raises(ValueError, match="without its neurons"):
        b.top_neurons(0)


def _torch_dla(model, ids, target):
    """DLA computed in PyTorch from the checkpoint: z captured as c_proj's input, the residual as ln_f's."""
    cfg = model.config
    H, E = cfg.n_head, cfg.n_embd
    D = E // H
    z_in, resid = {}, {}
    hooks = [blk.attn.c_proj.register_forward_pre_hook(lambda _m, inp, L=L: z_in.__setitem__(L, inp[0].detach()))
             for L, blk in enumerate(model.transformer.h)]
    hooks.append(model.transformer.ln_f.register_forward_pre_hook(
        lambda _m, inp: resid.__setitem__(0, inp[0].detach())))
    mlp_out = {}
    hooks += [blk.mlp.register_forward_hook(lambda _m, _i, out, L=L: mlp_out.__setitem__(L, out.detach()))
              for L, blk in enumerate(model.transformer.h)]
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    for hk in hooks:
        hk.remove()
    r = resid[0][0, -1].double()
    sigma = torch.sqrt(((r - r.mean()) ** 2).mean() + cfg.layer_norm_epsilon)
    gamma = model.transformer.ln_f.weight.detach().double()
    w_u = model.lm_head.weight[target].detach().double()

    def through_ln(vec):
        return float(((vec - vec.mean()) / sigma * gamma) @ w_u)

    heads = np.zeros((cfg.n_layer, H))
    for L, blk in enumerate(model.transformer.h):
        W = blk.attn.c_proj.weight.detach().double()  # Conv1D: [E_in = merged heads, E_out]
        z = z_in[L][0, -1].double()
        for h in range(H):
            heads[L, h] = through_ln(z[h * D:(h + 1) * D] @ W[h * D:(h + 1) * D])
    mlps = np.array([through_ln(mlp_out[L][0, -1].double()) for L in range(cfg.n_layer)])
    return heads, mlps, float(logits[target])


@pytest.mark.parametrize("name", TINY)
def test_per_head_values_equal_pytorch(exported, torch_models, name):
    model, h, w = _setup(exported[name])
    a = attribute(h, w, model.config.n_layer, model.config.n_head, target=6342)
    heads, mlps, logit = _torch_dla(torch_models[name], list(h.tokens), 6342)
    scale = max(np.abs(heads).max(), 1e-3)
    assert np.abs(a.heads - heads).max() <= 1e-4 * scale
    assert np.abs(a.mlp - mlps).max() <= 1e-4 * max(np.abs(mlps).max(), 1e-3)
    assert _rel(a.logit, logit) <= 1e-4


def test_json_object_and_target_parsing(exported):
    model, h, w = _setup(exported["l3h4e32"], steps=0)
    tok = model.tokenizer
    assert token_id(tok, " Paris") == 6342
    with pytest.raises(TargetError, match="2 tokens"):
        token_id(tok, " Parisians of")
    with pytest.raises(TargetError):
        token_id(tok, "")
    a = attribute(h, w, 3, 4, target=6342)
    js = attribution_json(a, tok)
    assert js["target_id"] == 6342 and js["target"] == " Paris"
    kinds = [c["kind"] for c in js["components"]]
    assert kinds.count("head") == 12 and kinds.count("mlp") == 3 and kinds.count("attn_bias") == 3
    assert {"embed", "pos_embed"} <= set(kinds)
    assert _rel(sum(c["value"] for c in js["components"]) + js["ln_bias_term"], js["logit"]) <= 1e-4
    assert len(js["by_source"]) == 3 * 4 * 5 and js["by_source"][3]["source_token"] == " France"
    assert [t["layer"] for t in js["top_neurons"]] == [0, 1, 2]


def test_a_float32_matrix_times_a_float64_vector_a_block_of_rows_at_a_time_is_the_whole_cast_bit_for_bit():
    """W_O @ d through a small float64 buffer: the same floats as casting the matrix whole, for row counts that are a
    multiple of the block, are not, and are under it."""
    from gpt2viz.core.analysis.attribution import WIDE_ROWS, _times_f64

    rng = np.random.default_rng(1)
    for rows, cols in ((12 * 64, 768), (WIDE_ROWS * 3 + 5, 33), (WIDE_ROWS, 5), (3, 7)):
        M = rng.normal(size=(rows, cols)).astype(np.float32)
        v = rng.normal(size=cols)
        np.testing.assert_array_equal(_times_f64(M, v, np.empty((WIDE_ROWS, cols))), M.astype(np.float64) @ v)
