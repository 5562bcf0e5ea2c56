"""gpt2viz/core must stay free of Qt: the engine runs headless and in the worker thread."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "gpt2viz" / "core"
FORBIDDEN = ("PySide6", "pyqtgraph", "shiboken6", "PyQt5", "PyQt6", "gpt2viz.app", "gpt2viz.widgets")


def test_core_imports_no_qt():
    offenders = []
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.startswith(FORBIDDEN)]
    assert list(CORE.rglob("*.py")), "no core modules found"
    assert offenders == []
