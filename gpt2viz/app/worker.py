"""The inference worker: owns the models and one generator per session on a QThread.

Requests arrive as queued slot calls carrying a request number and the session's name; results go
back as signals with both. A request older than that session's newest prompt or model load is skipped
here (see :meth:`InferenceWorker.supersede`) and its result, if already on its way, is dropped by the state.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np
from PySide6.QtCore import QCoreApplication, QObject, Signal, Slot

from gpt2viz.core.analysis import lens_at, lens_top
from gpt2viz.core import runtime
from gpt2viz.core.runtime import Cancelled, Model
from gpt2viz.core.stepper import Generator, History
from gpt2viz.core.weights import Weights


@dataclass(frozen=True)
class Result:
    """What one request produced: the new history, the newest position's lens, and whether the model ran."""

    history: History
    elapsed_ms: float
    lens: np.ndarray | None
    ran_model: bool  # False for Back / Reset: stored frames, no model call
    lens_tops: tuple[np.ndarray, np.ndarray] | None = None  # lens_top(lens): the lens grid's new column


class InferenceWorker(QObject):
    """Runs every model call off the GUI thread. Never touches widgets."""

    sigModelLoaded = Signal(int, str, object)  # request, session, (Model, Weights)
    sigResult = Signal(int, str, object)  # request, session, Result
    sigFailed = Signal(int, str, str)  # request, session, message for the user
    sigSkipped = Signal(int, str)  # request that needed no work (superseded, cancelled, or nothing to undo)
    # Every request is answered by exactly one of these four signals: the state counts answers to
    # know when the worker is idle.
    sigProgress = Signal(int, str, int, int)  # request, session, positions prefilled, of total (long prompts)

    def __init__(self):
        super().__init__()
        self.gens: dict[str, Generator] = {}
        self.weights: dict[str, Weights] = {}
        # Newest start/load request per session. Written from the GUI thread while this thread runs, so
        # it is read and written only under the lock (queued calls could not overtake the queue they skip).
        self._barrier: dict[str, int] = {}
        self._lock = threading.Lock()

    def supersede(self, session: str, req: int) -> None:
        """Skip every queued request of ``session`` older than ``req``. Thread-safe: call from any thread."""
        with self._lock:
            self._barrier[session] = max(req, self._barrier.get(session, 0))

    def supersede_all(self) -> None:
        """Skip everything still queued (shutting down). Thread-safe."""
        with self._lock:
            self._barrier = {k: 1 << 62 for k in (*self._barrier, *self.gens)}
            self._all = True

    def _stale(self, session: str, req: int) -> bool:
        with self._lock:
            return getattr(self, "_all", False) or req < self._barrier.get(session, 0)

    def _emit(self, req: int, session: str, elapsed_ms: float, ran: bool, with_lens: bool = True) -> None:
        # The logit lens of the newest position is a [layers + 1, V] matmul (≈ 0.5 GFLOP for GPT-2
        # small): every view wants it after a step, so it is made here, off the GUI thread. While
        # auto-stepping the views skip most frames; then the views compute the few they draw on demand
        # and the worker steps at nearly the headless rate.
        gen = self.gens[session]
        h = gen.history()
        if not with_lens:
            self.sigResult.emit(req, session, Result(h, elapsed_ms, None, ran, None))
            return
        lens = lens_at(h, self.weights[session], gen.model.config.n_layer, len(h.tokens) - 1)
        # Its top tokens too: while playing, views skip frames, and the lens grid would otherwise compute
        # the skipped columns on the GUI thread.
        self.sigResult.emit(req, session, Result(h, elapsed_ms, lens, ran, lens_top(lens)))

    def _guard(self, req: int, session: str, fn) -> None:
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
            model = Model(folder)
            weights = Weights(model.folder / "model.onnx", model.manifest["config"].get("layer_norm_epsilon", 1e-5))
            weights.W_U  # load the parameters here, not on the GUI thread
            self.gens[session], self.weights[session] = Generator(model), weights
            self.sigModelLoaded.emit(req, session, (model, weights))
        self._guard(req, session, go)

    @Slot(int, str, str)
    def share_model(self, req: int, session: str, source: str) -> None:
        """Give ``session`` the model already open in ``source`` (no second load; its own generation)."""
        def go():
            src = self._gen(source)
            self.gens[session], self.weights[session] = Generator(src.model), self.weights[source]
            self.sigModelLoaded.emit(req, session, (src.model, self.weights[source]))
        # Never skipped: it is cheap, and the prompt queued right behind it (a newer barrier) needs it.
        try:
            go()
        except Exception as e:  # noqa: BLE001
            self.sigFailed.emit(req, session, str(e) or type(e).__name__)

    @Slot(int, str, str, object)
    def start(self, req: int, session: str, text: str, interventions) -> None:
        """Tokenize and prefill ``text``. ``interventions`` (a tuple) is forwarded once the engine has them.

        A long prompt runs in chunks (``runtime.CHUNK`` positions), reporting each through sigProgress; a
        newer prompt, model, Reset or shutdown (anything that supersedes this request) cancels it at
        the next chunk, and the generator keeps its previous state.
        """
        def go():
            gen = self._gen(session)
            t0 = time.perf_counter()
            ids = gen.model.tokenizer.encode(text)
            if len(ids) > runtime.CHUNK:  # it will run in chunks: show the bar from the start
                self.sigProgress.emit(req, session, 0, len(ids))
            try:
                gen.start(ids, progress=lambda done, total: self.sigProgress.emit(req, session, done, total),
                          cancel=lambda: self._stale(session, req))
            except Cancelled:
                self.sigSkipped.emit(req, session)
                return
            self._emit(req, session, (time.perf_counter() - t0) * 1000, True)
        self._guard(req, session, go)

    @Slot(int, str, object, object, object, bool)
    def step(self, req: int, session: str, settings, token, interventions, with_lens: bool = True) -> None:
        def go():
            gen = self._gen(session)
            if not gen.frames:
                raise RuntimeError(QCoreApplication.translate("Worker", "run a prompt first"))
            frame = gen.step(settings, token)
            self._emit(req, session, frame.elapsed_ms, True, with_lens)
        self._guard(req, session, go)

    def _rewind(self, req: int, session: str, method: str) -> None:
        """Back or Reset: restore stored frames (no model call); nothing to undo is a skip."""
        def go():
            gen = self.gens.get(session)
            if gen and gen.frames:
                getattr(gen, method)()
                self._emit(req, session, 0.0, False)
            else:
                self.sigSkipped.emit(req, session)
        self._guard(req, session, go)

    @Slot(int, str)
    def back(self, req: int, session: str) -> None:
        self._rewind(req, session, "back")

    @Slot(int, str)
    def reset(self, req: int, session: str) -> None:
        self._rewind(req, session, "reset")
