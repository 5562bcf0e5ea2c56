"""View models of the Path view: a contribution graph over layers × positions and ranked bars.

Numbers, ids and token texts only: the parts' names and the largest source's sentence are worded in
:mod:`gpt2viz.app.attribution_text`, where they are translated.

The graph is *DLA-weighted*: every edge is one part's direct logit attribution (see
:mod:`gpt2viz.core.analysis.attribution`), so edges are signed and, before pruning, add up exactly to the logit
minus the final LayerNorm's bias term. Meta's LLM Transparency Tool weighs edges by how much of each
residual *vector* a part makes (unsigned, not about any one token, but it follows multi-hop routes);
DLA was chosen because the view answers "what pushed this token, and what pulled it down", which needs a
sign and a target, and because its numbers add up. The price: only direct paths into the attributed
position are edges; information that earlier layers moved between other positions is inside the
source's value vector, not drawn.

Depths: 0 is the residual after the embeddings, ``L + 0.5`` after block L's attention, ``L + 1`` after
block L. Edges of block L's attention run from (source, L) to (query, L + 0.5); its MLP from
(query, L + 0.5) to (query, L + 1); the embeddings enter at (query, 0) from depth -0.5.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gpt2viz.core.analysis.attribution import Attribution, TargetError, attribute, token_id

DEFAULT_THRESHOLD = 0.04  # LLM-TT's default: parts under 4 % of the total are dropped
WINDOW = 24  # positions drawn: the newest 24 (older sources still count in the totals and the bars)


@dataclass(frozen=True)
class PathEdge:
    """One part's direct contribution, drawn from (source, y0) to (target, y1)."""

    kind: str  # head | attn_bias | mlp | embed | pos_embed
    layer: int | None
    head: int | None
    source: int
    target: int
    y0: float
    y1: float
    value: float
    share: float  # |value| / Σ |value| of the kept edges (renormalised after pruning)


@dataclass(frozen=True)
class PathNode:
    """A residual node; ``value`` is the running direct contribution at the attributed position, else NaN."""

    position: int
    depth: float
    value: float


@dataclass(frozen=True)
class Bar:
    """One bar of the ranked chart: a part (``kind``, ``layer``, ``head``) and its value.

    A head's bar also names the source position it carried most and that token's visible text.
    """

    value: float
    kind: str
    layer: int | None = None
    head: int | None = None
    source: int | None = None
    source_text: str = ""


@dataclass(frozen=True)
class TopSource:
    """The largest single (source token, head) contribution: its position and text, the head, the value."""

    position: int
    token_text: str
    layer: int
    head: int
    value: float


@dataclass(frozen=True)
class PathSummary:
    """Everything the Path view draws, computed once per (history, selection, target, threshold).

    Attributes
    ----------
    target, vs : int, int | None
        Token ids attributed (``vs`` for a logit difference).
    target_text, vs_text : str
        Their visible text (``␣Paris``).
    position : int
        The attributed query position.
    first : int
        First position drawn (the window's left edge).
    token_labels : tuple[str, ...]
        Visible text of positions ``first..position``.
    n_layer : int
    logit, ln_bias_term : float
        The model's logit (difference) and the final LayerNorm bias's share of it.
    threshold : float
        Edges with |value| at or below ``threshold`` × total are dropped.
    total : float
        Σ |value| over every part before pruning (heads split by source token).
    edges : tuple[PathEdge, ...]
        Kept edges, largest |value| first.
    nodes : tuple[PathNode, ...]
        Residual nodes at every drawn (position, integer depth), plus the attributed column's half depths.
    dropped : int
        Number of parts under the threshold.
    kept_fraction : float
        Σ |kept| / total.
    bars : tuple[Bar, ...]
        Largest pushes (descending), then largest pulls (most negative last).
    top_source : TopSource
        The largest single source-token contribution (through one head).
    message : str
        Why a typed target was not used ("" when it was, or none was typed).
    before_logit : float or None
        With interventions in force: the same logit (difference) in the run without them (the ghost), else None.
    before_bars : tuple of float
        With interventions in force: each bar's part's value in the run without them (aligned with ``bars``).
    """

    target: int
    vs: int | None
    target_text: str
    vs_text: str
    position: int
    first: int
    token_labels: tuple[str, ...]
    n_layer: int
    logit: float
    ln_bias_term: float
    threshold: float
    total: float
    edges: tuple[PathEdge, ...]
    nodes: tuple[PathNode, ...]
    dropped: int
    kept_fraction: float
    bars: tuple[Bar, ...]
    top_source: TopSource
    message: str = ""
    before_logit: float | None = None
    before_bars: tuple[float, ...] = ()


