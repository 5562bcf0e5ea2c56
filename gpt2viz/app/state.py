"""Application state: the sessions views read from and ask things of. QtCore only.

Data flows one way: a request naming its session goes to the worker thread, an immutable History
comes back, the session stores it and the state emits with the session's name; views redraw from
that session's view models. Slider moves only re-transform the stored logits.
"""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import QObject, QThread, QTimer, Signal

from gpt2viz.app.settings import Settings
from gpt2viz.app.worker import InferenceWorker, Result
from gpt2viz.core.session.session import Session, Stage

FRAME_S = 0.25  # minimum time between redraws while auto-stepping (4 a second: enough to follow, cheap to draw)
# Steps in flight while playing at pace 0: the worker always has the next step queued, so it never
# idles while the GUI thread draws a frame (results queue up behind a redraw; one in flight left the
# worker waiting for the GUI thread after every step). Pausing lets those in flight finish and shows them.
PLAY_AHEAD = 3


class AppState(QObject):
    """Session A (and optionally B), request bookkeeping, auto-step, with change signals.

    Parameters
    ----------
    settings : Settings
        Persistent settings (the last sampling settings are restored from it).

    Notes
    -----
    Every signal but sigBusy / sigError / sigPlaying carries the name of the session that changed.
    Only the state emits them and only its methods change sessions; the attributes below are
    read-only views of session A for the single-session window.
    """

    sigModel = Signal(str)  # a model finished loading
    sigHistory = Signal(str)  # the frames changed (run, step, back, reset)
    sigSelection = Signal(str)  # position, stage, layer or head changed
    sigSampling = Signal(str)  # temperature / top-k / top-p / seed changed
    sigBusy = Signal(bool)
    sigError = Signal(str)
    sigPlaying = Signal(bool)
    sigInterventions = Signal(str)  # the interventions of a session changed (the re-run follows as sigHistory)
    sigJobProgress = Signal(str, int, int)  # job channel, done, total
    sigJobDone = Signal(str, object)  # job channel, result (None: cancelled or failed)
    sigProgress = Signal(str, int, int)  # session, prompt positions prefilled, of total (long prompts, in chunks)

    # queued calls into the worker thread
    _toLoad = Signal(int, str, str)
    _toShare = Signal(int, str, str)
    _toStart = Signal(int, str, str, object)
    _toStep = Signal(int, str, object, object, object, bool)
    _toBack = Signal(int, str)
    _toReset = Signal(int, str)
    _toIntervene = Signal(int, str, object)
    _toJob = Signal(int, str, object)

    def __init__(self, settings: Settings | None = None, parent=None):
        super().__init__(parent)
        self.settings = settings or Settings()
        self.sessions: dict[str, Session] = {"A": Session("A", self.settings.sampling())}
        self._req = 0
        self._pending = 0
        self._accept_from: dict[str, int] = {}

        self._thread = QThread()
        self._thread.setObjectName("gpt2viz-inference")
        self.worker = InferenceWorker()
        self.worker.moveToThread(self._thread)
        self._toLoad.connect(self.worker.load_model)
        self._toShare.connect(self.worker.share_model)
        self._toStart.connect(self.worker.start)
        self._toStep.connect(self.worker.step)
        self._toBack.connect(self.worker.back)
        self._toReset.connect(self.worker.reset)
        self._toIntervene.connect(self.worker.intervene)
        self._toJob.connect(self.worker.job)
        self.jobs: dict[str, int] = {}  # job channel -> its newest request
        self.worker.sigModelLoaded.connect(self._on_model)
        self.worker.sigResult.connect(self._on_result)
        self.worker.sigFailed.connect(self._on_failed)
        self.worker.sigSkipped.connect(self._on_skipped)
        self.worker.sigJob.connect(self._on_job)
        self.worker.sigProgress.connect(self._on_progress)
        self._thread.start()

        # Auto-step is paced from each result's arrival (single shot), never by a free-running timer:
        # a 0 ms repeating timer would spin the GUI thread and starve the worker of the GIL.
        self.playing = False
        # While playing, results can arrive faster than the views redraw; views then redraw at most
        # once per FRAME_S, showing the newest state, never a backlog.
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.timeout.connect(lambda: self._emit_history("A"))
        self._last_emit = 0.0
        self.play_timer = QTimer(self)
        self.play_timer.setSingleShot(True)
        self.play_timer.setInterval(400)
        self.play_timer.timeout.connect(self._on_play_tick)

    # ---- sessions -------------------------------------------------------------------------------
    def session(self, name: str = "A") -> Session:
        """The session called ``name`` (KeyError if it is not open)."""
        return self.sessions[name]

    def open_session(self, name: str = "B", prompt: str | None = None) -> Session:
        """Open a second session on session A's model (for comparison); runs ``prompt`` if given."""
        a = self.sessions["A"]
        if name in self.sessions:
            raise ValueError(f"session {name} is already open")
        s = self.sessions[name] = Session(name, a.sampling)
        s.set_model(a.model, a.weights)  # the same objects: read-only here, and the worker shares them too
        self._toShare.emit(self._next(name), name, "A")
        if prompt is not None:
            self.run_prompt(prompt, session=name)
        return s

    def close_session(self, name: str) -> None:
        """Close a comparison session; its queued work is skipped."""
        if name == "A":
            raise ValueError("session A cannot be closed")
        self.worker.supersede(name, 1 << 62)
        self.sessions.pop(name, None)

    # Read-only views of session A, for the single-session window and the command line.
    model = property(lambda self: self.sessions["A"].model)
    weights = property(lambda self: self.sessions["A"].weights)
    history = property(lambda self: self.sessions["A"].history)
    sampling = property(lambda self: self.sessions["A"].sampling)
    selection = property(lambda self: self.sessions["A"].selection)
    stage = property(lambda self: self.sessions["A"].selection.stage)
    layer = property(lambda self: self.sessions["A"].selection.layer)
    head = property(lambda self: self.sessions["A"].selection.head)
    last_ms = property(lambda self: self.sessions["A"].last_ms)
    model_runs = property(lambda self: self.sessions["A"].model_runs)
    selected_position = property(lambda self: self.sessions["A"].selected_position)

    # ---- requests -------------------------------------------------------------------------------
    def _next(self, session: str, barrier: bool = False) -> int:
        self.cancel_jobs()  # a new request to the model stops a long analysis at its next graph call
        self._req += 1
        if barrier:
            self._accept_from[session] = self._req
            self.worker.supersede(session, self._req)
        self._pending += 1
        self.sigBusy.emit(True)
        return self._req

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def load_model(self, folder: str, session: str = "A") -> None:
        """Open a model folder (on the worker thread)."""
        self.pause()
        self._toLoad.emit(self._next(session, barrier=True), session, str(folder))

    def run_prompt(self, text: str, session: str = "A") -> None:
        """Tokenize and prefill ``text``; supersedes anything of that session still queued."""
        self.pause()
        s = self.sessions[session]
        if text != s.prompt:
            s.subject = ()  # positions of another text
        s.prompt = text
        self._toStart.emit(self._next(session, barrier=True), session, text, s.interventions)

    def step(self, token: int | None = None, session: str = "A") -> None:
        """Append one token: the one the current settings choose, or ``token`` (forced)."""
        s = self.sessions[session]
        if s.history is None:
            return
        # auto-stepping asks the worker for the lens tops only: views draw few of those frames and compute
        # the full lens of the one they draw
        self._toStep.emit(self._next(session), session, s.sampling, token, s.interventions,
                          not (self.playing and session == "A"))

    def back(self, session: str = "A") -> None:
        self.pause()
        if self.sessions[session].history is not None:
            self._toBack.emit(self._next(session), session)

    def reset(self, session: str = "A") -> None:
        """Back to the state right after the prompt; a prefill still running is cancelled first."""
        self.pause()
        if self.sessions[session].history is not None:
            # a barrier: a long prefill in progress stops at its next chunk (the generator keeps its state)
            self._toReset.emit(self._next(session, barrier=True), session)
        else:
            self.cancel(session)

    def cancel(self, session: str = "A") -> None:
        """Drop the session's queued and running work; a long prefill stops at its next chunk."""
        self._req += 1
        self._accept_from[session] = self._req
        self.worker.supersede(session, self._req)

    # ---- interventions ----------------------------------------------------------------------------
    def set_interventions(self, interventions, session: str = "A") -> None:
        """Put ``interventions`` (a tuple) in force for ``session``; the text is run again under them."""
        s = self.sessions[session]
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
        s.interventions = interventions
        self.sigInterventions.emit(session)
        if s.history is not None:
            self._toIntervene.emit(self._next(session), session, interventions)

    def add_intervention(self, intervention, session: str = "A") -> None:
        """Add one intervention (a second identical one is ignored)."""
        s = self.sessions[session]
        if intervention not in s.interventions:
            self.set_interventions((*s.interventions, intervention), session)

    def remove_intervention(self, intervention, session: str = "A") -> None:
        """Remove one intervention: the numbers return to what they were without it."""
        s = self.sessions[session]
        self.set_interventions(tuple(iv for iv in s.interventions if iv != intervention), session)

    def clear_interventions(self, session: str = "A") -> None:
        """Remove every intervention of ``session``."""
        self.set_interventions((), session)

    def set_subject(self, positions, session: str = "A") -> None:
        """The tokens the causal trace corrupts (positions of the prompt)."""
        s = self.sessions[session]
        s.subject = tuple(sorted({int(p) for p in positions}))
        self.sigSelection.emit(session)

    # ---- long analyses --------------------------------------------------------------------------
    def prompt_ids(self, session: str = "A") -> list[int]:
        """The prompt's tokens of ``session``'s history (what the analyses run on)."""
        h = self.sessions[session].history
        return [] if h is None else [int(t) for t in h.tokens[: h.prompt_len]]

    def patching_is_current(self, summary) -> bool:
        """Whether a patching summary was made for the prompts A and B have now: a table stays on screen
        after either prompt changes, but its cells name positions of the prompts it was made for."""
        return list(summary.clean_ids) == self.prompt_ids("A") and "B" in self.sessions and \
            list(summary.corrupt_ids) == self.prompt_ids("B")

    def run_patching(self, site: str, target: int | None = None) -> bool:
        """Activation patching with A clean and B corrupted, on the worker (channel "patching").

        False (and nothing runs) when B is not open or has not run; the token counts are checked by
        the view first (it shows both tokenisations) and again by the engine."""
        from gpt2viz.core.analysis.patching import patching_table
        from gpt2viz.core.viewmodels.compare import patching_summary

        a, b = self.sessions["A"], self.sessions.get("B")
        if a.history is None or b is None or b.history is None:
            return False
        clean, corrupt = self.prompt_ids("A"), self.prompt_ids("B")
        model = a.model
        if target is None:
            target = int(np.argmax(a.history.frames[0].logits))

        def job(progress, cancel):
            t = patching_table(model, clean, corrupt, target, site, progress=progress, cancel=cancel)
            return patching_summary(t, clean, corrupt)
        self.run_job("patching", job)
        return True

    def run_causal_trace(self, subject, target: int | None = None, noise: float = 3.0, samples: int = 10,
                         window: int = 1, seed: int = 0) -> bool:
        """ROME's causal trace of A's prompt with ``subject`` positions corrupted (channel "causal")."""
        from gpt2viz.core.analysis.causal_trace import causal_trace
        from gpt2viz.core.viewmodels.compare import causal_summary

        a = self.sessions["A"]
        if a.history is None:
            return False
        ids = self.prompt_ids("A")
        model, weights = a.model, a.weights
        if target is None:
            target = int(np.argmax(a.history.frames[0].logits))

        def job(progress, cancel):
            tr = causal_trace(model, weights, ids, subject, target, noise=noise, samples=samples, window=window,
                              seed=seed, progress=progress, cancel=cancel)
            return causal_summary(tr, ids)
        self.run_job("causal", job)
        return True

    def run_job(self, channel: str, fn) -> None:
        """Run ``fn(progress, cancel)`` on the worker thread (a patching table, a causal trace).

        Progress arrives as sigJobProgress(channel, done, total), the result as sigJobDone(channel, result);
        a newer job on the same channel, any new model request, :meth:`cancel_jobs` or closing cancels it.
        """
        self.cancel_jobs()
        self._req += 1
        self.jobs[channel] = self._req
        self.worker.supersede(channel, self._req)
        self._toJob.emit(self._req, channel, fn)

    def cancel_jobs(self, channel: str | None = None) -> None:
        """Cancel the running or queued job of ``channel`` (default every channel)."""
        for ch in [channel] if channel else list(self.jobs):
            if ch in self.jobs:
                self.worker.supersede(ch, self.jobs[ch] + 1)

    @property
    def job_running(self) -> bool:
        return bool(self.jobs)

    def _on_progress(self, req: int, channel: str, done: int, total: int) -> None:
        # one worker signal for both kinds of progress: a session's long prefill, or a job's graph calls
        if channel in self.sessions:
            if self._live(req, channel) is not None:
                self.sigProgress.emit(channel, done, total)
        elif self.jobs.get(channel) == req:
            self.sigJobProgress.emit(channel, done, total)

    def _finish_job(self, req: int, channel: str, result) -> bool:
        if self.jobs.get(channel) != req:
            return False
        del self.jobs[channel]
        if result is not None:
            self.sessions["A"].analyses[channel] = result
        self.sigJobDone.emit(channel, result)
        return True

    def _on_job(self, req: int, channel: str, result) -> None:
        self._finish_job(req, channel, result)

    def _on_skipped(self, req: int, session: str) -> None:
        if session in self.sessions:
            self._done()
        else:
            self._finish_job(req, session, None)

    def play(self) -> None:
        """Auto-step session A at the pace set by :meth:`set_pace`."""
        if self.history is not None and not self.playing:
            self.playing = True
            self.sigPlaying.emit(True)
            self._on_play_tick()

    def pause(self) -> None:
        self.play_timer.stop()
        if self._flush.isActive():
            self._emit_history("A")  # show the newest state at once
        if self.playing:
            self.playing = False
            self.sigPlaying.emit(False)

    def set_pace(self, ms: int) -> None:
        self.play_timer.setInterval(max(0, int(ms)))

    def _on_play_tick(self) -> None:
        if not self.playing:
            return
        # the next result re-arms the timer: at a set pace one auto-step in flight, at pace 0 PLAY_AHEAD
        limit = PLAY_AHEAD if self.play_timer.interval() == 0 else 1
        a = self.sessions["A"]
        if a.model is None or a.history is None:
            self.pause()
            return
        while self._pending < limit:
            if a.context_full(ahead=self._pending):
                if not self._pending:
                    self.pause()
                return
            self.step()

    # ---- results --------------------------------------------------------------------------------
    def _done(self) -> None:
        self._pending = max(0, self._pending - 1)
        if not self._pending:
            self.sigBusy.emit(False)

    def _live(self, req: int, session: str) -> Session | None:
        s = self.sessions.get(session)
        return s if s is not None and req >= self._accept_from.get(session, 0) else None

    def _on_model(self, req: int, session: str, loaded) -> None:
        self._done()
        # Not dropped when superseded: the worker has already switched this session to the new model,
        # so every later result comes from it; dropping this would pair the old model (its config,
        # weights) with the new model's histories (found by the GUI fuzz: a prompt typed mid-load).
        s = self.sessions.get(session)
        if s is None:
            return
        s.set_model(*loaded)
        # Interventions, the subject and analyses name layers, heads and positions of the old model and text.
        s.subject, s.analyses = (), {}
        if s.interventions:
            s.interventions = ()
            self.sigInterventions.emit(session)
        if session == "A":
            self.settings.set("model/last", str(s.model.folder))
        self.sigModel.emit(session)
        self.sigHistory.emit(session)
        if session == "A":
            for name, other in list(self.sessions.items()):
                if name != "A":  # a comparison follows A's model: B shares it and runs its prompt again
                    other.set_model(s.model, s.weights)
                    other.interventions, other.analyses = (), {}
                    self.sigInterventions.emit(name)
                    self._toShare.emit(self._next(name), name, "A")
                    self.sigModel.emit(name)
                    if other.prompt:
                        self.run_prompt(other.prompt, session=name)

    def _on_result(self, req: int, session: str, result: Result) -> None:
        self._done()
        s = self._live(req, session)
        if s is None:
            return  # a result for a prompt or model that has since been replaced
        s.accept(result.history, result.elapsed_ms, result.lens, result.ran_model, result.lens_tops, result.baseline)
        if session != "A":
            self.sigHistory.emit(session)
            return
        if self.playing:
            if self.play_timer.interval() == 0:
                self._on_play_tick()  # queue the next steps first: the worker runs them while views redraw
            elif not self.busy:
                self.play_timer.start()
        wait = self._last_emit + FRAME_S - time.perf_counter()
        if self.playing and wait > 0:
            if not self._flush.isActive():
                self._flush.start(int(wait * 1000) + 1)
            return
        self._emit_history(session)

    def _emit_history(self, session: str) -> None:
        self._flush.stop()
        self.sigHistory.emit(session)
        self._last_emit = time.perf_counter()

    def _on_failed(self, req: int, session: str, message: str) -> None:
        if session not in self.sessions:  # a long analysis
            if self._finish_job(req, session, None):
                self.sigError.emit(message)
            return
        self._done()
        self.pause()
        if self._live(req, session) is not None:
            self.sigError.emit(message)

    # ---- selection and sampling ----------------------------------------------------------------
    def select_position(self, position: int | None, session: str = "A") -> None:
        """Select a token for every view of ``session`` (the newest: follow new tokens)."""
        if self.sessions[session].select_position(position):
            self.sigSelection.emit(session)

    def select_stage(self, stage: Stage, session: str = "A") -> None:
        """Focus a pipeline stage; a block stage also selects its layer."""
        self.sessions[session].select_stage(stage)
        self.sigSelection.emit(session)  # always: a click on the current stage re-opens its tab

    def select_block(self, layer: int, head: int | None = None, session: str = "A") -> None:
        """Focus block ``layer``, optionally on ``head`` (a pipeline cell opens on the head it shows)."""
        s = self.sessions[session]
        if head is not None:
            s.select_head(head)
        s.select_stage(Stage.block(layer))
        self.sigSelection.emit(session)

    def select_head(self, head: int, session: str = "A") -> None:
        """Choose the head the attention view enlarges."""
        self.sessions[session].select_head(head)
        self.sigSelection.emit(session)

    def move_stage(self, delta: int, session: str = "A") -> None:
        """Walk the pipeline: the previous or next stage of the token's journey."""
        self.sessions[session].move_stage(delta)
        self.sigSelection.emit(session)

    def set_sampling(self, session: str = "A", **changes) -> None:
        """Change temperature / top_k / top_p / seed; raises ValueError on invalid values."""
        s = self.sessions[session]
        if s.set_sampling(**changes):
            if session == "A":
                self.settings.set_sampling(s.sampling)
            self.sigSampling.emit(session)

    def report_error(self, message: str) -> None:
        """Show a message about a user's input (e.g. an invalid setting typed in a view)."""
        self.sigError.emit(message)

    def distribution(self, session: str = "A"):
        """Next-token distribution under the session's settings and the token a step would take."""
        return self.sessions[session].distribution()

    def lens(self, position: int, session: str = "A"):
        return self.sessions[session].lens(position)

    def kv_cache_mb(self, session: str = "A") -> float:
        return self.sessions[session].kv_cache_mb()

    def shutdown(self) -> None:
        """Stop the worker thread; waits for a model call in progress to end (never kills it)."""
        self.pause()
        self.cancel_jobs()
        self.worker.supersede_all()  # skip whatever is still queued
        self._thread.quit()
        self._thread.wait()
