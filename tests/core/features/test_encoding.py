"""Encoding equals SAELens' formula, written here in torch, on hook values from the graph (each architecture, each
input normalisation SAELens runs at inference, hook_z SAEs over all heads or one)."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.features.activations import gather, sae_activations, windows
from gpt2viz.core.features.sae import SAE, SAEConfig, variance_explained

torch = pytest.importorskip("torch")
PROMPT = "The capital of France is Paris, and the capital of Japan is"


def make(arch, d_in, hook, *, d_sae=96, head=None, norm="none", seed=0, apply_b_dec=True):
    rng = np.random.default_rng(seed)
    cfg = SAEConfig(d_in=d_in, d_sae=d_sae, architecture=arch, hook_name=hook, hook_head_index=head,
                    k=7 if arch == "topk" else None, normalize_activations=norm, apply_b_dec_to_input=apply_b_dec)
    th = rng.uniform(-0.2, 1.0, d_sae) if arch == "jumprelu" else None  # a few negative thresholds too
    return SAE(cfg, rng.normal(size=(d_in, d_sae)) / np.sqrt(d_in), rng.normal(size=(d_sae, d_in)),
               rng.normal(size=d_sae) * 0.3, rng.normal(size=d_in) * 0.3, th)


def torch_reference(sae: SAE, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SAELens 6 (sae.py, standard_sae.py, jumprelu_sae.py, topk_sae.py), re-typed in torch."""
    c = sae.cfg
    x = torch.tensor(value, dtype=torch.float32)
    if c.hook_head_index is not None:
        x = x[:, c.hook_head_index]
    x = x.reshape(x.shape[0], -1)                      # hook_z: "... n_heads d_head -> ... (n_heads d_head)"
    if c.normalize_activations == "constant_norm_rescale":
        coeff = c.d_in ** 0.5 / x.norm(dim=-1, keepdim=True)
        x_in = x * coeff
    elif c.normalize_activations == "layer_norm":
        mu = x.mean(dim=-1, keepdim=True)
        std = (x - mu).std(dim=-1, keepdim=True)
        x_in = (x - mu) / (std + 1e-5)
    else:
        x_in = x
    W_enc, W_dec = torch.tensor(sae.W_enc), torch.tensor(sae.W_dec)
    b_enc, b_dec = torch.tensor(sae.b_enc), torch.tensor(sae.b_dec)
    sae_in = x_in - b_dec * c.apply_b_dec_to_input
    hidden_pre = sae_in @ W_enc + b_enc
    if c.architecture == "standard":
        f = torch.relu(hidden_pre)
    elif c.architecture == "jumprelu":
        f = torch.relu(hidden_pre) * (hidden_pre > torch.tensor(sae.threshold))
    else:
        top = torch.topk(hidden_pre, k=c.k, dim=-1)
        f = torch.zeros_like(hidden_pre).scatter_(-1, top.indices, torch.relu(top.values))
    out = f @ W_dec + b_dec
    if c.normalize_activations == "constant_norm_rescale":
        out = out / coeff
    elif c.normalize_activations == "layer_norm":
        out = out * std + mu
    return f.numpy(), out.numpy()


CASES = [("standard", "blocks.1.hook_resid_pre", None, "none", True),
         ("jumprelu", "blocks.2.hook_resid_pre", None, "none", True),
         ("topk", "blocks.0.hook_resid_pre", None, "none", True),
         ("topk", "blocks.2.hook_mlp_out", None, "none", False),
         ("standard", "blocks.1.attn.hook_z", None, "constant_norm_rescale", True),
         ("jumprelu", "blocks.0.attn.hook_z", 2, "layer_norm", True),
         ("topk", "blocks.2.mlp.hook_post", None, "layer_norm", True)]


@pytest.mark.parametrize("arch,hook,head,norm,apply_b_dec", CASES)
def test_encode_and_decode_equal_the_saelens_formula_on_graph_values(tiny_model, arch, hook, head, norm, apply_b_dec):
    cfg = tiny_model.config
    width = {"hook_resid_pre": cfg.d_model, "hook_mlp_out": cfg.d_model, "hook_post": cfg.d_mlp,
             "hook_z": cfg.d_head if head is not None else cfg.n_head * cfg.d_head}[hook.rsplit(".", 1)[-1]]
    sae = make(arch, width, hook, head=head, norm=norm, apply_b_dec=apply_b_dec)
    _, trace = tiny_model.run_with_cache(PROMPT, names=[hook])
    f_ref, out_ref = torch_reference(sae, trace[hook])
    x, f = sae_activations(tiny_model, sae, PROMPT)
    assert f.shape == (len(tiny_model.to_tokens(PROMPT)), sae.cfg.d_sae)
    np.testing.assert_allclose(f, f_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sae.decode(f, x), out_ref, rtol=1e-4, atol=1e-4)
    active = (f > 0).sum(axis=1)
    assert active.min() > 0 and active.max() < sae.cfg.d_sae  # the rule did select
    if arch == "topk":
        assert active.max() <= sae.cfg.k


def test_gathered_training_values_are_the_graph_hook(tiny_model):
    texts = ["The capital of France is Paris.", "Once upon a time there was a king who lived in a castle."]
    runs = windows(tiny_model, texts, context=5)
    lengths = [len(tiny_model.to_tokens(t)) for t in texts]  # 7 and 13 tokens: 5 + 2, 5 + 5 + 3
    assert [len(r) for r in runs] == [m for n in lengths for m in [5] * (n // 5) + ([n % 5] if n % 5 >= 2 else [])]
    assert runs[0] + runs[1] == tiny_model.to_tokens(texts[0])
    calls = []
    x = gather(tiny_model, "blocks.1.hook_resid_pre", None, runs, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (len(runs), len(runs)) and x.shape == (sum(map(len, runs)), tiny_model.config.d_model)
    _, trace = tiny_model.run_with_cache(runs[1], names=["blocks.1.hook_resid_pre"])
    np.testing.assert_array_equal(x[len(runs[0]):len(runs[0]) + len(runs[1])], trace["blocks.1.hook_resid_pre"])


def test_variance_explained():
    x = np.random.default_rng(0).normal(size=(50, 4))
    assert variance_explained(x, x) == 1.0
    assert abs(variance_explained(x, np.broadcast_to(x.mean(0), x.shape))) < 1e-12
