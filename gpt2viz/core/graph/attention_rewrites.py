"""The runtime graph's attention masks, applied by one addition per block instead of a select and an addition.

transformers' eager GPT-2 attention masks its scores in two passes over [B, H, P, keys]:

    Softmax(Where(causal, scores, MIN) + padding)

where ``causal`` is a [1, 1, P, keys] slice of the causal buffer, ``MIN`` is float32's lowest value and
``padding`` is 0 or ``MIN`` per key (from ``attention_mask``). On a 1000-token prefill of a GPT-2-small-sized
model these two passes took 0.14 s of 1.24 s (onnxruntime profile: ``Where`` 98 ms, ``Add`` 45 ms): the
select is the slowest elementwise node of the graph.

:func:`fold_masks` rewrites each block to

    Softmax(scores + (Where(causal, 0, MIN) + padding))

where the mask in brackets is [B, 1, P, keys] (a twelfth of the scores on GPT-2 small) and the only pass over
[B, H, P, keys] is one addition. Every value the softmax reads is the same float, so every output is the same
bit for bit (``tests/core/test_attention_rewrites.py`` asserts it against the file's graph):

- a key the causal mask keeps: ``scores + (0 + padding)`` is ``scores + padding``, as before;
- a key it hides, unpadded: ``scores + MIN`` rounds to ``MIN`` exactly, as long as ``|scores| < 2**103``
  (half a unit in the last place of ``MIN``); attention scores are sums of 64 products of LayerNormed
  projections, many orders of magnitude smaller;
- a key it hides, padded: ``MIN + MIN`` is ``-inf`` either way.

The hooks are not moved: ``hook_attn_scores`` is the select's input and ``hook_pattern`` the softmax's output,
both untouched. Only the runtime's in-memory graph is rewritten; the file keeps the exported graph.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

_MIN = np.finfo(np.float32).min
_ZERO = "/gpt2viz/mask/zero"


def _scalar(g: onnx.GraphProto, name: str) -> float | None:
    """The value of a float scalar constant ``name`` (a ``Constant`` node's output or an initializer), else None."""
    for init in g.initializer:
        if init.name == name:
            a = numpy_helper.to_array(init)
            return float(a.reshape(())) if a.size == 1 and a.dtype == np.float32 else None
    for n in g.node:
        if n.op_type == "Constant" and n.output[0] == name:
            value = next((a for a in n.attribute if a.name == "value"), None)
            if value is None:
                return None
            a = numpy_helper.to_array(value.t)
            return float(a.reshape(())) if a.size == 1 and a.dtype == np.float32 else None
    return None


def _readers(g: onnx.GraphProto) -> dict[str, list[onnx.NodeProto]]:
    """Each tensor's reading nodes (of the main graph: rewrite before gating, whose If branches read too)."""
    readers: dict[str, list[onnx.NodeProto]] = {}
    for n in g.node:
        for t in n.input:
            readers.setdefault(t, []).append(n)
    return readers


def _replace_nodes(g: onnx.GraphProto, instead: dict[int, list[onnx.NodeProto]]) -> None:
    """Put ``instead[id(node)]`` where each such node is (an empty list drops it); the rest stays in order."""
    nodes = [m for n in g.node for m in instead.get(id(n), [n])]
    del g.node[:]
    g.node.extend(nodes)


def fold_masks(model: onnx.ModelProto) -> int:
    """Rewrite every ``Softmax(Where(causal, scores, MIN) + padding)`` of ``model`` in place (see the module);
    returns how many were rewritten. Anything else, or a select whose output is read elsewhere, is left alone."""
    g = model.graph
    readers = _readers(g)
    outputs = {o.name for o in g.output}
    folds = []
    for where in g.node:
        if where.op_type != "Where" or where.output[0] in outputs:
            continue
        after = readers.get(where.output[0], [])
        if len(after) != 1 or after[0].op_type != "Add":
            continue
        add = after[0]
        if add.output[0] in outputs or [n.op_type for n in readers.get(add.output[0], [])] != ["Softmax"]:
            continue
        if _scalar(g, where.input[2]) != float(_MIN):
            continue
        folds.append((where, add))
    if not folds:
        return 0
    g.initializer.append(numpy_helper.from_array(np.array(0.0, np.float32), _ZERO))
    instead: dict[int, list[onnx.NodeProto]] = {}
    for where, add in folds:
        cond, scores, low = where.input
        padding = add.input[1] if add.input[0] == where.output[0] else add.input[0]
        tag = f"{where.name}/gpt2viz_fold"
        causal = helper.make_node("Where", [cond, _ZERO, low], [f"{tag}/causal"], name=f"{tag}/causal")
        mask = helper.make_node("Add", [f"{tag}/causal", padding], [f"{tag}/mask"], name=f"{tag}/mask")
        add.input[:] = [scores, f"{tag}/mask"]
        instead[id(where)], instead[id(add)] = [], [causal, mask, add]
    _replace_nodes(g, instead)
    return len(folds)


def _power_of_two(x: float) -> bool:
    m, _ = np.frexp(np.float32(x))
    return x > 0 and float(m) == 0.5


def _is_square_root(g: onnx.GraphProto, producer: dict, name: str) -> bool:
    """Whether ``name`` is ``Pow(x, 0.5)``, or that plus a zero (transformers' ``torch.full([], d ** 0.5)``
    exports as ``ConstantOfShape(0) + Pow(d, 0.5)``), where ``x`` is the head size."""
    node = producer.get(name)
    if node is not None and node.op_type == "Add":
        for this, other in (node.input, reversed(node.input)):
            zero = producer.get(other)
            if zero is not None and zero.op_type == "ConstantOfShape" and all(
                    not numpy_helper.to_array(a.t).any() for a in zero.attribute if a.name == "value"):
                return _is_square_root(g, producer, this)
        return False
    return node is not None and node.op_type == "Pow" and _scalar(g, node.input[1]) == 0.5


def scale_queries(model: onnx.ModelProto, head_dim: int) -> int:
    """Rewrite every block's ``Div(MatMul(q, kT), sqrt(head_dim))`` of ``model`` to ``MatMul(q * (1 / sqrt(head_dim)), kT)``,
    in place, when ``sqrt(head_dim)`` is a power of two (GPT-2's 64: 8); returns how many were rewritten.

    Scaling by a power of two is exact in floating point (short of underflow to subnormals, far below any
    score), so every product and every partial sum of the scaled MatMul is exactly the unscaled one's times
    the scale, and the division by ``sqrt(head_dim)`` is exact too: the scores are the same floats. The
    division ran over [B, H, P, keys] (40 ms of a 1000-token prefill on GPT-2 small); the multiplication runs
    over [B, H, P, head_dim] (3 ms). For any other head
    size the two orders round differently, so nothing is rewritten."""
    if not _power_of_two(float(np.sqrt(np.float32(head_dim)))):
        return 0
    g = model.graph
    readers = _readers(g)
    producer = {t: n for n in g.node for t in n.output}
    outputs = {o.name for o in g.output}
    rewrites = []
    for softmax in (n for n in g.node if n.op_type == "Softmax"):
        t = softmax.input[0]
        for _ in range(4):  # back through the mask's Add (or Where + Add) and the Cast to the scores
            node = producer.get(t)
            if node is None or node.op_type not in ("Add", "Where", "Cast"):
                break
            t = node.input[1] if node.op_type == "Where" else node.input[0]
        div = producer.get(t)
        if div is None or div.op_type != "Div":
            continue
        if not _is_square_root(g, producer, div.input[1]):
            continue  # e.g. GPT-2's optional division by the layer's number
        mm = producer.get(div.input[0])
        if mm is None or mm.op_type != "MatMul" or mm.output[0] in outputs or len(readers[mm.output[0]]) != 1:
            continue
        rewrites.append((div, mm))
    if not rewrites:
        return 0
    instead: dict[int, list[onnx.NodeProto]] = {}
    for div, mm in rewrites:
        tag = f"{div.name}/gpt2viz_scale"
        inverse = helper.make_node("Reciprocal", [div.input[1]], [f"{tag}/inverse"], name=f"{tag}/inverse")
        scaled = helper.make_node("Mul", [mm.input[0], f"{tag}/inverse"], [f"{tag}/q"], name=f"{tag}/q")
        mm.input[0] = f"{tag}/q"
        mm.output[0] = div.output[0]
        # The divisor is computed after the MatMul (it reads the cache's shape), so the MatMul moves to
        # where the Div was, after its new scaled input; the Div's readers now read the MatMul.
        instead[id(mm)], instead[id(div)] = [], [inverse, scaled, mm]
    _replace_nodes(g, instead)
    return len(rewrites)


def rewrite_attention(model: onnx.ModelProto, d_head: int) -> tuple[int, int]:
    """Both rewrites of this module on ``model`` in place (the runtime's graph, before gating); returns
    how many blocks' masks were folded and how many blocks' queries scaled."""
    return fold_masks(model), scale_queries(model, d_head)
