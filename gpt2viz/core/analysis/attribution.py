"""Direct logit attribution: which parts of the network wrote the final logit of a target token.

The residual before the final LayerNorm is a plain sum of what every part wrote into it::

    r = embed + pos_embed + Σ_L ( Σ_h z_h · W_O[h]  +  b_O  +  mlp_out )

The final LayerNorm is not linear, but with its scale sigma *frozen* at the real residual it is:
``ln_f(r) · w = (r - mean r) / sigma · gamma · w + beta · w``. So every part ``c`` gets the share
``c · d`` with ``d = (gamma∘w - mean(gamma∘w)) / sigma`` (centring ``c`` and dotting with ``gamma∘w`` is the
same as dotting ``c`` with the centred ``gamma∘w``), and the shares add up exactly to the logit minus
``beta · w``. ``w`` is ``W_U[target]``, or ``W_U[target] - W_U[vs]`` for a logit difference.

Frozen is right here and wrong for the logit lens: the lens asks "what would the residual predict
if the model stopped here" and must normalise each partial residual by its own scale (TransformerLens
issue 1076); attribution asks "how much of *this* logit came from each part" and must use the one scale
the model really applied.

GPT-2's attention output projection ``c_proj`` is a Conv1D: weight [E, E] whose input is the heads'
``z`` merged head-major, so head h's slice is rows ``h*D:(h+1)*D``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.hooks import block_hook

KINDS = ("embed", "pos_embed", "head", "attn_bias", "mlp")
# Hooks an attribution reads; a headless run can keep only these.
NEEDED_BLOCK_HOOKS = ("attn.hook_v", "attn.hook_pattern", "attn.hook_z", "hook_mlp_out", "mlp.hook_post",
                      "hook_resid_post")


class TargetError(ValueError):
    """A target (or ``vs``) text that is not exactly one token."""


def needed_hooks(n_layer: int) -> list[str]:
    """Hook names :func:`attribute` reads, for a run that keeps only those."""
    return ["hook_embed", "hook_pos_embed"] + [block_hook(L, h) for L in range(n_layer) for h in NEEDED_BLOCK_HOOKS]


def token_id(tokenizer, text: str, what: str = "target") -> int:
    """The id of ``text`` when it is exactly one token; raises :class:`TargetError` otherwise.

    Parameters
    ----------
    tokenizer : GPT2Tokenizer
        The model's tokenizer.
    text : str
        Token text; the leading space is part of a GPT-2 token (``" Paris"``, not ``"Paris"``).
    what : str
        Name used in the message (``target`` or ``vs``).
    """
    ids = tokenizer.encode(text)
    if len(ids) != 1:
        shown = " | ".join(tokenizer.token_display(i) for i in ids) or "nothing"
        raise TargetError(f"--{what} {text!r} is {len(ids)} tokens ({shown}), not one; "
                          "note GPT-2 tokens carry their leading space, e.g. ' Paris'")
    return int(ids[0])


@dataclass(frozen=True)
class Component:
    """One part of the residual and what it added to the target's logit.

    ``layer`` is None for the embeddings; ``head`` is None except for heads.
    """

    kind: str
    value: float
    layer: int | None = None
    head: int | None = None

    @property
    def label(self) -> str:
        """Short name: ``embed``, ``pos embed``, ``L1.H2``, ``L1 b_O``, ``MLP 3``."""
        return {"embed": "token embed", "pos_embed": "pos embed", "head": f"L{self.layer}.H{self.head}",
                "attn_bias": f"L{self.layer} b_O", "mlp": f"MLP {self.layer}"}[self.kind]

    def as_json(self) -> dict:
        out = {"kind": self.kind}
        if self.layer is not None:
            out["layer"] = self.layer
        if self.head is not None:
            out["head"] = self.head
        out["value"] = self.value
        return out


@dataclass(frozen=True)
class Attribution:
    """The final-position logit of a target split into the parts that wrote the residual.

    Attributes
    ----------
    target, vs : int, int | None
        Token ids; with ``vs`` every value is a logit difference target − vs.
    position : int
        The query position whose next-token logit is split.
    logit : float
        The model's own logit (difference) at ``position``.
    ln_bias_term : float
        ``beta · w``: the part of the logit that comes from the final LayerNorm's bias, no component's.
    sigma : float
        The final LayerNorm's real scale at ``position``, sqrt(var + eps), frozen for every part.
    embed, pos_embed : float
        Token and position embedding shares.
    heads : np.ndarray
        [n_layer, n_head] each head's share (z_h · W_O[h], without b_O).
    attn_bias : np.ndarray
        [n_layer] each block's b_O share.
    mlp : np.ndarray
        [n_layer] each block's MLP output share (its neurons plus its output bias).
    by_source : np.ndarray
        [n_layer, n_head, position + 1] each head's share split over the key positions it read;
        sums over the last axis to ``heads``.
    neurons : np.ndarray or None
        [n_layer, d_mlp] each neuron's share post_n · (W_out[n] · d); None when made without them.
    mlp_out_bias : np.ndarray
        [n_layer] the MLP output bias's share (``mlp = neurons.sum(1) + mlp_out_bias``).
    tokens : tuple[int, ...]
        The context 0..position.
    """

    target: int
    vs: int | None
    position: int
    logit: float
    ln_bias_term: float
    sigma: float
    embed: float
    pos_embed: float
    heads: np.ndarray = field(repr=False)
    attn_bias: np.ndarray = field(repr=False)
    mlp: np.ndarray = field(repr=False)
    by_source: np.ndarray = field(repr=False)
    neurons: np.ndarray | None = field(repr=False)
    mlp_out_bias: np.ndarray = field(repr=False)
    tokens: tuple[int, ...] = field(repr=False, default=())

    def components(self) -> list[Component]:
        """Every part in model order: embeddings, then per block its heads, b_O and MLP."""
        out = [Component("embed", float(self.embed)), Component("pos_embed", float(self.pos_embed))]
        n_layer, n_head = self.heads.shape
        for L in range(n_layer):
            out += [Component("head", float(self.heads[L, h]), L, h) for h in range(n_head)]
            out += [Component("attn_bias", float(self.attn_bias[L]), L), Component("mlp", float(self.mlp[L]), L)]
        return out

    def total(self) -> float:
        """Sum of every part plus the LayerNorm bias term: equals ``logit`` up to rounding."""
        return float(sum(c.value for c in self.components()) + self.ln_bias_term)

    def ranked(self, k: int | None = None) -> list[Component]:
        """Components by |value|, largest first."""
        return sorted(self.components(), key=lambda c: -abs(c.value))[:k]

    def top_neurons(self, layer: int, k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` neurons of a block with the largest |share|: (neuron, share)."""
        if self.neurons is None:
            raise ValueError("this attribution was made without its neurons (attribute(..., neurons=False))")
        row = self.neurons[layer]
        idx = np.argsort(-np.abs(row), kind="stable")[:k]
        return [(int(i), float(row[i])) for i in idx]


