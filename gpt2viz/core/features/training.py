"""Training an SAE on hook values gathered by the engine, with torch (the ``[export]`` extra).

Recipe (Gao et al. 2024 for TopK; SAELens for standard and JumpReLU):

- the inputs are scaled by one constant c so that their mean norm is sqrt(d_in) (SAELens'
  "expected_average_only_in"); after training c is folded into the weights, so the saved SAE reads the hook's raw
  values (``normalize_activations`` "none") and a feature's activation is the length it adds along its unit-norm
  decoder direction;
- decoder rows kept at unit norm (the gradient's component along each row removed before each step, the rows
  renormalised after), encoder initialised to the decoder's transpose, b_dec to the mean input;
- loss: the squared error summed over the input's dimensions, plus
  topk: AuxK, the error reconstructed by the d_in / 2 most active dead features (weight 1/32);
  standard: L1 of the activations (= SAELens' L1 weighted by decoder norms, the norms being 1), warmed up;
  jumprelu: L0 through the straight-through step of Rajamanoharan et al. (rectangle kernel, bandwidth eps);
- Adam, constant learning rate decayed linearly to 0 over the last fifth of the steps;
- a feature is dead (for AuxK) when it has not fired on the last ``dead_after`` training tokens.

Deterministic: the same inputs, settings (seed included) and thread count give the same weights.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.features.sae import ARCHITECTURES, SAE, SAEConfig, SAEError, variance_explained

EVAL_CHUNK = 8192


class TorchMissing(SAEError):
    """torch (the ``[export]`` extra) is not installed."""


def require_torch():
    """The torch module, or TorchMissing (one line saying how to install it)."""
    try:
        import torch
    except ImportError:
        raise TorchMissing("training an SAE needs torch: pip install 'gpt2viz[export]'") from None
    return torch


@dataclass(frozen=True)
class TrainSettings:
    """How an SAE is trained (see the module's docstring for the recipe).

    ``k`` is used by topk only, ``l1_coefficient`` by standard, ``l0_coefficient`` / ``bandwidth`` /
    ``init_threshold`` by jumprelu (in the scaled space where inputs have mean norm sqrt(d_in)).
    """

    d_sae: int = 1024
    architecture: str = "topk"
    k: int = 32
    steps: int = 3000
    batch: int = 4096
    lr: float = 1e-3
    l1_coefficient: float = 1.0
    l0_coefficient: float = 0.1
    # The threshold is learnt as log(theta) with Adam, which moves it by about lr per step whatever the loss's
    # scale: a few thousand steps cannot walk it far, so it starts near where features separate. Measured on
    # atlas block 3 (300 steps): init 0.01 / bandwidth 0.05 stayed at L0 ~340 for any L0 coefficient; init 1.0 /
    # bandwidth 0.2 gives L0 ~24 at variance explained 0.79.
    bandwidth: float = 0.2
    init_threshold: float = 1.0
    aux_coefficient: float = 1 / 32
    dead_after: int = 50_000
    seed: int = 0
    threads: int = 2

    def check(self, d_in: int) -> None:
        """SAEError (one line) for settings that cannot train."""
        if self.architecture not in ARCHITECTURES:
            raise SAEError(f"architecture must be one of {', '.join(ARCHITECTURES)}, not {self.architecture!r}")
        if self.d_sae < 1 or self.steps < 1 or self.batch < 1:
            raise SAEError(f"d_sae, steps and batch must be positive (got {self.d_sae}, {self.steps}, {self.batch})")
        if self.architecture == "topk" and not 0 < self.k <= self.d_sae:
            raise SAEError(f"k must be in 1..{self.d_sae} (d_sae), not {self.k}")
        if d_in < 1:
            raise SAEError("no input width")


@dataclass
class TrainResult:
    """A trained SAE and its numbers on the held-out positions.

    ``variance_explained`` = 1 - sum |x - x_hat|^2 / sum |x - mean x|^2 on the held-out positions; ``mean_l0`` the
    mean number of active features per held-out position; ``dead`` the features that fire on none of the
    gathered positions (training and held-out); ``seconds`` the training time (gathering not included).
    """

    sae: SAE
    variance_explained: float
    mean_l0: float
    dead: int
    train_tokens: int
    eval_tokens: int
    seconds: float
    settings: TrainSettings
    history: list[dict] = field(default_factory=list)

    @property
    def dead_fraction(self) -> float:
        """Share of the features that never fired."""
        return self.dead / self.sae.cfg.d_sae

    def numbers(self) -> dict:
        """The training numbers as JSON-able values (stored in cfg.json's metadata and printed)."""
        return {"variance_explained": round(self.variance_explained, 4), "mean_l0": round(self.mean_l0, 2),
                "dead_features": self.dead, "dead_fraction": round(self.dead_fraction, 4),
                "train_tokens": self.train_tokens, "eval_tokens": self.eval_tokens,
                "seconds": round(self.seconds, 1), "settings": asdict(self.settings)}


def _autograd(torch):
    """JumpReLU and its step function with the straight-through gradients for the threshold
    (Rajamanoharan et al. 2024; SAELens ``JumpReLU`` / ``Step``): rectangle kernel of width ``bw``."""

    def rect(u):
        return ((u > -0.5) & (u < 0.5)).to(u.dtype)

    class JumpReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h, theta, bw):
            ctx.save_for_backward(h, theta)
            ctx.bw = bw
            return h * (h > theta).to(h.dtype)

        @staticmethod
        def backward(ctx, g):
            h, theta = ctx.saved_tensors
            bw = ctx.bw
            g_h = g * (h > theta).to(h.dtype)
            g_theta = (-(theta / bw) * rect((h - theta) / bw) * g).sum(0)
            return g_h, g_theta, None

    class Step(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h, theta, bw):
            ctx.save_for_backward(h, theta)
            ctx.bw = bw
            return (h > theta).to(h.dtype)

        @staticmethod
        def backward(ctx, g):
            h, theta = ctx.saved_tensors
            bw = ctx.bw
            return torch.zeros_like(h), (-(1.0 / bw) * rect((h - theta) / bw) * g).sum(0), None

    return JumpReLU, Step


def train_sae(train_x: np.ndarray, eval_x: np.ndarray, hook_name: str, settings: TrainSettings = TrainSettings(), *,
              head_index: int | None = None, metadata: dict | None = None,
              progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None,
              log: Callable[[str], None] | None = None) -> TrainResult:
    """Train an SAE on ``train_x`` and measure it on ``eval_x``.

    Parameters
    ----------
    train_x, eval_x : np.ndarray
        [N, d_in] hook values (see :func:`gpt2viz.core.features.activations.gather`); eval_x is held out.
    hook_name : str
        The hook they come from (written into the SAE's config).
    settings : TrainSettings
    head_index : int, optional
        For ``attn.hook_z`` SAEs over one head.
    metadata : dict, optional
        Merged into cfg.json's metadata (model name, context size, text, ...); the training numbers are added
        under ``gpt2viz_training``.
    progress : callable, optional
        ``progress(step, steps)`` after each optimisation step.
    cancel : callable, optional
        Polled before each step; True raises :class:`~gpt2viz.core.engine.errors.Cancelled`.
    log : callable, optional
        Receives a line of running numbers now and then.

    Returns
    -------
    TrainResult
    """
    torch = require_torch()
    train_x = np.ascontiguousarray(train_x, np.float32)
    eval_x = np.ascontiguousarray(eval_x, np.float32)
    n, d_in = train_x.shape
    s = settings
    s.check(d_in)
    if n < 2 or len(eval_x) < 1:
        raise SAEError(f"too few positions to train on ({n} training, {len(eval_x)} held out)")
    old_threads = torch.get_num_threads()
    torch.set_num_threads(max(1, s.threads))
    try:
        return _train(torch, train_x, eval_x, hook_name, s, head_index, metadata or {}, progress, cancel, log)
    finally:
        torch.set_num_threads(old_threads)


def _train(torch, train_x, eval_x, hook_name, s: TrainSettings, head_index, metadata, progress, cancel, log):
    t0 = time.perf_counter()
    n, d_in = train_x.shape
    torch.manual_seed(s.seed)
    # one scale for every input, so the coefficients mean the same for every model and hook
    c = float(np.linalg.norm(train_x, axis=1).mean() / math.sqrt(d_in)) or 1.0
    X = torch.from_numpy(train_x / np.float32(c))
    arch = s.architecture
    W_dec = torch.randn(s.d_sae, d_in)
    W_dec /= W_dec.norm(dim=1, keepdim=True)
    W_dec.requires_grad_(True)
    W_enc = W_dec.detach().T.clone().requires_grad_(True)
    b_enc = torch.zeros(s.d_sae, requires_grad=True)
    b_dec = X.mean(0).clone().requires_grad_(True)
    log_theta, history = fit_sparse(torch, X, X, (W_enc, b_enc, W_dec, b_dec), s, subtract_b_dec=True,
                                    progress=progress, cancel=cancel, log=log, log_every=100)

    seconds = time.perf_counter() - t0
    with torch.no_grad():
        theta_np = None if log_theta is None else (log_theta.exp() * c).numpy()
        # fold c back in (see the module's docstring): f scales by c, the decoder rows stay unit length
        cfg = SAEConfig(d_in=d_in, d_sae=s.d_sae, architecture=arch, hook_name=hook_name, hook_head_index=head_index,
                        k=s.k if arch == "topk" else None, apply_b_dec_to_input=True, normalize_activations="none",
                        metadata=dict(metadata))
        sae = SAE(cfg, W_enc.numpy().copy(), W_dec.numpy().copy(), b_enc.numpy() * c, b_dec.numpy() * c, theta_np)
    # the numbers, by the saved SAE's own numpy formulas
    counts = np.zeros(s.d_sae, np.int64)
    l0_sum, total = 0.0, 0
    recon = np.empty_like(eval_x)
    for part, is_eval in ((train_x, False), (eval_x, True)):
        for a in range(0, len(part), EVAL_CHUNK):
            x = part[a:a + EVAL_CHUNK]
            f = sae.encode(x)
            active = f > 0
            counts += active.sum(0)
            total += len(x)
            if is_eval:
                l0_sum += float(active.sum())
                recon[a:a + len(x)] = sae.decode(f, x)
    sae.sparsity = np.log10(counts / total + 1e-10).astype(np.float32)
    result = TrainResult(sae, variance_explained(eval_x, recon), l0_sum / len(eval_x), int((counts == 0).sum()),
                         n, len(eval_x), seconds, s, history)
    sae.cfg.metadata["gpt2viz_training"] = result.numbers()
    return result


def fit_sparse(torch, X, Y, params, s: TrainSettings, *, subtract_b_dec: bool,
               progress: Callable[[int, int], None] | None = None, cancel: Callable[[], bool] | None = None,
               log: Callable[[str], None] | None = None, log_every: int = 100):
    """The one training loop of SAEs (``Y`` is ``X``) and transcoders (``Y`` the MLP output): learns
    ``params`` = (W_enc, b_enc, W_dec, b_dec), torch tensors with gradients, in place, so that
    ``act((X - b_dec if subtract_b_dec else X) @ W_enc + b_enc) @ W_dec + b_dec`` fits ``Y`` (see the module's
    docstring for the losses, the decoder's unit rows, the dead-feature rule and the learning-rate schedule).

    Returns (log_theta or None, history): JumpReLU's learnt log threshold, and a row of running numbers every 100
    steps (``log`` gets one every ``log_every``).
    """
    W_enc, b_enc, W_dec, b_dec = params
    n, d_out = len(X), Y.shape[1]
    rng = np.random.default_rng(s.seed)
    arch = s.architecture
    JumpReLU, Step = _autograd(torch)
    params = [W_enc, b_enc, W_dec, b_dec]
    log_theta = None
    if arch == "jumprelu":
        log_theta = torch.full((s.d_sae,), math.log(s.init_threshold), requires_grad=True)
        params.append(log_theta)
    opt = torch.optim.Adam(params, lr=s.lr)
    decay_from = int(s.steps * 0.8)
    last_fired = torch.zeros(s.d_sae, dtype=torch.long)  # tokens seen when each feature last fired
    seen = 0
    history: list[dict] = []
    order = rng.permutation(n)
    pos = 0
    for step in range(s.steps):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        if pos + s.batch > n:  # a new epoch, freshly shuffled
            order, pos = rng.permutation(n), 0
        idx = torch.from_numpy(order[pos:pos + min(s.batch, n)])
        pos += len(idx)
        xb, yb = X[idx], Y[idx]
        lr = s.lr * (1.0 if step < decay_from else max(0.0, (s.steps - step) / max(1, s.steps - decay_from)))
        for g in opt.param_groups:
            g["lr"] = lr
        h = ((xb - b_dec) if subtract_b_dec else xb) @ W_enc + b_enc
        if arch == "topk":
            vals, inds = h.topk(s.k, dim=-1)
            f = torch.zeros_like(h).scatter(-1, inds, torch.relu(vals))
        elif arch == "standard":
            f = torch.relu(h)
        else:
            theta = log_theta.exp()
            f = JumpReLU.apply(torch.relu(h), theta, s.bandwidth)
        y_hat = f @ W_dec + b_dec
        mse = (y_hat - yb).pow(2).sum(-1).mean()
        loss = mse
        extra = 0.0
        seen += len(idx)
        fired = (f > 0).any(0)
        last_fired[fired] = seen
        dead = (seen - last_fired) > s.dead_after
        if arch == "topk":
            n_dead = int(dead.sum())
            if n_dead:
                k_aux = min(d_out // 2, n_dead)
                err = (yb - y_hat).detach()
                v, i = h.masked_fill(~dead, float("-inf")).topk(k_aux, dim=-1)
                e_hat = torch.zeros_like(h).scatter(-1, i, torch.relu(v)) @ W_dec
                aux = (e_hat - err).pow(2).sum(-1).mean()
                loss = loss + s.aux_coefficient * aux
                extra = aux.item()
        elif arch == "standard":
            warm = min(1.0, (step + 1) / max(1, s.steps // 20))
            l1 = f.abs().sum(-1).mean()
            loss = loss + warm * s.l1_coefficient * l1
            extra = l1.item()
        else:
            l0 = Step.apply(h, theta, s.bandwidth).sum(-1).mean()
            loss = loss + s.l0_coefficient * l0
            extra = l0.item()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        with torch.no_grad():  # keep the decoder rows on the unit sphere
            W_dec.grad -= (W_dec.grad * W_dec).sum(-1, keepdim=True) * W_dec
        opt.step()
        with torch.no_grad():
            W_dec /= W_dec.norm(dim=1, keepdim=True)
        if step % 100 == 0 or step % log_every == 0 or step == s.steps - 1:
            total = float((yb - yb.mean(0)).pow(2).sum(-1).mean())
            row = {"step": step, "ve": 1 - mse.item() / total, "l0": float((f > 0).sum(-1).float().mean()),
                   "dead": int(dead.sum()), "extra": extra}
            if step % 100 == 0 or step == s.steps - 1:
                history.append(row)
            if log is not None and (step % log_every == 0 or step == s.steps - 1):
                log(f"step {step + 1}/{s.steps}: variance explained {row['ve']:.3f}, L0 {row['l0']:.1f}, "
                    f"dead {row['dead']}")
        if progress is not None:
            progress(step + 1, s.steps)
    return log_theta, history
