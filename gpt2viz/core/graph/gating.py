"""The graph the runtime runs: hooks a call does not keep, and the LM head of every position, not computed.

onnxruntime runs every node of a graph whatever outputs a call asks for, and never reuses a graph
output's buffer within a call. Every hook is a graph output (an ``Identity`` copy of its tensor), so a
long prefill that keeps only the residual stream still copied every block's scores, patterns, MLP
activations and ten more [P, E] tensors, and held them all until the call ended; and the LM head ran
over every position ([P, E] x [E, V]) although only the last one's logits were kept. Measured on a
GPT-2-small-sized model, prefill of 1000 tokens: of 2.05 s, the all-position LM head took 0.3 s and
the hook copies 0.27 s.

So the graph each session runs is built in memory from the file's (the file and its hooks are
unchanged) with three boolean inputs, which every call feeds (:func:`gate_feeds` says what for):

- ``KEEP_HOOKS``: each block's hooks that a long prefill leaves to on-demand
  computation (:data:`gpt2viz.core.engine.ondemand.ONDEMAND_HOOKS`) come out of one ``If`` per block; fed
  false, that ``If`` returns empty tensors and the copies are never made. The residual stream, the
  embeddings and the final LayerNorm stay plain outputs. Either way the block computes exactly what
  it computed before: the tensors are the same nodes' outputs, only their copies are skipped. The
  nodes that only compute LayerNorm hooks (``hook_normalized`` before weight and bias) move inside
  the ``If`` too, so a call that skips the hooks does not compute them.
- ``ALL_LOGITS``: the LM head runs over every position (``logits``) only when fed
  true, otherwise over none.
- ``LAST_LOGITS_SWITCH``: the same for ``last_logits``, the last position's row (what
  views read); a chunk of a long prefill before the last one needs none.

One ``If`` per block, not one per hook: an ``If`` costs a few microseconds per call, and with one per
block the block's tensors can be freed when its ``If`` has run.
"""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gpt2viz.core.graph.cuts import ONDEMAND_HOOKS
from gpt2viz.core.graph.surgery import LAYERNORM_TAG, add_last_logits
from gpt2viz.core.hooks import LAST_LOGITS, block_hook

KEEP_HOOKS = "gpt2viz.keep_hooks"
ALL_LOGITS = "gpt2viz.all_logits"
LAST_LOGITS_SWITCH = "gpt2viz.last_logits"
_END = np.iinfo(np.int64).max


@functools.lru_cache(maxsize=8)
def gated_hooks(n_layer: int) -> frozenset[str]:
    """Hooks that come out of a block's ``If``: computed only in calls fed ``KEEP_HOOKS`` true."""
    return frozenset(block_hook(L, h) for L in range(n_layer) for h in ONDEMAND_HOOKS)


def gate_feeds(wanted, n_layer: int) -> dict[str, np.ndarray]:
    """The three switches of a gated graph of ``n_layer`` blocks for a call that returns the outputs ``wanted``:
    hooks on when it returns any gated hook, each LM head product when it returns its logits."""
    wanted = set(wanted)
    return {KEEP_HOOKS: np.array(not wanted.isdisjoint(gated_hooks(n_layer))),
            ALL_LOGITS: np.array("logits" in wanted), LAST_LOGITS_SWITCH: np.array(LAST_LOGITS in wanted)}


def skipped_outputs(wanted, n_layer: int) -> frozenset[str]:
    """Outputs a call returning ``wanted`` does not make (fed :func:`gate_feeds`): they come back empty."""
    on = gate_feeds(wanted, n_layer)
    return frozenset(() if on[KEEP_HOOKS] else gated_hooks(n_layer)) | \
        frozenset(name for name, switch in (("logits", ALL_LOGITS), (LAST_LOGITS, LAST_LOGITS_SWITCH)) if not on[switch])


def _empty(name: str) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.zeros(0, np.float32)))


def _branch(name: str, nodes: list[onnx.NodeProto], outputs: list[str]) -> onnx.GraphProto:
    outs = [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in outputs]
    return helper.make_graph(nodes, name, [], outs)


def _hook_only_nodes(tensor: str, producer: dict[str, onnx.NodeProto]) -> list[onnx.NodeProto]:
    """The nodes that compute ``tensor`` for a LayerNorm hook and nothing else (surgery names them under
    ``LAYERNORM_TAG``), in the order they run; none for any other hook's tensor."""
    out: list[onnx.NodeProto] = []

    def visit(t):
        node = producer.get(t)
        if node is None or not node.name.startswith(LAYERNORM_TAG) or any(node is n for n in out):
            return
        for i in node.input:
            visit(i)
        out.append(node)

    visit(tensor)
    return out


