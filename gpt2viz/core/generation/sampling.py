"""Choosing the next token: greedy, temperature, top-k, top-p, seeded.

Every transform's result is kept (`Distribution`) so a chart can show the model's own distribution
next to what is left after temperature, top-k and top-p, and which tokens were cut off.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.numeric import descending_order, entropy, softmax


def top_k_text(top_k: int, off: str = "off") -> str:
    """How every text writes a top-k setting: its number, or ``off`` when it is 0 (no cut).

    The one rule for the report, the figures, the explanations and the command line, so they cannot
    disagree ("none" in one place, "off" in another). ``off`` is the caller's word for it in the
    current language (core has no translations).
    """
    return off if int(top_k) == 0 else str(int(top_k))


@dataclass(frozen=True)
class SamplingSettings:
    """How the next token is chosen.

    Attributes
    ----------
    temperature : float
        Divides the logits; 0 means greedy (the most likely token, no randomness).
    top_k : int
        Keep only the k most likely tokens; 0 means off.
    top_p : float
        Keep the smallest set of most likely tokens whose probability reaches p; 1.0 means off.
    seed : int
        Seed of the random choice; the same seed, text and settings always give the same token.
    """

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0

    def __post_init__(self):
        t, p = self.temperature, self.top_p
        if not isinstance(t, (int, float)) or math.isnan(t) or math.isinf(t) or t < 0:
            raise ValueError(f"temperature must be a number ≥ 0, got {t!r}")
        if isinstance(self.top_k, bool) or not isinstance(self.top_k, (int, np.integer)) or self.top_k < 0:
            raise ValueError(f"top-k must be a whole number ≥ 0 (0 = off), got {self.top_k!r}")
        if not isinstance(p, (int, float)) or math.isnan(p) or not 0 < p <= 1:
            raise ValueError(f"top-p must be in (0, 1], got {p!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be a whole number ≥ 0, got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Distribution:
    """The next-token distribution at each stage of the transforms.

    Attributes
    ----------
    raw : np.ndarray
        softmax(logits): the model's own distribution.
    tempered : np.ndarray
        softmax(logits / T); equal to ``raw`` when greedy or T = 1.
    final : np.ndarray
        ``tempered`` with the tokens removed by top-k and top-p set to 0, renormalised. For greedy,
        all mass on the argmax.
    kept : np.ndarray
        Boolean mask of tokens that survive top-k and top-p.
    """

    raw: np.ndarray
    tempered: np.ndarray
    final: np.ndarray
    kept: np.ndarray
    # What the views read of it, made once (the chart, the pipeline and the CLI rank the same vocabulary, and a
    # distribution is drawn again at every redraw): "top <which>" -> the LEADERS most likely ids, "entropy <which>".
    _made: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def top(self, n: int, which: str = "final") -> np.ndarray:
        """Ids of the ``n`` most likely tokens by ``which`` (ties broken by id), most likely first."""
        p = getattr(self, which)
        n = min(n, p.size)
        if n > LEADERS:
            return _top(p, n)
        key = "top " + which
        if key not in self._made:
            self._made[key] = _top(p, min(LEADERS, p.size))
        return self._made[key][:n].copy()  # the kept ranking stays as it is

    def entropy(self, which: str = "raw") -> float:
        """Entropy in nats."""
        key = "entropy " + which
        if key not in self._made:
            self._made[key] = float(entropy(getattr(self, which)))
        return self._made[key]


# The most ids Distribution.top ranks once and keeps (the chart shows 12 bars).
LEADERS = 16


def _top(p: np.ndarray, n: int) -> np.ndarray:
    """Ids of the ``n`` largest of ``p``, largest first, ties by id."""
    # the n largest are the last n of a partition at size - n: selecting from that end of a softmax is 0.39 ms for a
    # vocabulary of 50,257, from the front of its negation 0.86 ms (its long tail of near-zeros; 2-core EPYC)
    idx = np.argpartition(p, p.size - n)[p.size - n:]
    return idx[np.lexsort((idx, -p[idx]))]


def transform(logits: np.ndarray, settings: SamplingSettings) -> Distribution:
    """Apply temperature, then top-k, then top-p to ``logits`` [V]."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.ndim != 1 or logits.size == 0:
        raise ValueError(f"logits must be a non-empty vector, got shape {logits.shape}")
    if not np.all(np.isfinite(logits)):
        raise ValueError("logits contain NaN or infinity")
    raw = softmax(logits)
    if settings.greedy:
        final = np.zeros_like(raw)
        best = int(np.argmax(logits))
        final[best] = 1.0
        kept = final > 0
        return Distribution(raw, raw, final, kept)
    tempered = raw if settings.temperature == 1 else softmax(logits / settings.temperature)
    kept = np.ones(raw.shape, dtype=bool)
    if not (0 < settings.top_k < raw.size or settings.top_p < 1.0):
        return Distribution(raw, tempered, tempered, kept)  # nothing to cut: skip the 50k-entry sort
    order = descending_order(tempered)
    if 0 < settings.top_k < raw.size:
        kept[order[settings.top_k:]] = False
    if settings.top_p < 1.0:
        sorted_p = np.where(kept[order], tempered[order], 0.0)
        csum = np.cumsum(sorted_p)
        # Keep tokens until the running sum reaches p; the token that crosses p stays in.
        cut = int(np.searchsorted(csum, settings.top_p * csum[-1], side="left")) + 1
        kept[order[cut:]] = False
    final = np.where(kept, tempered, 0.0)
    final /= final.sum()
    return Distribution(raw, tempered, final, kept)


def choose(dist: Distribution, seed: int, position: int) -> int:
    """Draw a token from ``dist.final``; deterministic in (seed, position).

    Seeding by position means stepping back and forward again, or re-running the same text in the
    CLI, draws the same random number at the same place.
    """
    if np.count_nonzero(dist.final) == 1:
        return int(np.argmax(dist.final))
    u = np.random.default_rng([seed, position]).random()
    csum = np.cumsum(dist.final)
    idx = int(np.searchsorted(csum, u * csum[-1], side="right"))
    # u < 1, so csum[idx] > u·total ≥ csum[idx-1]: the chosen token always has final[idx] > 0.
    return min(idx, dist.final.size - 1)


def pick(logits: np.ndarray, settings: SamplingSettings, n_tokens: int) -> tuple[Distribution, int]:
    """The distribution under ``settings`` and the token a step appends after ``n_tokens`` tokens.

    The seed rule lives here only: the draw is seeded by (seed, length of the context), so the CLI,
    the app and a step taken again after Back all choose the same token.
    """
    dist = transform(logits, settings)
    return dist, choose(dist, settings.seed, n_tokens)
