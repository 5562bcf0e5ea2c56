"""gpt2viz: trace the life of one token through GPT-2, with the model's own numbers.

For notebooks and scripts::

    import gpt2viz
    model = gpt2viz.load("atlas")                   # a bundled or exported model, by name or folder
    logits, trace = model.run_with_cache("The capital of France is")
    trace["pattern", 3]                              # [heads, positions, keys], TransformerLens' names

See docs/python-api.md.
"""

from __future__ import annotations

from pathlib import Path

from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.plan import Plan
from gpt2viz.core.model_folder.locations import resolve_model

__version__ = "0.1.0"
__all__ = ["Model", "Plan", "load"]


def load(model: str | Path | None = None, *, verify: bool = True, threads: int | None = None,
         device: str = "cpu") -> Model:
    """Open a model folder: a name found in the model folders (``gpt2viz models`` lists them), a path, or by
    default the bundled ``atlas``.

    Parameters
    ----------
    model : str or path, optional
        ``"atlas"``, ``"gpt2"`` (after ``gpt2viz export gpt2``), or a folder written by ``gpt2viz export``.
    verify : bool
        Check the weights' sha256 against the manifest (a damaged copy fails here, clearly).
    threads : int, optional
        onnxruntime intra-op threads; default: all cores.
    device : {"cpu", "cuda"}
        Where the model runs; "cuda" needs onnxruntime-gpu (the ``gpu`` extra) and an NVIDIA GPU.
    """
    return Model(resolve_model(None if model is None else str(model)), verify=verify, threads=threads,
                 device=device)
