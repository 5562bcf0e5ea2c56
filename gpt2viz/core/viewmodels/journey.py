"""The guided journey's numbers: one page per stage of a token's life, on the session's own text.

Every number is taken from the view models the views draw (tokens, embeddings, attention, MLP,
residual, logit lens, pipeline, chart), so a page says exactly what its view shows. Sentences are
not made here (core returns numbers): ``gpt2viz.app.journey_text`` words them in either language.
Token texts are included as display strings so a page can be worded without a tokenizer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gpt2viz.core.session.session import CHOOSE, EMBED, LM_HEAD, SOFTMAX, TOKENS, Selection, Session, Stage
from gpt2viz.core.viewmodels.attention import attention_summary
from gpt2viz.core.viewmodels.chart import chart_summary
from gpt2viz.core.viewmodels.embeddings import analogy_summary, embedding_summary
from gpt2viz.core.viewmodels.lens import lens_target
from gpt2viz.core.viewmodels.features import features_summary
from gpt2viz.core.viewmodels.mlp import mlp_summary
from gpt2viz.core.viewmodels.pipeline import pipeline_summary
from gpt2viz.core.viewmodels.residual import residual_summary
from gpt2viz.core.viewmodels.tokens import tokens_summary

# The story's path, in order. Each page names the view that shows its numbers (view_names.VIEWS).
PAGES = ("text", "tokens", "embedding", "position", "attention", "mlp", "residual", "blocks", "lm_head",
         "choose", "kv_cache", "circuit", "next")
VIEW = {"text": "tokens", "tokens": "tokens", "embedding": "embeddings", "position": "embeddings",
        "attention": "attention", "mlp": "mlp", "residual": "residual", "blocks": "lens", "lm_head": "lens",
        "choose": "chart", "kv_cache": "pipeline", "circuit": "pipeline", "next": "pipeline"}
SPLIT_WORD = "unbelievable"  # split into pieces without a leading space, one token with it (GPT-2's BPE)
ANALOGY = (" king", " man", " woman")
TOP = 3  # how many neighbours / keys / neurons / candidates a page names
EDIT_TARGET = " Rome"  # the story's edit: "The capital of France is" ... " Rome" (ROME's own example)


@dataclass(frozen=True)
class JourneyPage:
    """One page: its key (one of :data:`PAGES`), the stage and view it opens, and its numbers."""

    key: str
    stage: Stage
    view: str
    numbers: dict


def _tokens_of(tok, text: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(i), tok.token_display(int(i))) for i in tok.encode(text))


def attention_focus(session: Session) -> tuple[int, int]:
    """(layer, head) the attention page shows: the block whose most focused head looks furthest from itself.

    The pipeline summary already names each block's most focused head; heads that attend to the
    token itself or to position 0 (a common resting place) tell a reader little, so the block with
    the largest weight elsewhere wins, else simply the largest weight.
    """
    ps = pipeline_summary(session, _newest(session))
    blocks = ps.blocks
    elsewhere = [b for b in blocks if b.key not in (ps.position, 0)]
    best = max(elsewhere or blocks, key=lambda b: b.weight)
    return best.layer, best.head


def _features(session: Session, layer: int) -> tuple | None:
    """The strongest SAE features at block ``layer``'s input for the newest token, as (feature, activation, label);
    None when the model has no SAE there."""
    fs = features_summary(session, _newest(session), n_rows=TOP, layer=layer)
    if fs is None or fs.missing:
        return None
    return tuple((r.feature, r.activation, r.label) for r in fs.rows)


def _newest(session: Session, **kw) -> Selection:
    # the journey follows the newest token: the one whose successor is being chosen
    return replace(session.selection, position=None, **kw)


def journey(session: Session) -> tuple[JourneyPage, ...] | None:
    """All pages for the session's current text (None before a run)."""
    if session.history is None or session.weights is None:
        return None
    return tuple(journey_page(session, k) for k in PAGES)


