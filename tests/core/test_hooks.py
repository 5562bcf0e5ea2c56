from gpt2viz.core.config import ModelConfig
from gpt2viz.core.hooks import concrete_shape, hook_names, hook_shapes, layernorm_inputs, resolve

GOLDEN_BLOCK = [
    "hook_resid_pre", "ln1.hook_scale", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
    "attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z", "hook_attn_out", "hook_resid_mid",
    "ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out", "hook_resid_post",
]


def test_golden_hook_names_in_order():
    names = hook_names(2)
    assert names == (["hook_embed", "hook_pos_embed"]
                     + [f"blocks.0.{h}" for h in GOLDEN_BLOCK] + [f"blocks.1.{h}" for h in GOLDEN_BLOCK]
                     + ["ln_final.hook_scale", "ln_final.hook_normalized", "logits"])


def test_shapes_written_beside_names():
    shapes = hook_shapes(12)
    assert len(shapes) == 2 + 12 * 17 + 3
    assert shapes["blocks.11.attn.hook_pattern"] == "B H P K"
    assert shapes["blocks.0.attn.hook_q"] == "B P H D"
    assert shapes["blocks.3.mlp.hook_post"] == "B P M"
    assert shapes["logits"] == "B P V"
    # TransformerLens' LayerNorm hooks: the divisor per position, the value before weight and bias
    assert shapes["blocks.4.ln1.hook_scale"] == shapes["ln_final.hook_scale"] == "B P 1"
    assert shapes["blocks.4.ln2.hook_normalized"] == "B P E"


def test_concrete_shape_reads_digits_as_themselves():
    cfg = ModelConfig(n_layer=2, n_head=4, n_embd=32, n_positions=48, vocab_size=100, d_mlp=48)
    assert concrete_shape("B P 1", cfg, positions=5, keys=9, batch=2) == (2, 5, 1)
    assert concrete_shape("B H P K", cfg, positions=5, keys=9) == (1, 4, 5, 9)


def test_each_layernorm_reads_the_residual_before_it():
    assert layernorm_inputs(2) == {"blocks.0.ln1": "blocks.0.hook_resid_pre", "blocks.0.ln2": "blocks.0.hook_resid_mid",
                                   "blocks.1.ln1": "blocks.1.hook_resid_pre", "blocks.1.ln2": "blocks.1.hook_resid_mid",
                                   "ln_final": "blocks.1.hook_resid_post"}


def test_resolve_aliases():
    assert resolve(("pattern", 3)) == "blocks.3.attn.hook_pattern"
    assert resolve(("resid_post", 0)) == "blocks.0.hook_resid_post"
    assert resolve(("mlp.hook_pre", 1)) == "blocks.1.mlp.hook_pre"
    assert resolve("logits") == "logits"
    assert resolve(("ln2_scale", 1)) == "blocks.1.ln2.hook_scale"
