"""Oracle tests: every hook of the exported ONNX graph equals transformers' PyTorch GPT-2.

The graph is run directly with onnxruntime (not through gpt2viz's runtime) so these tests check
the export itself: prefill, prefill after a cached chunk, and several cached one-token steps.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import onnxruntime as ort
import pytest

from gpt2viz.core.export import exporter
from gpt2viz.core.export.reference import reference_hooks
from gpt2viz.core.hooks import hook_names, hook_shapes
from gpt2viz.core.model_folder.manifest import MANIFEST

pytestmark = pytest.mark.slow
TOL = 1e-4


def run_onnx(sess, cfg, ids, past):
    """Feed the raw graph; return every hook (batch kept) and the present cache."""
    n_past = past[0][0].shape[2]
    total = n_past + ids.shape[1]
    feed = {"input_ids": ids.astype(np.int64),
            "attention_mask": np.ones((ids.shape[0], total), np.int64),
            "position_ids": np.arange(n_past, total, dtype=np.int64)[None].repeat(ids.shape[0], 0)}
    for L, (k, v) in enumerate(past):
        feed[f"past_key_values.{L}.key"], feed[f"past_key_values.{L}.value"] = k, v
    names = hook_names(cfg.n_layer)
    pres = [f"present.{L}.{x}" for L in range(cfg.n_layer) for x in ("key", "value")]
    out = sess.run(names + pres, feed)
    hooks = dict(zip(names, out))
    present = [(out[len(names) + 2 * L], out[len(names) + 2 * L + 1]) for L in range(cfg.n_layer)]
    return hooks, present


def assert_hooks_match(got, ref):
    assert set(got) == set(ref)
    for name, r in ref.items():
        g = got[name]
        assert g.shape == r.shape, name
        scale = max(float(np.abs(r).max()), 1e-12)
        err = float(np.abs(g.astype(np.float64) - r).max()) / scale
        assert err <= TOL, f"{name}: {err:.2e} of scale"


@pytest.mark.parametrize("name", ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"])
def test_every_hook_matches_transformers_prefill_and_cached_steps(name, exported, torch_models):
    folder, tm = exported[name], torch_models[name]
    cfg = tm.config
    sess = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(7)
    empty = [(np.zeros((1, cfg.n_head, 0, cfg.n_embd // cfg.n_head), np.float32),) * 2] * cfg.n_layer

    ids = rng.integers(0, cfg.vocab_size, size=(1, 5))
    got, present = run_onnx(sess, cfg, ids, empty)
    ref, ref_present = reference_hooks(tm, ids)
    assert_hooks_match(got, ref)
    # shapes are the registry's: pattern [B, H, P, K]
    assert got["blocks.0.attn.hook_pattern"].shape == (1, cfg.n_head, 5, 5)
    for (k, v), (rk, rv) in zip(present, ref_present):
        np.testing.assert_allclose(k, rk, rtol=0, atol=1e-5 * max(1, np.abs(rk).max()))
        np.testing.assert_allclose(v, rv, rtol=0, atol=1e-5 * max(1, np.abs(rv).max()))

    # a multi-token chunk after a cache (P=3, K=8), then one-token cached steps
    chunk = rng.integers(0, cfg.vocab_size, size=(1, 3))
    got, present = run_onnx(sess, cfg, chunk, present)
    ref, _ = reference_hooks(tm, chunk, ref_present)
    assert_hooks_match(got, ref)
    assert got["blocks.0.attn.hook_attn_scores"].shape == (1, cfg.n_head, 3, 8)
    for _ in range(3):
        nxt = np.argmax(got["logits"][:, -1:], axis=-1)
        past = present
        got, present = run_onnx(sess, cfg, nxt, past)
        ref, _ = reference_hooks(tm, nxt, past)
        assert_hooks_match(got, ref)


def test_graph_outputs_carry_registry_names_and_shapes(exported):
    folder = exported["l3h4e32"]
    sess = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    outs = {o.name: o.shape for o in sess.get_outputs()}
    shapes = hook_shapes(3)
    for name, letters in shapes.items():
        assert name in outs, name
        assert len(outs[name]) == len(letters.split()), name
    assert outs["blocks.2.mlp.hook_pre"][-1] == 48  # n_inner, not 4 x n_embd
    assert outs["blocks.1.attn.hook_q"][2:] == [4, 8]


def test_manifest_records_config_hashes_and_validation(exported):
    m = json.loads((exported["l3h4e32"] / MANIFEST).read_text())
    assert m["config"] == {"n_layer": 3, "n_head": 4, "n_embd": 32, "n_positions": 48, "vocab_size": 50257,
                           "d_mlp": 48, "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new"}
    assert set(m["files"]) == {"model.onnx"}
    assert m["validation"]["max_relative"] <= TOL
    assert set(m["validation"]["prefill_max_abs_diff"]) >= set(hook_names(3))
    assert set(m["validation"]["cached_step_max_abs_diff"]) == set(hook_names(3))
    assert m["n_params"] > 50257 * 32  # the tied embedding counted once, plus the blocks
    assert "torch" in m["exporter"] and "optimum" in m["exporter"]


def test_failed_validation_leaves_no_folder(checkpoints, tmp_path, monkeypatch):
    monkeypatch.setattr(exporter, "TOLERANCE", -1.0)  # nothing can pass: the refusal path must run
    out = tmp_path / "refused"
    with pytest.raises(exporter.ExportError, match="validation failed"):
        exporter.export_model(str(checkpoints["l1h1e8"]), out, progress=lambda m: None)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_refuses_pickle_only_checkpoint_and_existing_output(checkpoints, tmp_path):
    ck = tmp_path / "binonly"
    shutil.copytree(checkpoints["l1h1e8"], ck)
    (ck / "model.safetensors").rename(ck / "pytorch_model.bin")
    with pytest.raises(exporter.ExportError, match="never unpickles"):
        exporter.export_model(str(ck), tmp_path / "o", progress=lambda m: None)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(exporter.ExportError, match="--force"):
        exporter.export_model(str(checkpoints["l1h1e8"]), busy, progress=lambda m: None)
    assert (busy / "keep.txt").read_text() == "mine"


def test_tokenizer_from_vocab_and_merges(checkpoints, tmp_path):
    """A checkpoint with vocab.json + merges.txt (no tokenizer.json) exports the same tokenizer."""
    from tokenizers import Tokenizer

    from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

    ck = tmp_path / "vm"
    shutil.copytree(checkpoints["l1h1e8"], ck)
    tok = Tokenizer.from_file(str(ck / "tokenizer.json"))
    tok.model.save(str(ck))  # writes vocab.json and merges.txt
    (ck / "tokenizer.json").unlink()
    out = exporter.export_model(str(ck), tmp_path / "m", progress=lambda m: None)
    t = GPT2Tokenizer.from_file(out / "tokenizer.json")
    assert t.encode("The capital of France is") == [464, 3139, 286, 4881, 318]


def test_weights_past_the_protobuf_limit_go_to_an_external_data_file(checkpoints, tmp_path, monkeypatch):
    """gpt2-large/xl pass 2 GB; the same code path, forced here on a tiny model by lowering the limit."""
    from gpt2viz.core.engine.model import Model

    monkeypatch.setattr(exporter, "TWO_GB", 1 << 20)
    out = exporter.export_model(str(checkpoints["l1h1e8"]), tmp_path / "ext", progress=lambda m: None)
    assert (out / "model.onnx.data").stat().st_size > (out / "model.onnx").stat().st_size
    m = json.loads((out / MANIFEST).read_text())
    assert set(m["files"]) == {"model.onnx", "model.onnx.data"}
    trace, _ = Model(out).run([464, 3139])  # loads, hash-checks both files, runs
    assert trace["pattern", 0].shape == (1, 2, 2)