def _parts(attr: Attribution) -> list[PathEdge]:
    """Every part as an unpruned edge (share 0)."""
    q = attr.position
    n_layer, n_head, K = attr.by_source.shape
    out = [PathEdge("embed", None, None, q, q, -0.5, 0.0, float(attr.embed), 0.0),
           PathEdge("pos_embed", None, None, q, q, -0.5, 0.0, float(attr.pos_embed), 0.0)]
    for L in range(n_layer):
        for h in range(n_head):
            out += [PathEdge("head", L, h, k, q, L, L + 0.5, float(attr.by_source[L, h, k]), 0.0)
                    for k in range(K)]
        out.append(PathEdge("attn_bias", L, None, q, q, L, L + 0.5, float(attr.attn_bias[L]), 0.0))
        out.append(PathEdge("mlp", L, None, q, q, L + 0.5, L + 1, float(attr.mlp[L]), 0.0))
    return out


def pruned_parts(attr: Attribution, threshold: float) -> tuple[list[PathEdge], float, int]:
    """``prune(_parts(attr), threshold)``, the same edges in the same order, without making an edge per part.

    A GPT-2-small-sized model at 200 positions has 28,800 (head, source) parts; making each an edge before
    dropping all but a few hundred took ~130 ms of the Path view's redraw. The values are laid out in
    ``_parts``'s order and summed in that order (Python floats, as ``prune`` sums), so the threshold and the
    shares are the same floats.
    """
    q = attr.position
    n_layer, n_head, K = attr.by_source.shape
    per_layer = np.concatenate([attr.by_source.reshape(n_layer, n_head * K), attr.attn_bias[:, None],
                                attr.mlp[:, None]], axis=1)  # [L, H*K + 2] in _parts' order within a layer
    values = np.concatenate([[float(attr.embed), float(attr.pos_embed)], per_layer.ravel()]).astype(np.float64)
    mags = np.abs(values)
    total = float(sum(mags.tolist()))
    keep = np.flatnonzero(mags > threshold * total) if total > 0 else np.zeros(0, dtype=np.int64)
    kept_total = float(sum(mags[keep].tolist())) or 1.0
    keep = keep[np.argsort(-mags[keep], kind="stable")]
    width = n_head * K + 2
    edges = []
    for i in keep.tolist():
        v = float(values[i])
        if i < 2:
            edges.append(PathEdge("embed" if i == 0 else "pos_embed", None, None, q, q, -0.5, 0.0, v, 0.0))
            continue
        L, j = divmod(i - 2, width)
        if j < n_head * K:
            h, k = divmod(j, K)
            edges.append(PathEdge("head", L, h, k, q, L, L + 0.5, v, 0.0))
        elif j == n_head * K:
            edges.append(PathEdge("attn_bias", L, None, q, q, L, L + 0.5, v, 0.0))
        else:
            edges.append(PathEdge("mlp", L, None, q, q, L + 0.5, L + 1, v, 0.0))
    return [replace(e, share=abs(e.value) / kept_total) for e in edges], total, len(values) - len(keep)


def prune(edges: list[PathEdge], threshold: float) -> tuple[list[PathEdge], float, int]:
    """Drop edges with |value| ≤ threshold × Σ|value| and renormalise the rest's shares to sum to 1.

    Returns the kept edges (largest |value| first, with ``share`` set), the total and how many were dropped.
    """
    total = float(sum(abs(e.value) for e in edges))
    keep = [e for e in edges if abs(e.value) > threshold * total] if total > 0 else []
    kept_total = sum(abs(e.value) for e in keep) or 1.0
    keep = sorted(keep, key=lambda e: -abs(e.value))
    return [replace(e, share=abs(e.value) / kept_total) for e in keep], total, len(edges) - len(keep)


def ranked_bars(attr: Attribution, token_display, k: int = 8) -> list[Bar]:
    """The ``k`` largest positive and ``k`` most negative parts, heads with the token they carried most.

    Components (heads whole, b_O, MLPs, embeddings) are ranked, not source splits: a bar is one part of the
    network, and a head's bar says which source token gave it most of its share.
    """
    bars = []
    for c in attr.components():
        src, src_text = None, ""
        if c.kind == "head":
            row = attr.by_source[c.layer, c.head]
            src = int(np.argmax(np.abs(row)))
            src_text = token_display(attr.tokens[src])
        bars.append(Bar(c.value, c.kind, c.layer, c.head, src, src_text))
    pos = sorted((b for b in bars if b.value > 0), key=lambda b: -b.value)[:k]
    neg = sorted((b for b in bars if b.value < 0), key=lambda b: -b.value)[-k:]
    return pos + neg


