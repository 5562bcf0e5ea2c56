"""Words for the stages of a token's journey: cell labels, glyph texts and the explanation.

All of it is formatted here from one :class:`~gpt2viz.core.viewmodels.pipeline.PipelineSummary`, so
the cells and the explanation show the same numbers (and a later translation has one place to go).
"""

from __future__ import annotations

from gpt2viz.core.session import Stage, StageKind
from gpt2viz.core.viewmodels.pipeline import PipelineSummary

_TITLES = {StageKind.TOKENS: "Tokens", StageKind.EMBED: "Embed + pos", StageKind.LN_FINAL: "Final LN",
           StageKind.LM_HEAD: "LM head", StageKind.SOFTMAX: "Softmax", StageKind.CHOOSE: "Pick"}


def stage_title(stage: Stage) -> str:
    """Short label for a pipeline cell."""
    return f"Block {stage.layer}" if stage.is_block else _TITLES[stage.kind]


def cell_text(stage: Stage, s: PipelineSummary, show) -> str:
    """The text under a cell's glyph; ``show(token_id)`` gives a token's readable form."""
    k = stage.kind
    if k is StageKind.TOKENS:
        return f"{show(s.token)}\npos {s.position}"
    if k is StageKind.EMBED:
        return f"‖x‖ {s.sum_norm:.1f}\n{s.n_embd}-d"
    if k is StageKind.BLOCK:
        b = s.blocks[stage.layer]
        return f"h{b.head} {b.weight:.0%}\n{show(b.lens_token)} {b.lens_prob:.0%}"
    if k is StageKind.LN_FINAL:
        return f"‖x‖ {s.ln_out_norm:.1f}"
    if k is StageKind.LM_HEAD:
        return f"{s.vocab_size:,} logits\nmax {s.top_logits[0]:.1f}"
    if k is StageKind.SOFTMAX:
        return f"{show(s.top_ids[0])}\n{s.top_probs[0]:.1%}"
    if s.choice is not None:
        return f"{show(s.choice.chosen)}\n{s.choice.p_final:.1%}"
    return f"next was\n{show(s.next_token)}" if s.next_token is not None else ""


def explain(stage: Stage, s: PipelineSummary, show) -> str:
    """A few sentences on what ``stage`` does to the token at the summary's position, with its numbers."""
    def q(i):
        return f"“{show(int(i))}”"

    here = q(s.token)
    k = stage.kind
    if k is StageKind.TOKENS:
        return (f"The text became {s.n_tokens} tokens (byte-pair pieces; a leading space belongs to the "
                f"token). Position {s.position} is {here}, id {s.token}. The model reads at most "
                f"{s.n_positions} tokens.")
    if k is StageKind.EMBED:
        return (f"{here} is looked up in a table of {s.vocab_size:,} learned vectors of {s.n_embd} numbers "
                f"(norm {s.embed_norm:.2f}); the vector for position {s.position} (norm {s.pos_norm:.2f}) "
                f"is added. Their sum (norm {s.sum_norm:.2f}) starts the residual stream that every "
                "block reads from and writes into.")
    if k is StageKind.BLOCK:
        b = s.blocks[stage.layer]
        return (f"Block {b.layer}: {s.n_head} attention heads let {here} read earlier tokens; head {b.head} puts "
                f"{b.weight:.0%} of its attention on {q(_token_at(s, b))} (position {b.key}). Attention adds a vector "
                f"of norm {b.attn_norm:.2f}, then the MLP's {s.d_mlp:,} neurons add norm {b.mlp_norm:.2f}; the "
                f"residual's norm is now {b.resid_norm:.2f}. Read out here, it would predict {q(b.lens_token)} "
                f"({b.lens_prob:.0%}).")
    if k is StageKind.LN_FINAL:
        return (f"The final LayerNorm recentres and rescales the residual (norm {s.ln_in_norm:.2f} → "
                f"{s.ln_out_norm:.2f}) so the unembedding sees a vector of standard size.")
    if k is StageKind.LM_HEAD:
        return (f"The LM head multiplies by the {s.vocab_size:,} token embeddings again (tied weights) "
                "to score every possible next token: " + ", ".join(
                    f"{q(i)} {v:.2f}" for i, v in zip(s.top_ids, s.top_logits)) + ". Only the last position's "
                "scores choose the next token; it is the only one that has seen the whole text.")
    if k is StageKind.SOFTMAX:
        return ("Softmax turns scores into probabilities that sum to 1: " + ", ".join(
            f"{q(i)} {p:.1%}" for i, p in zip(s.top_ids, s.top_probs)) + f". Entropy {s.entropy:.2f} nats "
            f"(0 = certain, {s.max_entropy:.1f} = uniform).")
    c = s.choice
    if c is None:
        nxt = f" After this position came {q(s.next_token)}." if s.next_token is not None else ""
        return "Only the newest position chooses the next token; select it to see the choice." + nxt
    st = c.sampling
    rule = ("temperature 0: always the most likely token" if st.greedy else
            f"temperature {st.temperature:g}, top-k {st.top_k or 'off'}, top-p {st.top_p:g}, seed {st.seed}")
    return (f"Choosing the next token ({rule}): {c.n_kept:,} "
            f"{'candidates remain' if c.n_kept != 1 else 'candidate remains'}; the step will append "
            f"{q(c.chosen)} ({c.p_final:.1%} after the settings, {c.p_raw:.1%} as the model gave it). Then the "
            "whole path runs again for that one token, reusing the cached keys and values.")


def _token_at(s: PipelineSummary, b) -> int:
    return s.key_tokens[b.key]
