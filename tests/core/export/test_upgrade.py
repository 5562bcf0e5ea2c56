"""`gpt2viz export DIR --upgrade`: folders of format 1 and 2 become format 3, checked hook by hook.

The older folders are made from a fresh export by undoing its graph transformations
(tests/core/upgrade_helpers.py, checked there against a format-2 export bit for bit); the upgraded
folder must then give every hook of a fresh export bit for bit.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.export import upgrade
from gpt2viz.core.hooks import hook_shapes
from gpt2viz.core.model_folder.manifest import FORMAT_VERSION, ModelFolderError, sha256_file
from tests.core.export.upgrade_helpers import downgrade

IDS = [464, 3139, 286, 4881, 318, 11]


@pytest.mark.parametrize("version", [1, 2])
def test_older_folder_opens_with_the_new_hooks_and_upgrades_to_them(version, exported, tmp_path):
    fresh = Model(exported["l2h2e32"])
    want, cache = fresh.run(IDS, hooks=fresh.hook_names)
    step, _ = fresh.run([13], cache, hooks=fresh.hook_names)
    old = tmp_path / "old"
    shutil.copytree(exported["l2h2e32"], old)
    downgrade(old, version)
    # it opens and runs: the LayerNorm hooks are made in memory, and the model says they were never checked
    m = Model(old)
    assert set(m.unchecked_hooks) == {n for n in hook_shapes(2) if ".ln" in n or n.startswith("ln_final")}
    assert m.supports_interventions == (version == 2)
    got, _ = m.run(IDS, hooks=m.hook_names)
    for k in want.hooks:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)

    record = upgrade.upgrade_folder(old, progress=lambda s: None)
    assert record["from_format_version"] == version and record["max_abs_diff_unchanged"] == 0.0
    assert set(record["layernorm_relative_to_definition"]) == set(m.unchecked_hooks)
    assert max(record["layernorm_relative_to_definition"].values()) <= 1e-6
    man = json.loads((old / "gpt2viz.json").read_text())
    assert man["format_version"] == FORMAT_VERSION == 3 and man["hooks"] == hook_shapes(2)
    assert man["hook_tensors"]["blocks.1.ln2.hook_normalized"] == "/gpt2viz/ln/blocks.1.ln2/normalized"
    assert man["upgrades"][-1] == record
    up = Model(old)  # the manifest's sha256 was updated
    assert up.unchecked_hooks == () and up.supports_interventions
    got, cache = up.run(IDS, hooks=up.hook_names)
    got_step, _ = up.run([13], cache, hooks=up.hook_names)
    for k in want.hooks:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
        np.testing.assert_array_equal(got_step[k], step[k], err_msg=k)
    with pytest.raises(ModelFolderError, match="already format version 3"):
        upgrade.upgrade_folder(old, progress=lambda s: None)


def test_an_upgrade_that_fails_its_check_leaves_the_folder_as_it_was(exported, tmp_path, monkeypatch):
    old = tmp_path / "old"
    shutil.copytree(exported["l1h1e8"], old)
    downgrade(old, 2)
    before = {f: sha256_file(old / f) for f in ("model.onnx", "gpt2viz.json")}
    monkeypatch.setattr(upgrade, "DEFINITION_TOLERANCE", -1.0)  # nothing can pass: the refusal path must run
    with pytest.raises(ModelFolderError, match="differs from its definition"):
        upgrade.upgrade_folder(old, progress=lambda s: None)
    assert {f: sha256_file(old / f) for f in ("model.onnx", "gpt2viz.json")} == before
    assert sorted(p.name for p in old.iterdir()) == sorted(p.name for p in exported["l1h1e8"].iterdir())
