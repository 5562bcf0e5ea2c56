"""Application state: the one object views read from and ask things of. QtCore only.

Data flows one way: a request goes to the worker thread, an immutable History comes back, the state
stores it and emits; views redraw from the state. Slider moves only re-transform the stored logits.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import replace

import numpy as np

from PySide6.QtCore import QObject, QThread, QTimer, Signal

from gpt2viz.app.settings import Settings
from gpt2viz.app.stages import stage_ids
from gpt2viz.app.worker import InferenceWorker
from gpt2viz.core.runtime import Model
from gpt2viz.core.sampling import Distribution, SamplingSettings
from gpt2viz.core.stepper import History
from gpt2viz.core.weights import Weights


FRAME_S = 0.15  # minimum time between redraws while auto-stepping (a full redraw costs ≈ 80 ms)


class AppState(QObject):
    """Model, generation history, selection and sampling settings, with change signals.

    Parameters
    ----------
    settings : Settings
        Persistent settings (the last sampling settings are restored from it).
    """

    sigModel = Signal()  # a model finished loading
    sigHistory = Signal()  # the frames changed (run, step, back, reset)
    sigSelection = Signal()  # position, stage, layer or head changed
    sigSampling = Signal()  # temperature / top-k / top-p / seed changed
    sigBusy = Signal(bool)
    sigError = Signal(str)
    sigPlaying = Signal(bool)

    # queued calls into the worker thread
    _toLoad = Signal(int, str)
    _toStart = Signal(int, str)
    _toStep = Signal(int, object, object)
    _toBack = Signal(int)
    _toReset = Signal(int)

    def __init__(self, settings: Settings | None = None, parent=None):
        super().__init__(parent)
        self.settings = settings or Settings()
        self.model: Model | None = None
        self.weights: Weights | None = None
        self.history: History | None = None
        self.sampling: SamplingSettings = self.settings.sampling()
        self.position: int | None = None  # None: follow the newest token
        self.stage = "choose"
        self.layer = 0
        self.head = 0
        self.last_ms = 0.0
        self.model_runs = 0  # how many model calls produced results (tests assert sliders add none)
        self._req = 0
        self._pending = 0
        self._accept_from = 0
        self._dist_key = None
        self._dist: tuple[Distribution, int] | None = None
        # The lens at a position depends only on the tokens up to it (causal), so results are keyed by
        # that prefix and survive steps and Back. Full [layers + 1, V] arrays are few; top tokens are many.
        self._lens_cache: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._tops_cache: OrderedDict[tuple, tuple[np.ndarray, np.ndarray]] = OrderedDict()

        self._thread = QThread()
        self._thread.setObjectName("gpt2viz-inference")
        self.worker = InferenceWorker()
        self.worker.moveToThread(self._thread)
        self._toLoad.connect(self.worker.load_model)
        self._toStart.connect(self.worker.start)
        self._toStep.connect(self.worker.step)
        self._toBack.connect(self.worker.back)
        self._toReset.connect(self.worker.reset)
        self.worker.sigModelLoaded.connect(self._on_model)
        self.worker.sigHistory.connect(self._on_history)
        self.worker.sigFailed.connect(self._on_failed)
        self.worker.sigSkipped.connect(lambda _req: self._done())
        self._thread.start()

        # Auto-step is paced from each result's arrival (single shot), never by a free-running timer:
        # a 0 ms repeating timer would spin the GUI thread and starve the worker of the GIL.
        self.playing = False
        # While playing, results can arrive faster than the views redraw (≈ 100 ms for all of them);
        # views then redraw at most once per FRAME_S, showing the newest state, never a backlog.
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.timeout.connect(self._emit_history)
        self._last_emit = 0.0
        self.play_timer = QTimer(self)
        self.play_timer.setSingleShot(True)
        self.play_timer.setInterval(400)
        self.play_timer.timeout.connect(self._on_play_tick)

    # ---- requests -------------------------------------------------------------------------------
    def _next(self, barrier: bool = False) -> int:
        self._req += 1
        if barrier:
            self._accept_from = self._req
            self.worker.barrier = self._req
        self._pending += 1
        self.sigBusy.emit(True)
        return self._req

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def load_model(self, folder: str) -> None:
        """Open a model folder (on the worker thread)."""
        self.pause()
        self._toLoad.emit(self._next(barrier=True), str(folder))

    def run_prompt(self, text: str) -> None:
        """Tokenize and prefill ``text``; supersedes anything still queued."""
        self.pause()
        self._toStart.emit(self._next(barrier=True), text)

    def step(self, token: int | None = None) -> None:
        """Append one token: the one the current settings choose, or ``token`` (forced)."""
        if self.history is None:
            return
        self._toStep.emit(self._next(), self.sampling, token)

    def back(self) -> None:
        self.pause()
        if self.history is not None:
            self._toBack.emit(self._next())

    def reset(self) -> None:
        self.pause()
        if self.history is not None:
            self._toReset.emit(self._next())

    def play(self) -> None:
        if self.history is not None and not self.playing:
            self.playing = True
            self.sigPlaying.emit(True)
            self._on_play_tick()

    def pause(self) -> None:
        self.play_timer.stop()
        if self._flush.isActive():
            self._emit_history()  # show the newest state at once
        if self.playing:
            self.playing = False
            self.sigPlaying.emit(False)

    def set_pace(self, ms: int) -> None:
        self.play_timer.setInterval(max(0, int(ms)))

    def _on_play_tick(self) -> None:
        if not self.playing or self.busy:
            return  # the next result re-arms the timer: never more than one auto-step queued
        if self.model is None or self.history is None or len(self.history.tokens) >= self.model.config.n_positions:
            self.pause()
            return
        self.step()

    # ---- results --------------------------------------------------------------------------------
    def _done(self) -> None:
        self._pending = max(0, self._pending - 1)
        if not self._pending:
            self.sigBusy.emit(False)

    def _on_model(self, req: int, loaded: tuple[Model, Weights]) -> None:
        self._done()
        if req < self._accept_from:
            return
        self.model, self.weights = loaded
        self.history = None
        self.position, self.layer, self.head = None, 0, 0
        self.settings.set("model/last", str(self.model.folder))
        self.sigModel.emit()
        self.sigHistory.emit()

    def _on_history(self, req: int, history: History, elapsed_ms: float, lens: np.ndarray) -> None:
        self._done()
        if req < self._accept_from:
            return  # a result for a prompt or model that has since been replaced
        self.history = history
        self._remember(self._lens_cache, history.tokens, lens, 8)
        if elapsed_ms:
            self.last_ms = elapsed_ms
            self.model_runs += 1
        if self.position is not None and self.position >= len(history.tokens):
            self.position = None
        if self.playing and not self.busy:
            if self.play_timer.interval() == 0:
                self._on_play_tick()  # queue the next step first: the worker runs it while views redraw
            else:
                self.play_timer.start()
        wait = self._last_emit + FRAME_S - time.perf_counter()
        if self.playing and wait > 0:
            if not self._flush.isActive():
                self._flush.start(int(wait * 1000) + 1)
            return
        self._emit_history()

    def _emit_history(self) -> None:
        self._flush.stop()
        self.sigHistory.emit()
        self._last_emit = time.perf_counter()

    def _on_failed(self, req: int, message: str) -> None:
        self._done()
        self.pause()
        if req >= self._accept_from:
            self.sigError.emit(message)

    # ---- selection and sampling ----------------------------------------------------------------
    @property
    def selected_position(self) -> int:
        """The position every view shows: the clicked token, or the newest one."""
        if self.history is None:
            return 0
        n = len(self.history.tokens)
        return n - 1 if self.position is None else min(self.position, n - 1)

    def select_position(self, position: int | None) -> None:
        if self.history is not None and position is not None and position >= len(self.history.tokens) - 1:
            position = None  # the newest token: keep following it as generation goes on
        if position != self.position:
            self.position = position
            self.sigSelection.emit()

    def select_stage(self, stage: str) -> None:
        if stage.startswith("block."):
            self.layer = int(stage.split(".")[1])
        if stage != self.stage:
            self.stage = stage
        self.sigSelection.emit()

    def select_head(self, head: int) -> None:
        """Choose the head the attention view enlarges."""
        self.head = head
        self.sigSelection.emit()

    def move_stage(self, delta: int) -> None:
        """Walk the pipeline: the previous or next stage of the current token's journey."""
        ids = self.stage_ids()
        i = ids.index(self.stage) if self.stage in ids else 0
        self.select_stage(ids[max(0, min(len(ids) - 1, i + delta))])

    def stage_ids(self) -> list[str]:
        return stage_ids(self.model.config.n_layer if self.model else 0)

    def set_sampling(self, **changes) -> None:
        """Change temperature / top_k / top_p / seed; raises ValueError on invalid values."""
        new = replace(self.sampling, **changes)
        if new != self.sampling:
            self.sampling = new
            self.settings.set_sampling(new)
            self.sigSampling.emit()

    def distribution(self) -> tuple[Distribution, int] | None:
        """Next-token distribution under the current settings and the token a step would take."""
        if self.history is None or self.model is None:
            return None
        from gpt2viz.core.sampling import choose, transform

        frame = self.history.current
        key = (id(frame), self.sampling)
        if key != self._dist_key:
            dist = transform(frame.logits, self.sampling)
            self._dist = (dist, choose(dist, self.sampling.seed, len(frame.tokens)))
            self._dist_key = key
        return self._dist

    @staticmethod
    def _remember(cache: OrderedDict, key, value, limit: int):
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > limit:
            cache.popitem(last=False)
        return value

    def lens(self, position: int) -> np.ndarray:
        """Logit lens [n_layer + 1, V] at ``position`` (the newest one comes ready from the worker)."""
        from gpt2viz.core.analysis import lens_at

        key = self.history.tokens[: position + 1]
        if key in self._lens_cache:
            self._lens_cache.move_to_end(key)
            return self._lens_cache[key]
        lens = lens_at(self.history, self.weights, self.model.config.n_layer, position)
        return self._remember(self._lens_cache, key, lens, 8)

    def lens_tops(self, position: int) -> tuple[np.ndarray, np.ndarray]:
        """Top token and its probability at every depth for ``position`` (for the lens grid)."""
        from gpt2viz.core.analysis import lens_top

        key = self.history.tokens[: position + 1]
        if key not in self._tops_cache:
            self._remember(self._tops_cache, key, lens_top(self.lens(position)), 4096)
        return self._tops_cache[key]

    def kv_cache_mb(self) -> float:
        if self.history is None or self.model is None:
            return 0.0
        return len(self.history.tokens) * self.model.config.kv_bytes_per_token() / 2**20

    def shutdown(self) -> None:
        """Stop the worker thread; waits for a model call in progress to end (never kills it)."""
        self.pause()
        self.worker.barrier = 1 << 62  # skip whatever is still queued
        self._thread.quit()
        self._thread.wait()
