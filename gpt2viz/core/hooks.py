"""The one registry of hook names: every intermediate tensor gpt2viz exposes, with its shape.

Names follow TransformerLens. Shapes are batch first, with letters:
B batch, P positions in this call, K = past + P key positions, H heads, D d_head,
E d_model, M d_mlp, V vocabulary. A trace drops B.

`blocks.{L}.hook_resid_post` of the last block is the residual *before* the final LayerNorm
(Hugging Face's last `hidden_states` entry is *after* it).
`attn.hook_attn_scores` holds the scaled dot products q·k/√D *before* the causal mask, so future
positions show their raw score; `attn.hook_pattern` (after softmax) is exactly 0 there.

Each LayerNorm (`ln1`, `ln2`, `ln_final`) has TransformerLens' two hooks: `hook_scale`
= sqrt(mean((x - mean x)²) + eps) over the features, [B, P, 1], and `hook_normalized` = (x - mean x) / scale,
*before* the LayerNorm's weight and bias. The LayerNorm's output (normalized * weight + bias, what the
next layer reads) is not a hook: compute it from `hook_normalized` and the weights
(`transformer.h.{L}.ln_1.weight` / `.bias`, `ln_2`, `transformer.ln_f`). docs/hooks.md lists every name.
"""

from __future__ import annotations

from gpt2viz.core.config import ModelConfig

# Per-block hooks in the order the computation produces them, with their shapes.
BLOCK_HOOKS: tuple[tuple[str, str], ...] = (
    ("hook_resid_pre", "B P E"),
    ("ln1.hook_scale", "B P 1"),
    ("ln1.hook_normalized", "B P E"),
    ("attn.hook_q", "B P H D"),
    ("attn.hook_k", "B P H D"),
    ("attn.hook_v", "B P H D"),
    ("attn.hook_attn_scores", "B H P K"),
    ("attn.hook_pattern", "B H P K"),
    ("attn.hook_z", "B P H D"),
    ("hook_attn_out", "B P E"),
    ("hook_resid_mid", "B P E"),
    ("ln2.hook_scale", "B P 1"),
    ("ln2.hook_normalized", "B P E"),
    ("mlp.hook_pre", "B P M"),
    ("mlp.hook_post", "B P M"),
    ("hook_mlp_out", "B P E"),
    ("hook_resid_post", "B P E"),
)

EMBED_HOOKS: tuple[tuple[str, str], ...] = (("hook_embed", "B P E"), ("hook_pos_embed", "B P E"))
FINAL_HOOKS: tuple[tuple[str, str], ...] = (("ln_final.hook_scale", "B P 1"), ("ln_final.hook_normalized", "B P E"),
                                            ("logits", "B P V"))


# Short aliases for `trace["pattern", 3]`, as in TransformerLens' ActivationCache.
ALIASES: dict[str, str] = {
    "resid_pre": "hook_resid_pre",
    "ln1": "ln1.hook_normalized",
    "ln1_scale": "ln1.hook_scale",
    "q": "attn.hook_q",
    "k": "attn.hook_k",
    "v": "attn.hook_v",
    "attn_scores": "attn.hook_attn_scores",
    "scores": "attn.hook_attn_scores",
    "pattern": "attn.hook_pattern",
    "z": "attn.hook_z",
    "attn_out": "hook_attn_out",
    "resid_mid": "hook_resid_mid",
    "ln2": "ln2.hook_normalized",
    "ln2_scale": "ln2.hook_scale",
    "pre": "mlp.hook_pre",
    "post": "mlp.hook_post",
    "mlp_out": "hook_mlp_out",
    "resid_post": "hook_resid_post",
}


def block_hook(layer: int, hook: str) -> str:
    """Full name of a per-block hook, e.g. ``block_hook(3, "attn.hook_pattern")``."""
    return f"blocks.{layer}.{hook}"


