"""Rewrite an exported model folder in place to the current format: add the intervention inputs.

Pure onnx + onnxruntime (no torch): the surgery is a graph transformation over the hook outputs an
export already carries, so a folder whose training checkpoint is gone (the bundled atlas) can be
upgraded. The rewritten graph is checked against the old one on the validation prompt before it
replaces it: with no intervention fed, every hook must be equal (the inserted x * 1 + 0 is exact).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

from gpt2viz.core.graph.surgery import GraphStructureError, add_interventions
from gpt2viz.core.hooks import hook_names
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

NO_OP_TOLERANCE = 1e-6  # max |upgraded - old| per hook, absolute; measured: exactly 0


def _run_all(path: Path, feed: dict, names: list[str]) -> dict[str, np.ndarray]:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return dict(zip(names, sess.run(names, feed)))


def upgrade_folder(folder: str | Path, progress=print) -> dict:
    """Add intervention inputs to the model folder ``folder`` in place and bump its manifest.

    Parameters
    ----------
    folder : path
        A gpt2viz model folder of format version 1.
    progress : callable
        Receives one line per stage.

    Returns
    -------
    dict
        The upgrade record stored in the manifest (``max_abs_diff`` over every hook and the cache).

    Raises
    ------
    ModelFolderError
        When the folder is not a model folder, is already current, or the upgraded graph differs.
    """
    folder = Path(folder).resolve()
    m = read_manifest(folder)
    if m["format_version"] == FORMAT_VERSION:
        raise ModelFolderError(f"{folder} is already format version {FORMAT_VERSION}")
    cfg = config_of(m)
    progress(f"upgrade: adding intervention inputs to {folder / MODEL_FILE}")
    graph = onnx.load(str(folder / MODEL_FILE), load_external_data=False)
    try:
        added = add_interventions(graph, cfg.n_layer)
    except GraphStructureError as e:
        raise ModelFolderError(f"{folder / MODEL_FILE} cannot be upgraded ({e}): export it again") from None
    tmp = folder / (MODEL_FILE + ".upgrading")
    onnx.save_model(graph, str(tmp))  # external data (if any) stays in model.onnx.data, untouched
    del graph
    try:
        ids = list(m.get("validation", {}).get("prompt_ids") or [464, 3139, 286, 4881, 318])
        ids = [t for t in ids if t < cfg.vocab_size][: cfg.n_positions - 1] or [0]
        d = cfg.n_embd // cfg.n_head
        feed = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, len(ids)), np.int64),
                "position_ids": np.arange(len(ids), dtype=np.int64)[None]}
        for L in range(cfg.n_layer):
            for kv in ("key", "value"):
                feed[f"past_key_values.{L}.{kv}"] = np.zeros((1, cfg.n_head, 0, d), np.float32)
        names = hook_names(cfg.n_layer) + [f"present.{L}.{kv}" for L in range(cfg.n_layer) for kv in ("key", "value")]
        progress("upgrade: checking every hook of the new graph against the old one (no intervention)")
        old = _run_all(folder / MODEL_FILE, feed, names)
        new = _run_all(tmp, feed, names)
        worst = max(float(np.max(np.abs(old[n] - new[n]))) for n in names)
        if worst > NO_OP_TOLERANCE:
            raise ModelFolderError(f"upgraded graph differs from the old one by {worst:.3g}: not replaced")
        os.replace(tmp, folder / MODEL_FILE)
    finally:
        tmp.unlink(missing_ok=True)
    record = {"from_format_version": m["format_version"], "date": dt.datetime.now(dt.timezone.utc).isoformat(
        timespec="seconds"), "prompt_ids": ids, "max_abs_diff_no_intervention": worst}
    m["format_version"] = FORMAT_VERSION
    m["interventions"] = added
    m["upgrades"] = [*m.get("upgrades", []), record]
    m["files"] = {f: sha256_file(folder / f) for f in (MODEL_FILE, DATA_FILE) if (folder / f).is_file()}
    (folder / MANIFEST).write_text(json.dumps(m, indent=1))
    progress(f"upgrade: done, format version {FORMAT_VERSION}, max difference {worst:g}")
    return record
