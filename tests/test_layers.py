"""The layers hold: core < app < widgets < entry (import-linter contract in pyproject.toml), and app is QtCore only."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "gpt2viz"


def _imports(folder: Path) -> list[tuple[str, str]]:
    out = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out += [(path.name, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                out += [(path.name, node.module)]
    return out


def test_import_linter_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    r = subprocess.run([str(lint)], cwd=ROOT, capture_output=True, text=True,
                       env={"PYTHONPATH": str(ROOT), "PATH": str(lint.parent)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "6 kept, 0 broken" in r.stdout


def test_core_imports_no_qt():
    found = _imports(PKG / "core")
    assert found, "no core modules found"
    assert [f for f in found if f[1].startswith(("PySide6", "pyqtgraph", "shiboken6", "gpt2viz.app",
                                                "gpt2viz.widgets"))] == []


def test_app_is_qtcore_only():
    found = _imports(PKG / "app")
    assert any(m == "PySide6.QtCore" for _, m in found)
    bad = [f for f in found if f[1].startswith(("PySide6", "pyqtgraph", "gpt2viz.widgets"))
           and f[1] != "PySide6.QtCore"]
    assert bad == []