def top_source(attr: Attribution, token_display) -> TopSource:
    """The largest single (source token, head) contribution."""
    L, h, kk = np.unravel_index(int(np.argmax(np.abs(attr.by_source))), attr.by_source.shape)
    return TopSource(int(kk), token_display(attr.tokens[kk]), int(L), int(h), float(attr.by_source[L, h, kk]))


def build_path_summary(history, weights, n_layer: int, n_head: int, tokenizer, position: int | None = None,
                       target_text: str = "", vs_text: str = "", threshold: float = DEFAULT_THRESHOLD,
                       window: int = WINDOW, logits=None) -> PathSummary:
    """Attribute the next token at ``position`` and lay out the pruned graph and the ranked bars.

    Parameters
    ----------
    history : History
        The generation so far (traces with every hook).
    weights : Weights
    n_layer, n_head : int
    tokenizer : GPT2Tokenizer
    position : int, optional
        Query position; default the newest.
    target_text, vs_text : str
        Typed tokens; empty means the default target (top-1 next token, or the one that came next) and no
        ``vs``. A text that is not one token falls back to the default and says so in ``message``.
    threshold : float
        Pruning threshold as a fraction of the total |contribution|.
    window : int
        How many positions (ending at ``position``) to draw.
    logits : np.ndarray, optional
        The model's logits at ``position`` when the caller has them (see :func:`attribute`).
    """
    disp = tokenizer.token_display
    messages, target, vs = [], None, None
    for text, what in ((target_text, "target"), (vs_text, "vs")):
        if not text:
            continue
        try:
            tid = token_id(tokenizer, text, what)
        except TargetError as e:
            messages.append(str(e).replace(f"--{what} ", f"{what} "))
            continue
        target, vs = (tid, vs) if what == "target" else (target, tid)
    attr = attribute(history, weights, n_layer, n_head, target=target, vs=vs, position=position, neurons=False,
                     logits=logits)
    q = attr.position
    if attr.vs is not None and attr.vs == attr.target:
        messages.append("vs equals the target: every value is 0")
    first = max(0, q - window + 1)
    edges, total, dropped = pruned_parts(attr, threshold)
    shown = [e for e in edges if e.source >= first]
    kept = sum(abs(e.value) for e in edges)
    # running direct contribution along the attributed column: what the residual has pushed so far
    running = [attr.embed + attr.pos_embed]
    for L in range(n_layer):
        running.append(running[-1] + attr.heads[L].sum() + attr.attn_bias[L])
        running.append(running[-1] + attr.mlp[L])
    nodes = [PathNode(k, float(dep), float("nan")) for k in range(first, q) for dep in range(n_layer + 1)]
    nodes += [PathNode(q, i / 2, float(v)) for i, v in enumerate(running)]
    extra = len(edges) - len(shown)
    if extra:
        messages.append(f"{extra} kept edges come from positions before {first} and are not drawn")
    return PathSummary(
        target=attr.target, vs=attr.vs, target_text=disp(attr.target),
        vs_text=disp(attr.vs) if attr.vs is not None else "", position=q, first=first,
        token_labels=tuple(disp(t) for t in attr.tokens[first:]), n_layer=n_layer, logit=attr.logit,
        ln_bias_term=attr.ln_bias_term, threshold=float(threshold), total=total, edges=tuple(shown),
        nodes=tuple(nodes), dropped=dropped, kept_fraction=kept / total if total else 0.0,
        bars=tuple(ranked_bars(attr, disp)), top_source=top_source(attr, disp), message="; ".join(messages))


def with_before(summary: PathSummary, before_history, weights, n_layer: int, n_head: int) -> PathSummary:
    """``summary`` with the ghosts: the same target (and ``vs``) at the same position attributed in
    ``before_history`` (the run without the interventions ``summary``'s run was under), per bar and in total."""
    b = attribute(before_history, weights, n_layer, n_head, target=summary.target, vs=summary.vs,
                  position=summary.position, neurons=False)
    value = {(c.kind, c.layer, c.head): c.value for c in b.components()}
    return replace(summary, before_logit=float(b.logit),
                   before_bars=tuple(float(value.get((x.kind, x.layer, x.head), 0.0)) for x in summary.bars))