def journey_page(session: Session, key: str) -> JourneyPage:
    """The page ``key`` (one of :data:`PAGES`) with its numbers for the session's newest token."""
    h, model = session.history, session.model
    tok, cfg = model.tokenizer, model.config
    show = tok.token_display
    n = len(h.tokens)
    pos = n - 1
    sel = _newest(session)
    if key == "text":
        ts = tokens_summary(session)
        prompt = tok.decode(list(h.tokens[: h.prompt_len]))
        return JourneyPage(key, TOKENS, VIEW[key], {
            "text": prompt, "n_chars": len(prompt), "n_bytes": len(prompt.encode("utf-8")),
            "n_tokens": len(ts.rows), "n_prompt": h.prompt_len})
    if key == "tokens":
        ts = tokens_summary(session)
        rows = ts.rows
        return JourneyPage(key, TOKENS, VIEW[key], {
            "n_tokens": len(rows), "n_bytes": ts.n_bytes, "n_positions": ts.n_positions,
            "rows": tuple((r.position, r.id, r.display, r.bytes_hex) for r in rows[:12]),
            "n_leading_space": sum(r.bytes_hex.startswith("20") for r in rows),
            "n_partial": sum(r.partial for r in rows),
            "word": SPLIT_WORD, "word_pieces": _tokens_of(tok, SPLIT_WORD),
            "spaced_pieces": _tokens_of(tok, " " + SPLIT_WORD)})
    if key == "embedding":
        es = embedding_summary(session, sel, k=TOP)
        ids = [tok.encode(w) for w in ANALOGY]
        analogy = None
        if all(len(i) == 1 for i in ids):
            res = analogy_summary(session, ids[0][0], ids[1][0], ids[2][0], k=TOP)
            analogy = tuple((int(i), show(int(i)), float(c)) for i, c in res)
        return JourneyPage(key, EMBED, VIEW[key], {
            "position": es.position, "token": es.token, "token_text": show(es.token),
            "n_embd": int(es.token_vec.size), "vocab_size": cfg.vocab_size, "token_norm": float(es.norms[0]),
            "nearest": tuple((int(i), show(int(i)), float(c)) for i, c in es.nearest),
            "analogy_words": tuple(show(i[0]) if len(i) == 1 else w for i, w in zip(ids, ANALOGY)),
            "analogy": analogy})
    if key == "position":
        es = embedding_summary(session, sel, k=TOP)
        ne, npos, ns = (float(x) for x in es.norms)
        return JourneyPage(key, EMBED, VIEW[key], {
            "position": es.position, "token_text": show(es.token), "n_positions": cfg.n_positions,
            "token_norm": ne, "pos_norm": npos, "sum_norm": ns})
    if key == "attention":
        L, head = attention_focus(session)
        a = attention_summary(session, "pattern", _newest(session, stage=Stage.block(L), layer=L, head=head))
        order = np.argsort(-a.bars)[:TOP]
        first = a.first
        keys = tuple((int(first + k), show(int(h.tokens[first + k])), float(a.bars[k])) for k in order)
        return JourneyPage(key, Stage.block(L), VIEW[key], {
            "layer": L, "head": head, "n_head": cfg.n_head, "position": a.position, "token_text": show(h.tokens[pos]),
            "keys": keys, "entropy": float(a.entropies[head])})
    if key == "mlp":
        L, head = attention_focus(session)
        m0 = mlp_summary(session, None, _newest(session, stage=Stage.block(L), layer=L, head=head))
        m = m0 if not m0.top else mlp_summary(session, m0.top[0][0], _newest(session, stage=Stage.block(L), layer=L,
                                                                              head=head))
        return JourneyPage(key, Stage.block(L), VIEW[key], {
            "layer": m.layer, "position": m.position, "token_text": show(m.token), "d_mlp": int(m.post.size),
            "n_active": m.n_active, "top": tuple((int(i), float(act), float(sc)) for i, act, sc in m.top[:TOP]),
            "neuron": m.neuron, "neuron_promotes": tuple((show(int(i)), float(v)) for i, v in m.neuron_promotes[:TOP]),
            "promotes": tuple(show(int(i)) for i, _ in m.promotes[:TOP]), "features": _features(session, L)})
    if key == "residual":
        r = residual_summary(session, sel)
        return JourneyPage(key, Stage.block(cfg.n_layer - 1), VIEW[key], {
            "position": r.position, "token_text": show(r.token), "n_layer": cfg.n_layer,
            "norm_start": float(r.resid_norm[0]), "norm_end": float(r.resid_norm[-1]),
            "attn_max_layer": int(np.argmax(r.attn_norm)), "attn_max": float(np.max(r.attn_norm)),
            "mlp_max_layer": int(np.argmax(r.mlp_norm)), "mlp_max": float(np.max(r.mlp_norm)),
            "cos_start": float(r.cos_to_final[0]), "cos_mid": float(r.cos_to_final[len(r.cos_to_final) // 2])})
    if key == "blocks":
        t = lens_target(session, None, sel)
        top = np.flatnonzero(t.ranks == 0)
        # the first depth from which the answer stays the lens's top token to the end
        stays = next((int(d) for d in range(len(t.ranks)) if np.all(t.ranks[d:] == 0)), None)
        return JourneyPage(key, LM_HEAD, VIEW[key], {
            "n_layer": cfg.n_layer, "position": t.position, "target": t.target, "target_text": show(t.target),
            "first_top": int(top[0]) if top.size else None, "stays_top": stays,
            "final_prob": float(t.probs[-1]), "ranks": tuple(int(x) for x in t.ranks),
            "probs": tuple(float(x) for x in t.probs)})
    if key == "lm_head":
        ps = pipeline_summary(session, sel)
        return JourneyPage(key, SOFTMAX, VIEW[key], {
            "vocab_size": ps.vocab_size, "n_embd": ps.n_embd,
            "top": tuple((show(int(i)), float(lg), float(p)) for i, lg, p in zip(ps.top_ids, ps.top_logits,
                                                                                   ps.top_probs))[:TOP],
            "entropy": float(ps.entropy), "max_entropy": float(ps.max_entropy)})
    if key == "choose":
        c = chart_summary(session)
        s = session.sampling
        chosen = next(r for r in c.rows if r.chosen) if any(r.chosen for r in c.rows) else None
        return JourneyPage(key, CHOOSE, VIEW[key], {
            "greedy": s.greedy, "temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p, "seed": s.seed,
            "n_kept": c.n_kept, "vocab_size": c.vocab_size, "chosen": c.chosen, "chosen_text": show(c.chosen),
            "p_final": float(chosen.final) if chosen else None, "p_raw": float(chosen.raw) if chosen else None})
    if key == "kv_cache":
        per_token = cfg.kv_bytes_per_token()
        return JourneyPage(key, CHOOSE, VIEW[key], {
            "n_tokens": n, "n_positions": cfg.n_positions, "n_layer": cfg.n_layer, "n_embd": cfg.n_embd,
            "per_token_kb": per_token / 2**10, "now_mb": session.kv_cache_mb(),
            "full_mb": per_token * cfg.n_positions / 2**20})
    if key == "circuit":
        return JourneyPage(key, CHOOSE, VIEW[key], circuit_numbers(session))
    if key == "next":
        c = chart_summary(session)
        prompt, subject, target = edit_suggestion(session)
        return JourneyPage(key, CHOOSE, VIEW[key], {
            "chosen_text": show(c.chosen), "new_position": n, "n_tokens": n + 1, "n_positions": cfg.n_positions,
            "generated": len(h.generated), "edit_prompt": prompt, "edit_subject": subject, "edit_target": target})
    raise KeyError(f"no journey page {key!r}; pages are {', '.join(PAGES)}")


def edit_suggestion(session: Session) -> tuple[str, str, str]:
    """(prompt, subject, new target) the journey's last page offers to edit: the session's prompt, its subject
    (the tokens Shift+clicked, else the causal trace's guess: the story's " France"), and " Rome", or, when the
    model already answers " Rome", " Paris"."""
    from gpt2viz.core.analysis.causal_trace import default_subject

    h, tok = session.history, session.model.tokenizer
    ids = [int(t) for t in h.tokens[: h.prompt_len]]
    prompt = tok.decode(ids)
    positions = session.subject if session.subject and all(p < len(ids) for p in session.subject) \
        else default_subject(tok, ids)
    subject = "".join(tok.token_text(ids[p]) for p in sorted(positions))
    top = tok.token_text(int(np.argmax(h.frames[0].logits)))
    return prompt, subject, EDIT_TARGET if top != EDIT_TARGET else " Paris"


def circuit_numbers(session: Session, n_inputs: int = TOP) -> dict:
    """The circuit page's numbers: whether the model folder ships transcoders and, when the circuit graph of the
    session's prompt has been built (``session.analyses["graph"]``, circuit-tracer's JSON), its size, scores, target
    and the strongest links into the target logit as (kind, layer, index, text, weight): kind feature (index the
    feature, text its label), error (block ``layer``'s MLP error) or embedding (index the token id, text the token)."""
    h, model = session.history, session.model
    out = {"has_transcoders": (model.folder / "transcoders").is_dir(), "built": False}
    g = session.analyses.get("graph")
    prompt = [int(t) for t in h.tokens[: h.prompt_len]]
    info = (g or {}).get("metadata", {}).get("info", {})
    if not g or info.get("prompt_ids", prompt) != prompt:
        return out  # none, or the graph of another text
    nodes = {n["node_id"]: n for n in g["nodes"]}
    target = next((n for n in g["nodes"] if n.get("is_target_logit")), None)
    if target is None:
        return out
    into = sorted((lk for lk in g["links"] if lk["target"] == target["node_id"]), key=lambda lk: -lk["weight"])
    inputs = []
    for lk in into[:n_inputs]:
        n = nodes.get(lk["source"], {})
        kind = {"cross layer transcoder": "feature", "mlp reconstruction error": "error",
                "embedding": "embedding"}.get(n.get("feature_type"), "other")
        layer, index = (lk["source"].split("_") + ["", ""])[:2]
        text = model.tokenizer.token_display(int(index)) if kind == "embedding" else n.get("clerp", "")
        inputs.append((kind, layer, index, text, float(lk["weight"])))
    out.update(built=True, n_nodes=len(g["nodes"]), n_links=len(g["links"]),
               replacement=info.get("replacement_score"), completeness=info.get("completeness_score"),
               target_text=model.tokenizer.token_display(int(target["feature"])) if "feature" in target else "",
               target_clerp=target.get("clerp", ""), inputs=tuple(inputs))
    return out
