"""Request numbering: every request to the worker gets a number, so results of stale requests are dropped.

A request that replaces what a session shows (a prompt, a model, Reset) is a barrier: the worker skips
that session's older requests still queued, and a result of one already on its way is dropped here.
The bus also counts the requests not yet answered, which is what "busy" means. QtCore only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from gpt2viz.app.sessions import SessionId, session_id


class RequestBus(QObject):
    """Numbers requests per session and tells stale answers from live ones.

    Parameters
    ----------
    supersede : callable
        ``supersede(session, req)``: make the worker skip that session's queued requests older than ``req``.
    """

    sigBusy = Signal(bool)  # True when a request goes out while none was pending, False when the last is answered

    def __init__(self, supersede: Callable[[str, int], None], parent=None):
        super().__init__(parent)
        self._supersede = supersede
        self._req = 0
        self._pending = 0
        self._accept_from: dict[SessionId, int] = {}

    @property
    def busy(self) -> bool:
        """Whether a request is still unanswered."""
        return self._pending > 0

    @property
    def pending(self) -> int:
        """How many requests are still unanswered."""
        return self._pending

    def number(self) -> int:
        """A fresh request number that nothing waits for (a job's, a cancellation's)."""
        self._req += 1
        return self._req

    def send(self, session: SessionId | str, barrier: bool = False) -> int:
        """The number of a new request of ``session``, counted as pending until :meth:`answered`.

        A ``barrier`` makes every older request of the session stale (skipped by the worker, dropped here).
        """
        req = self.number()
        if barrier:
            self._fence(session_id(session), req)
        self._pending += 1
        self.sigBusy.emit(True)
        return req

    def cancel(self, session: SessionId | str) -> None:
        """Make everything of ``session`` sent so far stale; a long prefill stops at its next chunk."""
        self._fence(session_id(session), self.number())

    def _fence(self, sid: SessionId, req: int) -> None:
        self._accept_from[sid] = req
        self._supersede(sid.value, req)

    def live(self, req: int, session: SessionId | str) -> bool:
        """Whether the answer to ``req`` is still wanted (no barrier of its session came after it)."""
        return req >= self._accept_from.get(session_id(session), 0)

    def answered(self) -> None:
        """One pending request got its answer (a result, a failure or a skip)."""
        self._pending = max(0, self._pending - 1)
        if not self._pending:
            self.sigBusy.emit(False)
