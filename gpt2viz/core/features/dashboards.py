"""Feature dashboards: what each feature of an SAE responds to and what it writes, computed once, offline.

For every feature (the columns of SAE-vis / Neuronpedia dashboards, from a text run through the model):

- **contexts**: the top-activating positions of the text, then a few positions drawn (seeded) from each quantile
  band of its activations (band = a fraction of its maximum), each as a window of tokens with the feature's
  activation on every token of the window (token-level highlighting);
- **density**: the fraction of positions where it fires, and a histogram of its non-zero activations;
- **logit effects**: ``W_dec[f] * ln_f.weight @ W_U.T``, the direct effect of the feature's decoder direction on each
  token's logit through the final LayerNorm's weight (its scale frozen, as SAELens / Neuronpedia show it), top and
  bottom tokens;
- **neighbours**: the features whose decoder directions are nearest by cosine.

Stored beside the SAE as ``dashboard.npz`` (arrays for all features + a JSON ``meta`` string) so a feature page opens
without running anything. Every activation comes from onnxruntime running the model folder's graph.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.features.activations import gather, shipped_texts, windows
from gpt2viz.core.features.sae import SAE, SAEError, check_fits, hook_width

DASHBOARD_FILE = "dashboard.npz"
FORMAT = 1
N_TOP = 8  # top-activating contexts per feature
BANDS = ((0.5, 0.75), (0.25, 0.5), (0.0, 0.25))  # quantile bands, as fractions of the feature's maximum
PER_BAND = 2  # contexts drawn from each band
BEFORE, AFTER = 9, 2  # tokens of a context window before / after the activating token
WIDTH = BEFORE + 1 + AFTER
N_LOGITS = 10  # top / bottom logit effects kept
N_NEIGHBOURS = 6
BINS = 20  # activation histogram bins, from 0 to the feature's maximum
PAD = np.iinfo(np.int32).max  # a window slot outside the text
_PARTIAL = re.compile(r"\[\d+-\d+/\d+\]$")  # the tokenizer's "part i-j of n bytes" mark on a split character
ENCODE_ROWS = 2048  # positions encoded at once (bounds memory to ENCODE_ROWS x d_sae floats)


@dataclass(frozen=True)
class Context:
    """One context of a feature: ``tokens`` with the feature's ``acts`` on each; ``center`` is the index of the
    position it was chosen for; ``band`` is 0 for a top context, 1.. for the quantile bands of :data:`BANDS`."""

    tokens: tuple[int, ...]
    acts: tuple[float, ...]
    center: int
    band: int


@dataclass(frozen=True)
class FeatureDashboard:
    """One feature's dashboard (see the module docstring)."""

    feature: int
    max_activation: float
    density: float
    histogram: tuple[int, ...]  # counts of non-zero activations in BINS equal bins of [0, max_activation]
    contexts: tuple[Context, ...]
    promotes: tuple[tuple[int, float], ...]  # (token, logit effect), largest first
    suppresses: tuple[tuple[int, float], ...]  # most negative first
    neighbours: tuple[tuple[int, float], ...]  # (feature, decoder cosine)

    @property
    def dead(self) -> bool:
        """Never fired on the dashboard's text."""
        return self.density == 0.0

    def top_tokens(self, n: int = 3) -> list[int]:
        """The tokens it fires on most: the activating tokens of its top contexts, ranked by summed activation."""
        score: dict[int, float] = {}
        for c in self.contexts:
            if c.band == 0:
                score[c.tokens[c.center]] = score.get(c.tokens[c.center], 0.0) + c.acts[c.center]
        return [t for t, _ in sorted(score.items(), key=lambda kv: -kv[1])][:n]


