"""Words for the stages of a token's journey: cell labels, glyph texts and the explanation.

All of it is formatted here from one :class:`~gpt2viz.core.viewmodels.pipeline.PipelineSummary`, so
the cells and the explanation show the same numbers. Every sentence goes through
``QCoreApplication.translate("Stages", ...)`` with named placeholders filled after translation, so a
translator can move the numbers where their language wants them.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication

from gpt2viz.core.generation.sampling import top_k_text
from gpt2viz.core.session.session import Stage, StageKind
from gpt2viz.core.viewmodels.pipeline import PipelineSummary


# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate


def _titles() -> dict:
    # Built at call time, not import time: the language can change while the app runs.
    return {StageKind.TOKENS: translate("Stages", "Tokens"), StageKind.EMBED: translate("Stages", "Embed + pos"),
            StageKind.LN_FINAL: translate("Stages", "Final LN"), StageKind.LM_HEAD: translate("Stages", "LM head"),
            StageKind.SOFTMAX: translate("Stages", "Softmax"), StageKind.CHOOSE: translate("Stages", "Pick")}


def stage_title(stage: Stage) -> str:
    """Short label for a pipeline cell."""
    return translate("Stages", "Block {layer}").format(layer=stage.layer) if stage.is_block else _titles()[stage.kind]


def cell_text(stage: Stage, s: PipelineSummary, show) -> str:
    """The text under a cell's glyph; ``show(token_id)`` gives a token's readable form."""
    k = stage.kind
    if k is StageKind.TOKENS:
        return translate("Stages", "{token}\npos {position}").format(token=show(s.token), position=s.position)
    if k is StageKind.EMBED:
        return translate("Stages", "‖x‖ {norm:.1f}\n{n_embd}-d").format(norm=s.sum_norm, n_embd=s.n_embd)
    if k is StageKind.BLOCK:
        b = s.blocks[stage.layer]
        text = translate("Stages", "h{head} {weight:.0%}\n{token} {prob:.0%}").format(
            head=b.head, weight=b.weight, token=show(b.lens_token), prob=b.lens_prob)
        if b.target_delta is not None:  # interventions in force: where the original answer's path changed
            text += "\n" + translate("Stages", "{token} #{rank} Δ{delta:+.0%}").format(
                token=show(s.target), rank=b.target_rank + 1, delta=b.target_delta)
        return text
    if k is StageKind.LN_FINAL:
        return translate("Stages", "‖x‖ {norm:.1f}").format(norm=s.ln_out_norm)
    if k is StageKind.LM_HEAD:
        return translate("Stages", "{vocab:,} logits\nmax {logit:.1f}").format(vocab=s.vocab_size, logit=s.top_logits[0])
    if k is StageKind.SOFTMAX:
        return translate("Stages", "{token}\n{prob:.1%}").format(token=show(s.top_ids[0]), prob=s.top_probs[0])
    if s.choice is not None:
        return translate("Stages", "{token}\n{prob:.1%}").format(token=show(s.choice.chosen), prob=s.choice.p_final)
    return translate("Stages", "next was\n{token}").format(token=show(s.next_token)) if s.next_token is not None else ""


def explain(stage: Stage, s: PipelineSummary, show) -> str:
    """A few sentences on what ``stage`` does to the token at the summary's position, with its numbers.

    The stage's title is not part of it: every caller shows :func:`stage_title` in front of it.
    """
    def q(i):
        return translate("Stages", "“{token}”").format(token=show(int(i)))

    here = q(s.token)
    k = stage.kind
    if k is StageKind.TOKENS:
        return translate("Stages", "The text became {n_tokens} tokens (byte-pair pieces; a leading space belongs to the "
                   "token). Position {position} is {token}, id {id}. The model reads at most "
                   "{n_positions} tokens.").format(n_tokens=s.n_tokens, position=s.position, token=here, id=s.token,
                                                   n_positions=s.n_positions)
    if k is StageKind.EMBED:
        return translate("Stages", "{token} is looked up in a table of {vocab:,} learned vectors of {n_embd} numbers "
                   "(norm {embed_norm:.2f}); the vector for position {position} (norm {pos_norm:.2f}) "
                   "is added. Their sum (norm {sum_norm:.2f}) starts the residual stream that every "
                   "block reads from and writes into.").format(
            token=here, vocab=s.vocab_size, n_embd=s.n_embd, embed_norm=s.embed_norm, position=s.position,
            pos_norm=s.pos_norm, sum_norm=s.sum_norm)
    if k is StageKind.BLOCK:
        b = s.blocks[stage.layer]
        return translate("Stages", "Its {n_head} attention heads let {token} read earlier tokens; head {head} puts "
                   "{weight:.0%} of its attention on {key_token} (position {key}). Attention adds a vector "
                   "of norm {attn_norm:.2f}, then the MLP's {d_mlp:,} neurons add norm {mlp_norm:.2f}; the "
                   "residual's norm is now {resid_norm:.2f}. Read out here, it would predict {lens_token} "
                   "({lens_prob:.0%}).").format(
            n_head=s.n_head, token=here, head=b.head, weight=b.weight, key_token=q(_token_at(s, b)),
            key=b.key, attn_norm=b.attn_norm, d_mlp=s.d_mlp, mlp_norm=b.mlp_norm, resid_norm=b.resid_norm,
            lens_token=q(b.lens_token), lens_prob=b.lens_prob)
    if k is StageKind.LN_FINAL:
        return translate("Stages", "The final LayerNorm recentres and rescales the residual (norm {norm_in:.2f} → "
                   "{norm_out:.2f}) so the unembedding sees a vector of standard size.").format(
            norm_in=s.ln_in_norm, norm_out=s.ln_out_norm)
    sep = translate("Stages", ", ")
    if k is StageKind.LM_HEAD:
        scores = sep.join(translate("Stages", "{token} {value:.2f}").format(token=q(i), value=v)
                          for i, v in zip(s.top_ids, s.top_logits))
        return translate("Stages", "The LM head multiplies by the {vocab:,} token embeddings again (tied weights) "
                   "to score every possible next token: {scores}. Only the last position's "
                   "scores choose the next token; it is the only one that has seen the whole text.").format(
            vocab=s.vocab_size, scores=scores)
    if k is StageKind.SOFTMAX:
        probs = sep.join(translate("Stages", "{token} {prob:.1%}").format(token=q(i), prob=p) for i, p in zip(s.top_ids, s.top_probs))
        return translate("Stages", "Softmax turns scores into probabilities that sum to 1: {probs}. Entropy {entropy:.2f} nats "
                   "(0 = certain, {max_entropy:.1f} = uniform).").format(
            probs=probs, entropy=s.entropy, max_entropy=s.max_entropy)
    c = s.choice
    if c is None:
        nxt = translate("Stages", " After this position came {token}.").format(token=q(s.next_token)) \
            if s.next_token is not None else ""
        return translate("Stages", "Only the newest position chooses the next token; select it to see the choice.") + nxt
    st = c.sampling
    rule = (translate("Stages", "temperature 0: always the most likely token") if st.greedy else
            translate("Stages", "temperature {temperature:g}, top-k {top_k}, top-p {top_p:g}, seed {seed}").format(
                temperature=st.temperature, top_k=top_k_text(st.top_k, translate("Stages", "off")), top_p=st.top_p,
                seed=st.seed))
    remain = (translate("Stages", "{n:,} candidates remain") if c.n_kept != 1 else translate("Stages", "{n:,} candidate remains")).format(n=c.n_kept)
    return translate("Stages", "Choosing the next token ({rule}): {remain}; the step will append "
               "{token} ({p_final:.1%} after the settings, {p_raw:.1%} as the model gave it). Then the "
               "whole path runs again for that one token, reusing the cached keys and values.").format(
        rule=rule, remain=remain, token=q(c.chosen), p_final=c.p_final, p_raw=c.p_raw)


def _token_at(s: PipelineSummary, b) -> int:
    return s.key_tokens[b.key]


def features_sentence(sm, show) -> str:
    """One sentence naming the strongest SAE features at a block's input ("" when the model has none there)."""
    if sm is None or sm.missing or not sm.rows:
        return ""
    sep = translate("Stages", ", ")
    items = sep.join(translate("Stages", "#{feature} {label} ({value:.2f})").format(
        feature=r.feature, label=r.label or "—", value=r.activation) for r in sm.rows)
    return translate("Stages", "Read as sparse-autoencoder features, its input at {token} is strongest in {items} "
                     "(Features tab).").format(token="“" + show(sm.token) + "”", items=items)
