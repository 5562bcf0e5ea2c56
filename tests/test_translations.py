"""The Chinese catalogue is complete for the current sources, and the shipped .qm is its compilation.

A new string anywhere in gpt2viz/ fails the first test until it is translated: run
``python scripts/update_translations.py``, translate the listed strings in
resources/translations/gpt2viz_zh_CN.ts (by hand or with pyside6-linguist), and run it again.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("update_translations", ROOT / "scripts" / "update_translations.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_string_is_translated():
    missing = _script().check()
    listing = "\n".join(f"  [{ctx}] {src!r}" for ctx, src in missing)
    assert not missing, (f"{len(missing)} string(s) have no Chinese translation (run scripts/update_translations.py, "
                         f"translate them in resources/translations/gpt2viz_zh_CN.ts, run it again):\n{listing}")


def test_qm_is_compiled_from_the_ts(tmp_path):
    mod = _script()
    out = tmp_path / "fresh.qm"
    mod.lrelease(mod.TS, out)
    assert mod.QM.read_bytes() == out.read_bytes(), "the .qm is stale: run scripts/update_translations.py"


def test_placeholders_survive_translation():
    import re
    import xml.etree.ElementTree as ET

    fields = lambda s: sorted(re.findall(r"\{[^{}]*\}", s or ""))  # noqa: E731
    for ctx in ET.parse(_script().TS).getroot().iter("context"):
        for m in ctx.iter("message"):
            src, tr = m.findtext("source"), m.findtext("translation")
            assert fields(src) == fields(tr), (ctx.findtext("name"), src, tr)
