"""The session registry: typed ids, and every change made through a Session's methods reaching the views."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from gpt2viz.app.sessions import SessionId, SessionRegistry, session_id
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.session.session import PARTS, Session, Stage

ROOT = Path(__file__).resolve().parents[2] / "gpt2viz"


@pytest.fixture
def registry(qapp):
    return SessionRegistry(SamplingSettings())


def record(registry) -> list[tuple[str, str]]:
    seen = []
    for name in ("Model", "History", "Selection", "Sampling", "Interventions", "Prompt", "Analyses"):
        getattr(registry, "sig" + name).connect(lambda sid, n=name: seen.append((n, sid)))
    return seen


def test_session_ids_are_typed_and_a_typo_fails_at_once(registry):
    assert session_id("A") is SessionId.A and f"{SessionId.B}" == "B" and str(SessionId.B) == "B"
    with pytest.raises(ValueError):
        session_id("C")
    assert "A" in registry and SessionId.A in registry and "B" not in registry and "C" not in registry
    assert registry.get("B") is None and registry["A"] is registry[SessionId.A]
    b = registry.open(SessionId.B, SamplingSettings())
    assert registry.get("B") is b and [sid for sid, _ in registry.items()] == [SessionId.A, SessionId.B]
    with pytest.raises(ValueError):
        registry.open("B", SamplingSettings())
    with pytest.raises(ValueError):
        registry.close("A")
    registry.close("B")
    assert "B" not in registry and len(registry) == 1


def test_a_change_made_through_a_session_method_reaches_a_view(registry):
    """A view listening to the registry hears every change, whoever calls the method (no missed signal)."""
    seen = record(registry)
    s = registry["A"]
    s.set_prompt("The capital of France is")
    s.set_subject([3, 1, 3])
    s.set_sampling(temperature=0.5)
    s.set_interventions(("an intervention",))
    s.select_stage(Stage.block(0))
    s.store_analysis("patching", object())
    assert seen == [("Prompt", "A"), ("Selection", "A"), ("Sampling", "A"), ("Interventions", "A"),
                    ("Selection", "A"), ("Analyses", "A")]
    assert s.subject == (1, 3)
    seen.clear()
    s.set_prompt("Another text")  # forgets the subject: its positions were of the old text
    assert s.subject == () and seen == [("Selection", "A"), ("Prompt", "A")]
    seen.clear()
    s.set_model(None, None)  # a new model: the interventions and analyses go, the views hear each
    assert seen == [("Interventions", "A"), ("Model", "A"), ("History", "A"), ("Selection", "A"),
                    ("Analyses", "A")]
    assert s.interventions == () and s.analyses == {}


def test_unchanged_values_send_nothing(registry):
    seen = record(registry)
    s = registry["A"]
    s.set_prompt("")
    s.set_sampling()
    s.set_interventions(())
    s.set_subject(())
    s.select_position(None)
    assert seen == []


def test_a_gate_holds_back_history_and_emit_history_sends_it(registry):
    seen = record(registry)
    registry.history_gate = lambda sid: sid is SessionId.A
    registry["A"].set_model(None, None)
    assert ("History", "A") not in seen and ("Model", "A") in seen
    registry.emit_history("A")
    assert seen[-1] == ("History", "A")


def test_every_notified_part_has_a_signal():
    assert {p for p in PARTS if p != "subject"} == {"model", "history", "selection", "sampling", "prompt",
                                                    "interventions", "analyses"}
    for part in PARTS:
        assert part == "subject" or hasattr(SessionRegistry, "sig" + part.capitalize())


def _session_fields() -> set[str]:
    s = Session("A")
    return {k for k in vars(s) if not k.startswith("_")}


def test_no_code_above_core_assigns_a_session_field():
    """Only a Session's own methods change it: anything else would change it without telling the views."""
    fields = _session_fields()
    offenders = []
    files = [*(ROOT / "app").rglob("*.py"), *(ROOT / "widgets").rglob("*.py"), *(ROOT / "commands").rglob("*.py"),
             ROOT / "cli.py", ROOT / "headless.py", *ROOT.glob("launch.py")]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Subscript):
                        el = el.value  # s.analyses["x"] = ...
                    if isinstance(el, ast.Attribute) and el.attr in fields and not (
                            isinstance(el.value, ast.Name) and el.value.id in ("self", "cls")):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} {el.attr}")
    assert offenders == []
