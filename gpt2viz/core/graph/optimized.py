"""A graph run through onnxruntime's optimizer once, kept so that opening it again skips the optimizer.

Opening a block's attention sub-graph (:mod:`gpt2viz.core.graph.cuts`) with every graph optimization takes
~10-14 ms on a GPT-2-small-sized model, most of it onnxruntime's optimizer (constant folding, MatMul and
LayerNorm fusions: 293 nodes become 134); a block click waits for it. The graph saved after the optimizer
and opened with optimizations off takes ~3 ms and runs the same kernels on the same floats (tested bit for
bit). onnxruntime saves an optimized graph only to a file, its large initializers to a file beside it: each
one equal to a weight stored in the model's own files is pointed back there, so no weight is copied.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto

from gpt2viz.core.graph import onnx_file
from gpt2viz.core.graph.onnx_file import Stored

_GRAPH, _SIDE = "optimized.onnx", "optimized.bin"


def optimized_graph(blob: bytes, options: ort.SessionOptions, stored: dict[str, Stored], folder: str | Path,
                    providers=("CPUExecutionProvider",)) -> bytes:
    """``blob`` (a serialized graph) as onnxruntime's optimizer leaves it under ``options``, serialized.

    Open the result with ``graph_optimization_level = ORT_DISABLE_ALL`` and the rest of ``options``. Its
    initializers that are byte for byte a ``stored`` weight (by name) read that weight's bytes in ``folder``;
    the others (folded constants) are held in the graph. ``options`` is changed (where the optimizer writes).
    """
    folder = Path(folder)
    with tempfile.TemporaryDirectory(prefix="gpt2viz-optimized-") as tmp:
        out = Path(tmp)
        options.optimized_model_filepath = str(out / _GRAPH)
        options.add_session_config_entry("session.optimized_model_external_initializers_file_name", _SIDE)
        options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes",
                                         str(onnx_file.STUB_FROM))  # read at call time: tests lower it
        ort.InferenceSession(blob, options, providers=list(providers))
        graph = onnx.load(str(out / _GRAPH), load_external_data=False)
        side = out / _SIDE
        for t in graph.graph.initializer:
            if t.data_location != TensorProto.EXTERNAL:
                continue
            info = {e.key: e.value for e in t.external_data}
            offset, length = int(info.get("offset", 0)), int(info["length"])
            data = np.fromfile(side, np.uint8, count=length, offset=offset)
            s = stored.get(t.name)
            del t.external_data[:]
            if s is not None and s.length == length and np.array_equal(
                    np.fromfile(folder / s.file, np.uint8, count=length, offset=s.offset), data):
                for key, value in (("location", s.file), ("offset", str(s.offset)), ("length", str(length))):
                    e = t.external_data.add()
                    e.key, e.value = key, value
            else:  # made by the optimizer: held in the graph
                t.data_location = TensorProto.DEFAULT
                t.raw_data = data.tobytes()
    return graph.SerializeToString()
