"""Step-through generation: prefill, one cached token at a time, back to any earlier point, reset."""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.engine.errors import ContextLimitError
from gpt2viz.core.engine.kv_cache import KVCache
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.trace import Trace
from gpt2viz.core.generation.sampling import Distribution, SamplingSettings, pick
from gpt2viz.core.hooks import hook_shapes, resolve
from gpt2viz.core.interventions import mean_activations, needs_means, needs_sublayer_means, validate


def context_full(n_tokens: int, n_positions: int) -> bool:
    """True when a context of ``n_tokens`` leaves no room for another token (no sliding window)."""
    return n_tokens >= n_positions


PREVIEWS_KEPT = 8  # states whose previews a Generator keeps (Back and Step again find theirs)


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
    interventions: tuple = ()

    @property
    def logits(self) -> np.ndarray:
        """[V] logits for the token after ``tokens``."""
        return self.trace.last_logits


@dataclass(frozen=True)
class History:
    """An immutable snapshot of a generation: every frame so far and where the prompt ends."""

    frames: tuple[Frame, ...]
    prompt_len: int

    @property
    def current(self) -> Frame:
        return self.frames[-1]

    @property
    def tokens(self) -> tuple[int, ...]:
        return self.current.tokens

    @property
    def generated(self) -> tuple[int, ...]:
        return self.current.tokens[self.prompt_len:]

    def hook_at(self, name, position: int) -> np.ndarray:
        """One position's slice of a hook (see :func:`hook_at`)."""
        return hook_at(self.frames, name, position)

    def hook_rows(self, name, first: int, stop: int) -> list[np.ndarray]:
        """``[hook_at(name, p) for p in range(first, stop)]``, an on-demand hook's rows computed at once."""
        return hook_rows(self.frames, name, first, stop)

    def prefetch_rows(self, name, first: int, stop: int, background=None) -> bool:
        """Compute ahead the rows :meth:`hook_rows` would compute on demand, if they fit in the run's store
        (:meth:`~gpt2viz.core.engine.ondemand.OnDemand.prefetch`, stopped by ``background``); False when they do
        not. Attention hooks only."""
        full, t = resolve(name), self.frames[0].trace
        if _on_demand(t, full, first):
            return t.ondemand.prefetch(full, t, first, min(stop, t.positions), background)
        return True


