"""The inference worker: owns the models and one generator per session on a QThread.

Requests arrive as queued slot calls carrying a request number and the session's name; results go
back as signals with both. A request older than that session's newest prompt or model load is skipped
here (see :meth:`InferenceWorker.supersede`) and its result, if already on its way, is dropped by the state.
"""

from __future__ import annotations

import operator
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from gpt2viz.core.analysis.lens import residual_stack_at
from gpt2viz.core.engine import model as runtime
from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.ondemand import BackgroundRun
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.baseline import Baseline
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator, History

# Lenses remembered for Back and Reset: the newest states emitted ([n_layer + 1, V] each: 2.6 MB on GPT-2 small,
# shared with the session's own cache of 8).
LENS_MEMO = 8
# The worker prepares a model's views (_prepare_later) only after this long without a request. Auto-stepping at full
# speed asks for a step every ~25 ms: the pieces (up to ~30 ms each) ran between its steps, ~0.7 s of them in the
# first 60 tokens after a load on a GPT-2-small-sized model (2-core EPYC), a third of that span.
QUIET_MS = 200


def _fit(interventions, n_positions: int) -> tuple:
    """Drop the interventions that name positions a new text does not have (a patch of the old text)."""
    out = []
    for iv in interventions:
        pos = [iv.position] if hasattr(iv, "position") else (getattr(iv, "positions", None) or [])
        if all(0 <= p < n_positions for p in pos):
            out.append(iv)
    return tuple(out)


def _prefetch(h: History) -> None:
    """Compute, on this thread, the hooks every view reads at the newest position of a new run.

    A run of ``ondemand.ONDEMAND_FROM`` positions or more keeps only the residual stream; the first view to read
    the newest position's attention or MLP (the pipeline, at every redraw) ran the model on that position's
    block on the GUI thread: ~160 ms of adding an ablation at 200 tokens of a GPT-2-small-sized model, measured
    by bench/bench_latency.py. The block stays with the run's trace. For a new run, and for one taken back from
    before an intervention changed (already computed then, or read by the views since).
    """
    h.hook_at(("pattern", 0), len(h.tokens) - 1)


@dataclass(frozen=True)
class Shown:
    """What the views show, which a new run of the text must bring: the selected ``position`` (None: the newest, or
    an earlier one whose lens the views hold already), when an attention view is on screen its ``layer`` and the
    kinds of rows it reads ("pattern", "attn_scores") for the newest ``MAX_SIDE`` positions, and whether they show
    the newest position's whole lens and its tops (``InferenceWorker.step``'s ``with_lens`` / ``with_tops``)."""

    position: int | None = None
    layer: int | None = None
    attention: tuple[str, ...] = ()
    newest_lens: bool = True
    newest_tops: bool = True
    # The sampling settings the chart shows the newest position's next-token distribution under: the run brings
    # it (None: the views make it).
    sampling: SamplingSettings | None = None


def _prefetch_shown(gen: Generator, shown: Shown) -> None:
    """Compute, on this thread, the attention rows a shown attention view reads from a new run.

    A run of a long text keeps only the residual stream: the view's first read ran the layer's attention
    sub-graph over its 128 positions on the GUI thread (~7 ms, and ~10 ms of adding an ablation at 200
    tokens of a GPT-2-small-sized model with the Attention tab shown). A run taken back may have been shown with
    another layer: its rows are computed here too.
    """
    from gpt2viz.core.viewmodels.attention import MAX_SIDE

    if shown.layer is None:
        return
    h = gen.history()
    n = len(h.tokens)
    for which in shown.attention:
        h.hook_rows((which, shown.layer), max(0, n - MAX_SIDE), n)


