"""Faults at load and while open: real damaged files on disk, each a one-line ModelFolderError.

Every damaged folder is a copy of the bundled atlas model (never a symlink: writing through one
would damage the committed model).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from gpt2viz.core.io.trace_export import export_trace
from gpt2viz.core.model_folder.manifest import ModelFolderError

ATLAS = Path(__file__).resolve().parents[3] / "models" / "atlas"
GREEDY = SamplingSettings(0.0, 0, 1.0, 0)
HINT = "export it again with `gpt2viz export SOURCE --out"


def atlas_copy(dest: Path) -> Path:
    shutil.copytree(ATLAS, dest)
    return dest


def _edit_manifest(fn):
    def damage(folder: Path) -> None:
        m = json.loads((folder / "gpt2viz.json").read_text(encoding="utf-8"))
        fn(m)
        (folder / "gpt2viz.json").write_text(json.dumps(m), encoding="utf-8")
    return damage


def _truncate(name: str, keep: int):
    def damage(folder: Path) -> None:
        data = (folder / name).read_bytes()
        (folder / name).write_bytes(data[:keep])
    return damage


def _write(name: str, data: bytes):
    return lambda folder: (folder / name).write_bytes(data)


# (damage, file the message must name, words it must contain, open with sha256 verification?)
DAMAGES = {
    "onnx-truncated": (_truncate("model.onnx", 1_000_000), "model.onnx", "damaged", True),
    # Without the sha256 check (Model(verify=False)), onnxruntime's own parser must be caught too.
    "onnx-truncated-unverified": (_truncate("model.onnx", 1_000_000), "model.onnx", "cannot be loaded", False),
    "onnx-garbage-unverified": (_write("model.onnx", os.urandom(4096)), "model.onnx", "not an ONNX model", False),
    "onnx-empty-unverified": (_write("model.onnx", b""), "model.onnx", "cannot be loaded", False),
    "onnx-missing": (lambda f: (f / "model.onnx").unlink(), "model.onnx", "missing", True),
    "tokenizer-invalid-json": (_write("tokenizer.json", b'{"model": {"vocab": '), "tokenizer.json",
                               "invalid JSON at line 1", True),
    "tokenizer-garbage": (_write("tokenizer.json", b"\xff\xfe\x00\x01garbage"), "tokenizer.json", "not UTF-8", True),
    "tokenizer-wrong-shape": (_write("tokenizer.json", b'{"vocab": [1, 2, 3]}'), "tokenizer.json",
                              "not a tokenizers file", True),
    "tokenizer-rejected": (_write("tokenizer.json", b'{"model": {"type": "Nonsense", "vocab": {"a": 0}}}'),
                           "tokenizer.json", "rejected by the tokenizers library", True),
    "tokenizer-truncated": (_truncate("tokenizer.json", 5000), "tokenizer.json", "invalid JSON", True),
    "manifest-invalid-json": (_write("gpt2viz.json", b'{"format": "gpt2viz-model", '), "gpt2viz.json",
                              "invalid JSON", True),
    "manifest-garbage": (_write("gpt2viz.json", b"\x89PNG\r\n\x1a\n\xff\xff"), "gpt2viz.json", "not UTF-8", True),
    "manifest-a-list": (_write("gpt2viz.json", b"[1, 2]"), "gpt2viz.json", "not a gpt2viz manifest", True),
    "manifest-no-config": (_edit_manifest(lambda m: m.pop("config")), "gpt2viz.json", "'config' is missing", True),
    "manifest-missing-key": (_edit_manifest(lambda m: m["config"].pop("n_head")), "gpt2viz.json",
                             "config has no 'n_head'", True),
    "manifest-text-number": (_edit_manifest(lambda m: m["config"].update(n_layer="six")), "gpt2viz.json",
                             "'n_layer' must be a positive whole number", True),
    "manifest-fraction": (_edit_manifest(lambda m: m["config"].update(n_head=4.5)), "gpt2viz.json",
                          "'n_head' must be a positive whole number", True),
    "manifest-bool": (_edit_manifest(lambda m: m["config"].update(n_embd=True)), "gpt2viz.json",
                      "'n_embd' must be a positive whole number", True),
    "manifest-negative": (_edit_manifest(lambda m: m["config"].update(d_mlp=-512)), "gpt2viz.json",
                          "'d_mlp' must be a positive whole number", True),
    "manifest-eps-text": (_edit_manifest(lambda m: m["config"].update(layer_norm_epsilon="tiny")), "gpt2viz.json",
                          "layer_norm_epsilon", True),
    "manifest-files-list": (_edit_manifest(lambda m: m.update(files=["model.onnx"])), "gpt2viz.json",
                            "'files' must map", True),
    "manifest-name-number": (_edit_manifest(lambda m: m.update(name=7)), "gpt2viz.json", "'name' must be text", True),
    "manifest-n-params-text": (_edit_manifest(lambda m: m.update(n_params="many")), "gpt2viz.json",
                               "'n_params' must be a whole number", True),
    "manifest-version": (_edit_manifest(lambda m: m.update(format_version=99)), "gpt2viz.json",
                         "format version 99", True),
    "manifest-version-text": (_edit_manifest(lambda m: m.update(format_version="1")), "gpt2viz.json",
                              "format version '1'", True),
    "manifest-other-format": (_edit_manifest(lambda m: m.update(format="something-else")), "gpt2viz.json",
                              "not a gpt2viz manifest", True),
    # A manifest that parses but lies about the graph: caught before the first run, not mid-step.
    "manifest-wrong-depth": (_edit_manifest(lambda m: m["config"].update(n_layer=3)), "gpt2viz.json",
                             "does not describe model.onnx", True),
    "manifest-wrong-vocab": (_edit_manifest(lambda m: m["config"].update(vocab_size=1000)), "tokenizer.json",
                             "belongs to another model", True),
}


@pytest.mark.parametrize("case", list(DAMAGES))
def test_damaged_file_at_load_is_one_clear_line(tmp_path, case):
    damage, name, words, verify = DAMAGES[case]
    folder = atlas_copy(tmp_path / "m")
    damage(folder)
    with pytest.raises(ModelFolderError) as info:
        Model(folder, verify=verify)
    msg = str(info.value)
    assert "\n" not in msg and "Traceback" not in msg
    assert str(folder / name) in msg or (name == "model.onnx" and f"missing {name}" in msg)
    assert words in msg
    if not case.startswith("manifest-version"):  # that one says which gpt2viz to use instead
        assert HINT in msg
    else:
        assert "export the model again" in msg


def test_missing_folder_says_it_is_gone(tmp_path):
    with pytest.raises(ModelFolderError, match=r"does not exist \(was it moved or deleted\?\).*gpt2viz models"):
        Model(tmp_path / "gone")


def _open_with_weights(folder: Path) -> tuple[Model, Weights]:
    # What the app's worker does on load: the parameters the lens needs are read at once.
    model = Model(folder)
    weights = Weights(folder / "model.onnx", model.manifest["config"].get("layer_norm_epsilon", 1e-5))
    weights.W_U
    return model, weights


def test_folder_deleted_while_open_keeps_working(tmp_path):
    folder = atlas_copy(tmp_path / "m")
    model, weights = _open_with_weights(folder)
    gen = Generator(model)
    gen.start(model.tokenizer.encode("The capital of France is"))
    shutil.rmtree(folder)
    # onnxruntime holds the graph and the weights in memory, the manifest and tokenizer are parsed:
    # stepping, the lens and exporting data need nothing from the folder any more.
    gen.step(GREEDY)
    gen.step(GREEDY)
    assert len(gen.history().tokens) == 7
    assert np.isfinite(weights.unembed(weights.ln_final(gen.history().hook_at("blocks.5.hook_resid_post", 6)))).all()
    out = tmp_path / "out"
    out.mkdir()
    npz, js = export_trace(gen.history(), model, GREEDY, out / "t.npz", weights=weights)
    assert npz.is_file() and json.loads(js.read_text())["model"]["folder"] == str(folder)
    # Opening it again (a model switch, the next start) says what happened.
    with pytest.raises(ModelFolderError, match="does not exist"):
        Model(folder)


def test_folder_replaced_while_open(tmp_path):
    folder = atlas_copy(tmp_path / "m")
    model, _ = _open_with_weights(folder)
    gen = Generator(model)
    gen.start(model.tokenizer.encode("The capital of France is"))
    first = gen.step(GREEDY).tokens[-1]
    # Replaced by a damaged copy: the open model goes on with what it loaded...
    shutil.rmtree(folder)
    atlas_copy(folder)
    (folder / "model.onnx").write_bytes(b"not a model")
    gen.back()
    assert gen.step(GREEDY).tokens[-1] == first
    # ...and opening the replacement fails clearly instead of mixing old and new files.
    with pytest.raises(ModelFolderError, match="model.onnx is damaged or was changed"):
        Model(folder)
