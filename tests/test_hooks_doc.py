"""docs/hooks.md lists every hook of the registry and its examples run against the bundled model: a page that
drifts from the code fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpt2viz.core.hooks import hook_shapes
from gpt2viz.core.model_folder.locations import bundled_models_dir

PAGE = Path(__file__).resolve().parents[1] / "docs" / "hooks.md"


def test_the_table_has_every_hook_with_its_shape():
    rows = {}
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[1].startswith("["):
            for name in re.findall(r"`([^`]+)`", cells[0]):
                rows[name] = cells[1]
    # `blocks.{L}.attn.hook_q`, `hook_k`, `hook_v` share a row: the later names are short
    full = {name if "." in name or name in ("hook_embed", "hook_pos_embed", "logits") else "blocks.{L}.attn." + name:
            shape for name, shape in rows.items()}
    want = {n.replace("blocks.3.", "blocks.{L}."): s for n, s in hook_shapes(4).items()
            if not n.startswith(("blocks.0.", "blocks.1.", "blocks.2."))}
    for name, letters in want.items():
        assert name in full, f"{name} is not in {PAGE.name}'s table"
        assert full[name] == "[" + ", ".join(letters.split()) + "]", name


@pytest.mark.skipif(not (bundled_models_dir() / "atlas").is_dir(), reason="the bundled model is not in this checkout")
def test_examples_run(capsys):
    namespace: dict = {"__name__": "docs_example"}
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.S)
    assert blocks
    for i, block in enumerate(blocks):
        exec(compile(block, f"{PAGE.name}[{i}]", "exec"), namespace)  # noqa: S102 - the page's own code
    assert "(5, 1)" in capsys.readouterr().out
