"""Rewrite an exported model folder in place to the current format (3), checked hook by hook.

- From format 1: add the intervention inputs (format 2).
- From format 1 or 2: the LayerNorm hooks as TransformerLens has them: ``*.hook_normalized`` before the
  LayerNorm's weight and bias (it showed the LayerNorm's output), and ``*.hook_scale`` added.

Pure onnx + onnxruntime (no torch): both are graph transformations over the hook outputs an export
already carries, so a folder whose training checkpoint is gone (the bundled atlas) can be upgraded.
The rewritten graph is run beside the old one on the validation prompt and one cached step before it
replaces it: every hook whose meaning is unchanged must be equal bit for bit (with no intervention fed,
the inserted x * 1 + 0 is exact), and each LayerNorm hook must match its definition computed from the
LayerNorm's input as the folder's own graph gives it (``hook_resid_pre``, ``hook_resid_mid``, the last
``hook_resid_post``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from gpt2viz.core.engine.device import open_session
from gpt2viz.core.graph.surgery import GraphStructureError, add_interventions, add_layernorm_hooks
from gpt2viz.core.hooks import hook_names, hook_shapes, intervention_inputs, layernorm_inputs
from gpt2viz.core.model_folder.manifest import (
    DATA_FILE,
    FORMAT_VERSION,
    MANIFEST,
    MODEL_FILE,
    ModelFolderError,
    config_of,
    read_manifest,
    sha256_file,
)

# max |new - definition| / max |definition| per LayerNorm hook; measured on atlas and the tests' exports:
# at most 2.2e-7 (float32 rounding of the graph's own arithmetic)
DEFINITION_TOLERANCE = 1e-5


def _run_all(path: Path, feed: dict, names: list[str]) -> dict[str, np.ndarray]:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    # on the CPU whatever the app runs on: the upgrade's check compares floats with the definition
    sess = open_session(str(path), opts, "cpu")
    return dict(zip(names, sess.run(names, feed)))


def layernorm_definition(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """TransformerLens' ``hook_scale`` [..., 1] and ``hook_normalized`` [..., E] of a LayerNorm whose input
    is ``x`` [..., E], by their definition, in float64: scale = sqrt(mean((x - mean x)^2) + eps),
    normalized = (x - mean x) / scale."""
    x = np.asarray(x, np.float64)
    centred = x - x.mean(-1, keepdims=True)
    scale = np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)
    return scale, centred / scale


def _feed(cfg, ids: list[int], past: list[tuple[np.ndarray, np.ndarray]] | None) -> dict[str, np.ndarray]:
    n_past = 0 if past is None else past[0][0].shape[2]
    total = n_past + len(ids)
    feed = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, total), np.int64),
            "position_ids": np.arange(n_past, total, dtype=np.int64)[None]}
    d = cfg.n_embd // cfg.n_head
    for L in range(cfg.n_layer):
        for i, kv in enumerate(("key", "value")):
            feed[f"past_key_values.{L}.{kv}"] = np.zeros((1, cfg.n_head, 0, d), np.float32) if past is None \
                else past[L][i]
    return feed


def _check(old_path: Path, new_path: Path, cfg, eps: float, feed: dict, old_names: list[str],
           new_names: list[str], moved: set[str]) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Run both graphs on ``feed``. Every output whose meaning is unchanged must be equal bit for bit
    (ModelFolderError otherwise); returns per LayerNorm hook its largest difference from the definition,
    relative to the definition's size, and the new graph's outputs."""
    same = [n for n in old_names if n not in moved]
    old = _run_all(old_path, feed, same)
    new = _run_all(new_path, feed, new_names)
    for n in same:
        if not np.array_equal(old[n], new[n], equal_nan=True):
            diff = float(np.nanmax(np.abs(old[n].astype(np.float64) - new[n]))) if old[n].shape == new[n].shape \
                else float("nan")
            raise ModelFolderError(f"upgraded graph changed {n} (by {diff:.3g}), which was to stay as it was: "
                                   "not replaced")
    definition = {}
    for prefix, source in layernorm_inputs(cfg.n_layer).items():
        scale, normalized = layernorm_definition(new[source], eps)
        for name, want in ((f"{prefix}.hook_scale", scale), (f"{prefix}.hook_normalized", normalized)):
            got = new[name]
            if got.shape != want.shape:
                raise ModelFolderError(f"upgraded {name} has shape {got.shape}, its definition {want.shape}: not replaced")
            definition[name] = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-12)
    return definition, new


