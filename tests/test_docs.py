"""The Python API page's examples run, in order, against the bundled model: a page that drifts from the
code fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpt2viz.core.model_folder.locations import bundled_models_dir

PAGE = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def _blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_page_has_examples():
    assert len(_blocks(PAGE.read_text(encoding="utf-8"))) >= 4


@pytest.mark.skipif(not (bundled_models_dir() / "atlas").is_dir(), reason="the bundled model is not in this checkout")
def test_python_api_examples_run(capsys):
    namespace: dict = {"__name__": "docs_example"}
    for i, block in enumerate(_blocks(PAGE.read_text(encoding="utf-8"))):
        try:
            exec(compile(block, f"{PAGE.name}[{i}]", "exec"), namespace)  # noqa: S102 - the page's own code
        except Exception as e:  # say which example broke
            raise AssertionError(f"example {i} of {PAGE.name} failed: {type(e).__name__}: {e}\n{block}") from e
    out = capsys.readouterr().out
    assert "' Paris'" in out  # the story's answer, printed by the page's own example
