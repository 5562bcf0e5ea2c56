"""The inference worker: owns the model and the generator on a QThread, so the window never waits.

Requests arrive as queued slot calls carrying a request number; results go back as signals with the
same number. A request older than the newest prompt or model load is skipped here and its result,
if one was already on its way, is dropped by the state.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal, Slot

from gpt2viz.core.analysis import lens_at
from gpt2viz.core.runtime import Model
from gpt2viz.core.stepper import Generator
from gpt2viz.core.weights import Weights


class InferenceWorker(QObject):
    """Runs every model call off the GUI thread. Never touches widgets."""

    sigModelLoaded = Signal(int, object)  # request, Model
    sigHistory = Signal(int, object, float, object)  # request, History, elapsed ms, lens at the newest position
    sigFailed = Signal(int, str)  # request, message for the user
    sigSkipped = Signal(int)  # request that needed no work (superseded, or nothing to undo)
    # Every request is answered by exactly one of these four signals: the state counts answers to
    # know when the worker is idle.

    def __init__(self):
        super().__init__()
        self.model: Model | None = None
        self.gen: Generator | None = None
        self.weights: Weights | None = None
        # Newest start/load request; written from the GUI thread (a plain int: atomic under the GIL).
        self.barrier = 0

    def _emit_history(self, req: int, elapsed_ms: float) -> None:
        # The logit lens of the newest position is a [layers + 1, V] matmul (≈ 0.5 GFLOP for GPT-2
        # small): every view wants it after each step, so it is made here, off the GUI thread.
        h = self.gen.history()
        lens = lens_at(h, self.weights, self.model.config.n_layer, len(h.tokens) - 1)
        self.sigHistory.emit(req, h, elapsed_ms, lens)

    def _stale(self, req: int) -> bool:
        return req < self.barrier

    def _guard(self, req: int, fn) -> None:
        if self._stale(req):
            self.sigSkipped.emit(req)
            return
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure becomes a message; the thread lives on
            self.sigFailed.emit(req, str(e) or type(e).__name__)

    @Slot(int, str)
    def load_model(self, req: int, folder: str) -> None:
        def go():
            model = Model(folder)
            weights = Weights(model.folder / "model.onnx", model.manifest["config"].get("layer_norm_epsilon", 1e-5))
            weights.W_U  # load the parameters here, not on the GUI thread
            self.model, self.gen, self.weights = model, Generator(model), weights
            self.sigModelLoaded.emit(req, (model, weights))
        self._guard(req, go)

    @Slot(int, str)
    def start(self, req: int, text: str) -> None:
        def go():
            if self.gen is None:
                raise RuntimeError("no model is loaded")
            t0 = time.perf_counter()
            self.gen.start(self.gen.model.tokenizer.encode(text))
            self._emit_history(req, (time.perf_counter() - t0) * 1000)
        self._guard(req, go)

    @Slot(int, object, object)
    def step(self, req: int, settings, token) -> None:
        def go():
            if self.gen is None or not self.gen.frames:
                raise RuntimeError("run a prompt first")
            frame = self.gen.step(settings, token)
            self._emit_history(req, frame.elapsed_ms)
        self._guard(req, go)

    def _rewind(self, req: int, method: str) -> None:
        """Back or Reset: restore stored frames (no model call); nothing to undo is a skip."""
        def go():
            if self.gen and self.gen.frames:
                getattr(self.gen, method)()
                self._emit_history(req, 0.0)
            else:
                self.sigSkipped.emit(req)
        self._guard(req, go)

    @Slot(int)
    def back(self, req: int) -> None:
        self._rewind(req, "back")

    @Slot(int)
    def reset(self, req: int) -> None:
        self._rewind(req, "reset")