class Dashboards:
    """The dashboards of every feature of one SAE (the arrays of ``dashboard.npz``)."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: dict):
        self.arrays = arrays
        self.meta = meta
        self._labels: dict[tuple[int, int], str] = {}

    def label(self, f: int, tokenizer) -> str:
        """Feature ``f``'s :func:`feature_label`, made once: the views ask for the same labels on every redraw."""
        key = (int(f), id(tokenizer))
        if key not in self._labels:
            self._labels[key] = feature_label(self.feature(f), tokenizer)
        return self._labels[key]

    @property
    def d_sae(self) -> int:
        """Number of features."""
        return int(self.arrays["max_activation"].shape[0])

    def feature(self, f: int) -> FeatureDashboard:
        """Feature ``f``'s dashboard (IndexError when out of range)."""
        if not 0 <= f < self.d_sae:
            raise IndexError(f"feature {f} is out of range 0..{self.d_sae - 1}")
        a = self.arrays
        contexts = []
        for tok, act, center, band in zip(a["ctx_tokens"][f], a["ctx_acts"][f], a["ctx_center"][f], a["ctx_band"][f]):
            if band < 0:
                continue
            keep = tok != PAD
            first = int(np.argmax(keep))
            contexts.append(Context(tuple(int(t) for t in tok[keep]), tuple(float(v) for v in act[keep]),
                                    int(center) - first, int(band)))
        return FeatureDashboard(
            f, float(a["max_activation"][f]), float(a["density"][f]), tuple(int(c) for c in a["histogram"][f]),
            tuple(contexts),
            tuple((int(t), float(v)) for t, v in zip(a["promote_ids"][f], a["promote_values"][f])),
            tuple((int(t), float(v)) for t, v in zip(a["suppress_ids"][f], a["suppress_values"][f])),
            tuple((int(n), float(c)) for n, c in zip(a["neighbour_ids"][f], a["neighbour_cos"][f])))

    def save(self, folder: str | Path) -> Path:
        """Write ``dashboard.npz`` into ``folder`` (compressed) and return its path."""
        path = Path(folder) / DASHBOARD_FILE
        tmp = path.with_suffix(".tmp.npz")
        np.savez_compressed(tmp, meta=np.array(json.dumps(self.meta)), **self.arrays)
        tmp.replace(path)
        return path


def dashboard_path(sae) -> Path:
    """Where an SAE's (or a transcoder's) dashboards are stored (``sae`` one read from a folder, or the folder)."""
    folder = sae.folder if hasattr(sae, "cfg") else Path(sae)
    if folder is None:
        raise SAEError("an SAE made in memory has no folder to keep its dashboards in")
    return Path(folder) / DASHBOARD_FILE


def load_dashboards(sae) -> Dashboards | None:
    """The stored dashboards of an SAE or a transcoder (or of the folder given), or None when none were built
    (SAEError when the file is unreadable or was built for one of another size)."""
    path = dashboard_path(sae)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files if k != "meta"}
            meta = json.loads(str(z["meta"]))
    except (OSError, ValueError, KeyError) as e:
        raise SAEError(f"cannot read the dashboards {path}: {e}") from None
    if meta.get("format") != FORMAT:
        raise SAEError(f"{path} is dashboard format {meta.get('format')}, this gpt2viz reads {FORMAT}: rebuild it "
                       "with `gpt2viz sae-dashboards`")
    dash = Dashboards(arrays, meta)
    if hasattr(sae, "cfg") and dash.d_sae != sae.cfg.d_sae:
        raise SAEError(f"{path} describes {dash.d_sae} features, the SAE has {sae.cfg.d_sae}: rebuild it")
    return dash


def logit_effects(sae, weights, n: int = N_LOGITS, rows: int = 512) -> tuple[np.ndarray, ...]:
    """Top and bottom ``n`` logit effects of every feature: ``(W_dec * ln_f.weight) @ W_U.T``.

    Returns (promote_ids, promote_values, suppress_ids, suppress_values), each [d_sae, n]; computed ``rows``
    features at a time so the [rows, vocab] block is the largest array made.
    """
    g = np.asarray(weights.get("transformer.ln_f.weight"), np.float32)
    W_U = np.asarray(weights.W_U, np.float32)
    d = sae.cfg.d_sae
    out = [np.empty((d, n), np.int32), np.empty((d, n), np.float32), np.empty((d, n), np.int32),
           np.empty((d, n), np.float32)]
    for s in range(0, d, rows):
        eff = (sae.W_dec[s:s + rows] * g) @ W_U.T  # [rows, vocab]
        top = np.argpartition(-eff, n - 1, axis=1)[:, :n]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(eff, top, 1), axis=1, kind="stable"), 1)
        bot = np.argpartition(eff, n - 1, axis=1)[:, :n]
        bot = np.take_along_axis(bot, np.argsort(np.take_along_axis(eff, bot, 1), axis=1, kind="stable"), 1)
        out[0][s:s + rows], out[1][s:s + rows] = top, np.take_along_axis(eff, top, 1)
        out[2][s:s + rows], out[3][s:s + rows] = bot, np.take_along_axis(eff, bot, 1)
    return tuple(out)