class Generator:
    """Generation history over one model, stepping with the KV cache.

    Parameters
    ----------
    model : Model
        The opened model.
    hooks : sequence of str, optional
        Hooks to keep in each frame's trace; default all (what the app shows).
    interventions : tuple of Intervention, optional
        Changes made inside the graph for every call (see :meth:`set_interventions`).
    """

    def __init__(self, model: Model, hooks=None, interventions=()):
        self.model = model
        self.hooks = hooks
        self.interventions: tuple = tuple(interventions)
        self._means: dict = {}
        if self.interventions:
            _check(model, self.interventions)
        self.frames: list[Frame] = []
        self.prompt_len = 0
        self._cache: KVCache | None = None  # the longest cache computed; shorter states slice it
        # The run under the interventions in force before the last change (its frames, cache and means), so
        # that taking an ablation back, or putting it back, costs no model call: its numbers were computed.
        self._before: _Run | None = None
        self.steps_rerun = 0  # frames the last set_interventions ran again (0: every frame came from _before)
        self.frames_kept = 0  # frames the last set_interventions took from _before (0: all were run again)
        # (tokens, interventions, settings) -> preview's (distribution, token), the newest PREVIEWS_KEPT
        self._previews: OrderedDict = OrderedDict()

    def start(self, prompt_ids: list[int], progress=None, cancel=None) -> Frame:
        """Run the prompt (prefill). An empty prompt starts from ``<|endoftext|>``, as GPT-2 was trained.

        ``progress(done, total)`` and ``cancel()`` are passed to :meth:`Model.run` (a long prompt then
        runs in chunks; a cancel raises ``runtime.Cancelled`` and leaves the generator as it was).
        """
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

        # Mean ablation uses the head's mean over the prompt's positions in a run without
        # interventions; it stays fixed while generating, so cached steps stay consistent.
        self._means = mean_activations(self.model, ids, self.interventions)
        t0 = time.perf_counter()
        trace, cache = self.model.run(ids, None, hooks=self.hooks, interventions=self.interventions, means=self._means,
                                      progress=progress, cancel=cancel)
        frame = Frame(tuple(ids), trace, (time.perf_counter() - t0) * 1000, interventions=self.interventions)
        self.frames, self.prompt_len, self._cache, self._before = [frame], len(ids), cache, None
        self._previews.clear()  # a new prompt: mean ablations average over it, so the same tokens may differ
        return frame

    def set_interventions(self, interventions) -> Frame | None:
        """Put ``interventions`` in force. The cache depends on them, so when a prompt has run, the
        prompt is run again and every generated token is stepped again (the same tokens, forced or
        not as before) under the new interventions: the text stays, its numbers change. Back and
        Reset then walk the new frames. Returns the new current frame (None before any prompt).

        The run under the interventions before this change is kept (until the next change or prompt): changing
        back to them takes its frames as they were, and runs only the steps taken since, if any.
        :attr:`steps_rerun` counts the frames a change ran again (the prompt, then each step), :attr:`frames_kept`
        the frames it took back."""
        interventions = tuple(interventions)
        self.steps_rerun = self.frames_kept = 0
        validate(interventions, self.model.config)
        if interventions == self.interventions:
            return self.frames[-1] if self.frames else None
        if interventions:
            _check(self.model, interventions)
        before, self._before = self._before, None
        # Kept at the text's own length: a cache longer than the text (a step taken back) would make the first
        # step after it come back copy the cache (onnxruntime copies a strided input), ~25 ms at 200 tokens of
        # GPT-2 small on a machine whose fresh pages are slow; here the copy is made inside the change's run.
        here = _Run(self.interventions, list(self.frames), self.prompt_len,
                    self._cache.compacted(len(self.tokens)) if self.frames else self._cache, self._means)
        od = self.frames[0].trace.ondemand if self.frames else None
        if od is not None:  # the prompt's on-demand hooks read the same keys from the cut cache: the longer one goes
            od.follow(here.cache)
        self.interventions = interventions
        if not self.frames:
            return None
        # Frames computed under these interventions before the last change, as far as they hold this text's
        # steps: taken as they are (deterministic: the same graph, feeds and cache give the same numbers).
        same = shared_frames(before.frames, self.frames) if before is not None and \
            before.interventions == interventions and before.prompt_len == self.prompt_len else 0
        rest = self.frames[max(same, 1):]
        if same:
            self.frames, self._cache, self._means = before.frames[:same], before.cache, before.means
        before = None  # not held while the rest runs: at most the kept run and the new one live
        if not same:
            self.start(list(self.frames[0].tokens))
        for f in rest:
            self._run_step(f.tokens[-1], f.forced)
        self.steps_rerun, self.frames_kept = (0 if same else 1) + len(rest), same
        self._before = here
        return self.current

    def kept(self, interventions=()) -> tuple[tuple[Frame, ...], KVCache] | None:
        """The frames and KV cache of the run kept from before the last change of interventions (see
        :meth:`set_interventions`) when it ran under ``interventions``; None otherwise."""
        b = self._before
        if b is None or not b.frames or b.interventions != tuple(interventions):
            return None
        return tuple(b.frames), b.cache

    @property
    def current(self) -> Frame:
        if not self.frames:
            raise RuntimeError("no prompt has been run yet")
        return self.frames[-1]

    # The generator's view of the context is its history's: one definition of tokens/generated.
    tokens = History.tokens
    generated = History.generated

    def can_step(self) -> bool:
        """False when the context is full (n_positions tokens)."""
        return bool(self.frames) and not context_full(len(self.tokens), self.model.config.n_positions)

    def preview(self, settings: SamplingSettings) -> tuple[Distribution, int]:
        """The next-token distribution under ``settings`` and the token a step would choose. No model run.

        Made once per state and settings (the newest ``PREVIEWS_KEPT``): the app's worker makes the new state's
        right after a step, for the views, and the next step under the same settings samples from it (the same
        softmax of 50,257 logits was made twice a token, ~1 ms each at the GUI's and the worker's end)."""
        frame = self.current
        key = (frame.tokens, frame.interventions, settings)
        made = self._previews.get(key)
        if made is None:
            made = self._previews[key] = pick(frame.logits, settings, len(frame.tokens))
            while len(self._previews) > PREVIEWS_KEPT:
                self._previews.popitem(last=False)
        self._previews.move_to_end(key)
        return made

    def step(self, settings: SamplingSettings, token: int | None = None, logits_from=None) -> Frame:
        """Append one token (sampled, or ``token`` when forced) and run it through the model with the cache.

        ``logits_from``, when given, makes the new position's logits instead of the model's LM head: called with
        the new state's History (its frame without logits), it returns the [V] logits of its last position. The
        worker gives one that makes the position's logit lens, whose last row the logits are: the lens and the
        logits then read the unembedding (the LM head's weight, 154 MB for GPT-2 small) once, not twice."""
        if not self.can_step():
            raise ContextLimitError(f"the context is full: {self.model.name} reads at most "
                                    f"{self.model.config.n_positions} tokens. Go back or reset.")
        forced = token is not None
        if token is None:
            _, token = self.preview(settings)
        elif not 0 <= int(token) < self.model.config.vocab_size:
            raise ValueError(f"token id {token} is outside the vocabulary")
        return self._run_step(int(token), forced, logits_from)

    def _run_step(self, token: int, forced: bool, logits_from=None) -> Frame:
        n = len(self.tokens)
        past = self._cache if self._cache.length == n else self._cache.truncated(n)
        t0 = time.perf_counter()
        trace, cache = self.model.run([token], past, hooks=self.hooks, interventions=self.interventions,
                                      means=self._means, lm_head=logits_from is None)
        tokens = self.tokens + (token,)
        if logits_from is not None:  # nothing is kept before the logits are: a failure leaves the state as it was
            unfinished = Frame(tokens, trace, 0.0, forced, self.interventions)
            trace = trace.with_last_logits(logits_from(History((*self.frames, unfinished), self.prompt_len)))
        frame = Frame(tokens, trace, (time.perf_counter() - t0) * 1000, forced, self.interventions)
        self.frames.append(frame)
        self._cache = cache
        od = self.frames[0].trace.ondemand
        if od is not None:  # the prompt's keys are the first of the longer cache: the prefill's is freed
            od.follow(cache)
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

    def history(self) -> History:
        """An immutable snapshot of the frames so far (safe to hand to another thread)."""
        return History(tuple(self.frames), self.prompt_len)


