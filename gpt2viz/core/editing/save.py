"""Write an edited model as a model folder of its own: the edited weights stored, validated hook by hook.

The new folder is the original's graph with each edited MLP output weight replaced; its manifest keeps the
original's fields and says what was edited. Before the folder appears, every hook of the new folder on a
probe prompt (a prefill and a cached step) is compared with the original folder run with the same edits fed
as interventions; a difference beyond the export's tolerance leaves nothing behind.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

from gpt2viz.core.engine.model import Model
from gpt2viz.core.graph.weight_inputs import mlp_out_weights
from gpt2viz.core.interventions import InterventionError, RankOneEdit, describe, weight_edits
from gpt2viz.core.model_folder.manifest import (
    DATA_FILE,
    MANIFEST,
    MODEL_FILE,
    TOKENIZER_FILE,
    read_manifest,
    sha256_file,
)

TOLERANCE = 1e-4  # relative to each hook's scale, as the export's validation
TWO_GB = 2 << 30  # protobuf's limit: larger graphs keep their weights in model.onnx.data
PROBE = "The capital of France is"


def _compare(a, b, names) -> tuple[float, str]:
    worst, where = 0.0, ""
    for name in names:
        x, y = np.asarray(a[name], np.float64), np.asarray(b[name], np.float64)
        rel = float(np.abs(x - y).max()) / max(float(np.abs(y).max()), 1e-12) if y.size else 0.0
        if rel > worst:
            worst, where = rel, name
    return worst, where


def save_edited(model: Model, edits, out: str | Path, *, force: bool = False, request: dict | None = None,
                probe: str = PROBE) -> Path:
    """Write ``model`` with ``edits`` (:class:`RankOneEdit`) applied to its weights into the folder ``out``.

    Raises InterventionError when there is nothing to save or the saved folder does not reproduce the edit.
    """
    edits = tuple(e for e in edits if isinstance(e, RankOneEdit))
    if not edits:
        raise InterventionError("there is no model edit to save")
    out = Path(out).expanduser().resolve()
    if out.exists() and not force:
        raise InterventionError(f"{out} exists; pass --force to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        m = onnx.load(str(model.folder / MODEL_FILE), load_external_data=True)
        names = mlp_out_weights(m, model.config.n_layer)
        inits = {t.name: i for i, t in enumerate(m.graph.initializer)}
        for layer, delta in weight_edits(edits).items():
            i = inits[names[layer]]
            w = numpy_helper.to_array(m.graph.initializer[i]).astype(np.float32)
            m.graph.initializer[i].CopyFrom(numpy_helper.from_array(w + delta, names[layer]))
        big = sum(t.ByteSize() for t in m.graph.initializer) > TWO_GB
        onnx.save_model(m, str(work / MODEL_FILE), save_as_external_data=big, all_tensors_to_one_file=True,
                        location=DATA_FILE if big else None)
        del m
        shutil.copyfile(model.folder / TOKENIZER_FILE, work / TOKENIZER_FILE)
        manifest = dict(read_manifest(model.folder))
        manifest["name"] = out.name
        manifest["files"] = {f: sha256_file(work / f) for f in (MODEL_FILE, DATA_FILE) if (work / f).is_file()}
        manifest["edited_from"] = {"name": model.name, "files": read_manifest(model.folder).get("files", {})}
        manifest["edits"] = [{**describe(e), **({"request": request} if request else {})} for e in edits]
        (work / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")

        # every hook of the saved folder against the original with the edits fed to its graph
        saved = Model(work)
        ids = model.tokenizer.encode(probe)
        a, ca = saved.run(ids, keep_all_logits=True, hooks=saved.hook_names)
        b, cb = model.run(ids, keep_all_logits=True, hooks=model.hook_names, interventions=edits)
        worst, where = _compare(a, b, list(b))
        nxt = [int(np.argmax(b.last_logits))]
        a2, _ = saved.run(nxt, ca, keep_all_logits=True)
        b2, _ = model.run(nxt, cb, keep_all_logits=True, interventions=edits)
        worst2, where2 = _compare(a2, b2, list(b2))
        if worst2 > worst:
            worst, where = worst2, where2
        del saved
        if worst > TOLERANCE:
            raise InterventionError(f"the saved folder does not reproduce the edit: {where} differs by {worst:.2e} "
                                    f"of its scale (tolerance {TOLERANCE:g}); nothing was written")
        manifest["edit_validation"] = {"prompt_ids": ids, "step_id": nxt[0], "tolerance_relative": TOLERANCE,
                                       "max_relative": worst, "worst_hook": where}
        (work / MANIFEST).write_text(json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)