def hook_names(n_layer: int) -> list[str]:
    """Every hook name for a model with ``n_layer`` blocks, in computation order."""
    names = [n for n, _ in EMBED_HOOKS]
    for layer in range(n_layer):
        names += [block_hook(layer, h) for h, _ in BLOCK_HOOKS]
    names += [n for n, _ in FINAL_HOOKS]
    return names


def hook_shapes(n_layer: int) -> dict[str, str]:
    """Every hook name with its shape letters (``"B H P K"``)."""
    out = dict(EMBED_HOOKS)
    for layer in range(n_layer):
        out.update({block_hook(layer, h): s for h, s in BLOCK_HOOKS})
    out.update(FINAL_HOOKS)
    return out


def layernorm_inputs(n_layer: int) -> dict[str, str]:
    """Each LayerNorm's hook prefix -> the hook that holds its input (what its ``hook_scale`` and
    ``hook_normalized`` are computed from): ``{"blocks.0.ln1": "blocks.0.hook_resid_pre", ...,
    "ln_final": "blocks.{n_layer-1}.hook_resid_post"}``."""
    out = {}
    for layer in range(n_layer):
        out[block_hook(layer, "ln1")] = block_hook(layer, "hook_resid_pre")
        out[block_hook(layer, "ln2")] = block_hook(layer, "hook_resid_mid")
    out["ln_final"] = block_hook(n_layer - 1, "hook_resid_post")
    return out


def resolve(key: str | tuple[str, int]) -> str:
    """Turn ``"pattern", 3`` or a full name into the full hook name."""
    if isinstance(key, tuple):
        short, layer = key
        return block_hook(int(layer), ALIASES.get(short, short))
    return key


def concrete_shape(letters: str, config: ModelConfig, positions: int, keys: int, batch: int = 1) -> tuple[int, ...]:
    """Numbers for a shape's letters, for checking a tensor against the registry (a digit is itself:
    ``"B P 1"``)."""
    values = {"B": batch, "P": positions, "K": keys, "H": config.n_head, "D": config.d_head,
              "E": config.d_model, "M": config.d_mlp, "V": config.vocab_size}
    return tuple(int(ch) if ch.isdigit() else values[ch] for ch in letters.split())


# --- Intervention inputs -------------------------------------------------------------------------
# Hooks that accept an intervention, with their shapes. At each the graph computes
# x' = x * scale + shift, where `{hook}.scale` and `{hook}.shift` are optional graph inputs
# (overridable initializers: ones / zeros of shape [1, 1, 1(, 1)], broadcast against x), and every
# consumer of x, including the hook output itself, reads x' (TransformerLens: a hook shows the value
# after its intervention). `blocks.{L}.hook_resid_post` of block L-1 is the same tensor as
# `blocks.{L}.hook_resid_pre`, but it keeps showing the value *before* block L's resid_pre intervention.
INTERVENTION_HOOKS: tuple[tuple[str, str], ...] = (
    ("hook_resid_pre", "B P E"),
    ("attn.hook_z", "B P H D"),
    ("hook_attn_out", "B P E"),
    ("mlp.hook_post", "B P M"),
    ("hook_mlp_out", "B P E"),
)

# Logits of the last position only, [B, 1, V]: the LM head applied to one position instead of P, for
# analyses that need only the next-token distribution (activation patching).
LAST_LOGITS = "last_logits"


def scale_input(layer: int, hook: str) -> str:
    """Name of the graph input that multiplies ``blocks.{layer}.{hook}`` (default ones)."""
    return f"{block_hook(layer, hook)}.scale"


def shift_input(layer: int, hook: str) -> str:
    """Name of the graph input added to ``blocks.{layer}.{hook}`` after the scale (default zeros)."""
    return f"{block_hook(layer, hook)}.shift"


def intervention_inputs(n_layer: int) -> list[str]:
    """Every intervention input name of a model with ``n_layer`` blocks."""
    return [f(layer, h) for layer in range(n_layer) for h, _ in INTERVENTION_HOOKS for f in (scale_input, shift_input)]