@dataclass(frozen=True)
class _Run:
    """A generator's state under one set of interventions: what :meth:`Generator.set_interventions` keeps."""

    interventions: tuple
    frames: list[Frame]
    prompt_len: int
    cache: KVCache | None
    means: dict


def shared_frames(kept, frames, forced: bool = True) -> int:
    """How many leading frames of ``kept`` hold the same steps as ``frames``: the same context, and, when ``forced``,
    the same step (a token forced or sampled alike)."""
    n = 0
    for a, b in zip(kept, frames):
        if a.tokens != b.tokens or (forced and n and a.forced != b.forced):
            break
        n += 1
    return n


def _check(model: Model, interventions) -> None:
    """Fail early (before any run) when the model cannot take these interventions or they are out of range."""
    means = {k: np.zeros(model.config.d_head, np.float32) for k in needs_means(interventions)}
    means.update({k: np.zeros(model.config.n_embd, np.float32) for k in needs_sublayer_means(interventions)})
    model.intervention_feeds(interventions, 0, 1, means)


def hook_at(frames: list[Frame] | tuple[Frame, ...], name, position: int) -> np.ndarray:
    """One position's slice of a hook, from whichever frame computed that position.

    The prompt's positions live in the first frame's trace, each generated one in its own frame;
    this hides that split. Attention hooks ([H, K]) keep only the keys the query can see (0..position). ``name`` is a full hook name or a ``("pattern", layer)`` key.
    """
    full = resolve(name)
    # Every frame after the first computed exactly one position: index it directly, not by search.
    first = frames[0].trace
    k = 0 if position < first.start + first.positions else position - (first.start + first.positions) + 1
    candidates = (frames[k],) if k < len(frames) else ()
    for frame in (*candidates, *frames):
        t = frame.trace
        if t.start <= position < t.start + t.positions:
            if t.ondemand is not None and full not in t.hooks and full in t.ondemand.names:
                # one position of an on-demand hook: its block of positions, every layer, in one run
                return t.ondemand.row(full, t, position - t.start)
            return _row(t[full], full, position, t.start)
    raise IndexError(f"no frame holds position {position}")


def hook_rows(frames, name, first: int, stop: int) -> list[np.ndarray]:
    """Positions ``first .. stop-1`` of a hook as :func:`hook_at` gives them. Those a long prefill left to
    on-demand computation come from one run of the layer's sub-graph, not one run per position."""
    full, t = resolve(name), frames[0].trace
    rows = t.ondemand.rows(full, t, first, min(stop, t.positions)) if _on_demand(t, full, first) else []
    return rows + [hook_at(frames, full, p) for p in range(first + len(rows), stop)]


def _on_demand(t: Trace, full: str, first: int) -> bool:
    """Whether hook ``full`` from position ``first`` on starts in the on-demand part of prefill trace ``t``."""
    return t.ondemand is not None and full not in t.hooks and full in t.ondemand.names and first < t.positions


def _row(a: np.ndarray, full: str, position: int, start: int) -> np.ndarray:
    """Position ``position``'s slice of hook ``full``'s array ``a`` in a trace beginning at ``start``."""
    letters = _letters_of(full)[1:]  # the trace dropped B
    row = np.take(a, position - start, axis=letters.index("P"))
    if "K" in letters:  # a query at `position` only has keys 0..position; drop the masked future
        row = np.take(row, np.arange(position + 1), axis=letters.index("K") - 1)
    return row


@functools.lru_cache(maxsize=None)
def _letters_of(full: str) -> tuple[str, ...]:
    # Building the shape table costs more than the slice it describes: views call hook_at thousands of
    # times a second while playing, so each name's axis letters are looked up once.

    layer = int(full.split(".")[1]) if full.startswith("blocks.") else 0
    return tuple(hook_shapes(layer + 1)[full].split())