def neighbours(sae, n: int = N_NEIGHBOURS, rows: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's ``n`` nearest other features by decoder cosine: (ids, cosines), each [d_sae, n]."""
    W = sae.W_dec / np.maximum(np.linalg.norm(sae.W_dec, axis=1, keepdims=True), 1e-12)
    d = sae.cfg.d_sae
    n = min(n, d - 1)
    ids, cos = np.empty((d, n), np.int32), np.empty((d, n), np.float32)
    for s in range(0, d, rows):
        c = W[s:s + rows] @ W.T
        c[np.arange(len(c)), np.arange(s, s + len(c))] = -np.inf  # not itself
        top = np.argpartition(-c, n - 1, axis=1)[:, :n]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(c, top, 1), axis=1, kind="stable"), 1)
        ids[s:s + rows], cos[s:s + rows] = top, np.take_along_axis(c, top, 1)
    return ids, cos


def _firings(sae, x: np.ndarray, cancel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every non-zero (position, feature, activation) of the SAE over inputs ``x`` [N, d_in], sorted by feature and
    then by activation, largest first."""
    pos, feat, act = [], [], []
    for s in range(0, len(x), ENCODE_ROWS):
        if cancel is not None and cancel():
            raise Cancelled("cancelled")
        f = sae.encode(x[s:s + ENCODE_ROWS])
        p, j = np.nonzero(f)
        pos.append(p + s), feat.append(j.astype(np.int32)), act.append(f[p, j])
    pos, feat, act = np.concatenate(pos), np.concatenate(feat), np.concatenate(act)
    order = np.lexsort((-act, feat))
    return pos[order], feat[order], act[order]


def build_dashboards(model, sae, texts: Sequence[str] | None = None, *, context: int | None = None,
                     seed: int = 0, corpus: str = "", progress: Callable[[int, int], None] | None = None,
                     cancel: Callable[[], bool] | None = None) -> Dashboards:
    """Every feature's dashboard, from ``texts`` (default: the text the project ships) run through ``model``.

    Parameters
    ----------
    model : Model
    sae : SAE or Transcoder
        Checked against the model (SAEError, one line, when it does not fit). A transcoder's features are read
        from its input hook; its decoder writes the MLP's output, so its logit effects are read the same way.
    texts : sequence of str, optional
        One text per item, each cut into windows of ``context`` tokens run from position 0.
    context : int, optional
        Window length (default: the SAE's training context, else 64).
    seed : int
        Draws the quantile-band contexts.
    corpus : str
        Said in the dashboard's meta (which text it was built from).
    progress : callable, optional
        ``progress(done, total)``: windows run, then one more step for the weights' effects.
    cancel : callable, optional
        Polled between windows; True raises :class:`Cancelled`.
    """
    from gpt2viz.core.engine.weights import Weights

    head = getattr(sae.cfg, "hook_head_index", None)
    if isinstance(sae, SAE):
        check_fits(sae, model.config)
    elif hook_width(sae.cfg.hook_name, None, model.config) != sae.cfg.d_in or sae.cfg.d_out != model.config.n_embd:
        raise SAEError(f"the transcoder's widths ({sae.cfg.d_in} in, {sae.cfg.d_out} out) do not fit this model")
    if texts is None:
        texts, corpus = shipped_texts(), corpus or "resources/corpus/atlas.txt"
    context = int(context or sae.cfg.metadata.get("context_size") or 64)
    runs = windows(model, texts, context)
    if not runs:
        raise SAEError("the text has no window of at least 2 tokens")
    total = len(runs) + 1
    step = (lambda i, _n: progress(i, total)) if progress is not None else None
    x = gather(model, sae.cfg.hook_name, head, runs, progress=step, cancel=cancel)
    tokens = np.concatenate([np.asarray(r, np.int64) for r in runs])
    starts = np.concatenate([[0], np.cumsum([len(r) for r in runs])])
    window_of = np.repeat(np.arange(len(runs)), [len(r) for r in runs])
    pos, feat, act = _firings(sae, x, cancel)
    del x
    d = sae.cfg.d_sae
    n_ctx = N_TOP + PER_BAND * len(BANDS)
    ctx_pos = np.full((d, n_ctx), -1, np.int64)
    ctx_band = np.full((d, n_ctx), -1, np.int8)
    max_act = np.zeros(d, np.float32)
    hist = np.zeros((d, BINS), np.int32)
    bounds = np.searchsorted(feat, np.arange(d + 1))
    rng = np.random.default_rng(seed)
    for f in range(d):
        a, p = act[bounds[f]:bounds[f + 1]], pos[bounds[f]:bounds[f + 1]]
        if not len(a):
            continue
        max_act[f] = a[0]
        hist[f] = np.histogram(a, bins=BINS, range=(0.0, float(a[0])))[0]
        k = min(N_TOP, len(a))
        ctx_pos[f, :k], ctx_band[f, :k] = p[:k], 0
        slot = N_TOP
        for b, (lo, hi) in enumerate(BANDS, start=1):
            inside = np.nonzero((a[k:] > lo * a[0]) & (a[k:] <= hi * a[0]))[0] + k
            pick = rng.choice(inside, size=min(PER_BAND, len(inside)), replace=False) if len(inside) else []
            for i in sorted(pick, key=lambda i: -a[i]):
                ctx_pos[f, slot], ctx_band[f, slot] = p[i], b
                slot += 1
    # Token windows around each chosen position, cut at the window's own edges (a text's runs start at 0).
    offsets = np.arange(-BEFORE, AFTER + 1)
    chosen = np.clip(ctx_pos, 0, None)
    grid = chosen[..., None] + offsets  # [d, n_ctx, WIDTH]
    w = window_of[chosen][..., None]
    inside = (grid >= starts[w]) & (grid < starts[w + 1]) & (ctx_pos[..., None] >= 0)
    grid = np.where(inside, grid, 0)
    ctx_tokens = np.where(inside, tokens[grid], PAD).astype(np.int32)
    # The feature's activation on every token of its windows: look (position, feature) up in the firings.
    key = pos * d + feat
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    want = grid * d + np.arange(d)[:, None, None]
    at = np.clip(np.searchsorted(sorted_key, want), 0, len(sorted_key) - 1)
    found = inside & (sorted_key[at] == want)
    ctx_acts = np.where(found, act[order][at], 0.0).astype(np.float16)
    density = (np.diff(bounds) / len(tokens)).astype(np.float32)
    weights = Weights.of(model)
    pi, pv, si, sv = logit_effects(sae, weights)
    ni, nc = neighbours(sae)
    if progress is not None:
        progress(total, total)
    meta = {"format": FORMAT, "hook_name": sae.cfg.hook_name, "d_sae": d, "model": getattr(model, "name", ""),
            "corpus": corpus, "tokens": int(len(tokens)), "windows": len(runs), "context": context, "seed": seed,
            "bands": [list(b) for b in BANDS], "before": BEFORE, "after": AFTER}
    arrays = {"ctx_tokens": ctx_tokens, "ctx_acts": ctx_acts, "ctx_center": np.full((d, n_ctx), BEFORE, np.int8),
              "ctx_band": ctx_band, "max_activation": max_act, "density": density, "histogram": hist,
              "promote_ids": pi, "promote_values": pv, "suppress_ids": si, "suppress_values": sv,
              "neighbour_ids": ni, "neighbour_cos": nc}
    return Dashboards(arrays, meta)


def feature_label(dash: FeatureDashboard | None, tokenizer, n: int = 3) -> str:
    """A short label with no network and no language model: the tokens the feature fires on most (a character
    split over several tokens shown whole), then the token it promotes most (``"␣France / ␣Italy → ␣Paris"``);
    empty for a dead feature or no dashboard."""
    if dash is None or dash.dead:
        return ""
    score: dict[str, float] = {}
    for c in dash.contexts:
        if c.band == 0:
            text = tokenizer.describe(list(c.tokens))[c.center].display
            text = _PARTIAL.sub("", text)
            score[text] = score.get(text, 0.0) + c.acts[c.center]
    fires = " / ".join(t for t, _ in sorted(score.items(), key=lambda kv: -kv[1])[:n])
    writes = tokenizer.token_display(dash.promotes[0][0]) if dash.promotes else ""
    return f"{fires} → {writes}" if writes else fires


def coder_labels(coders, keys, tokenizer) -> dict[tuple[int, int], str]:
    """``(layer, feature) -> label`` for the ``keys`` asked, from each SAE's or transcoder's stored dashboards
    (``coders`` one per layer; a layer without dashboards gives no labels)."""
    by_layer = {c.cfg.layer: c for c in coders}
    out: dict[tuple[int, int], str] = {}
    cache: dict[int, Dashboards | None] = {}
    for L, f in keys:
        if L not in cache:
            c = by_layer.get(L)
            cache[L] = load_dashboards(c) if c is not None and c.folder is not None else None
        d = cache[L]
        if d is not None and 0 <= f < d.d_sae:
            out[(L, f)] = d.label(f, tokenizer)
    return out
