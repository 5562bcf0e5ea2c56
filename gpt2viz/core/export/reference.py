"""Every hook computed by transformers' PyTorch GPT-2: the oracle the ONNX graph is checked against.

Values are read from the Hugging Face modules with forward hooks wherever a module produces them;
`attn_scores` (which no module outputs) is recomputed from the module's own q and k, and each
LayerNorm's `hook_scale` and `hook_normalized` (TransformerLens' values, before the weight and bias,
which no module outputs either) are computed by their definition from the input the LayerNorm module
receives.
Needs the [export] extra (torch, transformers).
"""

from __future__ import annotations

import numpy as np
import torch

from gpt2viz.core.hooks import block_hook
from gpt2viz.core.interventions import SITES, HeadAblation, NeuronAblation, Patch, Steer, SublayerAblation


def layernorm_hooks(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """TransformerLens' LayerNorm hooks of input ``x`` [..., E], by their definition, in float64:
    ``hook_scale`` = sqrt(mean((x - mean x)^2) + eps) [..., 1] and ``hook_normalized`` = (x - mean x) / scale."""
    x = x.double()
    centred = x - x.mean(-1, keepdim=True)
    scale = (centred.pow(2).mean(-1, keepdim=True) + eps).sqrt()
    return scale, centred / scale


def _heads(x: torch.Tensor, n_head: int) -> torch.Tensor:
    """[B, P, E] -> [B, P, H, D]."""
    b, p, e = x.shape
    return x.reshape(b, p, n_head, e // n_head)


def _intervene(x: torch.Tensor, ivs, kind: str, past_len: int, means) -> torch.Tensor:
    """Apply the interventions of one hook to a torch activation, written from their definitions
    (independently of the ONNX feeds, so the oracle checks those too). ``kind``: the hook."""
    x = x.clone()
    P = x.shape[1]

    def rows(positions):
        return list(range(P)) if positions is None else [p - past_len for p in positions if 0 <= p - past_len < P]

    for iv in ivs:
        if isinstance(iv, HeadAblation) and kind == "attn.hook_z":
            value = 0.0 if iv.mode == "zero" else torch.as_tensor(np.asarray(means[(iv.layer, iv.head)]))
            for r in rows(iv.positions):
                x[:, r, iv.head] = value
        elif isinstance(iv, SublayerAblation) and SITES[iv.site] == kind:
            value = 0.0 if iv.mode == "zero" else torch.as_tensor(np.asarray(means[(iv.site, iv.layer)]))
            for r in rows(iv.positions):
                x[:, r] = value
        elif isinstance(iv, NeuronAblation) and kind == "mlp.hook_post":
            for r in rows(iv.positions):
                x[:, r, iv.neuron] = iv.value
        elif isinstance(iv, Patch) and SITES[iv.site] == kind:
            for r in rows([iv.position]):
                src = torch.tensor(iv.source, dtype=x.dtype)
                if iv.site == "head":
                    x[:, r, iv.head] = src
                else:
                    x[:, r] = src
        elif isinstance(iv, Steer) and kind == "hook_resid_pre":
            for r in rows(iv.positions):
                x[:, r] = x[:, r] + iv.scale * torch.tensor(iv.vector, dtype=x.dtype)
    return x


@torch.no_grad()
def reference_hooks(model, input_ids: np.ndarray, past: list[tuple[np.ndarray, np.ndarray]] | None = None,
                    interventions=(), means=None):
    """Run a transformers GPT2LMHeadModel (eager attention) and collect every hook as numpy.

    Parameters
    ----------
    model : transformers.GPT2LMHeadModel
        In eval mode, loaded with ``attn_implementation="eager"``.
    input_ids : np.ndarray
        [B, P] token ids.
    past : list of (key, value), optional
        Per layer, [B, H, past, D] arrays from an earlier call's cache.
    interventions : tuple of Intervention, optional
        Done with torch forward hooks registered before the recording ones (so every hook records the
        value after the intervention): block pre-hook (resid_pre), c_proj pre-hook (z, per head),
        act hook (post), attn / mlp hooks (attn_out / mlp_out).
    means : dict, optional
        (layer, head) -> [D] mean z for mean ablations.

    Returns
    -------
    hooks : dict[str, np.ndarray]
        Hook name -> array with the batch dimension kept.
    present : list of (key, value)
        The cache after this call.
    """
    from transformers import DynamicCache

    cfg = model.config
    n_head = cfg.n_head
    ids = torch.as_tensor(input_ids, dtype=torch.long)
    past_len = 0 if past is None else past[0][0].shape[2]
    cache = DynamicCache()
    if past is not None:
        for layer, (k, v) in enumerate(past):
            cache.update(torch.as_tensor(k), torch.as_tensor(v), layer)
    positions = torch.arange(past_len, past_len + ids.shape[1]).unsqueeze(0).expand(ids.shape[0], -1)
    mask = torch.ones(ids.shape[0], past_len + ids.shape[1], dtype=torch.long)

    got: dict[str, torch.Tensor] = {}
    handles = []

    def save_out(name, fn=lambda o: o):
        def hook(_m, _i, o):
            got[name] = fn(o).detach().clone()
        return hook

    def save_in(name, fn=lambda x: x):
        def hook(_m, args):
            got[name] = fn(args[0]).detach().clone()
        return hook

    def save_layernorm(prefix):
        def hook(m, args):
            got[f"{prefix}.hook_scale"], got[f"{prefix}.hook_normalized"] = layernorm_hooks(args[0], m.eps)
        return hook

    tr = model.transformer
    for layer, block in enumerate(tr.h):
        mine = [iv for iv in interventions if iv.layer == layer]
        if not mine:
            continue

        def pre_block(_m, args, ivs=mine):
            return (_intervene(args[0], ivs, "hook_resid_pre", past_len, means), *args[1:])

        def pre_cproj(_m, args, ivs=mine):
            b, p, e = args[0].shape
            z = _intervene(_heads(args[0], n_head), ivs, "attn.hook_z", past_len, means)
            return (z.reshape(b, p, e), *args[1:])

        def post_act(_m, _i, o, ivs=mine):
            return _intervene(o, ivs, "mlp.hook_post", past_len, means)

        def post_attn(_m, _i, o, ivs=mine):
            return (_intervene(o[0], ivs, "hook_attn_out", past_len, means), *o[1:])

        def post_mlp(_m, _i, o, ivs=mine):
            return _intervene(o, ivs, "hook_mlp_out", past_len, means)

        handles += [block.register_forward_pre_hook(pre_block), block.attn.c_proj.register_forward_pre_hook(pre_cproj),
                    block.mlp.act.register_forward_hook(post_act), block.attn.register_forward_hook(post_attn),
                    block.mlp.register_forward_hook(post_mlp)]
    handles.append(tr.wte.register_forward_hook(save_out("hook_embed")))
    handles.append(tr.wpe.register_forward_hook(save_out("hook_pos_embed")))
    for layer, block in enumerate(tr.h):
        name = lambda h, L=layer: block_hook(L, h)  # noqa: E731
        handles.append(block.register_forward_pre_hook(save_in(name("hook_resid_pre"))))
        handles.append(block.ln_1.register_forward_pre_hook(save_layernorm(name("ln1"))))
        handles.append(block.attn.c_attn.register_forward_hook(save_out(name("_qkv"))))
        handles.append(block.attn.c_proj.register_forward_pre_hook(
            save_in(name("attn.hook_z"), lambda x: _heads(x, n_head))))
        handles.append(block.attn.register_forward_hook(save_out(name("hook_attn_out"), lambda o: o[0])))
        handles.append(block.ln_2.register_forward_pre_hook(save_in(name("hook_resid_mid"))))
        handles.append(block.ln_2.register_forward_pre_hook(save_layernorm(name("ln2"))))
        handles.append(block.mlp.c_fc.register_forward_hook(save_out(name("mlp.hook_pre"))))
        handles.append(block.mlp.act.register_forward_hook(save_out(name("mlp.hook_post"))))
        handles.append(block.mlp.register_forward_hook(save_out(name("hook_mlp_out"))))
        handles.append(block.register_forward_hook(
            save_out(name("hook_resid_post"), lambda o: o[0] if isinstance(o, tuple) else o)))
    handles.append(tr.ln_f.register_forward_pre_hook(save_layernorm("ln_final")))
    try:
        out = model(input_ids=ids, attention_mask=mask, position_ids=positions, past_key_values=cache,
                    use_cache=True, output_attentions=True)
    finally:
        for h in handles:
            h.remove()

    hooks: dict[str, np.ndarray] = {}
    present = []
    for layer in range(cfg.n_layer):
        qkv = got.pop(block_hook(layer, "_qkv"))
        q, k, v = qkv.split(cfg.n_embd, dim=2)
        q, k, v = (_heads(t, n_head) for t in (q, k, v))
        got[block_hook(layer, "attn.hook_q")] = q
        got[block_hook(layer, "attn.hook_k")] = k
        got[block_hook(layer, "attn.hook_v")] = v
        layer_cache = out.past_key_values.layers[layer] if hasattr(out.past_key_values, "layers") \
            else None
        keys = layer_cache.keys if layer_cache is not None else out.past_key_values[layer][0]
        values = layer_cache.values if layer_cache is not None else out.past_key_values[layer][1]
        present.append((keys.numpy().copy(), values.numpy().copy()))
        scale = 1.0 / float(q.shape[-1]) ** 0.5 if cfg.scale_attn_weights else 1.0
        if cfg.scale_attn_by_inverse_layer_idx:
            scale /= float(layer + 1)
        got[block_hook(layer, "attn.hook_attn_scores")] = torch.einsum("bphd,bhkd->bhpk", q, keys) * scale
        got[block_hook(layer, "attn.hook_pattern")] = out.attentions[layer]
    got["logits"] = out.logits
    for name, t in got.items():
        hooks[name] = t.float().numpy()
    return hooks, present
