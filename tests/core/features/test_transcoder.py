"""Transcoders: both file formats round-trip and are read in their own orientation (checked with an independent
safetensors read), the formulas follow circuit-tracer's, training fits the MLP, and replacing every MLP agrees with
transformers' PyTorch GPT-2 with the MLPs swapped by forward hooks."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from safetensors.numpy import load_file

from gpt2viz.core.features.sae import SAEError
from gpt2viz.core.features.transcoder import (
    random_transcoder,
    read_circuit_tracer,
    read_saelens_transcoder,
    read_transcoders,
    write_circuit_tracer,
    write_saelens_transcoder,
)

PROMPT = "The capital of France is"


def _same(a, b):
    assert a.cfg.d_in == b.cfg.d_in and a.cfg.d_sae == b.cfg.d_sae and a.cfg.d_out == b.cfg.d_out
    assert (a.cfg.architecture, a.cfg.layer, a.cfg.input_kind, a.cfg.k) == \
        (b.cfg.architecture, b.cfg.layer, b.cfg.input_kind, b.cfg.k)
    for name in ("W_enc", "W_dec", "b_enc", "b_dec", "threshold", "W_skip"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y)


def test_circuit_tracer_set_round_trips_in_its_own_orientation(tmp_path):
    tcs = [random_transcoder(0, 8, 20, architecture="jumprelu", seed=1, skip=True),
           random_transcoder(1, 8, 20, architecture="topk", k=3, seed=2, skip=True)]
    write_circuit_tracer(tcs, tmp_path, model_name="tiny")
    conf = yaml.safe_load((tmp_path / "config.yaml").read_text())
    assert conf["feature_input_hook"] == "ln2.hook_normalized" and conf["feature_output_hook"] == "hook_mlp_out"
    assert conf["transcoders"] == ["layer_0.safetensors", "layer_1.safetensors"]
    raw = load_file(str(tmp_path / "layer_0.safetensors"))
    assert raw["W_enc"].shape == (20, 8) and raw["W_dec"].shape == (20, 8) and raw["W_skip"].shape == (8, 8)
    np.testing.assert_array_equal(raw["activation_function.threshold"], tcs[0].threshold)
    back = read_circuit_tracer(tmp_path)
    for a, b in zip(tcs, back):
        _same(a, b)
    # circuit-tracer's formulas on its own tensors: F.linear(x, W_enc, b_enc), acts @ W_dec + b_dec + x @ W_skip.T
    x = np.random.default_rng(0).normal(size=(5, 8)).astype(np.float32)
    pre = x @ raw["W_enc"].T + raw["b_enc"]
    acts = np.where(pre > raw["activation_function.threshold"], pre, 0) * (pre > 0)
    want = acts @ raw["W_dec"] + raw["b_dec"] + x @ raw["W_skip"].T
    np.testing.assert_allclose(back[0].forward(x), want, rtol=1e-5, atol=1e-6)
    assert read_transcoders(tmp_path)[1].cfg.k == 3


def test_saelens_transcoder_folder_round_trips(tmp_path):
    tc = random_transcoder(2, 8, 12, architecture="standard", input_kind="hook_resid_mid", seed=3)
    write_saelens_transcoder(tc, tmp_path / "blocks.2.hook_resid_mid")
    cfg = json.loads((tmp_path / "blocks.2.hook_resid_mid" / "cfg.json").read_text())
    assert cfg["d_out"] == 8 and cfg["hook_name_out"] == "blocks.2.hook_mlp_out"
    assert cfg["metadata"]["hook_name"] == "blocks.2.hook_resid_mid" and cfg["architecture"] == "standard"
    _same(tc, read_saelens_transcoder(tmp_path / "blocks.2.hook_resid_mid"))
    assert [t.cfg.layer for t in read_transcoders(tmp_path)] == [2]


def test_an_sae_folder_or_a_gap_is_refused_in_one_line(tmp_path):
    from gpt2viz.core.features.sae import SAE, SAEConfig
    from gpt2viz.core.features.saelens_folder import write_sae

    sae = SAE(SAEConfig(4, 6, "standard", "blocks.0.hook_resid_pre"), np.zeros((4, 6)), np.zeros((6, 4)),
              np.zeros(6), np.zeros(4))
    write_sae(sae, tmp_path / "sae")
    with pytest.raises(SAEError, match="no d_out"):
        read_saelens_transcoder(tmp_path / "sae")
    write_circuit_tracer([random_transcoder(0, 4, 6, k=2), random_transcoder(1, 4, 6, k=2)], tmp_path / "ct")
    (tmp_path / "ct" / "config.yaml").write_text(yaml.safe_dump({"feature_input_hook": "hook_resid_mid",
                                                                 "feature_output_hook": "hook_mlp_out",
                                                                 "transcoders": ["layer_1.safetensors"]}))
    with pytest.raises(SAEError, match="layer_0"):
        read_circuit_tracer(tmp_path / "ct")


def _pairs(model, layer, n_texts=6):
    from gpt2viz.core.features.activations import shipped_texts, windows
    from gpt2viz.core.features.transcoder_training import gather_pairs

    runs = windows(model, shipped_texts()[:n_texts], 32)
    return gather_pairs(model, layer, runs[1:]), gather_pairs(model, layer, runs[:1]), runs


def test_training_fits_the_mlp_and_is_seeded(tiny_model):
    from gpt2viz.core.features.training import TrainSettings
    from gpt2viz.core.features.transcoder_training import train_transcoder

    (tx, ty), (ex, ey), _ = _pairs(tiny_model, 1)
    s = TrainSettings(d_sae=96, architecture="topk", k=8, steps=150, batch=256, lr=3e-3, threads=1)
    r = train_transcoder(tx, ty, ex, ey, 1, s)
    r2 = train_transcoder(tx, ty, ex, ey, 1, s)
    np.testing.assert_array_equal(r.transcoder.W_enc, r2.transcoder.W_enc)
    assert r.variance_explained > 0.5, r.numbers()
    # the number is the saved transcoder's own, on the raw (unscaled) held-out values
    y_hat = r.transcoder.forward(ex)
    resid = ((ey - y_hat) ** 2).sum()
    assert r.variance_explained == pytest.approx(1 - resid / ((ey - ey.mean(0)) ** 2).sum(), rel=1e-4)
    assert r.mean_l0 == pytest.approx(8, abs=0.5)


def test_replacing_every_mlp_agrees_with_transformers_forward_hooks(tiny_folder, tiny_model, checkpoints):
    import torch
    from transformers import GPT2LMHeadModel

    from gpt2viz.core.features.transcoder_training import replaced_logits
    from tests.core.features.conftest import TINY

    m = tiny_model
    tcs = [random_transcoder(L, m.config.n_embd, 40, architecture="topk", k=5, seed=L) for L in range(m.config.n_layer)]
    ids = m.to_tokens(PROMPT)
    got = replaced_logits(m, tcs, ids)
    hf = GPT2LMHeadModel.from_pretrained(checkpoints[TINY]).eval()

    def hook(L):
        ln = hf.transformer.h[L].ln_2

        def swap(module, inputs, output):
            normalized = (inputs[0] - ln.bias) / ln.weight  # the MLP's input, before ln2's weight and bias
            return torch.from_numpy(tcs[L].forward(normalized[0].detach().numpy()))[None]
        return swap

    handles = [hf.transformer.h[L].mlp.register_forward_hook(hook(L)) for L in range(m.config.n_layer)]
    with torch.no_grad():
        want = hf(torch.tensor([ids])).logits[0].numpy()
    for h in handles:
        h.remove()
    with torch.no_grad():
        clean = hf(torch.tensor([ids])).logits[0].numpy()
    assert np.abs(want - clean).max() > 1e-2  # the swap matters
    np.testing.assert_allclose(got, want, atol=2e-3 * np.abs(want).max())


def test_replacement_quality_prefers_a_trained_set(tiny_model):
    from gpt2viz.core.features.training import TrainSettings
    from gpt2viz.core.features.transcoder_training import replacement_quality, train_transcoder

    m = tiny_model
    trained = []
    runs = None
    for L in range(m.config.n_layer):
        (tx, ty), (ex, ey), runs = _pairs(m, L)
        s = TrainSettings(d_sae=96, architecture="topk", k=8, steps=150, batch=256, lr=3e-3, threads=1)
        trained.append(train_transcoder(tx, ty, ex, ey, L, s).transcoder)
    rand = [random_transcoder(L, m.config.n_embd, 96, k=8, seed=L) for L in range(m.config.n_layer)]
    good, bad = replacement_quality(m, trained, runs[:1]), replacement_quality(m, rand, runs[:1])
    assert min(good["mlp_out_variance_explained"]) > 0.3 > max(bad["mlp_out_variance_explained"])
    assert 0 <= good["next_token_kl_all_replaced"] < bad["next_token_kl_all_replaced"]
