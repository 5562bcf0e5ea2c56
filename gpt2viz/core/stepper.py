"""Step-through generation: prefill, one cached token at a time, back to any earlier point, reset."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.runtime import ContextLimitError, KVCache, Model
from gpt2viz.core.sampling import Distribution, SamplingSettings, choose, transform
from gpt2viz.core.trace import Trace


@dataclass(frozen=True)
class Frame:
    """The state after one forward call: the context so far and what the model made of it.

    Attributes
    ----------
    tokens : tuple[int, ...]
        Every token of the context (prompt, then generated).
    trace : Trace
        The call that computed the newest position(s): the whole prompt for the first frame, one
        token for each later frame.
    elapsed_ms : float
        Wall time of that call.
    forced : bool
        True when the newest token was picked by the user instead of sampled.
    """

    tokens: tuple[int, ...]
    trace: Trace = field(repr=False)
    elapsed_ms: float
    forced: bool = False

    @property
    def logits(self) -> np.ndarray:
        """[V] logits for the token after ``tokens``."""
        return self.trace.last_logits


class Generator:
    """Generation history over one model, stepping with the KV cache.

    Parameters
    ----------
    model : Model
        The opened model.
    hooks : sequence of str, optional
        Hooks to keep in each frame's trace; default all (what the app shows).
    """

    def __init__(self, model: Model, hooks=None):
        self.model = model
        self.hooks = hooks
        self.frames: list[Frame] = []
        self.prompt_len = 0
        self._cache: KVCache | None = None  # the longest cache computed; shorter states slice it

    def start(self, prompt_ids: list[int]) -> Frame:
        """Run the prompt (prefill). An empty prompt starts from ``<|endoftext|>``, as GPT-2 was trained."""
        ids = list(prompt_ids)
        if not ids:
            eot = self.model.tokenizer.eot_id
            if eot is None:
                raise ValueError("the prompt is empty; type some text")
            ids = [eot]
        limit = self.model.config.n_positions
        if len(ids) > limit:
            raise ContextLimitError(f"the prompt is {len(ids)} tokens; {self.model.name} reads at most {limit}. "
                                    "Shorten it.")
        t0 = time.perf_counter()
        trace, cache = self.model.run(ids, None, hooks=self.hooks)
        frame = Frame(tuple(ids), trace, (time.perf_counter() - t0) * 1000)
        self.frames, self.prompt_len, self._cache = [frame], len(ids), cache
        return frame

    @property
    def current(self) -> Frame:
        if not self.frames:
            raise RuntimeError("no prompt has been run yet")
        return self.frames[-1]

    @property
    def tokens(self) -> tuple[int, ...]:
        return self.current.tokens

    @property
    def generated(self) -> tuple[int, ...]:
        """Tokens added after the prompt."""
        return self.current.tokens[self.prompt_len:]

    def can_step(self) -> bool:
        """False when the context is full (n_positions tokens)."""
        return bool(self.frames) and len(self.tokens) < self.model.config.n_positions

    def preview(self, settings: SamplingSettings) -> tuple[Distribution, int]:
        """The next-token distribution under ``settings`` and the token a step would choose. No model run."""
        dist = transform(self.current.logits, settings)
        return dist, choose(dist, settings.seed, len(self.tokens))

    def step(self, settings: SamplingSettings, token: int | None = None) -> Frame:
        """Append one token (sampled, or ``token`` when forced) and run it through the model with the cache."""
        if not self.can_step():
            raise ContextLimitError(f"the context is full: {self.model.name} reads at most "
                                    f"{self.model.config.n_positions} tokens. Go back or reset.")
        forced = token is not None
        if token is None:
            _, token = self.preview(settings)
        elif not 0 <= int(token) < self.model.config.vocab_size:
            raise ValueError(f"token id {token} is outside the vocabulary")
        n = len(self.tokens)
        past = self._cache if self._cache.length == n else self._cache.truncated(n)
        t0 = time.perf_counter()
        trace, cache = self.model.run([int(token)], past, hooks=self.hooks)
        frame = Frame(self.tokens + (int(token),), trace, (time.perf_counter() - t0) * 1000, forced)
        self.frames.append(frame)
        self._cache = cache
        return frame

    def back(self) -> Frame:
        """Return to the state before the last step (stored, not recomputed)."""
        if len(self.frames) > 1:
            self.frames.pop()
        return self.current

    def reset(self) -> Frame:
        """Return to the state right after the prompt."""
        del self.frames[1:]
        return self.current

    def kv_cache_bytes(self) -> int:
        """Memory the KV cache of the current context takes."""
        return len(self.tokens) * self.model.config.kv_bytes_per_token()
