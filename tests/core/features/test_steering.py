"""Feature steering, ablation and clamping done by the graph's intervention inputs equal the same edits made by a
torch forward pre-hook on transformers' GPT-2 (the SAE's encode written out in the hook), in a prefill and in
cached steps."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.features.sae import SAE, SAEConfig, SAEError
from gpt2viz.core.features.steering import FeatureClamp, FeatureSteer, parse_feature_value, to_interventions
from gpt2viz.core.interventions import HeadAblation, Steer

torch = pytest.importorskip("torch")
TINY = "l3h4e32"
PROMPT = [464, 3139, 286, 4881, 318, 6342, 11, 290]
TOL = 1e-4


def random_sae(layer, arch, seed, d_sae=64, d_in=32):
    rng = np.random.default_rng(seed)
    cfg = SAEConfig(d_in=d_in, d_sae=d_sae, architecture=arch, hook_name=f"blocks.{layer}.hook_resid_pre",
                    k=6 if arch == "topk" else None)
    W_dec = rng.normal(size=(d_sae, d_in))
    return SAE(cfg, W_dec.T / 4, W_dec / np.linalg.norm(W_dec, axis=1, keepdims=True), rng.normal(size=d_sae) * 0.5,
               rng.normal(size=d_in) * 0.3, rng.uniform(0, 0.5, d_sae) if arch == "jumprelu" else None)


def encode_torch(sae: SAE, x):
    """SAELens' encode, typed again for the oracle."""
    h = (x - torch.tensor(sae.b_dec)) @ torch.tensor(sae.W_enc) + torch.tensor(sae.b_enc)
    if sae.cfg.architecture == "topk":
        top = h.topk(sae.cfg.k, dim=-1)
        return torch.zeros_like(h).scatter(-1, top.indices, torch.relu(top.values))
    if sae.cfg.architecture == "jumprelu":
        return torch.relu(h) * (h > torch.tensor(sae.threshold))
    return torch.relu(h)


def oracle_logits(tm, ids, saes, specs, base_head=None):
    """transformers' GPT-2 over all of ``ids`` with each block's input edited by a pre-hook: steering adds
    scale * W_dec[f], a clamp adds (value - a_f(x)) * W_dec[f] with a_f from the block's own input."""
    handles = []
    for layer, block in enumerate(tm.transformer.h):
        mine = [s for s in specs if s.layer == layer]
        if not mine:
            continue

        def pre(_m, args, mine=mine, sae=saes[layer]):
            x = args[0].clone()
            acts = encode_torch(sae, args[0][0])
            for s in mine:
                d = torch.tensor(sae.W_dec[s.feature])
                pos = range(x.shape[1]) if s.positions is None else [p for p in s.positions if p < x.shape[1]]
                for p in pos:
                    amount = s.scale if isinstance(s, FeatureSteer) else s.value - acts[p, s.feature]
                    x[0, p] += amount * d
            return (x, *args[1:])

        handles.append(block.register_forward_pre_hook(pre))
    if base_head is not None:  # zero one head's z, as HeadAblation does
        L, H = base_head
        attn = tm.transformer.h[L].attn
        D = attn.head_dim

        def cut(_m, args):
            z = args[0].clone()
            z[..., H * D:(H + 1) * D] = 0
            return (z, *args[1:])

        handles.append(attn.c_proj.register_forward_pre_hook(cut))
    try:
        with torch.no_grad():
            return tm(torch.tensor([ids])).logits[0].numpy()
    finally:
        for h in handles:
            h.remove()


def close(a, b):
    scale = float(np.abs(b).max())
    err = float(np.abs(a.astype(np.float64) - b).max()) / scale
    assert err <= TOL, f"{err:.2e} of scale"


@pytest.fixture(scope="module")
def setup(tiny_model, torch_models):
    saes = {0: random_sae(0, "topk", 1), 1: random_sae(1, "standard", 2), 2: random_sae(2, "jumprelu", 3)}
    return tiny_model, torch_models[TINY], saes


def active_feature(model, sae, ids, position):
    from gpt2viz.core.features.activations import sae_activations

    _, f = sae_activations(model, sae, ids)
    return int(np.argmax(f[position]))


