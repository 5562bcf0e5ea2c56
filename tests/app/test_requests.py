"""The request bus: numbers, barriers that make older answers stale, and the busy count."""

from __future__ import annotations

from gpt2viz.app.requests import RequestBus
from gpt2viz.app.sessions import SessionId


def test_a_barrier_makes_older_answers_of_that_session_stale(qapp):
    fences, busy = [], []
    bus = RequestBus(lambda name, req: fences.append((name, req)))
    bus.sigBusy.connect(busy.append)
    first = bus.send(SessionId.A)
    other = bus.send("B")
    prompt = bus.send(SessionId.A, barrier=True)
    assert first < other < prompt and fences == [("A", prompt)]
    assert not bus.live(first, "A") and bus.live(prompt, SessionId.A) and bus.live(other, "B")
    assert bus.busy and bus.pending == 3
    for _ in range(3):
        bus.answered()
    assert not bus.busy and busy[-1] is False and busy.count(False) == 1


def test_cancel_fences_without_counting_a_request(qapp):
    fences = []
    bus = RequestBus(lambda name, req: fences.append((name, req)))
    step = bus.send("B")
    bus.cancel("B")
    assert not bus.live(step, "B") and fences[-1][0] == "B" and bus.pending == 1
    assert bus.number() > fences[-1][1]  # numbers never repeat