def gate(model: onnx.ModelProto, n_layer: int) -> None:
    """Put the gated hooks and the LM head behind ``KEEP_HOOKS``, ``ALL_LOGITS`` and ``LAST_LOGITS_SWITCH``, in place.

    ``model`` is a graph with every hook exposed (a skeleton is fine: no weight is touched). A graph
    exported before ``last_logits`` existed gets it here. Fed all three true, the graph returns what it
    returned before, bit for bit.
    """
    g = model.graph
    if KEEP_HOOKS in {i.name for i in g.input}:
        raise ValueError("the graph is gated already")
    if LAST_LOGITS not in {o.name for o in g.output}:
        add_last_logits(model)
    identity = {n.output[0]: n for n in g.node if n.op_type == "Identity" and n.name.startswith("/gpt2viz/")}
    producer = {t: n for n in g.node for t in n.output}
    gated = gated_hooks(n_layer)
    drop, added = set(), []
    for layer in range(n_layer):
        hooks = [h for h in identity if h in gated and h.startswith(f"blocks.{layer}.")]
        tag = f"/gpt2viz/gate/blocks.{layer}"
        private = [n for h in hooks for n in _hook_only_nodes(identity[h].input[0], producer)]
        keep = [helper.make_node("Identity", [identity[h].input[0]], [f"{tag}/{h}"]) for h in hooks]
        skip = [_empty(f"{tag}/{h}/skipped") for h in hooks]
        added.append(helper.make_node("If", [KEEP_HOOKS], hooks, name=tag,
                                      then_branch=_branch(f"keep_{layer}", private + keep, [n.output[0] for n in keep]),
                                      else_branch=_branch(f"skip_{layer}", skip, [n.output[0] for n in skip])))
        drop.update(id(identity[h]) for h in hooks)
        drop.update(id(n) for n in private)
    head = producer["logits"]
    if head.op_type != "MatMul":
        raise ValueError(f"logits are made by {head.op_type}, not the LM head's MatMul")
    # Not an If around the MatMul: a MatMul inside a branch cannot use the weight onnxruntime pre-packed
    # for the main graph's, which would keep the embedding a second time. The MatMul stays where it is
    # and reads the positions from ``first`` on: every one, or none (an empty product costs nothing).
    # The same for the last position's row (a chunk of a long prefill before the last needs none).
    last = producer[producer[LAST_LOGITS].input[0]]
    if last.op_type != "Gather":
        raise ValueError(f"last_logits reads a {last.op_type}, not the Gather of the last position")
    g.initializer.extend(numpy_helper.from_array(np.array([v], np.int64), f"/gpt2viz/gate/{k}")
                         for k, v in (("zero", 0), ("last", -1), ("end", _END), ("position_axis", 1)))
    nodes = [n for n in g.node if id(n) not in drop and n is not last]
    for switch, node, start, tag in ((ALL_LOGITS, head, "zero", "logits"), (LAST_LOGITS_SWITCH, last, "last", "last")):
        first, rows = f"/gpt2viz/gate/{tag}/first", f"/gpt2viz/gate/{tag}/rows"
        select = [helper.make_node("Where", [switch, f"/gpt2viz/gate/{start}", "/gpt2viz/gate/end"], [first],
                                   name=f"/gpt2viz/gate/{tag}/Where"),
                  helper.make_node("Slice", [node.input[0], first, "/gpt2viz/gate/end", "/gpt2viz/gate/position_axis"],
                                   [rows], name=f"/gpt2viz/gate/{tag}/Slice")]
        if node is head:
            head.input[0] = rows
            i = nodes.index(head)
            nodes[i:i] = select
        else:  # the Slice of the last row replaces the Gather: [B, 1, E] either way, the same floats
            select[-1].output[0] = last.output[0]
            i = next(k for k, n in enumerate(nodes) if last.output[0] in n.input)
            nodes[i:i] = select
    # Each If right after the last node it reads from, so a block's tensors can be freed once its If
    # has run (onnxruntime keeps a tensor until its last consumer).
    at = {t: i for i, n in enumerate(nodes) for t in n.output}
    after: dict[int, list[onnx.NodeProto]] = {}
    for node in added:
        reads = [t for a in node.attribute if a.type == onnx.AttributeProto.GRAPH for n in a.g.node for t in n.input]
        after.setdefault(max((at[t] for t in reads if t in at), default=-1), []).append(node)
    del g.node[:]
    g.node.extend(after.get(-1, []))
    for i, n in enumerate(nodes):
        g.node.append(n)
        g.node.extend(after.get(i, []))
    # Plain inputs, not inputs with defaults (overridable initializers): onnxruntime's IO binding, which
    # lets a long prefill write its cache into arrays of its own, accepts only plain inputs.
    for name in (KEEP_HOOKS, ALL_LOGITS, LAST_LOGITS_SWITCH):
        g.input.append(helper.make_tensor_value_info(name, TensorProto.BOOL, []))
    # A skipped output is an empty tensor: its declared [B, P, ...] shape no longer always holds.
    for o in g.output:
        if o.name in gated or o.name == "logits":
            o.type.tensor_type.ClearField("shape")