def test_steer_ablate_and_clamp_equal_the_torch_hook_oracle(setup):
    model, tm, saes = setup
    f0 = active_feature(model, saes[0], PROMPT, 3)
    f2 = active_feature(model, saes[2], PROMPT, 5)
    specs = [FeatureSteer(0, 5, 4.0, positions=(1, 3)),
             FeatureClamp(0, f0, 0.0),                              # ablation at every position
             FeatureClamp(1, 7, 6.0, positions=(0, 2, 7)),          # a clamp up, reading block 0's edits
             FeatureSteer(1, 9, -3.0),
             FeatureClamp(2, f2, 2.5, positions=(5,))]
    ivs = to_interventions(model, saes, specs, PROMPT)
    assert all(isinstance(iv, Steer) for iv in ivs)
    got = model.run_with_hooks(PROMPT, ivs)
    want = oracle_logits(tm, PROMPT, saes, specs)
    close(got, want)
    clean = model.run_with_hooks(PROMPT, ())
    assert np.abs(got - clean).max() > 100 * TOL * np.abs(clean).max()  # the edit is not a no-op
    # block 0's input after the edit: the clean input plus the SAE-space change, per position
    from gpt2viz.core.features.activations import sae_activations

    x, f = sae_activations(model, saes[0], PROMPT)
    edited, _ = sae_activations(model, saes[0], PROMPT, interventions=ivs)
    want = x - f[:, [f0]] * saes[0].W_dec[f0]
    want[[1, 3]] += 4.0 * saes[0].W_dec[5]
    np.testing.assert_allclose(edited, want, rtol=1e-5, atol=1e-5)


def test_clamp_reads_the_value_other_interventions_leave(setup):
    model, tm, saes = setup
    base = (HeadAblation(0, 1),)
    specs = [FeatureClamp(1, 7, 3.0, positions=(4, 6))]
    ivs = to_interventions(model, saes, specs, PROMPT, base=base)
    got = model.run_with_hooks(PROMPT, (*base, *ivs))
    close(got, oracle_logits(tm, PROMPT, saes, specs, base_head=(0, 1)))


def test_steering_holds_in_cached_steps(setup):
    model, tm, saes = setup
    specs = [FeatureSteer(1, 11, 5.0), FeatureSteer(2, 3, -2.0, positions=(2, 9))]
    ivs = to_interventions(model, saes, specs)
    ids = list(PROMPT)
    trace, cache = model.run(ids, interventions=ivs)
    for _ in range(2):  # positions 8 and 9
        nxt = int(np.argmax(trace.last_logits))
        ids.append(nxt)
        trace, cache = model.run([nxt], cache, interventions=ivs)
        close(trace.last_logits, oracle_logits(tm, ids, saes, specs)[-1])


def test_bad_feature_interventions_are_one_line_errors(setup):
    model, _, saes = setup
    cases = {"feature 64 is out of range": [FeatureSteer(0, 64, 1.0)],
             "no SAE for block 2": [FeatureSteer(2, 1, 1.0)],
             "needs the tokens": [FeatureClamp(0, 1, 0.0)],
             "outside the 8 tokens": [FeatureClamp(0, 1, 0.0, positions=(8,))]}
    for msg, specs in cases.items():
        with pytest.raises(SAEError, match=msg):
            to_interventions(model, {0: saes[0]}, specs, None if msg == "needs the tokens" else PROMPT)
    mlp = SAE(SAEConfig(32, 8, "standard", "blocks.0.hook_mlp_out"), np.zeros((32, 8)), np.zeros((8, 32)),
              np.zeros(8), np.zeros(32))
    with pytest.raises(SAEError, match="acts at hook_resid_pre"):
        to_interventions(model, mlp, [FeatureSteer(0, 1, 1.0)])


def test_parse_feature_value():
    assert parse_feature_value("3.812=8") == (3, 812, 8.0)
    assert parse_feature_value(" 0.5 = -2.5e1 ") == (0, 5, -25.0)
    for bad in ("3=8", "3.8", "a.b=1", "3.8=x"):
        with pytest.raises(SAEError, match="LAYER.FEATURE=VALUE"):
            parse_feature_value(bad)
