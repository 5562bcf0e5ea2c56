"""Clean stderr: normal CLI use prints no Qt plugin chatter, and real Qt warnings still get through."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ATLAS = REPO / "models" / "atlas"
PROMPT = "The capital of France is"


def _gpt2viz(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(REPO),
           "GPT2VIZ_MODELS": "", "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    env.pop("QT_MESSAGE_PATTERN", None)
    return subprocess.run([sys.executable, "-m", "gpt2viz", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args", [
    ["snapshot", "--prompt", PROMPT, "--view", "chart", "--out", "chart.png"],
    ["snapshot", "--prompt", PROMPT, "--view", "attention", "--layer", "1", "--out", "att.svg"],
    ["snapshot", "--prompt", PROMPT, "--view", "mlp", "--all-layers", "--out", "."],
    ["snapshot", "--prompt", PROMPT, "--steps", "2", "--view", "data", "--out", "trace.npz"],
    ["run", "--prompt", PROMPT, "--steps", "2", "--json"],
    ["tokenize", PROMPT, "--json"],
    ["report", "--prompt", PROMPT, "--out", "report.pdf"],
], ids=["snapshot-png", "snapshot-svg", "snapshot-all-layers", "snapshot-data", "run", "tokenize", "report"])
def test_cli_stderr_is_empty(tmp_path, args):
    p = _gpt2viz(tmp_path, *args, "--model", str(ATLAS))
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


def test_default_model_note_is_the_only_stderr_line(tmp_path):
    # Naming no model prints one deliberate hint (where real GPT-2 comes from); nothing else.
    p = _gpt2viz(tmp_path, "run", "--prompt", PROMPT, "--steps", "1")
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("note: using the bundled demo model 'atlas'")


def test_models_stderr(tmp_path):
    p = _gpt2viz(tmp_path, "models", "--json")
    assert p.returncode == 0 and p.stderr == ""
    p = _gpt2viz(tmp_path, "models")  # the text form says where it looked, on stderr, once
    assert p.returncode == 0, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("searched: ")


def test_filter_drops_only_known_lines(tmp_path):
    # Qt warnings that mean something (here two made-up ones) must still reach stderr.
    code = ("from PySide6 import QtCore\n"
            "from gpt2viz.app import qt_messages\n"
            "qt_messages.install()\n"
            "QtCore.qWarning('This plugin does not support propagateSizeHints()')\n"
            "QtCore.qWarning('QFont: a real problem')\n"
            "QtCore.QMessageLogger().critical('something broke')\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("QT_MESSAGE_PATTERN", None)
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stderr.splitlines() == ["QFont: a real problem", "something broke"]
