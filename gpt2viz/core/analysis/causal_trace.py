"""Causal tracing (Meng et al., ROME, ``experiments/causal_trace.py``) on the user's own prompt.

The subject tokens' embeddings are corrupted with Gaussian noise (``noise`` x the standard deviation
of the token embedding matrix, seeded, one draw per sample, the same draws for every cell); then, one
(layer, position) at a time, a state of the clean run is restored inside the corrupted run, and the
target's probability at the last position, averaged over the samples, is recorded. Three tables:

* ``hidden``: the residual stream entering block L (``blocks.L.hook_resid_pre``; L = 0 is the
  embeddings, so restoring a subject token there undoes its noise). ROME restores block outputs;
  block L's input is block L-1's output, so the rows are the same states shifted by one.
* ``mlp``: ``blocks.L.hook_mlp_out`` restored over a window of layers centred on L (ROME: 10).
* ``attn``: ``blocks.L.hook_attn_out`` likewise.

Everything is computed by onnxruntime running the exported graph: the noise is the engine's additive
shift at ``blocks.0.hook_resid_pre`` (a :class:`~gpt2viz.core.interventions.Steer` per subject
position), a restore is its replacement at the hook (a :class:`~gpt2viz.core.interventions.Patch`
with the clean run's value). :func:`cell_interventions` names the interventions of one cell; the
table batches them (samples x layers in one call; a restore at position p and noise from the first
subject position s0 leave positions before min(p, s0) clean, so a call starts there on the clean
cache).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.hooks import block_hook, scale_input, shift_input
from gpt2viz.core.interventions import SITES, InterventionError, Patch, Steer, describe, mean_activations
from gpt2viz.core.numeric import softmax

KINDS = ("hidden", "mlp", "attn")
SITE_OF = {"hidden": "resid_pre", "mlp": "mlp_out", "attn": "attn_out"}
TOKEN_BUDGET = 256  # token rows per graph call (GPT-2 small: ~0.3 s), so a cancel is honoured quickly


@dataclass(frozen=True)
class CausalTrace:
    """The result of :func:`causal_trace`.

    Attributes
    ----------
    prob : dict
        kind ("hidden" | "mlp" | "attn") -> [n_layer, positions] mean p(target) with that state restored.
    clean_prob, corrupt_prob : float
        p(target) of the clean run, and of the corrupted run (mean over the samples) with nothing restored.
    subject : tuple of int
        The noised positions.
    target : int
    noise : float
        Noise scale in units of ``embed_std``.
    embed_std : float
        Standard deviation of the token embedding matrix.
    samples, seed, window : int
    ms : float
    calls : int
    interventions : tuple of dict
        :func:`~gpt2viz.core.interventions.describe` of the interventions the trace ran under.
    """

    prob: dict
    clean_prob: float
    corrupt_prob: float
    subject: tuple[int, ...]
    target: int
    noise: float
    embed_std: float
    samples: int
    seed: int
    window: int
    ms: float
    calls: int
    interventions: tuple = ()  # describe() of each intervention in force (empty: the model as shipped)

    def best(self, kind: str) -> tuple[int, int, float]:
        """(layer, position, p) of the cell where restoring brings the target back most."""
        m = self.prob[kind]
        L, p = np.unravel_index(int(np.argmax(m)), m.shape)
        return int(L), int(p), float(m[L, p])


def embedding_std(weights) -> float:
    """Standard deviation of every entry of the token embedding matrix (ROME's noise unit)."""
    n, total, squares, rows = 0, 0.0, 0.0, 4096  # in slabs: the matrix is not kept (Weights.W_U)
    V = int(weights.embedding_norms.shape[0])
    for start in range(0, V, rows):
        slab = weights.embedding_rows(range(start, min(start + rows, V))).astype(np.float64)
        n, total, squares = n + slab.size, total + float(slab.sum()), squares + float((slab * slab).sum())
    mean = total / n
    return float(np.sqrt(max(squares / n - mean * mean, 0.0)))


def noise_draws(samples: int, n_subject: int, d_model: int, scale: float, seed: int) -> np.ndarray:
    """[samples, n_subject, d_model] Gaussian noise of standard deviation ``scale``, seeded."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((samples, n_subject, d_model)) * scale).astype(np.float32)


def window_layers(layer: int, window: int, n_layer: int) -> range:
    """The layers restored together for a cell at ``layer`` (ROME's centred window)."""
    return range(max(0, layer - window // 2), min(n_layer, layer - (-window // 2)))


def cell_interventions(kind: str, layer: int, position: int, subject, noise_row: np.ndarray, clean_trace,
                       window: int, n_layer: int) -> tuple:
    """The engine's interventions for one sample of one cell: noise on the subject, then the restore.

    ``noise_row`` is [n_subject, E] (one sample); ``clean_trace`` holds the clean run's hooks for the site.
    """
    ivs = [Steer(0, (int(s),), noise_row[i]) for i, s in enumerate(subject)]
    site = SITE_OF[kind]
    layers = [layer] if kind == "hidden" else window_layers(layer, window, n_layer)
    for L in layers:
        ivs.append(Patch(site, L, position, clean_trace[block_hook(L, SITES[site])][position]))
    return tuple(ivs)


def causal_trace(model, weights, ids, subject, target: int | None = None, *, noise: float = 3.0,
                 samples: int = 10, seed: int = 0, window: int = 1, kinds=KINDS, interventions=(),
                 progress: Callable[[int, int], None] | None = None,
                 cancel: Callable[[], bool] | None = None) -> CausalTrace:
    """ROME's causal trace of ``ids`` with the ``subject`` positions corrupted.

    Parameters
    ----------
    model : gpt2viz.core.engine.model.Model
        A model folder with intervention inputs (format 2).
    weights : gpt2viz.core.engine.weights.Weights
        For the embedding's standard deviation (the noise unit).
    ids : sequence of int
        The prompt.
    subject : sequence of int
        Positions whose embeddings get noise (not empty).
    target : int, optional
        Token whose probability at the last position is measured; default the clean run's top token.
    noise : float
        Noise standard deviation in units of the embedding's standard deviation (ROME: 3). 0 = no noise.
    samples : int
        Noise samples averaged (ROME: 10).
    seed : int
    window : int
        Layers restored together for the MLP and attention tables (ROME: 10; 1 = one layer).
    kinds : sequence of str
        Which tables: any of "hidden", "mlp", "attn".
    interventions : tuple of Intervention, optional
        In force in every run of the trace, the clean one included (a ROME edit, ablations, steering): the
        trace of the model *as changed*. The noise and the restores act after them at the same hook, and a
        restore puts back the clean run's value as the intervened graph computed it.
    progress : callable(done, total), optional
        Called after each graph call.
    cancel : callable() -> bool, optional
        Polled before each call; True raises :class:`~gpt2viz.core.engine.errors.Cancelled`.

    Returns
    -------
    CausalTrace
    """
    ids = [int(t) for t in ids]
    P = len(ids)
    subject = tuple(sorted({int(s) for s in subject}))
    if not subject:
        raise InterventionError("choose at least one subject token to corrupt")
    if subject[0] < 0 or subject[-1] >= P:
        raise InterventionError(f"subject position {subject[-1]} is outside the prompt (0..{P - 1})")
    if samples < 1 or window < 1:
        raise InterventionError("samples and window must be at least 1")
    bad = [k for k in kinds if k not in KINDS]
    if bad:
        raise InterventionError(f"causal trace tables are {', '.join(KINDS)}, not {bad[0]!r}")
    model.intervention_session  # opened now: raises the upgrade message for an older folder before any run
    c = model.config
    n_layer, E = c.n_layer, c.n_embd
    t0 = time.perf_counter()
    hooks = sorted({block_hook(L, SITES[SITE_OF[k]]) for k in kinds for L in range(n_layer)})
    base = tuple(interventions)
    means = mean_activations(model, ids, base) if base else None
    clean, clean_cache = model.run(ids, hooks=hooks, interventions=base, means=means)
    if target is None:
        target = int(np.argmax(clean.last_logits))
    if not 0 <= int(target) < c.vocab_size:
        raise InterventionError(f"target id {target} is outside the vocabulary")
    target = int(target)
    std = embedding_std(weights)
    draws = noise_draws(samples, len(subject), E, noise * std, seed)
    s0 = subject[0]

    def call(start: int, rows: list[tuple[int, list[int]]]) -> np.ndarray:
        """One graph call from ``start`` on the clean cache; a row = (sample, restores [(layer, position)])
        for ``site``; returns p(target) per row."""
        n = P - start
        B = len(rows)
        acc: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}

        def get(L, hook):
            if (L, hook) not in acc:
                acc[(L, hook)] = (np.ones((B, n, 1), np.float32), np.zeros((B, n, E), np.float32))
            return acc[(L, hook)]

        s, b = get(0, "hook_resid_pre")  # the noise first, the restores after it (they replace the value)
        for r, (sample, _restores) in enumerate(rows):
            for i, pos in enumerate(subject):
                if pos >= start:
                    b[r, pos - start] += draws[sample, i]
        for r, (_sample, restores) in enumerate(rows):
            for site, L, pos in restores:
                hook = SITES[site]
                s, b = get(L, hook)
                s[r, pos - start] = 0.0
                b[r, pos - start] = clean[block_hook(L, hook)][pos]
        extra = model.intervention_feeds(base, start, n, means) if base else {}
        for (L, hook), (s2, b2) in list(acc.items()):
            # the run's own interventions first, the noise and the restores after them: one x * s + b
            s1, b1 = extra.pop(scale_input(L, hook), None), extra.pop(shift_input(L, hook), None)
            if s1 is not None:
                acc[(L, hook)] = (s1 * s2, b1 * s2 + b2)
        logits = model.run_batch(ids[start:], clean_cache.truncated(start), acc, B, extra)
        return softmax(logits)[:, target]

    # the work: the corrupted baseline, then per kind and position the layers in chunks of at most
    # TOKEN_BUDGET token rows (samples x layers x the positions the call runs): short calls keep a cancel prompt
    jobs = []
    for k in kinds:
        for p in range(P):
            per_call = max(1, TOKEN_BUDGET // (samples * (P - min(p, s0))))
            jobs += [(k, p, list(range(L0, min(n_layer, L0 + per_call)))) for L0 in range(0, n_layer, per_call)]
    total = len(jobs) + 1
    if cancel and cancel():
        raise Cancelled()
    corrupt = float(call(s0, [(i, []) for i in range(samples)]).mean())
    calls, done = 2, 1  # the clean run and the corrupted baseline
    if progress:
        progress(done, total)
    prob = {k: np.zeros((n_layer, P)) for k in kinds}
    for kind, p, layers in jobs:
        if cancel and cancel():
            raise Cancelled()
        site = SITE_OF[kind]
        rows = []
        for L in layers:
            restored = [L] if kind == "hidden" else list(window_layers(L, window, n_layer))
            rows += [(i, [(site, LL, p) for LL in restored]) for i in range(samples)]
        ps = call(min(p, s0), rows).reshape(len(layers), samples).mean(axis=1)
        prob[kind][layers, p] = ps
        calls += 1
        done += 1
        if progress:
            progress(done, total)
    return CausalTrace(prob, float(softmax(clean.last_logits)[target]), corrupt, subject, target,
                       float(noise), std, int(samples), int(seed), int(window),
                       (time.perf_counter() - t0) * 1000, calls, tuple(describe(iv) for iv in base))


# ---- which tokens are the subject --------------------------------------------------------------

def find_subject(tokenizer, ids, text: str) -> tuple[int, ...]:
    """Positions of the tokens covering the last occurrence of ``text`` in the prompt (before its last
    token when possible), as ROME's ``find_token_range``; InterventionError if it does not occur."""
    ids = [int(t) for t in ids]
    pieces = [tokenizer.token_bytes(t) for t in ids]
    whole = b"".join(pieces)
    needle = text.encode("utf-8")
    at = whole.rfind(needle)
    if not needle.strip() or at < 0:
        raise InterventionError(f"the subject {text!r} does not occur in the prompt")
    ends = np.cumsum([len(p) for p in pieces])
    starts = ends - np.array([len(p) for p in pieces])
    return tuple(int(i) for i in range(len(ids)) if starts[i] < at + len(needle) and ends[i] > at)


def default_subject(tokenizer, ids) -> tuple[int, ...]:
    """The subject when none is given: the longest capitalised word token before the last token (a
    name such as " France"), else the longest alphabetic one, else the token before the last."""
    ids = [int(t) for t in ids]
    if len(ids) < 2:
        return (0,)
    best, key = len(ids) - 2, (-1, -1, -1)
    for i, t in enumerate(ids[:-1]):
        word = tokenizer.token_text(t).strip()
        if not word:
            continue
        k = (int(word[:1].isupper() and i > 0), int(word.isalpha()), len(word))
        if k > key:
            best, key = i, k
    return (best,)
