"""Oracle tests: interventions done inside the ONNX graph equal the same interventions done with
torch forward hooks on transformers' GPT-2, for every hook, in a prefill, a chunk after a cache and
cached steps."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.export.reference import reference_hooks
from gpt2viz.core.interventions import (
    HeadAblation,
    InterventionError,
    NeuronAblation,
    Patch,
    Steer,
    SublayerAblation,
    feeds,
    mean_activations,
    parse_pair,
)

pytestmark = pytest.mark.slow
TOL = 1e-4
PROMPT = [464, 3139, 286, 4881, 318]
CHUNK = [11, 262, 290]


def assert_match(trace, ref):
    for name, r in ref.items():
        g = trace[name] if name != "logits" else trace["logits"]
        r = r[0]
        scale = max(float(np.abs(r).max()), 1e-12)
        err = float(np.abs(g.astype(np.float64) - r).max()) / scale
        assert err <= TOL, f"{name}: {err:.2e} of scale"


def kinds(cfg, rng):
    """One tuple per intervention kind (and one mixing them all), for a model of config ``cfg``."""
    E, D, L = cfg.n_embd, cfg.n_embd // cfg.n_head, cfg.n_layer - 1
    M = cfg.n_inner or 4 * cfg.n_embd
    src_e = rng.normal(size=E).astype(np.float32)
    src_d = rng.normal(size=D).astype(np.float32)
    return {
        "zero_head": (HeadAblation(L, cfg.n_head - 1),),
        "zero_head_positions": (HeadAblation(0, 0, positions=(1, 6, 8)),),
        "mean_head": (HeadAblation(L, 0, mode="mean"),),
        "neuron": (NeuronAblation(0, M - 1), NeuronAblation(L, 3, value=2.5, positions=(0, 7, 9))),
        "patch_resid_pre": (Patch("resid_pre", L, 2, src_e), Patch("resid_pre", 0, 6, src_e)),
        "patch_attn_out": (Patch("attn_out", 0, 4, src_e), Patch("attn_out", L, 8, src_e)),
        "patch_mlp_out": (Patch("mlp_out", L, 0, src_e), Patch("mlp_out", 0, 9, src_e)),
        "patch_head": (Patch("head", 0, 3, src_d, head=0), Patch("head", L, 7, src_d, head=cfg.n_head - 1)),
        "steer": (Steer(L, (1, 2, 8, 9), src_e, scale=3.0),),
        "sublayer_zero": (SublayerAblation(0, "attn_out"), SublayerAblation(L, "mlp_out", positions=(1, 8))),
        "sublayer_mean": (SublayerAblation(L, "attn_out", "mean", (0, 9)), SublayerAblation(0, "mlp_out", "mean")),
        # several noise vectors at several positions and a patch on the same hook after them: the causal trace
        "noise_then_restore": (Steer(0, (1,), src_e), Steer(0, (2,), -src_e, 2.0), Patch("resid_pre", 0, 2, src_e),
                               Patch("mlp_out", L, 2, src_e)),
        "all": (HeadAblation(0, 0), NeuronAblation(L, 1), Patch("resid_pre", 0, 1, src_e),
                Steer(0, None, src_e, 0.5), Patch("mlp_out", L, 6, src_e), HeadAblation(L, 0, "mean", (2, 5, 9))),
    }


@pytest.mark.parametrize("name", ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"])
def test_every_intervention_matches_torch_hooks_prefill_chunk_and_steps(name, exported, torch_models):
    model, tm = Model(exported[name]), torch_models[name]
    cfg = tm.config
    rng = np.random.default_rng(3)
    for kind, ivs in kinds(cfg, rng).items():
        means = mean_activations(model, PROMPT, ivs)
        trace, cache = model.run(PROMPT, keep_all_logits=True, interventions=ivs, means=means)
        ref, ref_cache = reference_hooks(tm, np.asarray([PROMPT]), interventions=ivs, means=means)
        assert_match(trace, ref)
        trace, cache = model.run(CHUNK, cache, keep_all_logits=True, interventions=ivs, means=means)
        ref, ref_cache = reference_hooks(tm, np.asarray([CHUNK]), ref_cache, interventions=ivs, means=means)
        assert_match(trace, ref)
        for _ in range(2):  # positions 8 and 9: the ones several interventions name
            nxt = [int(np.argmax(trace.last_logits))]
            past = [(k, v) for k, v in cache.layers]
            trace, cache = model.run(nxt, cache, keep_all_logits=True, interventions=ivs, means=means)
            ref, _ = reference_hooks(tm, np.asarray([nxt]), past, interventions=ivs, means=means)
            assert_match(trace, ref)


def test_no_intervention_is_the_graph_unchanged(exported, torch_models):
    model, tm = Model(exported["l3h4e32"]), torch_models["l3h4e32"]
    trace, _ = model.run(PROMPT, keep_all_logits=True)
    ref, _ = reference_hooks(tm, np.asarray([PROMPT]))
    assert_match(trace, ref)
    a, _ = model.run(PROMPT, keep_all_logits=True, interventions=())
    for k in trace:
        np.testing.assert_array_equal(a[k], trace[k])


def test_interventions_change_what_they_should(exported):
    model = Model(exported["l3h4e32"])
    clean, _ = model.run(PROMPT)
    abl, _ = model.run(PROMPT, interventions=(HeadAblation(1, 2),))
    assert np.all(abl["z", 1][:, 2] == 0) and np.array_equal(abl["z", 1][:, 1], clean["z", 1][:, 1])
    np.testing.assert_array_equal(abl["resid_post", 0], clean["resid_post", 0])  # below: untouched
    assert not np.allclose(abl["resid_post", 1], clean["resid_post", 1])
    # resid_post of block L-1 keeps showing the value before block L's resid_pre intervention
    v = np.ones(32, np.float32)
    st, _ = model.run(PROMPT, interventions=(Steer(1, (4,), v, 2.0),))
    np.testing.assert_array_equal(st["resid_post", 0], clean["resid_post", 0])
    np.testing.assert_allclose(st["resid_pre", 1][4], clean["resid_pre", 1][4] + 2.0, atol=1e-6)
    np.testing.assert_array_equal(st["resid_pre", 1][:4], clean["resid_pre", 1][:4])


def test_feeds_cover_only_this_calls_positions(exported):
    model = Model(exported["l3h4e32"])
    f = feeds((HeadAblation(1, 2, positions=(0, 6)),), 5, 3, model.config)
    s = f["blocks.1.attn.hook_z.scale"]
    assert s.shape == (1, 3, 4, 1) and s[0, :, 2, 0].tolist() == [1.0, 0.0, 1.0]
    assert feeds((), 0, 4, model.config) == {}


@pytest.mark.parametrize("iv,msg", [
    (HeadAblation(3, 0), "layer 3 is out of range"),
    (HeadAblation(0, 4), "head 4 is out of range"),
    (NeuronAblation(0, 48), "neuron 48 is out of range"),
    (HeadAblation(0, 0, mode="half"), "zero or mean"),
    (Patch("resid_pre", 0, 0, np.zeros(5)), "needs 32"),
    (Steer(0, (99,), np.zeros(32)), "position 99"),
    (SublayerAblation(0, "resid_pre"), "attn_out or mlp_out"),
    (SublayerAblation(0, "mlp_out", "half"), "zero or mean"),
])
def test_bad_interventions_are_one_line_errors(exported, iv, msg):
    model = Model(exported["l3h4e32"])
    with pytest.raises(InterventionError, match=msg):
        model.run(PROMPT, interventions=(iv,))


def test_parse_pair():
    assert parse_pair("3.7", "L.H") == (3, 7)
    for bad in ("3", "a.b", "1.2.3", "-1.2"):
        with pytest.raises(InterventionError, match="malformed"):
            parse_pair(bad, "L.H")


def test_fresh_exports_record_their_intervention_inputs(exported):
    import json

    from gpt2viz.core.hooks import intervention_inputs
    from gpt2viz.core.model_folder.manifest import FORMAT_VERSION

    m = json.loads((exported["l4h2e24"] / "gpt2viz.json").read_text())
    assert m["format_version"] == FORMAT_VERSION and m["interventions"] == intervention_inputs(4)
    model = Model(exported["l4h2e24"])
    assert model.supports_interventions
    names = {o.name for o in model.intervention_session.get_outputs()}
    assert "last_logits" in names


def test_an_mlp_out_shift_equals_a_pytorch_forward_hook_on_the_mlp(exported, torch_models):
    """MlpOutShift adds scale x vector to block L's MLP output at its positions: transformers with a forward hook
    on that MLP doing the same gives the same logits and residuals."""
    import torch

    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.interventions import MlpOutShift

    model, tm = Model(exported["l3h4e32"]), torch_models["l3h4e32"]
    ids = [464, 3139, 286, 4881, 318]
    vec = np.random.default_rng(0).normal(size=32).astype(np.float32)
    iv = MlpOutShift(1, (3,), vec, -0.7)

    def hook(_m, _i, out):
        out = out.clone()
        out[:, 3] += -0.7 * torch.from_numpy(vec)
        return out
    h = tm.transformer.h[1].mlp.register_forward_hook(hook)
    try:
        with torch.no_grad():
            want = tm(torch.tensor([ids]), output_hidden_states=True)
    finally:
        h.remove()
    logits, trace = model.run_with_cache(ids, names=["blocks.1.hook_resid_post", "blocks.1.hook_mlp_out"],
                                         interventions=(iv,))
    np.testing.assert_allclose(logits, want.logits[0].numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(trace["blocks.1.hook_resid_post"], want.hidden_states[2][0].numpy(), rtol=1e-4, atol=1e-4)
    plain, _ = model.run_with_cache(ids, names=["blocks.1.hook_mlp_out"])
    assert not np.allclose(logits, plain)
