"""One run of the model as a plain object: what compare (A and B) and interventions build on. No Qt.

A Session holds the model, the prompt, the sampling settings, the interventions in force, the
generation history and the selection. Everything here is synchronous; the app's worker thread
produces histories and hands them to :meth:`Session.accept`.

Like napari's EventedModel, a session changes only through its methods, and each method tells the
listeners (:meth:`Session.subscribe`) which parts changed, so a view bound to it cannot miss a change.
"""

from __future__ import annotations

import enum
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from gpt2viz.core.analysis.lens import residual_stack_at, token_rank_and_prob
from gpt2viz.core.generation.sampling import Distribution, SamplingSettings, pick
from gpt2viz.core.generation.stepper import History, context_full
from gpt2viz.core.numeric import softmax

# What a change notification names (Session.subscribe): the parts of a session its methods change.
PARTS = ("model", "history", "selection", "sampling", "prompt", "interventions", "subject", "analyses")

# The newest positions the lens grid shows; their lens columns are computed together (Session._fill_lens).
LENS_WINDOW = 16
FINAL_KEPT = 32  # output logits [V] of prompt positions kept (200 KB each for GPT-2)

# Next-token distributions kept per session (Session.distribution): the states Back and Reset come back to, as
# many as the worker keeps lenses for (app.worker.LENS_MEMO). ~1.3 MB each on GPT-2's vocabulary.
DISTRIBUTIONS_KEPT = 8


class StageKind(enum.Enum):
    """The kinds of stage a token passes, in order."""

    TOKENS = "tokens"
    EMBED = "embed"
    BLOCK = "block"
    LN_FINAL = "ln_final"
    LM_HEAD = "lm_head"
    SOFTMAX = "softmax"
    CHOOSE = "choose"


@dataclass(frozen=True)
class Stage:
    """One stage of the journey; ``layer`` is the block index for ``BLOCK`` and None otherwise."""

    kind: StageKind
    layer: int | None = None

    def __post_init__(self):
        if (self.kind is StageKind.BLOCK) != (self.layer is not None):
            raise ValueError("a block stage needs a layer, and only a block stage has one")

    @classmethod
    def block(cls, layer: int) -> "Stage":
        """The stage of block ``layer``."""
        return cls(StageKind.BLOCK, int(layer))

    @property
    def is_block(self) -> bool:
        return self.kind is StageKind.BLOCK


TOKENS, EMBED, LN_FINAL, LM_HEAD, SOFTMAX, CHOOSE = (Stage(k) for k in (
    StageKind.TOKENS, StageKind.EMBED, StageKind.LN_FINAL, StageKind.LM_HEAD, StageKind.SOFTMAX, StageKind.CHOOSE))


def stages(n_layer: int) -> tuple[Stage, ...]:
    """Every stage in the order a token travels."""
    return (TOKENS, EMBED, *(Stage.block(L) for L in range(n_layer)), LN_FINAL, LM_HEAD, SOFTMAX, CHOOSE)


@dataclass(frozen=True)
class Selection:
    """What every view of a session looks at.

    Attributes
    ----------
    position : int or None
        The selected token; None follows the newest one as generation goes on.
    stage : Stage
        The pipeline stage in focus.
    layer : int
        The block the per-layer views (attention, MLP) show.
    head : int
        The head the attention view enlarges.
    """

    position: int | None = None
    stage: Stage = CHOOSE
    layer: int = 0
    head: int = 0

    def position_in(self, n_tokens: int) -> int:
        """The position shown in a text of ``n_tokens`` tokens: the selected one, or the newest when none
        is selected or the selected one is past the end (the one rule every view follows)."""
        last = max(n_tokens - 1, 0)
        return last if self.position is None else min(self.position, last)


def _dist_key(history: History, settings: SamplingSettings) -> tuple:
    """The key of a state's next-token distribution under ``settings``: its logits depend only on its tokens, the
    interventions it ran under and (mean ablations average over it) the prompt (one model: set_model clears)."""
    frame = history.current
    return frame.tokens, frame.interventions, history.prompt_len, settings


