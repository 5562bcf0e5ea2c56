"""Make a folder as an older gpt2viz exported it, to test the upgrade path.

Format 2: ``*.hook_normalized`` showed the LayerNorm's output and there was no ``*.hook_scale``.
Format 1: that, and no intervention inputs nor ``last_logits``.
"""

from __future__ import annotations

import json

import onnx

from gpt2viz.core.graph.surgery import strip_interventions, strip_layernorm_hooks
from gpt2viz.core.hooks import hook_shapes
from gpt2viz.core.model_folder.manifest import sha256_file


def downgrade(folder, version: int = 1) -> None:
    """Rewrite an export in place as format ``version`` (1 or 2) had it."""
    m = onnx.load(str(folder / "model.onnx"))
    strip_layernorm_hooks(m)
    if version == 1:
        strip_interventions(m)
    onnx.save_model(m, str(folder / "model.onnx"))
    man = json.loads((folder / "gpt2viz.json").read_text())
    man["format_version"] = version
    if version == 1:
        man.pop("interventions", None)
    man["hooks"] = {k: v for k, v in hook_shapes(man["config"]["n_layer"]).items() if not k.endswith(".hook_scale")}
    man["files"] = {"model.onnx": sha256_file(folder / "model.onnx")}
    (folder / "gpt2viz.json").write_text(json.dumps(man))