@dataclass(frozen=True)
class Result:
    """What one request produced: the new history, the newest position's lens, and whether the model ran."""

    history: History
    elapsed_ms: float
    lens: np.ndarray | None
    ran_model: bool  # False for Back / Reset: stored frames, no model call
    lens_tops: tuple[np.ndarray, np.ndarray] | None = None  # lens_top(lens): the lens grid's new column
    # With interventions in force: the same tokens run without them (the chart's ghost, the deltas):
    # the newest position's [V] logits and its [n_layer + 1, V] logit lens.
    # (logits [V], lens [n_layer + 1, V], History, lens tops) without the interventions
    baseline: tuple | None = None
    # The selected earlier position's lens and its tops, made with a run the views have not seen: (position, lens
    # [n_layer + 1, V], tops). Its last row is the model's output there, which the pipeline shows.
    selected: tuple | None = None
    # The new state's next-token distribution after a step or an intervention's run: (settings, Distribution, the
    # token a step would take), the Generator's preview, which the next step under the same settings samples from
    # (the views show it).
    distribution: tuple | None = None


def _memo_key(gen: Generator, h: History) -> tuple:
    """The key of ``h``'s newest lens in the worker's memo: the model (by id: the memo is cleared when a model
    loads), the tokens and the interventions in force."""
    return id(gen.model), tuple(h.tokens), gen.interventions


@dataclass(frozen=True)
class AheadLens:
    """The newest position's logit lens [n_layer + 1, V] and its tops, made ahead for the state of ``model`` with
    ``tokens`` under ``interventions`` (:meth:`InferenceWorker.work_ahead`)."""

    model: Model
    tokens: tuple
    interventions: tuple
    lens: np.ndarray
    tops: tuple[np.ndarray, np.ndarray]