@dataclass
class Session:
    """A model run and where the user is looking at it.

    Parameters
    ----------
    name : str
        "A", "B", ...: the name worker requests and signals carry.
    sampling : SamplingSettings
        Initial sampling settings.

    Notes
    -----
    ``interventions`` is a tuple of intervention objects (issue 10) forwarded with every run request;
    it is empty until interventions exist. Read the fields freely; change them only through the
    methods, which notify (see :data:`PARTS`).
    """

    name: str
    sampling: SamplingSettings = field(default_factory=SamplingSettings)
    model: object = None  # gpt2viz.core.engine.model.Model
    weights: object = None  # gpt2viz.core.engine.weights.Weights
    prompt: str = ""
    interventions: tuple = ()
    subject: tuple = ()  # positions the causal trace corrupts (chosen in the token strip)
    history: History | None = None
    selection: Selection = field(default_factory=Selection)
    last_ms: float = 0.0
    model_runs: int = 0  # model calls whose results arrived (tests assert sliders add none)

    def __post_init__(self):
        # (logits, lens, History, lens tops) of the newest position / the text, without interventions
        self.baseline = None
        self.analyses: dict = {}  # "patching" / "causal" -> the newest summary (core.viewmodels.compare)
        # (tokens, interventions, sampling) -> (distribution, chosen) of the newest states shown: Back comes back to
        # one (its softmax, ranking and entropy over the vocabulary: ~1.5 ms of the GUI thread on a 2-core EPYC)
        self._dist_cache: OrderedDict[tuple, tuple[Distribution, int]] = OrderedDict()
        self._base_dist = None  # (the baseline's logits, their softmax): see baseline_distribution
        # The lens at a position depends only on the tokens up to it (causal), so results are keyed by
        # that prefix and survive steps and Back. Full [layers + 1, V] arrays are few; top tokens are many.
        self._lens_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._tops_cache: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._path_cache: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()  # (key, target)
        self._final_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()  # output_logits of prompt positions
        self._derived: OrderedDict[tuple, object] = OrderedDict()  # see remembered
        self._listeners: list[Callable[[frozenset[str]], None]] = []

    # ---- change notification --------------------------------------------------------------------
    def subscribe(self, listener: Callable[[frozenset[str]], None]) -> None:
        """Call ``listener(parts)`` after every change made through this session's methods.

        ``parts`` is a set of names from :data:`PARTS`: what changed in that one call.
        """
        self._listeners.append(listener)

    def _notify(self, *parts: str) -> None:
        changed = frozenset(p for p in parts if p)
        if changed:
            for listener in list(self._listeners):
                listener(changed)

    # ---- model and results ----------------------------------------------------------------------
    @property
    def n_layer(self) -> int:
        return self.model.config.n_layer if self.model is not None else 0

    def set_model(self, model, weights) -> None:
        """Use a newly loaded model: the history and selection start over; the interventions, the subject
        and the analyses go (they name layers, heads and positions of the old model and text)."""
        self.model, self.weights, self.history, self.baseline = model, weights, None, None
        old = self.selection
        self.selection = replace(Selection(), stage=old.stage if not old.stage.is_block else CHOOSE)
        self._lens_cache.clear()
        self._tops_cache.clear()
        self._path_cache.clear()
        self._final_cache.clear()
        self._dist_cache.clear()
        self._derived.clear()
        had = {"interventions": self.interventions, "subject": self.subject, "analyses": self.analyses}
        self.interventions, self.subject, self.analyses = (), (), {}
        self._notify("model", "history", "selection" if self.selection != old else "",
                     *(part for part, value in had.items() if value))

    def set_prompt(self, text: str) -> bool:
        """The text the next run reads; another text forgets the subject (positions of the old one)."""
        if text == self.prompt:
            return False
        had_subject = bool(self.subject)
        self.prompt, self.subject = text, ()
        self._notify("prompt", "subject" if had_subject else "")
        return True

    def set_interventions(self, interventions) -> bool:
        """Put ``interventions`` (a tuple) in force for the next runs. Returns True if they changed."""
        interventions = tuple(interventions)
        if interventions == self.interventions:
            return False
        self.interventions = interventions
        self._notify("interventions")
        return True

    def set_subject(self, positions) -> bool:
        """The prompt positions the causal trace corrupts. Returns True if they changed."""
        subject = tuple(sorted({int(p) for p in positions}))
        if subject == self.subject:
            return False
        self.subject = subject
        self._notify("subject")
        return True

    def store_analysis(self, kind: str, summary) -> None:
        """Keep the newest summary of a long analysis ("patching", "causal") for the views and exports."""
        self.analyses[str(kind)] = summary
        self._notify("analyses")

    def accept(self, history: History, elapsed_ms: float, lens: np.ndarray | None, ran_model: bool,
               lens_tops: tuple[np.ndarray, np.ndarray] | None = None, baseline=None, selected=None,
               distribution=None) -> None:
        """Take a history from the worker; ``ran_model`` is False for Back and Reset (stored frames).

        ``lens`` / ``lens_tops`` are the newest position's logit lens and its top tokens, when known;
        ``baseline`` is (logits [V], lens [n_layer + 1, V], History, (top ids, top probabilities)) without
        the interventions the history ran under: the newest position's logits and logit lens, that run as a
        History with the hooks an attribution reads, and the lens's top token and its probability at every
        depth (None when no intervention is in force). ``selected`` is (position, lens, tops) of an earlier
        position the views show, made with the run. ``distribution`` is (settings, Distribution, token) of the
        newest state, made with a step or an intervention's run (:meth:`distribution` then makes none under those
        settings).
        """
        self.history = history
        self.baseline = baseline if history.current.interventions else None
        key = (history.tokens, history.current.interventions)
        self._keep_lens(key, lens, lens_tops)
        if selected is not None:
            position, at_lens, at_tops = selected
            self._keep_lens(self._lens_key(position), at_lens, at_tops)
        if distribution is not None:
            settings, dist, chosen = distribution
            self._remember(self._dist_cache, _dist_key(history, settings), (dist, chosen), DISTRIBUTIONS_KEPT)
        if ran_model:
            self.last_ms = elapsed_ms
            self.model_runs += 1
        p = self.selection.position
        moved = p is not None and p >= len(history.tokens)
        if moved:
            self.selection = replace(self.selection, position=None)
        self._notify("history", "selection" if moved else "")

    def accept_lens(self, model, tokens, interventions, lens: np.ndarray, tops) -> None:
        """Keep the newest position's ``lens`` and ``tops`` of the state of ``model`` with ``tokens`` under
        ``interventions``, made after that state's result (work done ahead): a click on that token then finds them.
        Ignored for another model (the text's cached lenses are that model's)."""
        if model is not self.model:
            return
        self._keep_lens((tokens, tuple(interventions)), lens, tops)

    def _keep_lens(self, key: tuple, lens: np.ndarray | None, tops) -> None:
        """Keep a position's whole lens (the newest 8) and its tops (4096: a few KB each) under ``key``, each when
        given (see :meth:`_lens_key`)."""
        if lens is not None:
            self._remember(self._lens_cache, key, lens, 8)
        if tops is not None:
            self._remember(self._tops_cache, key, tops, 4096)

    # ---- selection ------------------------------------------------------------------------------
    @property
    def selected_position(self) -> int:
        """The position every view shows: the clicked token, or the newest one."""
        if self.history is None:
            return 0
        return self.selection.position_in(len(self.history.tokens))

    def _select(self, **changes) -> bool:
        new = replace(self.selection, **changes)
        changed = new != self.selection
        self.selection = new
        self._notify("selection" if changed else "")
        return changed

    def select_position(self, position: int | None) -> bool:
        """Follow ``position`` (None or the newest: follow new tokens). Returns True if it changed."""
        if self.history is not None and position is not None and position >= len(self.history.tokens) - 1:
            position = None  # the newest token: keep following it as generation goes on
        return self._select(position=position)

    def select_stage(self, stage: Stage) -> bool:
        """Focus ``stage``; a block stage also selects its layer."""
        if not isinstance(stage, Stage):
            raise TypeError(f"expected a Stage, got {stage!r}")
        if stage.is_block:
            if self.model is not None and not 0 <= stage.layer < self.n_layer:
                return False  # a block of another model (a control not yet redrawn after a model switch)
            return self._select(stage=stage, layer=stage.layer)
        return self._select(stage=stage)

    def select_head(self, head: int) -> bool:
        n_head = self.model.config.n_head if self.model is not None else None
        if n_head is not None and not 0 <= int(head) < n_head:
            return False  # likewise: a head the current model does not have
        return self._select(head=int(head))

    def select_block(self, layer: int, head: int | None = None) -> bool:
        """Focus block ``layer`` (and ``head`` when given) in one change; False if nothing changed or the
        model has no such block or head."""
        changes = {}
        if head is not None:
            n_head = self.model.config.n_head if self.model is not None else None
            if n_head is None or 0 <= int(head) < n_head:
                changes["head"] = int(head)
        if self.model is None or 0 <= int(layer) < self.n_layer:
            changes.update(stage=Stage.block(layer), layer=int(layer))
        return self._select(**changes) if changes else False

    def move_stage(self, delta: int) -> bool:
        """The previous (-1) or next (+1) stage of the journey."""
        order = stages(self.n_layer)
        i = order.index(self.selection.stage) if self.selection.stage in order else 0
        return self.select_stage(order[max(0, min(len(order) - 1, i + delta))])

    def stages(self) -> tuple[Stage, ...]:
        return stages(self.n_layer)

    # ---- sampling -------------------------------------------------------------------------------
    def set_sampling(self, **changes) -> bool:
        """Change temperature / top_k / top_p / seed; raises ValueError on invalid values."""
        new = replace(self.sampling, **changes)
        changed = new != self.sampling
        self.sampling = new
        self._notify("sampling" if changed else "")
        return changed

    def distribution(self) -> tuple[Distribution, int] | None:
        """Next-token distribution under the current settings and the token a step would take."""
        if self.history is None:
            return None
        frame = self.history.current
        key = _dist_key(self.history, self.sampling)
        d = self._dist_cache.get(key)
        if d is None:
            d = pick(frame.logits, self.sampling, len(frame.tokens))
        return self._remember(self._dist_cache, key, d, DISTRIBUTIONS_KEPT)

    def baseline_distribution(self):
        """The model's own next-token probabilities without the interventions (None when none are in force)."""
        if self.baseline is None:
            return None
        # made once per baseline: the chart asks at every redraw (slider ticks included). Keyed by the logits
        # array itself (kept, 200 KB), not the baseline, which holds a whole run's hooks.
        logits = self.baseline[0]
        if self._base_dist is None or self._base_dist[0] is not logits:
            self._base_dist = (logits, softmax(np.asarray(logits)))
        return self._base_dist[1]

    def context_full(self, ahead: int = 0) -> bool:
        """True when no further token fits after ``ahead`` more (steps already requested) are added."""
        return self.history is not None and context_full(len(self.history.tokens) + ahead,
                                                         self.model.config.n_positions)

    def kv_cache_mb(self) -> float:
        if self.history is None or self.model is None:
            return 0.0
        return len(self.history.tokens) * self.model.config.kv_bytes_per_token() / 2**20

    # ---- derived numbers, cached -----------------------------------------------------------------
    @staticmethod
    def _remember(cache: OrderedDict, key, value, limit: int):
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > limit:
            cache.popitem(last=False)
        return value

    def remembered(self, key: tuple, make: Callable[[], object], limit: int = 16, stamp=None):
        """``make()``, kept under ``key`` for the model in use (its newest ``limit`` keys): for a view's summary of
        an earlier position, which Step and Back leave as it was. ``key`` must name everything the value depends on
        (the tokens it reads, the interventions, the prompt that mean ablations average over), but ``stamp``: a
        setting that changes often (a slider's), under which the value is made again in its key's place, so that
        a slider's ticks do not each take a key and push the other summaries out."""
        kept = self._derived.get(key)
        if kept is not None and kept[0] == stamp:
            self._derived.move_to_end(key)
            return kept[1]
        return self._remember(self._derived, key, (stamp, make()), limit)[1]

    def holds_lens(self, position: int, interventions, whole: bool = True) -> bool:
        """Whether this session holds ``position``'s lens tops and, when ``whole``, its whole lens under
        ``interventions`` (the text's tokens as they are): a run under them need not bring them."""
        if self.history is None:
            return False
        key = self._lens_key(position, tuple(interventions))
        return key in self._tops_cache and (not whole or key in self._lens_cache)

    def lens(self, position: int) -> np.ndarray:
        """Logit lens [n_layer + 1, V] at ``position`` (the newest one usually comes from the worker)."""
        key = self._lens_key(position)
        if key in self._lens_cache:
            self._lens_cache.move_to_end(key)
            return self._lens_cache[key]
        self._fill_lens(position, full=True)
        return self._lens_cache[key]

    def lens_tops(self, position: int, window: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Top token and its probability at every depth for ``position``; made with those of every newest position
        lacking them (the lens grid's window) unless ``window`` is False (a view that shows this position only)."""
        key = self._lens_key(position)
        if key not in self._tops_cache:
            self._fill_lens(position, full=False, window=window)
        return self._tops_cache[key]

    def output_logits(self, position: int) -> np.ndarray:
        """The model's [V] next-token logits at ``position``.

        The newest position's and a generated position's are the ones its forward call returned (each step's
        trace keeps its last logits); a prompt position's come from the final LayerNorm and LM head on its last
        residual, one row (the pipeline took them from the whole [layers + 1, V] lens at that position: 13
        LM-head rows, ~15 ms of a token click at 200 tokens of a GPT-2-small-sized model), unless the lens tops of
        the position came with them (:meth:`_fill_lens`)."""
        h = self.history
        stored = self._step_logits(position)
        if stored is not None:
            return stored
        key = self._lens_key(position)
        if key in self._lens_cache:
            return self._lens_cache[key][-1]
        if key not in self._final_cache:
            self._remember(self._final_cache, key, self.weights.lens(
                h.hook_at(("resid_post", self.n_layer - 1), position)[None])[0], FINAL_KEPT)
        return self._final_cache[key]

    def _step_logits(self, position: int) -> np.ndarray | None:
        """The logits a forward call returned at ``position`` (the newest position of a prefill or step), else None."""
        for f in reversed(self.history.frames):
            t = f.trace
            if t.start + len(t.tokens) - 1 == position:
                return t.last_logits
            if t.start <= position:
                break
        return None

    def lens_path(self, position: int, target: int) -> tuple[np.ndarray, np.ndarray]:
        """Token ``target``'s rank and lens probability at every depth of ``position`` (cached).

        Read from the position's whole lens when it is held (the worker makes the newest and the selected
        position's with each run): the lens graph's own call reads the 154 MB unembedding of GPT-2 small again,
        ~17 ms of a Logit lens tab show on a 2-core EPYC, against ~1 ms for the same rule on the held rows."""
        key = (self._lens_key(position), int(target))
        if key not in self._path_cache:
            lens, tops = self._lens_cache.get(key[0]), self._tops_cache.get(key[0])
            if lens is not None and tops is not None:
                path = token_rank_and_prob(lens, int(target), tops[1])
            else:
                path = self.weights.lens_path(residual_stack_at(self.history, self.n_layer, position), int(target))
            self._remember(self._path_cache, key, path, 64)
        self._path_cache.move_to_end(key)
        return self._path_cache[key]

    def _lens_key(self, position: int, interventions: tuple | None = None) -> tuple:
        # causal: the lens at a position depends on the tokens up to it and the interventions (default: in force)
        ivs = self.history.current.interventions if interventions is None else interventions
        return self.history.tokens[: position + 1], ivs

    def _fill_lens(self, position: int, full: bool, window: bool = True) -> None:
        """The lens tops at ``position`` and, in the same onnxruntime call, every newest position lacking them;
        the full [n_layer + 1, V] rows at ``position`` too when ``full``.

        While auto-stepping, views redraw a few times a second and each redraw finds several new
        positions: whichever view asks first (the lens grid, the target path) computes them all at once,
        so the grid's columns never cost one call each; their logits stay inside onnxruntime.
        """
        if full:
            self._keep_lens(self._lens_key(position),
                            *self.weights.lens_with_tops(residual_stack_at(self.history, self.n_layer, position)))
        n = len(self.history.tokens)
        around = range(max(0, n - LENS_WINDOW), n) if window else ()
        todo = [p for p in dict.fromkeys([position, *around]) if self._lens_key(p) not in self._tops_cache]
        if not todo:
            return
        rows = self.n_layer + 1
        stack = np.concatenate([residual_stack_at(self.history, self.n_layer, p) for p in todo])
        # The model's output at these positions is their last row: kept (the newest FINAL_KEPT) for the
        # pipeline's output stage, which otherwise read the unembedding again for it (output_logits).
        final = [i for i, p in enumerate(todo) if self._step_logits(p) is None
                 and self._lens_key(p) not in self._final_cache][-FINAL_KEPT:]
        (top, prob), logits = self.weights.lens_tops_with_rows(stack, [i * rows + rows - 1 for i in final])
        for i, p in enumerate(todo):
            self._keep_lens(self._lens_key(p), None, (top[i * rows:(i + 1) * rows], prob[i * rows:(i + 1) * rows]))
        for i, row in zip(final, logits):
            self._remember(self._final_cache, self._lens_key(todo[i]), row, FINAL_KEPT)
