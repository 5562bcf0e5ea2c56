"""Attribution graphs with transcoders (circuit-tracer's definition, computed in numpy from the ONNX run).

Every MLP is replaced by its transcoder; attention patterns and every LayerNorm's scale are frozen at the values of
the real run. Then every node's pre-activation is a *linear* function of what other nodes wrote into the residual
stream, and an edge is one source's direct share of it:

- nodes: the embedding at each position (token + position embedding: both are fixed by the (token, position) pair,
  so gpt2viz folds GPT-2's learned position embedding into the token node), the active transcoder features per
  (layer, position), one error node per (layer, position) (real ``hook_mlp_out`` minus the transcoder's
  ``f @ W_dec + b_dec``; a skip connection's term is inside it too), and the target logits;
- edges into a feature (L, p, f): what each source's write contributes to its pre-activation
  ``h = x @ W_enc[:, f] + b_enc[f]`` through the residual, every head's frozen OV path (value = LayerNorm-1 with its
  scale frozen, times W_V, weighted by the real pattern, times W_O) and the frozen ln2 before it;
- edges into a logit: the same into the *demeaned* logit ``logit_t - mean_v logit_v`` (circuit-tracer's demeaned
  unembedding direction ``W_U[t] - mean W_U``) through the frozen final LayerNorm.

What no node wrote (b_enc, b_dec, the attention biases b_V and b_O, the LayerNorms' betas) is the node's *bias*.
Exact by construction and checked by the tests: Σ edges in + bias = the real pre-activation (and the real demeaned
logit). Edges are computed backwards, circuit-tracer's way: one gradient of each target through the frozen network
(a [P, E] tensor per target, batched), dotted with each source's write.

Differences from circuit-tracer: no position-0 (BOS) features are zeroed (gpt2viz feeds GPT-2 no BOS); per-layer
transcoders only (no cross-layer ones); every active feature is a node (no ``max_feature_nodes`` cut); position
embeddings live in the token nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.features.sae import SAEError
from gpt2viz.core.features.transcoder import Transcoder, transcoder_input

MAX_LOGITS = 10  # circuit-tracer's max_n_logits
DESIRED_PROBABILITY = 0.95  # circuit-tracer's desired_logit_prob


@dataclass
class AttributionGraph:
    """A full (unpruned) graph: nodes in circuit-tracer's order and the adjacency matrix (rows = targets).

    Attributes
    ----------
    tokens : list[int]
        The prompt's ids (P of them).
    active_features : np.ndarray
        [n_features, 3] (layer, position, feature index), sorted.
    activations : np.ndarray
        [n_features] their real activations.
    pre_activations : np.ndarray
        [n_features] their real pre-activations (what edges + bias add up to).
    logit_tokens, logit_probabilities : np.ndarray
        The target logits' ids and probabilities (the first is the target).
    logit_values : np.ndarray
        [n_logits] real demeaned logits.
    adjacency : np.ndarray
        [N, N] float64, N = n_features + n_layer * P + P + n_logits: features, errors (layer-major), tokens, logits;
        ``adjacency[target, source]``.
    bias : np.ndarray
        [N] each node's bias (zero for errors and tokens).
    n_layer : int
    """

    tokens: list[int]
    active_features: np.ndarray
    activations: np.ndarray
    pre_activations: np.ndarray
    logit_tokens: np.ndarray
    logit_probabilities: np.ndarray
    logit_values: np.ndarray
    adjacency: np.ndarray
    bias: np.ndarray
    n_layer: int
    error_norms: np.ndarray = field(default=None)  # [n_layer, P] |error| per (layer, position)

    @property
    def n_pos(self) -> int:
        """Number of prompt positions."""
        return len(self.tokens)

    @property
    def n_features(self) -> int:
        """Number of active feature nodes."""
        return len(self.active_features)

    @property
    def error_slice(self) -> slice:
        """The error nodes' indices (row/column ``n_features + layer * P + position``)."""
        return slice(self.n_features, self.n_features + self.n_layer * self.n_pos)

    @property
    def token_slice(self) -> slice:
        """The embedding nodes' indices."""
        s = self.error_slice.stop
        return slice(s, s + self.n_pos)

    @property
    def logit_slice(self) -> slice:
        """The logit nodes' indices."""
        s = self.token_slice.stop
        return slice(s, s + len(self.logit_tokens))


def graph_hooks(n_layer: int) -> list[str]:
    """The hooks a graph reads from the run."""
    per = ("ln1.hook_scale", "attn.hook_pattern", "hook_resid_mid", "ln2.hook_scale", "ln2.hook_normalized",
           "hook_mlp_out")
    return (["hook_embed", "hook_pos_embed", "ln_final.hook_scale"]
            + [f"blocks.{L}.{h}" for L in range(n_layer) for h in per])


