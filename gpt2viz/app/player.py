"""Auto-play: session A steps by itself at a set pace, and its views redraw a few times a second. QtCore only.

Stepping is paced from each result's arrival (single-shot timers), never by a free-running timer: a 0 ms
repeating timer would spin the GUI thread and starve the worker of the GIL.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from gpt2viz.app.requests import RequestBus
from gpt2viz.app.sessions import SessionId, SessionRegistry

FRAME_S = 0.25  # minimum time between redraws while auto-stepping (4 a second: enough to follow, cheap to draw)
# Steps in flight while playing at pace 0: the worker always has the next step queued, so it never
# idles while the GUI thread draws a frame (results queue up behind a redraw; one in flight left the
# worker waiting for the GUI thread after every step). Pausing lets those in flight finish and shows them.
PLAY_AHEAD = 3


class Player(QObject):
    """Plays and pauses session A.

    Parameters
    ----------
    sessions : SessionRegistry
        Its history signal for A is held back while playing (see :meth:`hold`).
    bus : RequestBus
        How many steps are in flight.
    step : callable
        Asks the worker for A's next token.
    """

    sigPlaying = Signal(bool)

    def __init__(self, sessions: SessionRegistry, bus: RequestBus, step: Callable[[], None], parent=None):
        super().__init__(parent)
        self._sessions, self._bus, self._step = sessions, bus, step
        self.playing = False
        # While playing, results can arrive faster than the views redraw; views then redraw at most
        # once per FRAME_S, showing the newest state, never a backlog.
        self._flush = QTimer(self)
        self._flush.setSingleShot(True)
        self._flush.timeout.connect(self._show)
        self._last_emit = 0.0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(400)
        self.timer.timeout.connect(self._tick)
        sessions.history_gate = self.hold

    def play(self) -> None:
        """Auto-step session A at the pace set by :meth:`set_pace`."""
        if self._sessions[SessionId.A].history is not None and not self.playing:
            self.playing = True
            self.sigPlaying.emit(True)
            self._tick()

    def pause(self) -> None:
        """Stop auto-stepping; a frame held back is shown at once."""
        self.timer.stop()
        if self._flush.isActive():
            self._show()
        if self.playing:
            self.playing = False
            self.sigPlaying.emit(False)

    def set_pace(self, ms: int) -> None:
        """Milliseconds between auto-steps (0: as fast as the model runs)."""
        self.timer.setInterval(max(0, int(ms)))

    def hold(self, sid: SessionId) -> bool:
        """The registry's history gate: hold back A's redraws while playing (:meth:`after_result` shows them)."""
        if sid is not SessionId.A:
            return False
        if not self.playing:
            self._flush.stop()  # this redraw shows the newest state: a pending one would repeat it
        return self.playing

    def after_result(self) -> None:
        """A result of A arrived while playing: queue the next steps first (the worker runs them while the
        views redraw), then redraw now or at the next frame time."""
        if not self.playing:
            return
        held = self._flush.isActive()
        if self.timer.interval() == 0:
            self._tick()
        elif not self._bus.busy:
            self.timer.start()
        if not self.playing and held:
            return  # the tick paused at the full context, and pause() showed the newest state
        wait = self._last_emit + FRAME_S - time.perf_counter()
        if self.playing and wait > 0:
            if not self._flush.isActive():
                self._flush.start(int(wait * 1000) + 1)
            return
        self._show()

    def _show(self) -> None:
        self._flush.stop()
        self._sessions.emit_history(SessionId.A)
        self._last_emit = time.perf_counter()  # after the redraw: the frame time counts from its end

    def _tick(self) -> None:
        if not self.playing:
            return
        # the next result re-arms the timer: at a set pace one auto-step in flight, at pace 0 PLAY_AHEAD
        limit = PLAY_AHEAD if self.timer.interval() == 0 else 1
        a = self._sessions[SessionId.A]
        if a.model is None or a.history is None:
            self.pause()
            return
        while self._bus.pending < limit:
            if a.context_full(ahead=self._bus.pending):
                if not self._bus.pending:
                    self.pause()
                return
            self._step()
