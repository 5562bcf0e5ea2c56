"""The stages of a token's journey, and a plain-language account of each with the numbers on screen.

No Qt: these functions take the model, weights and history and return text, so the pipeline view and
the tests use the same words.
"""

from __future__ import annotations

import numpy as np

from gpt2viz.core.analysis import focused_head, lens_at
from gpt2viz.core.sampling import softmax


def stage_ids(n_layer: int) -> list[str]:
    """Stage ids in the order a token travels."""
    return ["tokens", "embed", *[f"block.{L}" for L in range(n_layer)], "ln_final", "lm_head", "softmax", "choose"]


def stage_title(stage: str) -> str:
    """Short label for a pipeline cell."""
    if stage.startswith("block."):
        return f"Block {stage.split('.')[1]}"
    return {"tokens": "Tokens", "embed": "Embed + pos", "ln_final": "Final LN", "lm_head": "LM head",
            "softmax": "Softmax", "choose": "Pick"}[stage]


def _q(tok, i: int) -> str:
    return f"“{tok.token_display(int(i))}”"


def explain(stage: str, model, weights, history, position: int, dist=None, chosen=None, sampling=None,
            lens: np.ndarray | None = None) -> str:
    """A few sentences on what ``stage`` does to the token at ``position``, with the model's numbers.

    ``lens`` is the logit lens at ``position`` when the caller has it already.
    """
    tok, cfg = model.tokenizer, model.config
    tokens = history.tokens
    here = _q(tok, tokens[position])
    if stage == "tokens":
        return (f"The text became {len(tokens)} tokens (byte-pair pieces; a leading space belongs to the "
                f"token). Position {position} is {here}, id {tokens[position]}. The model reads at most "
                f"{cfg.n_positions} tokens.")
    if stage == "embed":
        e = history.hook_at("hook_embed", position)
        p = history.hook_at("hook_pos_embed", position)
        return (f"{here} is looked up in a table of {cfg.vocab_size:,} learned vectors of {cfg.n_embd} numbers "
                f"(norm {np.linalg.norm(e):.2f}); the vector for position {position} (norm {np.linalg.norm(p):.2f}) "
                f"is added. Their sum (norm {np.linalg.norm(e + p):.2f}) starts the residual stream that every "
                "block reads from and writes into.")
    if lens is None:
        lens = lens_at(history, weights, cfg.n_layer, position)
    if stage.startswith("block."):
        L = int(stage.split(".")[1])
        pat = history.hook_at(("pattern", L), position)
        h, k, w = focused_head(pat)
        attn = np.linalg.norm(history.hook_at(("attn_out", L), position))
        mlp = np.linalg.norm(history.hook_at(("mlp_out", L), position))
        post = np.linalg.norm(history.hook_at(("resid_post", L), position))
        top = int(np.argmax(lens[L + 1]))
        p_top = softmax(lens[L + 1])[top]
        return (f"Block {L}: {cfg.n_head} attention heads let {here} read earlier tokens; head {h} puts "
                f"{w:.0%} of its attention on {_q(tok, tokens[k])} (position {k}). Attention adds a vector of "
                f"norm {attn:.2f}, then the MLP's {cfg.d_mlp:,} neurons add norm {mlp:.2f}; the residual's norm is "
                f"now {post:.2f}. Read out here, it would predict {_q(tok, top)} ({p_top:.0%}).")
    final = lens[-1]
    if stage == "ln_final":
        r = history.hook_at(("resid_post", cfg.n_layer - 1), position)
        n = history.hook_at("ln_final.hook_normalized", position)
        return (f"The final LayerNorm recentres and rescales the residual (norm {np.linalg.norm(r):.2f} → "
                f"{np.linalg.norm(n):.2f}) so the unembedding sees a vector of standard size.")
    order = np.argpartition(-final, 3)[:3]
    order = order[np.argsort(-final[order])]
    if stage == "lm_head":
        return (f"The LM head multiplies by the {cfg.vocab_size:,} token embeddings again (tied weights) "
                f"to score every possible next token: " + ", ".join(
                    f"{_q(tok, i)} {final[i]:.2f}" for i in order) + ". Only the last position's scores "
                "choose the next token; it is the only one that has seen the whole text.")
    probs = softmax(final)
    if stage == "softmax":
        ent = float(-(probs[probs > 0] * np.log(probs[probs > 0])).sum())
        return ("Softmax turns scores into probabilities that sum to 1: " + ", ".join(
            f"{_q(tok, i)} {probs[i]:.1%}" for i in order) + f". Entropy {ent:.2f} nats "
            f"(0 = certain, {np.log(cfg.vocab_size):.1f} = uniform).")
    if dist is None or sampling is None:
        return "Run a prompt to see which token is chosen."
    kept = int(dist.kept.sum())
    rule = ("temperature 0: always the most likely token" if sampling.greedy else
            f"temperature {sampling.temperature:g}, top-k {sampling.top_k or 'off'}, top-p {sampling.top_p:g}, "
            f"seed {sampling.seed}")
    return (f"Choosing the next token ({rule}): {kept:,} {'candidates remain' if kept != 1 else 'candidate remains'}; the step will append "
            f"{_q(tok, chosen)} ({dist.final[chosen]:.1%} after the settings, {dist.raw[chosen]:.1%} as the model "
            "gave it). Then the whole path runs again for that one token, reusing the cached keys and values.")
