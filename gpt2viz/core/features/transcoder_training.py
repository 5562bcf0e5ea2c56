"""Training a transcoder (one block's MLP input -> its ``hook_mlp_out``) with torch, and measuring a set of them.

The recipe is :mod:`.training`'s for SAEs with the target changed: the inputs x (``ln2.hook_normalized`` by default)
and the targets y (``hook_mlp_out``) are each scaled by one constant to mean norm sqrt(E); the encoder reads x with no
decoder bias subtracted (transcoders map one space to another); the loss is |f @ W_dec + b_dec - y|^2, plus AuxK
(TopK), L1 (standard) or the straight-through L0 (JumpReLU). After training the scales are folded into the weights so
the saved transcoder reads the raw hook and writes the raw MLP output with unit-norm decoder rows.

:func:`replacement_quality` measures a set: each MLP output's variance explained by its transcoder on held-out
text, and the next-token KL divergence when *every* MLP is replaced (block by block, each transcoder reading the
already-replaced run, through the engine's ``Patch`` interventions on ``hook_mlp_out``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.features.sae import SAEError, variance_explained
from gpt2viz.core.features.training import TrainSettings, fit_sparse, require_torch
from gpt2viz.core.features.transcoder import DEFAULT_INPUT, OUTPUT, Transcoder, TranscoderConfig, transcoder_input
from gpt2viz.core.interventions import Patch


def gather_pairs(model, layer: int, runs: Sequence[Sequence[int]], input_kind: str = DEFAULT_INPUT, *,
                 progress: Callable[[int, int], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A transcoder's training pairs: its input and the MLP's real output at every position of ``runs``."""
    from gpt2viz.core.engine.weights import Weights

    w = Weights.of(model) if input_kind == "mlp.hook_in" else None
    hooks = [f"blocks.{layer}.ln2.hook_normalized" if input_kind == "mlp.hook_in" else f"blocks.{layer}.{input_kind}",
             f"blocks.{layer}.{OUTPUT}"]
    xs, ys = [], []
    for i, ids in enumerate(runs):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        trace, _ = model.run(list(ids), hooks=hooks)
        tr = {k: trace[k].reshape(-1, trace[k].shape[-1]) for k in hooks}
        xs.append(transcoder_input(tr, layer, input_kind, w))
        ys.append(tr[hooks[1]])
        if progress is not None:
            progress(i + 1, len(runs))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.float32)


@dataclass
class TranscoderResult:
    """A trained transcoder and its held-out numbers (variance of the MLP output explained, mean L0, dead)."""

    transcoder: Transcoder
    variance_explained: float
    mean_l0: float
    dead: int
    train_tokens: int
    eval_tokens: int
    seconds: float

    def numbers(self) -> dict:
        """JSON-able numbers (also stored in the transcoder's metadata)."""
        return {"mlp_out_variance_explained": round(self.variance_explained, 4), "mean_l0": round(self.mean_l0, 2),
                "dead_features": self.dead, "train_tokens": self.train_tokens, "eval_tokens": self.eval_tokens,
                "seconds": round(self.seconds, 1)}