class InferenceWorker(QObject):
    """Runs every model call off the GUI thread. Never touches widgets."""

    sigModelLoaded = Signal(int, str, object)  # request, session, (Model, Weights)
    sigResult = Signal(int, str, object)  # request, session, Result
    sigFailed = Signal(int, str, str)  # request, session, message for the user
    sigSkipped = Signal(int, str)  # request that needed no work (superseded, cancelled, or nothing to undo)
    # Every session request is answered by exactly one of these four signals: the request bus counts
    # answers to know when the worker is idle.
    # Not an answer: request, session, done, total (a long prefill's positions).
    sigProgress = Signal(int, str, int, int)
    # Long analyses (app.jobs) have channels of their own, apart from sessions: each job is answered by
    # sigJob (its summary, None when cancelled) or sigJobFailed; sigJobProgress counts its graph calls.
    sigJob = Signal(int, str, object)  # request, job, summary or None
    sigJobFailed = Signal(int, str, str)  # request, job, message for the user
    sigJobProgress = Signal(int, str, int, int)  # request, job, done, total
    # Work ahead (not an answer): session, the newest state's lens made while the app was idle (AheadLens).
    sigLens = Signal(str, object)

    def __init__(self, device: str = "cpu"):
        super().__init__()
        self.device = device  # where the models it opens run ("cpu" | "cuda")
        self.gens: dict[str, Generator] = {}
        self.weights: dict[str, Weights] = {}
        # Per session: the text run without interventions (the chart's ghost, the deltas), and the last
        # baseline handed over, (its frames, result), so the same state emitted again hands the same arrays.
        self._base: dict[str, Baseline] = {}
        self._base_result: dict[str, tuple] = {}
        # Newest start/load request per session. Written from the GUI thread while this thread runs, so
        # it is read and written only under the lock (queued calls could not overtake the queue they skip).
        self._barrier: dict[str, int] = {}
        self._job_barrier: dict[str, int] = {}  # the same, per job channel (a namespace of its own)
        self._lock = threading.Lock()
        # (model, tokens, interventions) -> (lens or None, lens tops) of the newest states emitted, any session
        self._lens_memo: OrderedDict[tuple, tuple] = OrderedDict()
        # Requests and jobs sent or begun: background work (work_ahead) ends at a newer one, and its running
        # sub-graph at once (interrupt_background, from the GUI thread as a request is sent).
        self._asked = 0
        self._background: BackgroundRun | None = None

    def supersede(self, session: str, req: int) -> None:
        """Skip every queued request of ``session`` older than ``req``. Thread-safe: call from any thread."""
        with self._lock:
            self._barrier[session] = max(req, self._barrier.get(session, 0))

    def interrupt_background(self) -> None:
        """End the background work (:meth:`work_ahead`) now, its running sub-graph within a few ms; callable
        from any thread: the state calls it as it sends a request, which then waits for no work done ahead."""
        with self._lock:
            self._asked += 1
            if self._background is not None:
                self._background.stop()

    def supersede_job(self, job: str, req: int) -> None:
        """Cancel every request of job channel ``job`` older than ``req``. Thread-safe."""
        with self._lock:
            self._job_barrier[job] = max(req, self._job_barrier.get(job, 0))

    def supersede_all(self) -> None:
        """Skip everything still queued (shutting down). Thread-safe."""
        with self._lock:
            self._barrier = {k: 1 << 62 for k in (*self._barrier, *self.gens)}
            self._all = True
        self.interrupt_background()

    def _stale(self, session: str, req: int) -> bool:
        with self._lock:
            return getattr(self, "_all", False) or req < self._barrier.get(session, 0)

    def _job_stale(self, job: str, req: int) -> bool:
        with self._lock:
            return getattr(self, "_all", False) or req < self._job_barrier.get(job, 0)

    def _emit(self, req: int, session: str, elapsed_ms: float, ran: bool, with_lens: bool = True,
              with_tops: bool = True, position: int | None = None, distribution: tuple | None = None) -> None:
        # The logit lens of the newest position is a [layers + 1, V] matmul (≈ 0.5 GFLOP for GPT-2
        # small): every view wants it after a step, so it is made here, off the GUI thread. While
        # auto-stepping the views skip most frames; then the views compute the few they draw on demand
        # and the worker steps at nearly the headless rate.
        gen = self.gens[session]
        h = gen.history()
        base = self._baseline(gen, session, h) if gen.interventions else None
        n_layer, newest = gen.model.config.n_layer, len(h.tokens) - 1
        # Back and Reset come back to a state this worker has already emitted: its lens is remembered
        # (the same arrays the session keeps; ~11 ms of every Back at 200 tokens of a GPT-2-small-sized
        # model were this product made again).
        key = _memo_key(gen, h)
        lens, tops = self._lens_memo.get(key, (None, None))
        if not with_tops and tops is None:  # nothing on screen shows this state's lens
            self.sigResult.emit(req, session, Result(h, elapsed_ms, None, ran, None, base,
                                                     self._selected(session, h, position), distribution))
            return
        if tops is None or (with_lens and lens is None):
            stack = residual_stack_at(h, n_layer, newest)
            if with_lens:
                lens, tops = self.weights[session].lens_with_tops(stack)
            else:
                # Only its top tokens (the lens grid's new column), made inside the lens graph: while playing,
                # views skip frames, and the GUI thread would otherwise compute every skipped column there.
                tops = self.weights[session].lens_tops(stack)
        self._remember_lens(key, lens, tops)
        self.sigResult.emit(req, session, Result(h, elapsed_ms, lens if with_lens else None, ran, tops, base,
                                                 self._selected(session, h, position), distribution))

    def _remember_lens(self, key: tuple, lens: np.ndarray | None, tops) -> None:
        """Remember the newest position's lens and tops of a state under its :func:`_memo_key`."""
        self._lens_memo[key] = (lens, tops)
        self._lens_memo.move_to_end(key)
        while len(self._lens_memo) > LENS_MEMO:
            self._lens_memo.popitem(last=False)

    def _selected(self, session: str, h: History, position: int | None) -> tuple | None:
        """The lens (with its tops) at ``position``, an earlier position the views show, of a run they have not
        seen (None for the newest position, which every result carries).

        The pipeline shows the selected position's top token at every depth and the model's output there: after
        an ablation with an earlier token selected, it made them on the GUI thread, an LM-head call of 13 rows and
        one of 1 (~17 ms at 200 tokens of a GPT-2-small-sized model, measured by bench/bench_latency.py). One
        call here gives both: the lens's last row is the output."""
        if position is None or not 0 <= position < len(h.tokens) - 1:
            return None
        lens, tops = self.weights[session].lens_with_tops(residual_stack_at(h, self.gens[session].model.config.n_layer,
                                                                            position))
        return position, lens, tops

    def _baseline(self, gen: Generator, session: str, h: History):
        """The current tokens run without interventions: the newest position's logits and logit lens, and that
        run as a History holding the hooks an attribution reads (the Path view's ghosts: before the edit).

        The run is kept frame by frame (:class:`Baseline`): Back, Reset and the same text again cost no model
        call, a step one cached position, and the first intervention on a text takes the generator's run from
        before it (no second run of the text: 280 ms at 200 tokens of a GPT-2-small-sized model on a 2-core EPYC,
        bench/bench_interventions.py)."""
        model, tokens = gen.model, tuple(h.tokens)
        base = self._base.get(session)
        if base is None or base.model is not model:
            # Every hook, as the generator's runs keep them: a long text's attention and MLP hooks are then left
            # on demand (its patterns alone are 0.6 GB at 1000 tokens of GPT-2 small).
            base = self._base[session] = Baseline(model)
        clean = base.history(h, gen.kept(()))
        memo = self._base_result.get(session)
        if memo is not None and len(memo[0]) == len(clean.frames) and all(map(operator.is_, memo[0], clean.frames)):
            return memo[1]
        _prefetch(clean)  # the Path view reads its hooks at the newest position (a long text's: on demand)
        # The lens of these tokens without interventions is remembered when this state was shown without them.
        lens, tops = self._lens_memo.get((id(model), tokens, ()), (None, None))
        if lens is None:
            lens, tops = self.weights[session].lens_with_tops(residual_stack_at(clean, model.config.n_layer,
                                                                                len(tokens) - 1))
        result = clean.current.logits, lens, clean, tops
        self._base_result[session] = (clean.frames, result)
        return result

    def _guard(self, req: int, session: str, fn) -> None:
        self.interrupt_background()
        if self._stale(session, req):
            self.sigSkipped.emit(req, session)
            return
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure becomes a message; the thread lives on
            self.sigFailed.emit(req, session, str(e) or type(e).__name__)

    def _gen(self, session: str) -> Generator:
        if session not in self.gens:
            raise RuntimeError(QCoreApplication.translate("Worker", "no model is loaded"))
        return self.gens[session]

    @Slot(int, str, str)
    def load_model(self, req: int, session: str, folder: str) -> None:
        """Open ``folder`` for ``session``; the session's generation starts over."""
        def go():
            # The remembered lenses are keyed by the model's id(), which a new model may reuse once the old one
            # is gone: they go with it.
            self._lens_memo.clear()
            self._drop_baseline(session)
            model = Model(folder, device=self.device)
            weights = Weights.of(model)
            weights.embedding_norms  # open the lens session here, not on the GUI thread
            self.gens[session], self.weights[session] = Generator(model), weights
            self.sigModelLoaded.emit(req, session, (model, weights))
            self._prepare_later(model, weights)
        self._guard(req, session, go)

    def _prepare_later(self, model: Model, weights: Weights) -> None:
        """Prepare what views of ``model`` read on the GUI thread, on this thread, one piece per turn of its event
        loop, while the model is open: its attention sub-graphs (:meth:`Model.prepare_ondemand`, ~30 ms each on a
        GPT-2-small-sized model), so that a block click opens its layer's without onnxruntime's optimizer; then
        each block's MLP output norms (:meth:`Weights.W_out_norms`, ~4 ms each there), so that the MLP tab's first
        show on a block reads none of its 9.4 MB matrix. Requests go first: a piece waits until none has come for
        QUIET_MS."""
        layers = iter(range(model.config.n_layer))
        asked = self._asked

        def turn():
            nonlocal asked
            if getattr(self, "_all", False) or all(g.model is not model for g in self.gens.values()):
                return
            if self._asked != asked:  # asked for something since the last turn: wait for a quiet spell
                asked = self._asked
                QTimer.singleShot(QUIET_MS, self, turn)
                return
            try:
                if model.prepare_ondemand(limit=1):  # every sub-graph prepared: one block's norms a turn
                    layer = next(layers, None)
                    if layer is None:
                        return
                    weights.W_out_norms(layer)
            except Exception:  # noqa: BLE001 - what is left unprepared is made when first read, as it was
                return
            QTimer.singleShot(0, self, turn)
        # The worker as the timers' context: a bare callable's timer, still pending when the thread ends, would
        # keep ``turn`` and the model it holds for good; the worker's deletion releases this one.
        QTimer.singleShot(0, self, turn)

    @Slot(int, str, str)
    def share_model(self, req: int, session: str, source: str) -> None:
        """Give ``session`` the model already open in ``source`` (no second load; its own generation)."""
        self.interrupt_background()

        def go():
            src = self._gen(source)
            self._drop_baseline(session)
            self.gens[session], self.weights[session] = Generator(src.model), self.weights[source]
            self.sigModelLoaded.emit(req, session, (src.model, self.weights[source]))
        # Never skipped: it is cheap, and the prompt queued right behind it (a newer barrier) needs it.
        try:
            go()
        except Exception as e:  # noqa: BLE001
            self.sigFailed.emit(req, session, str(e) or type(e).__name__)

    @Slot(int, str, str, object)
    def start(self, req: int, session: str, text: str, interventions) -> None:
        """Tokenize and prefill ``text`` under ``interventions`` (a tuple).

        A long prompt runs in chunks (``runtime.CHUNK`` positions), reporting each through sigProgress; a
        newer prompt, model, Reset or shutdown (anything that supersedes this request) cancels it at
        the next chunk, and the generator keeps its previous state.
        """
        def go():
            gen = self._gen(session)
            ids = gen.model.tokenizer.encode(text)
            if tuple(interventions) != gen.interventions:
                gen.frames = []  # the old text is being replaced: nothing to re-run under the new interventions
                gen.set_interventions(_fit(interventions, len(ids) or 1))
            t0 = time.perf_counter()
            if len(ids) > runtime.CHUNK:  # it will run in chunks: show the bar from the start
                self.sigProgress.emit(req, session, 0, len(ids))
            try:
                gen.start(ids, progress=lambda done, total: self.sigProgress.emit(req, session, done, total),
                          cancel=lambda: self._stale(session, req))
            except Cancelled:
                self.sigSkipped.emit(req, session)
                return
            if not gen.interventions:
                # the run without interventions is this one now, and the generator keeps it for the first
                # intervention (Generator.kept): the baseline of the text before need not hold its run (at 1000
                # tokens of GPT-2 small, ~0.15 GB of residual stream and KV cache)
                self._drop_baseline(session)
            _prefetch(gen.history())
            self._emit(req, session, (time.perf_counter() - t0) * 1000, True)
        self._guard(req, session, go)

    def _drop_baseline(self, session: str) -> None:
        """Let go of ``session``'s run without interventions (a new model, or a new text run without them)."""
        self._base.pop(session, None)
        self._base_result.pop(session, None)

    @Slot(int, str, object, object, object, bool, bool)
    def step(self, req: int, session: str, settings, token, interventions, with_lens: bool = True,
             with_tops: bool = True) -> None:
        """Append one token. ``with_lens`` / ``with_tops``: whether the views show the new position's whole lens
        (it is the selected one) / its top tokens (it is, or a lens grid is on screen): the result brings only
        those (~12 ms of a 13-row lens at 200 tokens of a GPT-2-small-sized model on a 2-core EPYC); the views
        compute what they draw on demand, and the state's work ahead makes the rest (:meth:`work_ahead`)."""
        def go():
            gen = self._gen(session)
            if not gen.frames:
                raise RuntimeError(QCoreApplication.translate("Worker", "run a prompt first"))
            if tuple(interventions) != gen.interventions:
                gen.set_interventions(interventions)
            lens_in_step = self._lens_in_step(session, gen, with_lens) \
                if (with_lens or with_tops) and self.weights[session].lens_is_the_models_head else None
            frame = gen.step(settings, token, lens_in_step)
            # the new state's distribution, made once: the views show it and the next step samples from it
            self._emit(req, session, frame.elapsed_ms, True, with_lens, with_tops or with_lens,
                       distribution=(settings, *gen.preview(settings)))
        self._guard(req, session, go)

    def _lens_in_step(self, session: str, gen: Generator, whole: bool):
        """For :meth:`Generator.step`'s ``logits_from``: the new position's logit lens (``whole``) or its tops and
        last row, remembered for :meth:`_emit`; its last row is the position's logits. The LM head does not run:
        the step and its lens read the unembedding once (~8 ms of a Step's ~40 with the newest token followed at
        200 tokens of a GPT-2-small-sized model on a 2-core EPYC). The lens graph's nodes are the model's own final
        LayerNorm and LM head, and its rows are the model's logits bit for bit (tests/app/test_worker.py)."""
        weights, n_layer = self.weights[session], gen.model.config.n_layer

        def logits_from(h: History) -> np.ndarray:
            key = _memo_key(gen, h)
            lens, tops = self._lens_memo.get(key, (None, None))
            if lens is not None:  # a state met before (a Step after Back): its lens holds the logits already
                return lens[-1]
            stack = residual_stack_at(h, n_layer, len(h.tokens) - 1)
            if whole:
                lens, tops = weights.lens_with_tops(stack)
                last = lens[-1]
            else:
                made, rows = weights.lens_tops_with_rows(stack, (n_layer,))
                tops, last = tops or made, rows[0]
            self._remember_lens(key, lens, tops)
            return last
        return logits_from

    @Slot(int, str, object, object)
    def intervene(self, req: int, session: str, interventions, shown: Shown | None = None) -> None:
        """Put ``interventions`` in force: the text so far is run again under them (its tokens stay).

        ``shown``: what the views show (the selected position, whose lens comes with the result, and a shown
        attention view's rows), computed with the run."""
        shown = shown or Shown()
        def go():
            gen = self._gen(session)
            t0 = time.perf_counter()
            had = bool(gen.frames)
            gen.set_interventions(interventions)
            if had:
                # also into frames taken back from before the last change, which a view may still be drawing: a
                # store is read by one thread at a time (ondemand.OnDemand), and holds what the views read then
                _prefetch(gen.history())
                _prefetch_shown(gen, shown)
                # Taking back the last change (an ablation removed, or put back) finds its frames computed:
                # like Back, no model ran, and the status line keeps the time of the last run.
                # the new state's distribution, as a step's (under the settings the chart shows)
                dist = None if shown.sampling is None else (shown.sampling, *gen.preview(shown.sampling))
                self._emit(req, session, (time.perf_counter() - t0) * 1000, gen.steps_rerun > 0,
                           shown.newest_lens, shown.newest_tops or shown.newest_lens, position=shown.position,
                           distribution=dist)
            else:
                self.sigSkipped.emit(req, session)
        self._guard(req, session, go)

    @Slot(int, str, object)
    def job(self, req: int, job: str, fn) -> None:
        """Run a long analysis ``fn(progress, cancel)`` (patching table, causal trace) here; its result
        goes out as sigJob (None when cancelled). ``cancel`` is true once this request is superseded."""
        def cancel() -> bool:
            return self._job_stale(job, req)

        def progress(done: int, total: int) -> None:
            self.sigJobProgress.emit(req, job, int(done), int(total))

        self.interrupt_background()
        if cancel():
            self.sigJob.emit(req, job, None)
            return
        try:
            out = fn(progress, cancel)
        except Cancelled:
            out = None
        except Exception as e:  # noqa: BLE001 - every failure becomes a message; the thread lives on
            self.sigJobFailed.emit(req, job, str(e) or type(e).__name__)
            return
        self.sigJob.emit(req, job, out)

    @Slot(str, int, object)
    def work_ahead(self, session: str, layer: int, kinds) -> None:
        """Compute what the views of ``session``'s newest state may read next, one piece a turn of this thread's
        event loop, ending at the next request or job (:meth:`interrupt_background`). The state asks once the user
        has sent no request for a while (``state.PREFETCH_AFTER_MS``).

        First the newest position's lens, when the result came without it (an earlier token selected, see
        :meth:`step`): sent as sigLens, so that a click on the newest token or the Logit lens tab finds it. Then
        the ``kinds`` rows ("pattern", "attn_scores") of every layer's attention map, as a block click reads them,
        nearest ``layer`` first, until the run's store of on-demand hooks is full (a long text's; a short one holds
        every hook already): a block click at 200 tokens of a GPT-2-small-sized model otherwise opened the layer's
        sub-graph and ran it on the GUI thread (~20 ms of ~50, bench/bench_latency.py). The rows stay valid while
        the text grows (a map's rows then start later), so a text's maps are computed ahead about once."""
        from gpt2viz.core.viewmodels.attention import MAX_SIDE

        self.interrupt_background()
        asked, gen = self._asked, self.gens.get(session)
        if gen is None or not gen.frames:
            return
        n_layer, h = gen.model.config.n_layer, gen.history()
        order = sorted(range(n_layer), key=lambda L: (abs(L - layer), L))
        key = _memo_key(gen, h)
        # the lens unless this worker made it with a result (then the session holds it)
        lens = [("lens", key)] if self._lens_memo.get(key, (None,))[0] is None else []
        todo = iter(lens + [(k, L) for L in order for k in kinds])

        def turn():
            item = next(todo, None)
            if item is None or self.gens.get(session) is not gen or not gen.frames:
                return
            h, run = gen.history(), BackgroundRun()
            with self._lock:
                if self._asked != asked:
                    return
                self._background = run
            n = len(h.tokens)
            try:
                if item[0] == "lens":
                    self._lens_ahead(session, gen, h, item[1], run)
                elif not h.prefetch_rows(item, max(0, n - MAX_SIDE), n, run):
                    return  # the store is full: a view's own reads keep their room
            except Exception:  # noqa: BLE001 - stopped, or failed: a view computes what it reads, as before
                return
            finally:
                with self._lock:
                    self._background = None
            QTimer.singleShot(0, self, turn)  # with the worker as context, as in _prepare_later
        turn()

    def _lens_ahead(self, session: str, gen: Generator, h: History, key: tuple, run: BackgroundRun) -> None:
        """The newest position's lens of ``h`` (memo ``key``), made ahead and sent to the state."""
        lens, tops = self.weights[session].lens_with_tops(
            residual_stack_at(h, gen.model.config.n_layer, len(h.tokens) - 1), run.run_options)
        self._remember_lens(key, lens, tops)
        self.sigLens.emit(session, AheadLens(gen.model, h.tokens, h.current.interventions, lens, tops))

    def _rewind(self, req: int, session: str, method: str, with_lens: bool = True, with_tops: bool = True) -> None:
        """Back or Reset: restore stored frames (no model call); nothing to undo is a skip."""
        def go():
            gen = self.gens.get(session)
            if gen and gen.frames:
                getattr(gen, method)()
                self._emit(req, session, 0.0, False, with_lens, with_tops or with_lens)
            else:
                self.sigSkipped.emit(req, session)
        self._guard(req, session, go)

    @Slot(int, str, bool, bool)
    def back(self, req: int, session: str, with_lens: bool = True, with_tops: bool = True) -> None:
        """Undo the newest token (stored frames); ``with_lens`` / ``with_tops`` as :meth:`step`'s."""
        self._rewind(req, session, "back", with_lens, with_tops)

    @Slot(int, str)
    def reset(self, req: int, session: str) -> None:
        self._rewind(req, session, "reset")
