"""Application state: the one object views read from and ask things of. QtCore only.

Data flows one way: a request naming its session goes to the worker thread, an immutable History
comes back, the session stores it and the state emits with the session's id; views redraw from
that session's view models. Slider moves only re-transform the stored logits.

AppState is a facade over small parts, each in its own module: the open sessions and their change
signals (app.sessions), request numbering (app.requests), long analyses (app.jobs) and auto-play
(app.player). Every change to a session goes through a Session method, which notifies the registry,
which emits the signal: a view cannot miss a change.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, QThread, QTimer, Signal

from gpt2viz.app.jobs import (
    Job,
    JobRunner,
    causal_job,
    edit_job,
    feature_clamp_job,
    feature_text_job,
    graph_ablation_job,
    graph_job,
    patching_job,
    prompt_ids,
    save_edit_job,
)
from gpt2viz.app.player import FRAME_S, PLAY_AHEAD, Player  # noqa: F401 - re-exported for the tests
from gpt2viz.app.requests import RequestBus
from gpt2viz.app.sessions import SessionId, SessionRegistry, session_id
from gpt2viz.app.settings import Settings
from gpt2viz.app.worker import InferenceWorker, Result, Shown
from gpt2viz.core.session.session import Session, Stage

A, B = SessionId.A, SessionId.B

# No request for this long after a result (the user reading), the worker computes the newest position's lens if the
# result came without it, and the attention maps a block click would read (InferenceWorker.work_ahead). A request
# stops that work within a few ms, but not at once (a sub-graph's open, the node running); sooner, it ran beside
# the next action: after 200 or 500 ms, an ablation taken off a few hundred ms after one was put on waited for it
# (bench_latency at 200 tokens: p95 +3 to +10 ms).
PREFETCH_AFTER_MS = 1000


class AppState(QObject):
    """Session A (and optionally B), request bookkeeping, long analyses and auto-play, with change signals.

    Parameters
    ----------
    settings : Settings
        Persistent settings (the last sampling settings are restored from it).
    device : {"cpu", "cuda"}
        Where the models run (``--device``); checked when a model is opened.

    Notes
    -----
    The session signals (sigModel, sigHistory, sigSelection, sigSampling, sigInterventions, sigPrompt,
    sigAnalyses, sigProgress) carry the id of the session that changed; sigJobProgress / sigJobDone the
    job (app.jobs.Job). Methods take the session as a :class:`SessionId` (default A: the single-session
    window); the attributes below (model, history, ...) are read-only views of session A.
    """

    sigError = Signal(str)
    sigProgress = Signal(str, int, int)  # session, prompt positions prefilled, of total (long prompts, in chunks)
    # A request is about to go to the model (not while auto-stepping): the window paints now what the input
    # has changed so far (a pressed button, a new intervention chip). Painted while the model ran, that frame
    # took a core from onnxruntime's two threads on this 2-core machine, and the run waited for the thread
    # that lost it: on atlas an ablation's run took 12 ms instead of 3 in such rounds.
    sigSending = Signal()

    # queued calls into the worker thread
    _toLoad = Signal(int, str, str)
    _toShare = Signal(int, str, str)
    _toStart = Signal(int, str, str, object)
    _toStep = Signal(int, str, object, object, object, bool, bool)
    _toBack = Signal(int, str, bool, bool)
    _toReset = Signal(int, str)
    _toIntervene = Signal(int, str, object, object)
    _toPrefetch = Signal(str, int, object)

    def __init__(self, settings: Settings | None = None, parent=None, device: str = "cpu"):
        super().__init__(parent)
        self.settings = settings or Settings()
        self.device = device
        self.sessions = SessionRegistry(self.settings.sampling(), self)
        self._thread = QThread()
        self._thread.setObjectName("gpt2viz-inference")
        self.worker = InferenceWorker(device)
        self.worker.moveToThread(self._thread)
        self.requests = RequestBus(self.worker.supersede, self)
        self.jobs_runner = JobRunner(self.worker, self.requests.number,
                                     lambda job, summary: self.sessions[A].store_analysis(job.value, summary), self)
        self.player = Player(self.sessions, self.requests, lambda: self.step(), self)
        self._grids_shown: dict[str, set[int]] = {}  # session -> ids of its lens grids on screen (lens_grid_shown)
        # session -> {id of an attention view on screen: "pattern" / "attn_scores"} (attention_shown)
        self._attention_shown: dict[str, dict[int, str]] = {}
        # The worker's work ahead (_prefetch), asked for once no request has gone out for PREFETCH_AFTER_MS after a
        # result: a timer here, so that nothing runs on the worker while the window paints that result.
        self._prefetch_timer = QTimer(self)
        self._prefetch_timer.setSingleShot(True)
        self._prefetch_timer.timeout.connect(self._prefetch)
        self._prefetch_sid = A

        # The parts' signals, under the names the views have always used.
        reg = self.sessions
        self.sigModel, self.sigHistory, self.sigSelection = reg.sigModel, reg.sigHistory, reg.sigSelection
        self.sigSampling, self.sigInterventions = reg.sigSampling, reg.sigInterventions
        self.sigPrompt, self.sigAnalyses = reg.sigPrompt, reg.sigAnalyses
        self.sigBusy = self.requests.sigBusy
        self.sigPlaying = self.player.sigPlaying
        self.sigJobProgress, self.sigJobDone = self.jobs_runner.sigJobProgress, self.jobs_runner.sigJobDone
        self.sigJobDone.connect(self._on_job_done)
        self.jobs_runner.sigFailed.connect(self.sigError)

        for signal, slot in ((self._toLoad, self.worker.load_model), (self._toShare, self.worker.share_model),
                             (self._toStart, self.worker.start), (self._toStep, self.worker.step),
                             (self._toBack, self.worker.back), (self._toReset, self.worker.reset),
                             (self._toIntervene, self.worker.intervene),
                             (self._toPrefetch, self.worker.work_ahead)):
            signal.connect(slot)
        self.worker.sigModelLoaded.connect(self._on_model)
        self.worker.sigResult.connect(self._on_result)
        self.worker.sigLens.connect(self._on_lens)
        self.worker.sigFailed.connect(self._on_failed)
        # A bound slot, not a lambda: a lambda has no thread of its own, so Qt would call it on the worker
        # thread, and "busy" would turn false (and the window redraw) there, racing the GUI thread.
        self.worker.sigSkipped.connect(self._on_skipped)
        self.worker.sigProgress.connect(self._on_progress)
        self._thread.start()

    # ---- sessions -------------------------------------------------------------------------------
    def session(self, name: SessionId | str = A) -> Session:
        """The session ``name`` (KeyError if it is not open)."""
        return self.sessions[name]

    def open_session(self, name: SessionId | str = B, prompt: str | None = None) -> Session:
        """Open a second session on session A's model (for comparison); runs ``prompt`` if given."""
        sid, a = session_id(name), self.sessions[A]
        s = self.sessions.open(sid, a.sampling)
        s.set_model(a.model, a.weights)  # the same objects: read-only here, and the worker shares them too
        self._toShare.emit(self._send(sid), sid.value, A.value)
        if prompt is not None:
            self.run_prompt(prompt, session=sid)
        return s

    def close_session(self, name: SessionId | str) -> None:
        """Close a comparison session; its queued work is skipped."""
        sid = session_id(name)
        if sid is A:
            raise ValueError("session A cannot be closed")
        self.worker.supersede(sid.value, 1 << 62)
        self.sessions.close(sid)

    # Read-only views of session A, for the single-session window and the command line.
    model = property(lambda self: self.sessions[A].model)
    weights = property(lambda self: self.sessions[A].weights)
    history = property(lambda self: self.sessions[A].history)
    sampling = property(lambda self: self.sessions[A].sampling)
    selection = property(lambda self: self.sessions[A].selection)
    stage = property(lambda self: self.sessions[A].selection.stage)
    layer = property(lambda self: self.sessions[A].selection.layer)
    head = property(lambda self: self.sessions[A].selection.head)
    last_ms = property(lambda self: self.sessions[A].last_ms)
    model_runs = property(lambda self: self.sessions[A].model_runs)
    selected_position = property(lambda self: self.sessions[A].selected_position)

    # ---- requests -------------------------------------------------------------------------------
    def _send(self, session: SessionId, barrier: bool = False) -> int:
        self.jobs_runner.cancel()  # a new request to the model stops a long analysis at its next graph call
        self._prefetch_timer.stop()  # and the worker's work ahead (work_ahead), at once
        self.worker.interrupt_background()
        req = self.requests.send(session, barrier)
        if not self.player.playing:  # while playing, the frames stay throttled (a few a second)
            self.sigSending.emit()
        return req

    @property
    def busy(self) -> bool:
        """Whether a request to the worker is still unanswered."""
        return self.requests.busy

    def load_model(self, folder: str, session: SessionId | str = A) -> None:
        """Open a model folder (on the worker thread)."""
        sid = session_id(session)
        self.pause()
        self._toLoad.emit(self._send(sid, barrier=True), sid.value, str(folder))

    def run_prompt(self, text: str, session: SessionId | str = A) -> None:
        """Tokenize and prefill ``text``; supersedes anything of that session still queued."""
        sid = session_id(session)
        self.pause()
        s = self.sessions[sid]
        s.set_prompt(text)
        self._toStart.emit(self._send(sid, barrier=True), sid.value, text, s.interventions)

    def step(self, token: int | None = None, session: SessionId | str = A) -> None:
        """Append one token: the one the current settings choose, or ``token`` (forced)."""
        sid = session_id(session)
        s = self.sessions[sid]
        if s.history is None:
            return
        self._toStep.emit(self._send(sid), sid.value, s.sampling, token, s.interventions,
                          *self._newest_lens(sid, len(s.history.tokens) + 1))

    def _newest_lens(self, sid: SessionId, n: int) -> tuple[bool, bool]:
        """What a run to ``n`` tokens (a Step, Back, an intervention) brings of the newest position's lens: (the whole
        lens, its tops).

        The whole lens when that position is the selected one (the pipeline's, the Logit lens tab's path); its
        tops when it is, or a lens grid of the session is on screen (every newest column): with an earlier token
        selected and no grid, neither (~12 ms of a Step's ~40 at 200 tokens of a GPT-2-small-sized model on a
        2-core EPYC), and the worker makes it later, while the user reads (``work_ahead``).

        Auto-stepping, views draw few of the states and compute what they draw, except a grid's: the tops for its
        new columns, and the whole lens when the newest token is followed (the grid's target path there). That
        path made on the GUI thread at each redraw was an onnxruntime call of its own reading the unembedding
        again (~31 ms, four times a second, beside the worker's two threads on a 2-core EPYC); the step's lens
        call brings the whole lens for the cost of handing over its [13, V] rows."""
        s, grid = self.sessions[sid], bool(self._grids_shown.get(sid.value))
        newest = s.selection.position is None or s.selection.position >= n - 1
        if self.player.playing and sid is A:
            return grid and newest, grid
        return newest, newest or grid

    def lens_grid_shown(self, view: object, shown: bool, session: SessionId | str = A) -> None:
        """A view showing the lens grid of ``session`` (every newest position's column) appeared or went.

        While auto-stepping, the worker makes each new position's column (9.5 ms after a 19 ms step of a
        GPT-2-small-sized model) only while such a view is on screen; one shown later makes the columns it lacks
        in one call."""
        views = self._grids_shown.setdefault(session_id(session).value, set())
        (views.add if shown else views.discard)(id(view))

    def attention_shown(self, view: object, which: str | None, session: SessionId | str = A) -> None:
        """An attention view of ``session`` shows ``which`` ("pattern" / "attn_scores") of the selected layer, or
        (None) went. A new run of a long text keeps no attention: the worker computes the shown layer's rows with
        an intervention's run, so the view's first read runs no model on the GUI thread."""
        views = self._attention_shown.setdefault(session_id(session).value, {})
        if which is None:
            views.pop(id(view), None)
        else:
            views[id(view)] = which

    def _shown(self, sid: SessionId, interventions=None) -> Shown:
        """What the views of ``sid`` show, for the worker to compute with a new run (see :class:`Shown`).

        The selected earlier position is left out when the run is under ``interventions`` whose lens there the
        session holds already: an ablation taken off and put on again at one selected token made that 13-row lens
        again each time (~16 ms of the worker at 200 tokens of a GPT-2-small-sized model on a 2-core EPYC). What
        the pipeline reads there is the lens tops; only a lens grid on screen reads the whole lens (its target
        path), so without one the tops the session holds are enough: an ablation taken off at the token it was
        put on at, whose tops the pipeline made when the token was selected, asks for no lens."""
        s = self.sessions[sid]
        kinds = tuple(sorted(set(self._attention_shown.get(sid.value, {}).values())))
        position = s.selection.position
        whole = bool(self._grids_shown.get(sid.value))
        if position is not None and interventions is not None and s.holds_lens(position, interventions, whole):
            position = None
        return Shown(position, s.selection.layer if kinds else None, kinds,
                     *self._newest_lens(sid, len(s.history.tokens) if s.history is not None else 0), s.sampling)

    def back(self, session: SessionId | str = A) -> None:
        """Undo the newest token (stored frames, no model call)."""
        sid = session_id(session)
        self.pause()
        s = self.sessions[sid]
        if s.history is not None:
            self._toBack.emit(self._send(sid), sid.value, *self._newest_lens(sid, len(s.history.tokens) - 1))

    def reset(self, session: SessionId | str = A) -> None:
        """Back to the state right after the prompt; a prefill still running is cancelled first."""
        sid = session_id(session)
        self.pause()
        if self.sessions[sid].history is not None:
            # a barrier: a long prefill in progress stops at its next chunk (the generator keeps its state)
            self._toReset.emit(self._send(sid, barrier=True), sid.value)
        else:
            self.cancel(sid)

    def cancel(self, session: SessionId | str = A) -> None:
        """Drop the session's queued and running work; a long prefill stops at its next chunk."""
        self.requests.cancel(session)

    # ---- interventions ----------------------------------------------------------------------------
    def set_interventions(self, interventions, session: SessionId | str = A) -> None:
        """Put ``interventions`` (a tuple) in force for ``session``; the text is run again under them."""
        sid = session_id(session)
        s = self.sessions[sid]
        interventions = tuple(interventions)
        if interventions == s.interventions:
            return
        if s.model is not None:
            from gpt2viz.core.interventions import InterventionError, validate

            try:
                validate(interventions, s.model.config)
            except InterventionError as e:
                self.report_error(str(e))
                return
        self.pause()
        s.set_interventions(interventions)
        if s.history is not None:
            # what the views show: the worker computes it with the run
            self._toIntervene.emit(self._send(sid), sid.value, interventions, self._shown(sid, interventions))

    def add_intervention(self, intervention, session: SessionId | str = A) -> None:
        """Add one intervention (a second identical one is ignored)."""
        s = self.sessions[session]
        if intervention not in s.interventions:
            self.set_interventions((*s.interventions, intervention), session)

    def remove_intervention(self, intervention, session: SessionId | str = A) -> None:
        """Remove one intervention: the numbers return to what they were without it."""
        s = self.sessions[session]
        self.set_interventions(tuple(iv for iv in s.interventions if iv != intervention), session)

    def clear_interventions(self, session: SessionId | str = A) -> None:
        """Remove every intervention of ``session``."""
        self.set_interventions((), session)

    def set_subject(self, positions, session: SessionId | str = A) -> None:
        """The tokens the causal trace corrupts (positions of the prompt)."""
        self.sessions[session].set_subject(positions)

    # ---- long analyses --------------------------------------------------------------------------
    @property
    def jobs(self) -> dict[Job, int]:
        """The analyses running or queued (job -> its request); empty when none is."""
        return self.jobs_runner.active

    def prompt_ids(self, session: SessionId | str = A) -> list[int]:
        """The prompt's tokens of ``session``'s history (what the analyses run on)."""
        return prompt_ids(self.sessions.get(session))

    def patching_is_current(self, summary) -> bool:
        """Whether a patching summary was made for the prompts A and B have now: a table stays on screen
        after either prompt changes, but its cells name positions of the prompts it was made for."""
        return list(summary.clean_ids) == self.prompt_ids(A) and B in self.sessions and \
            list(summary.corrupt_ids) == self.prompt_ids(B)

    def run_patching(self, site: str, target: int | None = None) -> bool:
        """Activation patching with A clean and B corrupted, on the worker (job PATCHING).

        False (and nothing runs) when B is not open or has not run; the token counts are checked by
        the view first (it shows both tokenisations) and again by the engine."""
        return self._start_job(Job.PATCHING, lambda: patching_job(self.sessions[A], self.sessions.get(B), site, target))

    def run_causal_trace(self, subject, target: int | None = None, noise: float = 3.0, samples: int = 10,
                         window: int = 1, seed: int = 0) -> bool:
        """ROME's causal trace of A's prompt with ``subject`` positions corrupted (job CAUSAL)."""
        return self._start_job(
            Job.CAUSAL, lambda: causal_job(self.sessions[A], subject, target, noise, samples, window, seed))

    def run_graph(self, target: int | None = None, node_threshold: float | None = None,
                  edge_threshold: float | None = None) -> bool:
        """The transcoder attribution graph of A's prompt (job GRAPH); False before A has run, or (with a
        message) when the model folder ships no transcoders."""
        return self._start_job(Job.GRAPH, lambda: graph_job(self.sessions[A], target, node_threshold, edge_threshold))

    def run_graph_ablation(self, nodes, scale: float = 0.0) -> bool:
        """Scale (0: ablate) nodes of A's circuit graph in the model and compare each target logit's change with the
        graph's prediction (job GRAPH_ABLATION); False, with a message when it cannot run."""
        return self._start_job(Job.GRAPH_ABLATION, lambda: graph_ablation_job(self.sessions[A], nodes, scale))

    def add_supernode(self, name: str, nodes) -> bool:
        """Group ``nodes`` of A's circuit graph as the supernode ``name`` (kept in the graph's JSON, circuit-tracer's
        ``qParams.supernodes``); False, with a message, for an empty name or no nodes."""
        from gpt2viz.core.circuits.graph_json import add_supernode

        s = self.sessions[A]
        data = s.analyses.get(Job.GRAPH.value)
        if data is None:
            return False
        try:
            s.store_analysis(Job.GRAPH.value, add_supernode(data, name, nodes))
        except ValueError as e:
            self.report_error(str(e))
            return False
        return True

    def edit_fact(self, prompt: str, subject: str, target: str, layer: int | None = None) -> bool:
        """Compute ROME's edit on the worker (job EDIT); when it is done the edit is put in force on session A
        (a chip, removable like any intervention). False, with a message, when the request cannot be made."""
        return self._start_job(Job.EDIT, lambda: edit_job(self.sessions[A], prompt, subject, target, layer))

    def save_edited_model(self, out: str) -> bool:
        """Write A's model with its ROME edits applied into the new folder ``out`` on the worker (job SAVE_EDIT);
        False, with a message, when no edit is in force."""
        from pathlib import Path

        if Path(out).exists():  # never written over: an edited model goes into a folder of its own
            self.report_error(QCoreApplication.translate("AppState", "{path} exists: choose a new folder name.").format(
                path=out))
            return False
        job = save_edit_job(self.sessions[A], out)
        if job is None:
            self.report_error(QCoreApplication.translate(
                "AppState", "No model edit is in force: make one with Analysis → Edit a fact (ROME) first."))
            return False
        self.run_job(Job.SAVE_EDIT, job)
        return True

    def steer_feature(self, layer: int, feature: int, scale: float) -> bool:
        """Add ``scale`` × feature ``feature`` of block ``layer``'s SAE to A's block input at every position,
        generated ones too (a chip, like any intervention). False, with a message, when it cannot be done."""
        from gpt2viz.core.features.shipped import feature_set
        from gpt2viz.core.features.steering import FeatureSteer, to_interventions

        a = self.sessions[A]
        if a.model is None:
            return False
        try:
            sae = feature_set(a.model, layer).sae
            steers = to_interventions(a.model, {layer: sae}, [FeatureSteer(layer, feature, scale)])
        except ValueError as e:
            self.report_error(str(e))
            return False
        self.set_interventions(a.interventions + steers)
        return True

    def clamp_feature(self, layer: int, feature: int, value: float = 0.0, positions=None) -> bool:
        """Set feature ``feature`` of block ``layer``'s SAE to ``value`` (0: ablate it) at ``positions`` (None:
        every position of A's text) through the graph's inputs; computed on the worker (job FEATURE_CLAMP), then
        put in force on A as chips. False, with a message, when it cannot be done."""
        return self._start_job(
            Job.FEATURE_CLAMP, lambda: feature_clamp_job(self.sessions[A], layer, feature, value, positions))

    def read_feature_on_text(self, layer: int, feature: int, text: str, kind: str = "sae") -> bool:
        """A feature page's "test your own text": the feature's activation on each token of ``text``, computed on
        the worker (job FEATURE_TEXT; the answer is a :class:`~gpt2viz.app.jobs.FeatureText`); ``kind`` "sae" or
        "transcoder"."""
        return self._start_job(Job.FEATURE_TEXT, lambda: feature_text_job(self.sessions[A], layer, feature, text, kind))

    def _on_job_done(self, job: str, summary) -> None:
        # an edit the user asked for joins A's interventions (the text runs again under it)
        if job == Job.EDIT.value and summary is not None and self.sessions[A].model is not None:
            self.set_interventions(self.sessions[A].interventions + (summary.edit,))
        if job == Job.FEATURE_CLAMP.value and summary and self.sessions[A].model is not None:
            self.set_interventions(self.sessions[A].interventions + tuple(summary))

    def _start_job(self, kind: Job, make) -> bool:
        """Build a job with ``make()`` and run it as ``kind``: False when there is nothing to run yet (``make``
        gives None: no run to analyse) or, with a message, when the request cannot be made (a ValueError)."""
        try:
            job = make()
        except ValueError as e:
            self.report_error(str(e))
            return False
        if job is not None:
            self.run_job(kind, job)
        return job is not None

    def run_job(self, job: Job | str, fn) -> None:
        """Run ``fn(progress, cancel)`` on the worker thread (a patching table, a causal trace).

        Progress arrives as sigJobProgress(job, done, total), the result as sigJobDone(job, result);
        a newer job of the same kind, any new model request, :meth:`cancel_jobs` or closing cancels it.
        """
        self.jobs_runner.run(job, fn)

    def cancel_jobs(self, job: Job | str | None = None) -> None:
        """Cancel the running or queued ``job`` (default every job)."""
        self.jobs_runner.cancel(job)

    # ---- auto-play ------------------------------------------------------------------------------
    @property
    def playing(self) -> bool:
        """Whether session A is auto-stepping."""
        return self.player.playing

    @property
    def play_timer(self):
        """The single-shot timer pacing auto-steps."""
        return self.player.timer

    def play(self) -> None:
        """Auto-step session A at the pace set by :meth:`set_pace`."""
        self.player.play()

    def pause(self) -> None:
        """Stop auto-stepping; the newest state is shown at once."""
        self.player.pause()

    def set_pace(self, ms: int) -> None:
        """Milliseconds between auto-steps (0: as fast as the model runs)."""
        self.player.set_pace(ms)

    # ---- results --------------------------------------------------------------------------------
    def _on_progress(self, req: int, session: str, done: int, total: int) -> None:
        if session in self.sessions and self.requests.live(req, session):
            self.sigProgress.emit(session, done, total)

    def _on_skipped(self, req: int, session: str) -> None:
        self.requests.answered()

    def _on_model(self, req: int, session: str, loaded) -> None:
        self.requests.answered()
        # Not dropped when superseded: the worker has already switched this session to the new model,
        # so every later result comes from it; dropping this would pair the old model (its config,
        # weights) with the new model's histories (found by the GUI fuzz: a prompt typed mid-load).
        s = self.sessions.get(session)
        if s is None:
            return
        sid = session_id(session)
        if sid is A:
            self.settings.set("model/last", str(loaded[0].folder))
        s.set_model(*loaded)  # its interventions, subject and analyses go with the old model
        if sid is A:
            for other_id, other in self.sessions.items():
                if other_id is not A:  # a comparison follows A's model: B shares it and runs its prompt again
                    other.set_model(s.model, s.weights)
                    self._toShare.emit(self._send(other_id), other_id.value, A.value)
                    if other.prompt:
                        self.run_prompt(other.prompt, session=other_id)

    def _on_result(self, req: int, session: str, result: Result) -> None:
        self.requests.answered()
        s = self.sessions.get(session)
        if s is None or not self.requests.live(req, session):
            return  # a result for a prompt or model that has since been replaced
        s.accept(result.history, result.elapsed_ms, result.lens, result.ran_model, result.lens_tops, result.baseline,
                 result.selected, result.distribution)
        if session_id(session) is A:
            self.player.after_result()
        self._prefetch_sid = session_id(session)
        self._prefetch_timer.start(PREFETCH_AFTER_MS)

    def _on_lens(self, session: str, ahead) -> None:
        """The newest position's lens the worker made ahead (:class:`AheadLens`): kept if the session still shows
        that model's state (no view is waiting for it: one that needed it made it)."""
        s = self.sessions.get(session)
        if s is not None:
            s.accept_lens(ahead.model, ahead.tokens, ahead.interventions, ahead.lens, ahead.tops)

    def _prefetch(self) -> None:
        """Let the worker compute what the views may read next of the newest result (see
        :meth:`InferenceWorker.work_ahead`): the newest lens if the result came without it, then the attention maps
        of the kinds a shown attention view reads, else its patterns. Not while playing or while requests are
        pending."""
        sid = self._prefetch_sid
        s = self.sessions.get(sid)
        if self.player.playing or self.requests.pending or s is None or s.history is None:
            return
        kinds = tuple(sorted(set(self._attention_shown.get(sid.value, {}).values()))) or ("pattern",)
        self._toPrefetch.emit(sid.value, s.selection.layer, kinds)

    def _on_failed(self, req: int, session: str, message: str) -> None:
        self.requests.answered()
        self.pause()
        if session in self.sessions and self.requests.live(req, session):
            self.sigError.emit(message)

    # ---- selection and sampling ----------------------------------------------------------------
    def select_position(self, position: int | None, session: SessionId | str = A) -> None:
        """Select a token for every view of ``session`` (the newest: follow new tokens)."""
        self.sessions[session].select_position(position)

    def select_stage(self, stage: Stage, session: SessionId | str = A) -> None:
        """Focus a pipeline stage; a block stage also selects its layer."""
        if not self.sessions[session].select_stage(stage):
            self.sessions.emit_selection(session)  # always: a click on the current stage re-opens its tab

    def select_block(self, layer: int, head: int | None = None, session: SessionId | str = A) -> None:
        """Focus block ``layer``, optionally on ``head`` (a pipeline cell opens on the head it shows)."""
        if not self.sessions[session].select_block(layer, head):
            self.sessions.emit_selection(session)

    def select_head(self, head: int, session: SessionId | str = A) -> None:
        """Choose the head the attention view enlarges."""
        if not self.sessions[session].select_head(head):
            self.sessions.emit_selection(session)

    def move_stage(self, delta: int, session: SessionId | str = A) -> None:
        """Walk the pipeline: the previous or next stage of the token's journey."""
        if not self.sessions[session].move_stage(delta):
            self.sessions.emit_selection(session)

    def set_sampling(self, session: SessionId | str = A, **changes) -> None:
        """Change temperature / top_k / top_p / seed; raises ValueError on invalid values."""
        s = self.sessions[session]
        if s.set_sampling(**changes) and session_id(session) is A:
            self.settings.set_sampling(s.sampling)

    def report_error(self, message: str) -> None:
        """Show a message about a user's input (e.g. an invalid setting typed in a view)."""
        self.sigError.emit(message)

    def distribution(self, session: SessionId | str = A):
        """Next-token distribution under the session's settings and the token a step would take."""
        return self.sessions[session].distribution()

    def lens(self, position: int, session: SessionId | str = A):
        """Logit lens [n_layer + 1, V] of ``session`` at ``position``."""
        return self.sessions[session].lens(position)

    def kv_cache_mb(self, session: SessionId | str = A) -> float:
        """The KV cache's size for ``session``'s current text, in MiB."""
        return self.sessions[session].kv_cache_mb()

    def shutdown(self) -> None:
        """Stop the worker thread; waits for a model call in progress to end (never kills it)."""
        self.pause()
        self.cancel_jobs()
        self._prefetch_timer.stop()
        self.worker.supersede_all()  # skip whatever is still queued
        self._thread.quit()
        self._thread.wait()
