"""The LayerNorm hooks hold what TransformerLens holds there, computed by the exported graph itself.

``*.hook_scale`` = sqrt(mean((x - mean x)^2) + eps) [B, P, 1] and ``*.hook_normalized`` = (x - mean x) / scale,
*before* the LayerNorm's weight and bias, where x is the LayerNorm's input as the graph shows it
(``hook_resid_pre``, ``hook_resid_mid``, the last block's ``hook_resid_post``). The definitions are written
out here in float64; every tensor they are compared with comes from onnxruntime running the export.
"""

from __future__ import annotations

import shutil

import numpy as np
import onnxruntime as ort
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.hooks import hook_names
from tests.core.export.upgrade_helpers import downgrade

CONFIGS = ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"]
EPS = 1e-5  # the tiny configs' layer_norm_epsilon (GPT-2's)


def _session(folder):
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(str(folder / "model.onnx"), opts, providers=["CPUExecutionProvider"])


def _run(sess, n_layer, ids, past):
    """Every output of the file's graph for ``ids`` after ``past`` ([(key, value)] per layer)."""
    n_past = past[0][0].shape[2]
    total = n_past + len(ids)
    feed = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, total), np.int64),
            "position_ids": np.arange(n_past, total, dtype=np.int64)[None]}
    for L, (k, v) in enumerate(past):
        feed[f"past_key_values.{L}.key"], feed[f"past_key_values.{L}.value"] = k, v
    names = [o.name for o in sess.get_outputs()]
    out = dict(zip(names, sess.run(names, feed)))
    return out, [(out[f"present.{L}.key"], out[f"present.{L}.value"]) for L in range(n_layer)]


def _inputs(n_layer):
    """Each LayerNorm's hook prefix -> the hook holding its input, written out independently of the registry."""
    out = {}
    for L in range(n_layer):
        out[f"blocks.{L}.ln1"], out[f"blocks.{L}.ln2"] = f"blocks.{L}.hook_resid_pre", f"blocks.{L}.hook_resid_mid"
    out["ln_final"] = f"blocks.{n_layer - 1}.hook_resid_post"
    return out


def _definition(x):
    x = x.astype(np.float64)
    centred = x - x.mean(-1, keepdims=True)
    scale = np.sqrt((centred ** 2).mean(-1, keepdims=True) + EPS)
    return scale, centred / scale


def _assert_definitions(out, n_layer, positions):
    for prefix, source in _inputs(n_layer).items():
        scale, normalized = _definition(out[source])
        assert out[f"{prefix}.hook_scale"].shape == (1, positions, 1), prefix
        assert out[f"{prefix}.hook_normalized"].shape == out[source].shape, prefix
        # float32 rounding of the graph's arithmetic: measured at most 2.2e-7 of the size
        assert float(np.abs(out[f"{prefix}.hook_scale"] - scale).max()) <= 1e-6 * float(scale.max()), prefix
        assert float(np.abs(out[f"{prefix}.hook_normalized"] - normalized).max()) <= 1e-6 * float(
            np.abs(normalized).max()), prefix
        # unit variance per position: the weight and bias are not in it
        np.testing.assert_allclose((normalized ** 2).mean(-1), 1 - EPS / scale[..., 0] ** 2, rtol=1e-6)


@pytest.mark.parametrize("name", CONFIGS)
def test_every_layernorm_hook_is_its_definition_prefill_and_cached_steps(name, exported):
    folder = exported[name]
    model = Model(folder)
    c = model.config
    sess = _session(folder)
    past = [(np.zeros((1, c.n_head, 0, c.d_head), np.float32),) * 2] * c.n_layer
    rng = np.random.default_rng(3)
    out, past = _run(sess, c.n_layer, [int(t) for t in rng.integers(0, c.vocab_size, 6)], past)
    _assert_definitions(out, c.n_layer, 6)
    for _ in range(2):  # cached one-token steps
        out, past = _run(sess, c.n_layer, [int(np.argmax(out["logits"][0, -1]))], past)
        _assert_definitions(out, c.n_layer, 1)
    # the runtime (gated graph, hooks read through the trace) gives the same tensors
    trace, _ = model.run([464, 3139, 286, 4881, 318], hooks=model.hook_names)
    full, _ = _run(sess, c.n_layer, [464, 3139, 286, 4881, 318],
                   [(np.zeros((1, c.n_head, 0, c.d_head), np.float32),) * 2] * c.n_layer)
    for prefix in _inputs(c.n_layer):
        for hook in ("hook_scale", "hook_normalized"):
            np.testing.assert_array_equal(trace[f"{prefix}.{hook}"], full[f"{prefix}.{hook}"][0])


@pytest.mark.parametrize("name", ["l3h4e32", "l1h1e8"])
def test_the_layernorm_output_the_model_reads_on_is_unchanged(name, exported, tmp_path):
    """The graph as format 2 exported it (hook_normalized = the LayerNorm's output, no hook_scale) gives the
    same floats bit for bit at every other output, logits included; its hook_normalized is this one's
    times the LayerNorm's weight plus its bias."""
    old = tmp_path / "format2"
    shutil.copytree(exported[name], old)
    downgrade(old, version=2)
    new_sess, old_sess = _session(exported[name]), _session(old)
    c = Model(exported[name]).config
    empty = [(np.zeros((1, c.n_head, 0, c.d_head), np.float32),) * 2] * c.n_layer
    ids = [464, 3139, 286, 4881, 318, 6342]
    new, _ = _run(new_sess, c.n_layer, ids, empty)
    before, _ = _run(old_sess, c.n_layer, ids, empty)
    assert set(new) - set(before) == {p + ".hook_scale" for p in _inputs(c.n_layer)}
    for k in before:
        if not k.endswith(".hook_normalized"):
            np.testing.assert_array_equal(new[k], before[k], err_msg=k)
    w = Weights(exported[name] / "model.onnx")
    params = {f"blocks.{L}.ln{i}": f"transformer.h.{L}.ln_{i}" for L in range(c.n_layer) for i in (1, 2)}
    params["ln_final"] = "transformer.ln_f"
    for prefix, param in params.items():
        output = new[f"{prefix}.hook_normalized"] * w.get(f"{param}.weight") + w.get(f"{param}.bias")
        np.testing.assert_allclose(output, before[f"{prefix}.hook_normalized"], rtol=0,
                                   atol=1e-5 * float(np.abs(before[f"{prefix}.hook_normalized"]).max()))
    names = hook_names(c.n_layer)[:-1]  # optimum's `logits` comes first among the graph's outputs
    assert [n for n in new if n in names] == names  # the hook outputs in the registry's order
