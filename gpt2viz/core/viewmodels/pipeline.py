"""The pipeline cells and the stage explanation: one summary, so the two cannot disagree."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gpt2viz.core.analysis.lens import focused_head, token_prob, token_rank_and_prob
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.numeric import entropy, softmax
from gpt2viz.core.session.session import Selection, Session


@dataclass(frozen=True)
class BlockCell:
    """One block at the selected position.

    Attributes
    ----------
    layer, head, key : int
        The block, its most focused head (ignoring the attention sink at position 0) and the key
        position that head reads most.
    weight : float
        That head's weight on that key.
    bars : np.ndarray
        [position + 1] the head's weights over the keys (the cell's glyph).
    attn_norm, mlp_norm, resid_norm : float
        Norms of what attention and the MLP add, and of the residual after the block.
    lens_token : int
        The token the residual after this block predicts (logit lens).
    lens_prob : float
        Its probability.
    """

    layer: int
    head: int
    key: int
    weight: float
    bars: np.ndarray
    attn_norm: float
    mlp_norm: float
    resid_norm: float
    lens_token: int
    lens_prob: float
    # With interventions in force (newest position only): the rank (0 = top) of the target token (the
    # model's answer without them) after this block, and its probability with minus without them.
    target_rank: int | None = None
    target_delta: float | None = None


@dataclass(frozen=True)
class ChoiceCell:
    """What a step at the newest position takes, under the settings."""

    chosen: int
    p_final: float
    p_raw: float
    n_kept: int
    sampling: SamplingSettings


@dataclass(frozen=True)
class PipelineSummary:
    """Everything the pipeline cells and the explanation show for one position.

    ``top_ids`` / ``top_logits`` / ``top_probs`` are the three best next tokens of the model's output at
    this position; ``choice`` is None unless the position is the newest (only there does a step choose),
    and ``next_token`` is then what came after it instead.
    """

    position: int
    token: int
    key_tokens: tuple[int, ...]  # tokens at positions 0..position (what the blocks' heads read)
    n_tokens: int
    n_positions: int
    vocab_size: int
    n_embd: int
    n_head: int
    d_mlp: int
    embed_norm: float
    pos_norm: float
    sum_norm: float
    blocks: tuple[BlockCell, ...]
    ln_in_norm: float
    ln_out_norm: float
    top_ids: tuple[int, ...]
    top_logits: tuple[float, ...]
    top_probs: tuple[float, ...]
    entropy: float
    max_entropy: float
    choice: ChoiceCell | None
    next_token: int | None
    target: int | None = None  # the token whose deltas the blocks carry (None: no interventions)
    target_delta: float | None = None  # at the output


def _ln_final_output(session: Session, normalized: np.ndarray) -> np.ndarray:
    """The final LayerNorm's output, what the LM head reads: ``ln_final.hook_normalized`` (TransformerLens'
    value, before the weight and bias) times the weight plus the bias, in float32 like the graph."""
    w = session.weights
    return normalized * w.get("transformer.ln_f.weight") + w.get("transformer.ln_f.bias")


def pipeline_summary(session: Session, selection: Selection | None = None) -> PipelineSummary | None:
    """The pipeline's numbers at the selected position, from the stored trace (no model call).

    Returns None before a prompt has run.
    """
    h, cfg = session.history, session.model.config if session.model is not None else None
    if h is None or cfg is None or session.weights is None:
        return None
    sel = selection or session.selection
    n = len(h.tokens)
    pos = sel.position_in(n)
    if pos < n - 1:
        # An earlier position's cells are the same after a Step or Back (attention is causal): made once and kept,
        # they cost ~2.5 ms of each Step and Back at 200 tokens of a GPT-2-small-sized model on a 2-core EPYC.
        # They read the tokens up to the next one, the interventions and (mean ablations) the prompt.
        key = ("pipeline", h.tokens[: max(pos + 2, h.prompt_len)], h.prompt_len, h.current.interventions, pos)
        return replace(session.remembered(key, lambda: _summary(session, h, cfg, pos, n)), n_tokens=n)
    # The newest position's cells also show the step's choice, which the sampling settings make from the logits,
    # and with interventions the change against the run without them: kept, a Back to a text met before finds them
    # (~1 ms of its frame, as above). The settings are its stamp, not its key: a slider's ticks remake it in place.
    key = ("pipeline newest", h.tokens, h.prompt_len, h.current.interventions, session.baseline is None)
    return session.remembered(key, lambda: _summary(session, h, cfg, pos, n), stamp=session.sampling)


def _summary(session: Session, h, cfg, pos: int, n: int) -> PipelineSummary:
    """pipeline_summary's numbers at position ``pos`` of ``h`` (``n`` tokens)."""
    # this position's only: while auto-stepping with the lens grid hidden, the worker makes no lens columns, and
    # the grid's whole window of them here would cost every redraw ~30 ms of the GUI thread
    tops, ptops = session.lens_tops(pos, window=False)
    # The full [layers + 1, V] lens is an LM-head product per depth: made only when the deltas need it. The
    # newest position's last row is the model's own logits, which the step returned (while auto-stepping this
    # kept a 25 ms onnxruntime call per redraw off the GUI thread, where it competed with the worker's step).
    lens = None
    e, p = h.hook_at("hook_embed", pos), h.hook_at("hook_pos_embed", pos)
    delta_rows = None
    target = None
    if session.baseline is not None and pos == n - 1:
        lens = session.lens(pos)
        base_lens = np.asarray(session.baseline[1])
        target = int(np.argmax(base_lens[-1]))
        ranks, p_with = token_rank_and_prob(lens, target, ptops)
        p_without = token_prob(base_lens, target, session.baseline[3][1])
        delta_rows = (ranks, np.asarray(p_with) - np.asarray(p_without))
    blocks = []
    layers = range(cfg.n_layer)
    # every block's three norms in one call (one per row was 36 numpy calls, ~0.4 ms of a Step's refresh cold)
    norms = np.linalg.norm(np.stack([h.hook_at((name, L), pos) for name in ("attn_out", "mlp_out", "resid_post")
                                     for L in layers]), axis=1).reshape(3, cfg.n_layer).tolist()
    for L in layers:
        pat = h.hook_at(("pattern", L), pos)
        head, key, w = focused_head(pat)
        blocks.append(BlockCell(
            L, head, key, w, pat[head], norms[0][L], norms[1][L], norms[2][L],
            int(tops[L + 1]), float(ptops[L + 1]),
            None if delta_rows is None else int(delta_rows[0][L + 1]),
            None if delta_rows is None else float(delta_rows[1][L + 1])))
    final = np.asarray(session.output_logits(pos), np.float32)
    # The newest position's logits are the step's own: the chart's distribution holds their softmax, ranking and
    # entropy, made once for both views.
    d = session.distribution() if pos == n - 1 else None
    if d is not None:
        dist, chosen = d
        order, probs, ent = dist.top(3, "raw"), dist.raw, dist.entropy("raw")
        choice = ChoiceCell(int(chosen), float(dist.final[chosen]), float(dist.raw[chosen]), int(dist.kept.sum()),
                            session.sampling)
        nxt = None
    else:
        order = np.argpartition(-final, 3)[:3]
        order = order[np.argsort(-final[order])]
        probs = softmax(final)
        ent = float(entropy(probs))
        choice, nxt = None, int(h.tokens[pos + 1]) if pos + 1 < n else None
    return PipelineSummary(
        position=pos, token=int(h.tokens[pos]), key_tokens=tuple(int(t) for t in h.tokens[: pos + 1]), n_tokens=n,
        n_positions=cfg.n_positions, vocab_size=cfg.vocab_size,
        n_embd=cfg.n_embd, n_head=cfg.n_head, d_mlp=cfg.d_mlp,
        embed_norm=float(np.linalg.norm(e)), pos_norm=float(np.linalg.norm(p)), sum_norm=float(np.linalg.norm(e + p)),
        blocks=tuple(blocks),
        ln_in_norm=float(np.linalg.norm(h.hook_at(("resid_post", cfg.n_layer - 1), pos))),
        ln_out_norm=float(np.linalg.norm(_ln_final_output(session, h.hook_at("ln_final.hook_normalized", pos)))),
        top_ids=tuple(int(i) for i in order), top_logits=tuple(float(final[i]) for i in order),
        top_probs=tuple(float(probs[i]) for i in order), entropy=ent,
        max_entropy=float(np.log(cfg.vocab_size)), choice=choice, next_token=nxt, target=target,
        target_delta=None if delta_rows is None else float(delta_rows[1][-1]))
