"""The Python API page's examples run, in order, against the bundled model: a page that drifts from the
code fails here. Every file the README and the pages under docs/ link to exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpt2viz.core.model_folder.locations import bundled_models_dir

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "python-api.md"
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # a Markdown link or image: its target, without an anchor


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


def test_every_linked_file_exists():
    """A page moved or a picture renamed leaves no dead link in the README (the front door) or in docs/."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    dead = [f"{page.relative_to(ROOT)} -> {target}"
            for page in pages for target in LINK.findall(page.read_text(encoding="utf-8"))
            if "://" not in target and not target.startswith("mailto:") and not (page.parent / target).exists()]
    assert len(pages) > 5 and not dead, dead
