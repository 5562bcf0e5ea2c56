"""The open sessions, addressed by a typed id, and the Qt signals their changes become. QtCore only.

A Session (core) changes only through its own methods, and each tells its listeners what changed; the
registry listens to every session it opens and re-emits those changes as Qt signals carrying the
session's id. Views connect to the signals, so no code path can change a session without its views
hearing of it (napari's EventedModel idea).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal

from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.session.session import Session


class SessionId(str, enum.Enum):
    """Which session: A (the main window's) or B (the comparison). A str, so signals carry it as "A" / "B"."""

    A = "A"
    B = "B"

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


def session_id(name: SessionId | str) -> SessionId:
    """``name`` as a SessionId; ValueError for a name that is no session's (a typo fails here, not later)."""
    return name if isinstance(name, SessionId) else SessionId(name)


# The order a change's signals go out in: interventions before the model (the chips clear first), the
# model before its history (views learn the new sizes before they draw), the history before the selection.
_SIGNAL_ORDER = ("interventions", "model", "history", "selection", "sampling", "prompt", "analyses")


class SessionRegistry(QObject):
    """Session A, optionally B, and the change signals; a read-only mapping ``SessionId -> Session``.

    Parameters
    ----------
    sampling : SamplingSettings
        Session A's first sampling settings (B starts with A's).

    Notes
    -----
    Every signal carries the id (as a str) of the session that changed. ``history_gate``, when set, may
    hold back a history signal (auto-play redraws a few times a second); it must emit it later through
    :meth:`emit_history`.
    """

    sigModel = Signal(str)  # a model finished loading
    sigHistory = Signal(str)  # the frames changed (run, step, back, reset)
    sigSelection = Signal(str)  # position, stage, layer, head or the causal trace's subject changed
    sigSampling = Signal(str)  # temperature / top-k / top-p / seed changed
    sigInterventions = Signal(str)  # the interventions changed (the re-run follows as sigHistory)
    sigPrompt = Signal(str)  # the text a session reads changed (its history follows)
    sigAnalyses = Signal(str)  # a patching table or causal trace was stored, or the stored ones were dropped

    def __init__(self, sampling: SamplingSettings, parent=None):
        super().__init__(parent)
        self._sessions: dict[SessionId, Session] = {}
        self.history_gate: Callable[[SessionId], bool] | None = None
        self._add(SessionId.A, sampling)

    # ---- the mapping --------------------------------------------------------------------------------
    def __getitem__(self, name: SessionId | str) -> Session:
        return self._sessions[session_id(name)]

    def __contains__(self, name) -> bool:
        try:
            return session_id(name) in self._sessions
        except ValueError:
            return False

    def __iter__(self) -> Iterator[SessionId]:
        return iter(list(self._sessions))

    def __len__(self) -> int:
        return len(self._sessions)

    def get(self, name: SessionId | str, default=None) -> Session | None:
        """The session ``name``, or ``default`` when it is not open."""
        return self[name] if name in self else default

    def items(self) -> list[tuple[SessionId, Session]]:
        """(id, session) pairs, A first."""
        return list(self._sessions.items())

    # ---- opening and closing -----------------------------------------------------------------------
    def open(self, name: SessionId | str, sampling: SamplingSettings) -> Session:
        """A new, empty session ``name`` (ValueError if it is open already)."""
        sid = session_id(name)
        if sid in self._sessions:
            raise ValueError(f"session {sid} is already open")
        return self._add(sid, sampling)

    def close(self, name: SessionId | str) -> None:
        """Forget session ``name`` (A stays: the window shows it)."""
        sid = session_id(name)
        if sid is SessionId.A:
            raise ValueError("session A cannot be closed")
        self._sessions.pop(sid, None)

    def _add(self, sid: SessionId, sampling: SamplingSettings) -> Session:
        s = self._sessions[sid] = Session(sid, sampling)
        s.subscribe(lambda parts, sid=sid: self._relay(sid, parts))
        return s

    # ---- signals ------------------------------------------------------------------------------------
    def _relay(self, sid: SessionId, parts: frozenset[str]) -> None:
        if self._sessions.get(sid) is None:
            return  # closed meanwhile
        name = sid.value
        for part in _SIGNAL_ORDER:
            if part == "selection" and (parts & {"selection", "subject"}):
                self.sigSelection.emit(name)
            elif part in parts:
                if part == "history" and self.history_gate is not None and self.history_gate(sid):
                    continue  # emitted later by emit_history
                getattr(self, "sig" + part.capitalize()).emit(name)

    def emit_history(self, name: SessionId | str) -> None:
        """Tell the views of ``name`` to redraw its history now (the gate held it back)."""
        self.sigHistory.emit(session_id(name).value)

    def emit_selection(self, name: SessionId | str) -> None:
        """Re-send the selection unchanged: a click on the current stage re-opens its tab."""
        self.sigSelection.emit(session_id(name).value)