def upgrade_folder(folder: str | Path, progress=print) -> dict:
    """Bring the model folder ``folder`` to the current format in place and bump its manifest.

    Parameters
    ----------
    folder : path
        A gpt2viz model folder of format version 1 or 2.
    progress : callable
        Receives one line per stage.

    Returns
    -------
    dict
        The upgrade record stored in the manifest: ``max_abs_diff_unchanged`` over every output whose
        meaning did not change (0: bit for bit) and ``layernorm_relative_to_definition`` per LayerNorm hook,
        for the validation prompt and one cached step.

    Raises
    ------
    ModelFolderError
        When the folder is not a model folder, is already current, or the upgraded graph fails a check.
    """
    folder = Path(folder).resolve()
    m = read_manifest(folder)
    if m["format_version"] == FORMAT_VERSION:
        raise ModelFolderError(f"{folder} is already format version {FORMAT_VERSION}")
    cfg = config_of(m)
    eps = float(m["config"].get("layer_norm_epsilon", 1e-5))
    graph = onnx.load(str(folder / MODEL_FILE), load_external_data=False)
    outputs = {o.name for o in graph.graph.output}
    inputs = {i.name for i in graph.graph.input}
    old_names = [n for n in hook_names(cfg.n_layer) if n in outputs]
    moved: set[str] = set()  # hooks whose meaning changes: checked against their definition instead
    tensors: dict[str, str] = {}
    added: list[str] = []
    try:
        if "ln_final.hook_scale" not in outputs:
            progress("upgrade: LayerNorm hooks as TransformerLens has them (hook_normalized before the weight and "
                     "bias, hook_scale)")
            tensors = add_layernorm_hooks(graph, cfg.n_layer)
            moved = {n for n in tensors if n.endswith(".hook_normalized")}
        if not set(intervention_inputs(cfg.n_layer)) & inputs:
            progress("upgrade: adding intervention inputs")
            added = add_interventions(graph, cfg.n_layer)
    except GraphStructureError as e:
        raise ModelFolderError(f"{folder / MODEL_FILE} cannot be upgraded ({e}): export it again") from None
    tmp = folder / (MODEL_FILE + ".upgrading")
    onnx.save_model(graph, str(tmp))  # external data (if any) stays in model.onnx.data, untouched
    del graph
    presents = [f"present.{L}.{kv}" for L in range(cfg.n_layer) for kv in ("key", "value")]
    try:
        ids = list(m.get("validation", {}).get("prompt_ids") or [464, 3139, 286, 4881, 318])
        ids = [t for t in ids if t < cfg.vocab_size][: cfg.n_positions - 1] or [0]
        progress("upgrade: checking every hook of the new graph against the old one and the LayerNorm hooks "
                 "against their definition (prefill and a cached step, no intervention)")
        new_names = hook_names(cfg.n_layer) + presents
        definition, new = _check(folder / MODEL_FILE, tmp, cfg, eps, _feed(cfg, ids, None), old_names + presents,
                                 new_names, moved)
        step_id = int(np.argmax(new["logits"][0, -1]))
        past = [(new[f"present.{L}.key"], new[f"present.{L}.value"]) for L in range(cfg.n_layer)]
        if len(ids) < cfg.n_positions:
            step, _ = _check(folder / MODEL_FILE, tmp, cfg, eps, _feed(cfg, [step_id], past), old_names + presents,
                             new_names, moved)
            definition = {k: max(v, step[k]) for k, v in definition.items()}
        name, worst = max(definition.items(), key=lambda kv: kv[1])
        if worst > DEFINITION_TOLERANCE:
            raise ModelFolderError(f"upgraded {name} differs from its definition by {worst:.3g} of its size "
                                   f"(tolerance {DEFINITION_TOLERANCE}): not replaced")
        os.replace(tmp, folder / MODEL_FILE)
    finally:
        tmp.unlink(missing_ok=True)
    record = {"from_format_version": m["format_version"], "to_format_version": FORMAT_VERSION,
              "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "prompt_ids": ids,
              "step_id": step_id, "max_abs_diff_unchanged": 0.0,
              "layernorm_relative_to_definition": definition}
    if moved:
        record["note"] = ("the validation above compared each hook_normalized as exported then: the LayerNorm's "
                          "output, after its weight and bias")
    m["format_version"] = FORMAT_VERSION
    m["hooks"] = hook_shapes(cfg.n_layer)
    if "hook_tensors" in m:
        m["hook_tensors"] = {n: {**m["hook_tensors"], **tensors}.get(n) for n in hook_names(cfg.n_layer)}
    if added:
        m["interventions"] = added
    m["upgrades"] = [*m.get("upgrades", []), record]
    m["files"] = {f: sha256_file(folder / f) for f in (MODEL_FILE, DATA_FILE) if (folder / f).is_file()}
    (folder / MANIFEST).write_text(json.dumps(m, indent=1))
    progress(f"upgrade: done, format version {FORMAT_VERSION}; unchanged hooks equal bit for bit, LayerNorm hooks "
             f"within {max(definition.values()):.2g} of their definition")
    return record
