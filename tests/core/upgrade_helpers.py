"""Make a folder as exported before interventions existed (format 1), to test the upgrade path."""

from __future__ import annotations

import json

import onnx

from gpt2viz.core.graph.surgery import strip_interventions
from gpt2viz.core.model_folder.manifest import sha256_file


def downgrade(folder) -> None:
    """Remove the intervention nodes, inputs and last_logits from an export, as format 1 had it."""
    m = onnx.load(str(folder / "model.onnx"))
    strip_interventions(m)
    onnx.save_model(m, str(folder / "model.onnx"))
    man = json.loads((folder / "gpt2viz.json").read_text())
    man["format_version"] = 1
    man.pop("interventions", None)
    man["files"] = {"model.onnx": sha256_file(folder / "model.onnx")}
    (folder / "gpt2viz.json").write_text(json.dumps(man))
