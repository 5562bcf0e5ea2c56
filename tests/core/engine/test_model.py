import json
import shutil

import numpy as np
import pytest

from gpt2viz.core.engine.errors import ContextLimitError
from gpt2viz.core.engine.model import Model
from gpt2viz.core.model_folder.manifest import ModelFolderError


@pytest.fixture(scope="module")
def model(tiny_model_dir):
    return Model(tiny_model_dir)


def test_trace_is_addressable_and_immutable(model):
    trace, cache = model.run([464, 3139, 286])
    pat = trace["pattern", 1]
    assert pat is trace["blocks.1.attn.hook_pattern"]
    assert pat.shape == (2, 3, 3)  # H, P, K: batch dropped
    np.testing.assert_allclose(pat.sum(-1), 1, rtol=1e-5)
    assert np.all(np.triu(pat[0], 1) == 0)  # causal
    with pytest.raises(ValueError):
        pat[0, 0, 0] = 1
    assert "logits" not in trace and trace.last_logits.shape == (50257,)
    assert cache.length == 3 and cache.layers[0][0].shape == (1, 2, 3, 8)


def test_cached_step_equals_full_prefill(model):
    ids = [464, 3139, 286, 4881, 318]
    full, _ = model.run(ids, keep_all_logits=True)
    _, cache = model.run(ids[:4])
    step, _ = model.run(ids[4:], cache)
    np.testing.assert_allclose(step.last_logits, full["logits"][-1], atol=1e-4)
    np.testing.assert_allclose(step["pattern", 0][:, 0], full["pattern", 0][:, -1], atol=1e-6)
    assert step.start == 4 and step["resid_post", 1].shape == (1, 16)


def test_only_requested_hooks_are_kept(model):
    trace, _ = model.run([1, 2], hooks=["blocks.0.hook_resid_pre"])
    assert set(trace) == {"blocks.0.hook_resid_pre"}


def test_context_limit_is_a_clear_error(model):
    with pytest.raises(ContextLimitError, match="32 positions"):
        model.run(list(range(33)))


def test_bad_token_ids_rejected(model):
    with pytest.raises(ValueError, match="outside the vocabulary"):
        model.run([50257])
    with pytest.raises(ValueError, match="no tokens"):
        model.run([])


def test_damaged_folders_fail_clearly(tiny_model_dir, tmp_path):
    with pytest.raises(ModelFolderError, match="not a folder"):
        Model(tmp_path / "nothing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelFolderError, match="gpt2viz.json"):
        Model(empty)
    bad = tmp_path / "bad"
    shutil.copytree(tiny_model_dir, bad)
    with open(bad / "model.onnx", "r+b") as f:  # flip bytes in the middle of the weights
        f.seek(1_000_000)
        f.write(b"\x00\x01\x02\x03")
    with pytest.raises(ModelFolderError, match="damaged"):
        Model(bad)
    (bad / "gpt2viz.json").write_text("{ not json")
    with pytest.raises(ModelFolderError, match="unreadable"):
        Model(bad)
    (bad / "gpt2viz.json").write_text(json.dumps({"format": "gpt2viz-model", "format_version": 99}))
    with pytest.raises(ModelFolderError, match="version"):
        Model(bad)
