"""Refresh the translation catalogue from the sources, then compile it.

    python scripts/update_translations.py           # lupdate gpt2viz/**/*.py -> .ts, lrelease -> .qm
    python scripts/update_translations.py --check   # exit 1 and list the strings with no translation

Both tools ship with PySide6-Essentials. The ``.ts`` is the source a translator edits (by hand or in
``pyside6-linguist``); the ``.qm`` is committed beside it so a checkout and a wheel run without Qt's
tools, and a test checks it is the compilation of the ``.ts``. Locations are left out of the ``.ts``
(``-locations none``): line numbers would change it on every edit of the code and make merges conflict.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TS = ROOT / "resources" / "translations" / "gpt2viz_zh_CN.ts"
QM = TS.with_suffix(".qm")


def _tool(name: str) -> str:
    # next to the running interpreter first: a venv's tools without activating it
    here = Path(sys.executable).parent / name
    return str(here) if here.exists() else (shutil.which(name) or name)


def sources() -> list[Path]:
    """Every module that can hold UI strings (core returns numbers, but scanning it costs nothing)."""
    return sorted(p for p in (ROOT / "gpt2viz").rglob("*.py") if "__pycache__" not in p.parts)


def lupdate(ts: Path) -> None:
    """Merge the sources' strings into ``ts`` (created if missing); strings no longer in the code are dropped."""
    subprocess.run([_tool("pyside6-lupdate"), *map(str, sources()), "-locations", "none", "-no-obsolete",
                    "-target-language", "zh_CN", "-ts", str(ts)], check=True, capture_output=True, text=True)


def lrelease(ts: Path, qm: Path) -> None:
    """Compile ``ts`` into ``qm``."""
    subprocess.run([_tool("pyside6-lrelease"), str(ts), "-qm", str(qm)], check=True, capture_output=True, text=True)


def untranslated(ts: Path) -> list[tuple[str, str]]:
    """(context, source) of every message of ``ts`` that has no finished translation."""
    out = []
    for ctx in ET.parse(ts).getroot().iter("context"):
        name = ctx.findtext("name")
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            if tr is None or tr.get("type") in ("unfinished", "vanished", "obsolete") or not (tr.text or "").strip():
                out.append((name, msg.findtext("source")))
    return out


def check() -> list[tuple[str, str]]:
    """The strings of the current sources that the committed ``.ts`` does not translate (it is not modified)."""
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d) / TS.name
        shutil.copy(TS, tmp)
        lupdate(tmp)
        return untranslated(tmp)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="list untranslated strings; change nothing")
    a = p.parse_args(argv)
    if a.check:
        missing = check()
        for ctx, src in missing:
            print(f"{ctx}: {src!r}")
        print(f"{len(missing)} untranslated string(s)")
        return 1 if missing else 0
    TS.parent.mkdir(parents=True, exist_ok=True)
    lupdate(TS)
    lrelease(TS, QM)
    missing = untranslated(TS)
    print(f"{TS.relative_to(ROOT)}: {len(missing)} untranslated; compiled {QM.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
