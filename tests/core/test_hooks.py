from gpt2viz.core.hooks import hook_names, hook_shapes, resolve

GOLDEN_BLOCK = [
    "hook_resid_pre", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
    "attn.hook_attn_scores", "attn.hook_pattern", "attn.hook_z", "hook_attn_out", "hook_resid_mid",
    "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out", "hook_resid_post",
]


def test_golden_hook_names_in_order():
    names = hook_names(2)
    assert names == (["hook_embed", "hook_pos_embed"]
                     + [f"blocks.0.{h}" for h in GOLDEN_BLOCK] + [f"blocks.1.{h}" for h in GOLDEN_BLOCK]
                     + ["ln_final.hook_normalized", "logits"])


def test_shapes_written_beside_names():
    shapes = hook_shapes(12)
    assert len(shapes) == 2 + 12 * 15 + 2
    assert shapes["blocks.11.attn.hook_pattern"] == "B H P K"
    assert shapes["blocks.0.attn.hook_q"] == "B P H D"
    assert shapes["blocks.3.mlp.hook_post"] == "B P M"
    assert shapes["logits"] == "B P V"


def test_resolve_aliases():
    assert resolve(("pattern", 3)) == "blocks.3.attn.hook_pattern"
    assert resolve(("resid_post", 0)) == "blocks.0.hook_resid_post"
    assert resolve(("mlp.hook_pre", 1)) == "blocks.1.mlp.hook_pre"
    assert resolve("logits") == "logits"