def _rows(history, name: str, stop: int) -> np.ndarray:
    """Positions 0..stop-1 of a position-first hook ([P, ...] in a trace), across the frames that hold them."""
    parts = []
    for f in history.frames:
        t = f.trace
        if t.start >= stop:
            break
        parts.append(t[name][: stop - t.start])
    return np.concatenate(parts)


def readout_direction(weights, resid: np.ndarray, target: int,
                      vs: int | None = None) -> tuple[np.ndarray, float, float]:
    """The vector ``d`` that reads a part's share of the logit through the frozen final LayerNorm.

    Parameters
    ----------
    weights : Weights
        The model's parameters.
    resid : np.ndarray
        [E] the real residual before the final LayerNorm at the position attributed.
    target, vs : int, int | None
        Token ids (``vs`` for a logit difference).

    Returns
    -------
    d : np.ndarray
        [E] so that a part ``c`` adds ``c · d``.
    sigma : float
        The frozen scale sqrt(var(resid) + eps).
    ln_bias_term : float
        beta · w.
    """
    rows = weights.embedding_rows([target] if vs is None else [target, vs]).astype(np.float64)
    w = rows[0]
    if vs is not None:
        w = w - rows[1]
    gamma = weights.get("transformer.ln_f.weight").astype(np.float64)
    beta = weights.get("transformer.ln_f.bias").astype(np.float64)
    r = np.asarray(resid, dtype=np.float64)
    sigma = float(np.sqrt(((r - r.mean()) ** 2).mean() + weights.eps))
    gw = gamma * w
    return (gw - gw.mean()) / sigma, sigma, float(beta @ w)


