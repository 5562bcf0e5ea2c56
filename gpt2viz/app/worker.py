"""The inference worker: owns the model and the generator on a QThread, so the window never waits.

Requests arrive as queued slot calls carrying a request number; results go back as signals with the
same number. A request older than the newest prompt or model load is skipped here and its result,
if one was already on its way, is dropped by the state.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal, Slot

from gpt2viz.core.runtime import Model
from gpt2viz.core.stepper import Generator


class InferenceWorker(QObject):
    """Runs every model call off the GUI thread. Never touches widgets."""

    sigModelLoaded = Signal(int, object)  # request, Model
    sigHistory = Signal(int, object, float)  # request, History, elapsed ms of the model call
    sigFailed = Signal(int, str)  # request, message for the user

    def __init__(self):
        super().__init__()
        self.model: Model | None = None
        self.gen: Generator | None = None
        # Newest start/load request; written from the GUI thread (a plain int: atomic under the GIL).
        self.barrier = 0

    def _stale(self, req: int) -> bool:
        return req < self.barrier

    def _guard(self, req: int, fn) -> None:
        if self._stale(req):
            return
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure becomes a message; the thread lives on
            self.sigFailed.emit(req, str(e) or type(e).__name__)

    @Slot(int, str)
    def load_model(self, req: int, folder: str) -> None:
        def go():
            model = Model(folder)
            self.model, self.gen = model, Generator(model)
            self.sigModelLoaded.emit(req, model)
        self._guard(req, go)

    @Slot(int, str)
    def start(self, req: int, text: str) -> None:
        def go():
            if self.gen is None:
                raise RuntimeError("no model is loaded")
            t0 = time.perf_counter()
            self.gen.start(self.gen.model.tokenizer.encode(text))
            self.sigHistory.emit(req, self.gen.history(), (time.perf_counter() - t0) * 1000)
        self._guard(req, go)

    @Slot(int, object, object)
    def step(self, req: int, settings, token) -> None:
        def go():
            if self.gen is None or not self.gen.frames:
                raise RuntimeError("run a prompt first")
            frame = self.gen.step(settings, token)
            self.sigHistory.emit(req, self.gen.history(), frame.elapsed_ms)
        self._guard(req, go)

    @Slot(int)
    def back(self, req: int) -> None:
        def go():
            if self.gen and self.gen.frames:
                self.gen.back()
                self.sigHistory.emit(req, self.gen.history(), 0.0)
        self._guard(req, go)

    @Slot(int)
    def reset(self, req: int) -> None:
        def go():
            if self.gen and self.gen.frames:
                self.gen.reset()
                self.sigHistory.emit(req, self.gen.history(), 0.0)
        self._guard(req, go)