def logit_targets(logits: np.ndarray, target: int | None = None, max_n: int = MAX_LOGITS,
                  desired: float = DESIRED_PROBABILITY) -> tuple[np.ndarray, np.ndarray]:
    """circuit-tracer's targets: the most likely tokens until their probabilities reach ``desired``, at most
    ``max_n``; a given ``target`` comes first (then the others, to ``max_n`` in all). Returns (ids, probabilities)."""
    z = np.asarray(logits, np.float64)
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")[:max_n]
    n = int(np.searchsorted(np.cumsum(p[order]), desired)) + 1
    ids = [int(i) for i in order[:min(n, max_n)]]
    if target is not None:
        ids = [int(target)] + [i for i in ids if i != int(target)][:max_n - 1]
    return np.array(ids), p[ids]


def _centre(v: np.ndarray) -> np.ndarray:
    return v - v.mean(-1, keepdims=True)


def build_graph(model, transcoders: Sequence[Transcoder], prompt, *, target: int | None = None,
                weights: Weights | None = None, dtype=np.float64, progress: Callable[[int, int], None] | None = None,
                cancel: Callable[[], bool] | None = None) -> AttributionGraph:
    """The full attribution graph of ``prompt``'s next token, from one onnxruntime run of ``model``.

    Parameters
    ----------
    model : gpt2viz.core.engine.model.Model
    transcoders : sequence of Transcoder
        One per block, in order.
    prompt : str or sequence of int
    target : int, optional
        A token to attribute first (else the most likely one leads).
    weights : Weights, optional
        The model's parameters (default read from its folder).
    dtype : numpy dtype, optional
        Of the backward pass (float64 by default; float32 takes ~2/3 of the time on GPT-2-small-sized models, the
        sums then hold to ~1e-5 of the largest value instead of ~1e-7).
    progress : callable, optional
        ``progress(done, total)`` after each block.
    cancel : callable, optional
        Polled between blocks; True raises :class:`Cancelled`.
    """
    cfg = model.config
    nL, H, E = cfg.n_layer, cfg.n_head, cfg.n_embd
    D = E // H
    if len(transcoders) != nL or [t.cfg.layer for t in transcoders] != list(range(nL)):
        raise SAEError(f"the graph needs one transcoder per block 0..{nL - 1}, got layers "
                       f"{[t.cfg.layer for t in transcoders]}")
    for t in transcoders:
        if t.cfg.d_in != E or t.cfg.d_out != E:
            raise SAEError(f"transcoder {t.cfg.layer} maps {t.cfg.d_in} -> {t.cfg.d_out}; this model is {E} wide")
    w = weights or Weights.of(model)
    ids = model.to_tokens(prompt)
    if not ids:
        raise SAEError("the prompt has no tokens")
    P = len(ids)
    logits, tr = model.run_with_cache(ids, names=graph_hooks(nL))
    f64 = np.float64

    # ---- nodes ------------------------------------------------------------------------------------------------
    acts, pres, errors = [], [], np.zeros((nL, P, E))
    for L, tc in enumerate(transcoders):
        x = transcoder_input(tr, L, tc.cfg.input_kind, w)
        h = tc.hidden_pre(x)
        a = tc.activation(h)
        acts.append(a)
        pres.append(h)
        errors[L] = tr[f"blocks.{L}.hook_mlp_out"].astype(f64) - (a.astype(f64) @ tc.W_dec + tc.b_dec)
    active = np.array([(L, p, f) for L in range(nL) for p, f in zip(*np.nonzero(acts[L]))], dtype=np.int64)
    active = active.reshape(-1, 3)
    nF = len(active)
    act_vals = np.array([acts[L][p, f] for L, p, f in active], f64)
    pre_vals = np.array([pres[L][p, f] for L, p, f in active], f64)
    last = logits[-1].astype(f64)
    lt, lp = logit_targets(last, target)
    nT = len(lt)
    N = nF + nL * P + P + nT
    tok0, logit0 = nF + nL * P, nF + nL * P + P

    # ---- each target's gradient start and own constant --------------------------------------------------------
    T = nF + nT  # target rows: the features, then the logits
    ft = np.dtype(dtype)
    G = np.zeros((T, P, E), ft)
    bias_t = np.zeros(T)
    starts = {}  # layer -> (rows, positions, start vectors)
    for L, tc in enumerate(transcoders):
        rows = np.nonzero(active[:, 0] == L)[0] if nF else np.zeros(0, np.int64)
        if not len(rows):
            continue
        feats, pos = active[rows, 2], active[rows, 1]
        W = tc.W_enc[:, feats].T.astype(f64)  # [n, E]
        const = tc.b_enc[feats].astype(f64)
        kind = tc.cfg.input_kind
        if kind != "hook_resid_mid":
            s2 = tr[f"blocks.{L}.ln2.hook_scale"].astype(f64)[pos, 0]
            if kind == "mlp.hook_in":
                const = const + W @ w.get(f"transformer.h.{L}.ln_2.bias").astype(f64)
                W = W * w.get(f"transformer.h.{L}.ln_2.weight").astype(f64)
            W = _centre(W) / s2[:, None]
        bias_t[rows] = const
        starts[L] = (rows, pos, W)
    W_U = w.W_U
    mean_u = W_U.mean(0, dtype=f64)
    dirs = w.embedding_rows(lt).astype(f64) - mean_u  # [nT, E]
    gf, bf = w.get("transformer.ln_f.weight").astype(f64), w.get("transformer.ln_f.bias").astype(f64)
    sf = float(tr["ln_final.hook_scale"].reshape(P)[-1])
    G[nF:, P - 1] = _centre(dirs * gf) / sf
    bias_t[nF:] = dirs @ bf
    logit_vals = last[lt] - last.mean()

    # ---- backwards through the frozen network -----------------------------------------------------------------
    # Features are sorted by layer, so the targets that read at block L or later are a contiguous tail of the rows
    # (those of lower layers still have a zero gradient): each block works on that tail only.
    A = np.zeros((N, N))
    target_rows = np.concatenate([np.arange(nF), np.arange(logit0, N)])
    first_row = np.searchsorted(active[:, 0], np.arange(nL + 1)) if nF else np.zeros(nL + 1, np.int64)
    for L in range(nL - 1, -1, -1):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        tc = transcoders[L]
        r0 = int(first_row[L])
        Gs = G[r0:]  # a view: updates below reach G
        rows_out = target_rows[r0:]
        # MLP L's writes enter the residual after block L: Gs is the gradient there
        rows_L = np.arange(first_row[L], first_row[L + 1])
        for p in np.unique(active[rows_L, 1]) if len(rows_L) else ():
            at = rows_L[active[rows_L, 1] == p]
            dec = tc.W_dec[active[at, 2]].astype(ft) * act_vals[at, None].astype(ft)  # [n, E]: what each feature wrote
            A[np.ix_(rows_out, at)] = Gs[:, p] @ dec.T
        A[rows_out, nF + L * P:nF + (L + 1) * P] = np.einsum("tpe,pe->tp", Gs, errors[L].astype(ft))
        bias_t[r0:] += Gs.sum(1, dtype=f64) @ tc.b_dec.astype(f64)
        if L in starts:  # layer L's features read the residual after attention L
            rows, pos, W = starts[L]
            G[rows, pos] += W
        # attention L (frozen pattern and ln1 scale): constants, then the OV path to every source position
        Wqkv = w.get(f"transformer.h.{L}.attn.c_attn.weight").astype(ft)
        bqkv = w.get(f"transformer.h.{L}.attn.c_attn.bias").astype(ft)
        WO = w.get(f"transformer.h.{L}.attn.c_proj.weight").astype(ft)  # [E, E], rows head-major
        bO = w.get(f"transformer.h.{L}.attn.c_proj.bias").astype(ft)
        g1, b1 = w.get(f"transformer.h.{L}.ln_1.weight").astype(ft), w.get(f"transformer.h.{L}.ln_1.bias").astype(ft)
        WV, bV = Wqkv[:, 2 * E:], bqkv[2 * E:]
        # pattern rows sum to one, so the value constants (b1 @ W_V + b_V) come out of every head unchanged
        c_attn = (b1.astype(f64) @ WV.astype(f64) + bV.astype(f64)) @ WO.astype(f64) + bO.astype(f64)
        bias_t[r0:] += Gs.sum(1, dtype=f64) @ c_attn.astype(f64)
        pat = tr[f"blocks.{L}.attn.hook_pattern"].astype(ft)[:, :, :P]  # [H, Q, K]
        s1 = tr[f"blocks.{L}.ln1.hook_scale"].astype(ft).reshape(P)
        t = len(Gs)
        # one 2-D product each (a 3-D operand makes numpy run one small GEMM per target)
        U = (Gs.reshape(t * P, E) @ WO.T).reshape(t, P, H, D)  # gradient on each head's z at each query
        back = np.empty_like(U)
        for h in range(H):  # to the keys the query read: z_q = sum_k pattern[q, k] v_k
            back[:, :, h] = np.matmul(pat[h].T, U[:, :, h])
        gv = (back.reshape(t * P, E) @ WV.T).reshape(t, P, E)  # gradient on ln1's output at each source position
        Gs += _centre(gv * g1) / s1[None, :, None]
        if progress is not None:
            progress(nL - L, nL)
    emb = tr["hook_embed"].astype(f64) + tr["hook_pos_embed"].astype(f64)
    A[target_rows, tok0:logit0] = np.einsum("tpe,pe->tp", G, emb.astype(ft))
    bias = np.zeros(N)
    bias[target_rows] = bias_t
    return AttributionGraph(tokens=list(ids), active_features=active, activations=act_vals, pre_activations=pre_vals,
                            logit_tokens=lt, logit_probabilities=lp, logit_values=logit_vals, adjacency=A, bias=bias,
                            n_layer=nL, error_norms=np.linalg.norm(errors, axis=-1))