def W_O(weights, layer: int, n_head: int) -> np.ndarray:
    """[H, D, E] per-head slices of a block's attention output projection."""
    W = weights.get(f"transformer.h.{layer}.attn.c_proj.weight")
    E = W.shape[0]
    return W.reshape(n_head, E // n_head, W.shape[1])


# Rows of a float32 matrix cast to float64 at a time for a product with a float64 vector (see _times_f64).
WIDE_ROWS = 64


def _times_f64(M: np.ndarray, v: np.ndarray, buf: np.ndarray) -> np.ndarray:
    """``M @ v`` in float64 for a float32 matrix [R, C], cast ``len(buf)`` rows at a time into ``buf`` [rows, C].

    The same floats as casting ``M`` whole (each row's product is the same BLAS dot), without its float64 copy:
    twelve W_O of GPT-2 small cast whole cost ~13 ms of each Path tab show on a 2-core EPYC (84 MB written and
    read again), a block of 64 rows that stays in the cache ~6 ms."""
    out = np.empty(M.shape[0], np.float64)
    step = buf.shape[0]
    for first in range(0, M.shape[0], step):
        part = buf[: min(step, M.shape[0] - first)]
        np.copyto(part, M[first: first + len(part)])
        np.matmul(part, v, out=out[first: first + len(part)])
    return out


def attribute(history, weights, n_layer: int, n_head: int, target: int | None = None, vs: int | None = None,
              position: int | None = None, neurons: bool = True, logits: np.ndarray | None = None) -> Attribution:
    """Split the next-token logit of ``target`` at ``position`` into every part of the network.

    Parameters
    ----------
    history : History
        Prompt and generated steps; their traces must hold :func:`needed_hooks`.
    weights : Weights
        The model's parameters (W_O, W_out, biases, final LayerNorm, unembedding).
    n_layer, n_head : int
        The model's shape.
    target : int, optional
        Token id; default the model's top-1 next token at ``position`` (at an earlier position:
        the token that really came next).
    vs : int, optional
        Subtract this token's logit: every value becomes a logit difference.
    position : int, optional
        Query position; default the newest.
    neurons : bool
        Split each MLP's share over its neurons (``Attribution.neurons``). That reads every block's MLP output
        matrix (113 MB on GPT-2 small, four fifths of the cost); the Path view, which shows no neurons, skips it.
    logits : np.ndarray, optional
        The model's [V] next-token logits at ``position``, when the caller has them (an app session keeps them:
        ``Session.output_logits``); else the newest position's come from the history and an earlier one's are made
        with the final LayerNorm and LM head (an LM-head call: ~11 ms of each Path tab show on a 2-core EPYC).

    Returns
    -------
    Attribution
    """
    n = len(history.tokens)
    q = n - 1 if position is None else int(position)
    if not 0 <= q < n:
        raise IndexError(f"position {q} is outside the text (0..{n - 1})")
    resid = history.hook_at(("resid_post", n_layer - 1), q).astype(np.float64)
    if logits is not None:
        logits = np.asarray(logits, dtype=np.float64)
    elif q == n - 1:
        logits = history.current.logits.astype(np.float64)  # the model's own numbers
    else:  # only the newest logits are stored; earlier ones are the same LayerNorm + unembedding
        logits = weights.lens(history.hook_at(("resid_post", n_layer - 1), q)).astype(np.float64)
    if target is None:
        target = int(np.argmax(logits)) if q == n - 1 else int(history.tokens[q + 1])
    d, sigma, ln_bias = readout_direction(weights, resid, target, vs)
    logit = float(logits[target] - (logits[vs] if vs is not None else 0.0))

    heads = np.zeros((n_layer, n_head))
    by_source = np.zeros((n_layer, n_head, q + 1))
    attn_bias, mlp, mlp_bias = np.zeros(n_layer), np.zeros(n_layer), np.zeros(n_layer)
    shares = []
    wide = np.empty((WIDE_ROWS, d.size), np.float64)
    for L in range(n_layer):
        Wo = W_O(weights, L, n_head)  # [H, D, E]
        od = _times_f64(Wo.reshape(-1, Wo.shape[2]), d, wide).reshape(Wo.shape[:2])  # [H, D]: one unit of z_h's logit
        z = history.hook_at(("z", L), q).astype(np.float64)  # [H, D]
        heads[L] = (z * od).sum(-1)
        # z_h[q] = Σ_k pattern[h, q, k] v_k[h], so the head's share splits exactly over the keys it read
        v = _rows(history, block_hook(L, "attn.hook_v"), q + 1).astype(np.float64)  # [K, H, D]
        pattern = history.hook_at(("pattern", L), q).astype(np.float64)  # [H, K]
        by_source[L] = pattern * np.einsum("khd,hd->hk", v, od)
        attn_bias[L] = weights.get(f"transformer.h.{L}.attn.c_proj.bias").astype(np.float64) @ d
        mlp[L] = history.hook_at(("mlp_out", L), q).astype(np.float64) @ d
        if neurons:
            post = history.hook_at(("post", L), q).astype(np.float64)  # [M]
            shares.append(post * (weights.W_out(L).astype(np.float64) @ d))
        mlp_bias[L] = weights.get(f"transformer.h.{L}.mlp.c_proj.bias").astype(np.float64) @ d
    return Attribution(
        target=int(target), vs=None if vs is None else int(vs), position=q, logit=logit, ln_bias_term=ln_bias,
        sigma=sigma, embed=float(history.hook_at("hook_embed", q) @ d),
        pos_embed=float(history.hook_at("hook_pos_embed", q) @ d), heads=heads, attn_bias=attn_bias, mlp=mlp,
        by_source=by_source, neurons=np.stack(shares) if neurons else None, mlp_out_bias=mlp_bias,
        tokens=tuple(history.tokens[: q + 1]))


def attribution_json(attr: Attribution, tokenizer, k_neurons: int = 10) -> dict:
    """The `gpt2viz attribute --json` object: target, logit, bias term, components, by_source, top_neurons."""
    tt = tokenizer.token_text
    out = {"target_id": attr.target, "target": tt(attr.target)}
    if attr.vs is not None:
        out.update({"vs_id": attr.vs, "vs": tt(attr.vs)})
    n_layer, n_head, K = attr.by_source.shape
    out.update({
        "position": attr.position, "logit": attr.logit, "ln_bias_term": attr.ln_bias_term, "sigma": attr.sigma,
        "components": [c.as_json() for c in attr.components()],
        "by_source": [{"layer": L, "head": h, "source_position": k, "source_token": tt(attr.tokens[k]),
                       "value": float(attr.by_source[L, h, k])}
                      for L in range(n_layer) for h in range(n_head) for k in range(K)],
        "top_neurons": [{"layer": L, "bias": float(attr.mlp_out_bias[L]),
                         "neurons": [{"neuron": i, "value": v} for i, v in attr.top_neurons(L, k_neurons)]}
                        for L in range(n_layer)],
    })
    return out
