"""Weights a graph can be fed instead of its own: each block's MLP output weight, for model edits (ROME).

An initializer that is also a graph input is overridable: onnxruntime uses the fed array when one is given
and the stored weight otherwise. Declared only in the in-memory graphs that run interventions (the file and
the plain graph keep their weights constant, which lets onnxruntime pre-pack them).
"""

from __future__ import annotations

import onnx
from onnx import helper


class WeightNotFound(ValueError):
    """The graph has no MLP down-projection where GPT-2's export puts it."""


def mlp_out_weights(model: onnx.ModelProto, n_layer: int) -> dict[int, str]:
    """Layer -> the initializer the block's MLP down-projection multiplies by ([M, E], GPT-2's Conv1D layout).

    Found by the node's module path (``/transformer/h.{L}/mlp/c_proj/``, as optimum names it): a MatMul, or a
    Gemm (small models export Conv1D as one) that does not transpose it, through any Identity between the
    node and the stored weight (deduplicated parameters).
    """
    g = model.graph
    inits = {t.name for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    out = {}
    for layer in range(n_layer):
        prefix = f"/transformer/h.{layer}/mlp/c_proj/"
        node = next((n for n in g.node if n.op_type in ("MatMul", "Gemm") and n.name.startswith(prefix)), None)
        if node is None:
            raise WeightNotFound(f"no MatMul or Gemm under {prefix} in the graph")
        if any(a.name == "transB" and a.i for a in node.attribute):
            raise WeightNotFound(f"the Gemm under {prefix} transposes its weight")
        w = node.input[1]
        while w not in inits and w in producer and producer[w].op_type == "Identity":
            w = producer[w].input[0]
        if w not in inits:
            raise WeightNotFound(f"the MatMul under {prefix} does not read a stored weight")
        out[layer] = w
    return out


def expose_weights(model: onnx.ModelProto, names) -> None:
    """Declare the initializers ``names`` as graph inputs too (overridable), in place."""
    g = model.graph
    have = {i.name for i in g.input}
    by_name = {t.name: t for t in g.initializer}
    for name in names:
        if name in have:
            continue
        t = by_name[name]
        g.input.append(helper.make_tensor_value_info(name, t.data_type, list(t.dims)))