def train_transcoder(train_x, train_y, eval_x, eval_y, layer: int, settings: TrainSettings | None = None, *,
                     input_kind: str = DEFAULT_INPUT, metadata: dict | None = None,
                     progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None,
                     log: Callable[[str], None] | None = None) -> TranscoderResult:
    """Train a transcoder mapping ``train_x`` [N, E] to ``train_y`` [N, E]; measure it on the held-out pairs."""
    torch = require_torch()
    X0, Y0 = (np.ascontiguousarray(a, np.float32) for a in (train_x, train_y))
    eval_x, eval_y = (np.ascontiguousarray(a, np.float32) for a in (eval_x, eval_y))
    n, d_in = X0.shape
    d_out = Y0.shape[1]
    s = settings or TrainSettings()
    s.check(d_in)
    if n < 2 or len(eval_x) < 1:
        raise SAEError(f"too few positions to train on ({n} training, {len(eval_x)} held out)")
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, s.threads))
    t0 = time.perf_counter()
    try:
        torch.manual_seed(s.seed)
        cx = float(np.linalg.norm(X0, axis=1).mean() / math.sqrt(d_in)) or 1.0
        cy = float(np.linalg.norm(Y0, axis=1).mean() / math.sqrt(d_out)) or 1.0
        X, Y = torch.from_numpy(X0 / np.float32(cx)), torch.from_numpy(Y0 / np.float32(cy))
        W_dec = torch.randn(s.d_sae, d_out)
        W_dec /= W_dec.norm(dim=1, keepdim=True)
        W_dec.requires_grad_(True)
        W_enc = (torch.randn(d_in, s.d_sae) / math.sqrt(d_in)).requires_grad_(True)
        b_enc = torch.zeros(s.d_sae, requires_grad=True)
        b_dec = Y.mean(0).clone().requires_grad_(True)
        log_theta, _history = fit_sparse(torch, X, Y, (W_enc, b_enc, W_dec, b_dec), s, subtract_b_dec=False,
                                         progress=progress, cancel=cancel, log=log, log_every=200)
        seconds = time.perf_counter() - t0
        with torch.no_grad():
            # fold the scales in: f' = cy * f (TopK's choice and ReLU do not change under a positive scale), so
            # W_enc' = W_enc * cy / cx, b_enc' = cy * b_enc, theta' = cy * theta, b_dec' = cy * b_dec
            cfg = TranscoderConfig(d_in, s.d_sae, d_out, s.architecture, layer, input_kind,
                                   s.k if s.architecture == "topk" else None, dict(metadata or {}))
            tc = Transcoder(cfg, W_enc.numpy() * (cy / cx), W_dec.numpy().copy(), b_enc.numpy() * cy,
                            b_dec.numpy() * cy, None if log_theta is None else (log_theta.exp() * cy).numpy())
    finally:
        torch.set_num_threads(old_threads)
    counts = np.zeros(s.d_sae, np.int64)
    for a in range(0, n, 8192):
        counts += (tc.encode(X0[a:a + 8192]) > 0).sum(0)
    f_eval = tc.encode(eval_x)
    counts += (f_eval > 0).sum(0)
    result = TranscoderResult(tc, variance_explained(eval_y, tc.decode(f_eval, eval_x)),
                              float((f_eval > 0).sum(-1).mean()), int((counts == 0).sum()), n, len(eval_x), seconds)
    tc.cfg.metadata["gpt2viz_training"] = {**result.numbers(), "settings": {
        k: getattr(s, k) for k in ("d_sae", "architecture", "k", "steps", "batch", "lr", "seed")}}
    return result


def replaced_logits(model, transcoders: Sequence[Transcoder], ids: Sequence[int]) -> np.ndarray:
    """The logits [P, V] with every MLP replaced by its transcoder, each reading the run replaced below it."""
    from gpt2viz.core.engine.weights import Weights

    w = Weights.of(model)
    patches: list[Patch] = []
    for L, tc in enumerate(transcoders):
        hook = f"blocks.{L}.ln2.hook_normalized" if tc.cfg.input_kind == "mlp.hook_in" else tc.cfg.hook_name
        _, tr = model.run_with_cache(list(ids), names=[hook], interventions=tuple(patches))
        y = tc.forward(transcoder_input(tr, L, tc.cfg.input_kind, w))
        patches += [Patch("mlp_out", L, p, tuple(float(v) for v in y[p])) for p in range(len(ids))]
    return model.run_with_hooks(list(ids), interventions=tuple(patches))


def replacement_quality(model, transcoders: Sequence[Transcoder], runs: Sequence[Sequence[int]]) -> dict:
    """Each layer's MLP-output variance explained (clean inputs) and the mean next-token KL(real || replaced)
    per position with every MLP replaced, over the windows ``runs``."""
    nL = len(transcoders)
    xs = {L: [] for L in range(nL)}
    kl_sum, n_pos = 0.0, 0
    for ids in runs:
        clean, _ = model.run_with_cache(list(ids), names=[])
        replaced = replaced_logits(model, transcoders, ids)
        lp = clean - np.logaddexp.reduce(clean.astype(np.float64), axis=-1, keepdims=True)
        lq = replaced - np.logaddexp.reduce(replaced.astype(np.float64), axis=-1, keepdims=True)
        kl_sum += float((np.exp(lp) * (lp - lq)).sum())
        n_pos += len(ids)
    for L, tc in enumerate(transcoders):
        x, y = gather_pairs(model, L, runs, tc.cfg.input_kind)
        xs[L] = variance_explained(y, tc.forward(x))
    return {"mlp_out_variance_explained": [round(float(xs[L]), 4) for L in range(nL)],
            "next_token_kl_all_replaced": round(kl_sum / max(1, n_pos), 4), "positions": n_pos}
