"""Expose every hook of the registry as a named output of optimum's GPT-2 ONNX graph.

Tensors are found from the graph's structure, never from auto-numbered names (`Add_1` differs
between exports): the module path in the node name (`/transformer/h.3/attn/...`), the op type, and
which node consumes which tensor. Each hook becomes an `Identity` node whose output carries the
TransformerLens name, so nothing inside the graph changes and the numbers are the graph's own.

The LayerNorm hooks are the one kind no tensor of the export holds: TransformerLens' `hook_normalized`
is the value *before* the LayerNorm's weight and bias, and `hook_scale` its divisor. They come from the
LayerNormalization node itself (:func:`_layernorm_nodes`), whose output the model goes on with is left
as it was.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gpt2viz.core.hooks import (
    BLOCK_HOOKS,
    EMBED_HOOKS,
    FINAL_HOOKS,
    INTERVENTION_HOOKS,
    LAST_LOGITS,
    block_hook,
    hook_names,
    scale_input,
    shift_input,
)

DIM_NAMES = {"B": "batch_size", "P": "sequence_length", "K": "past_sequence_length + sequence_length", "1": 1}
LAYERNORM_TAG = "/gpt2viz/ln/"  # names of the nodes that compute the LayerNorm hooks


class GraphStructureError(RuntimeError):
    """The graph does not have the structure of an eager-attention GPT-2 export."""


class _Graph:
    """Producer/consumer index over an ONNX graph, with lookups by module path."""

    def __init__(self, graph: onnx.GraphProto):
        self.graph = graph
        self.producer: dict[str, onnx.NodeProto] = {}
        self.consumers: dict[str, list[onnx.NodeProto]] = defaultdict(list)
        for node in graph.node:
            for t in node.output:
                self.producer[t] = node
            for t in node.input:
                self.consumers[t].append(node)

    @staticmethod
    def scope(node: onnx.NodeProto) -> str:
        return node.name.rsplit("/", 1)[0]

    def in_scope(self, scope: str, op: str, *, nested: bool = False) -> list[onnx.NodeProto]:
        """Nodes of type ``op`` directly in ``scope`` (or anywhere below it when ``nested``)."""
        out = []
        for node in self.graph.node:
            if node.op_type != op:
                continue
            s = self.scope(node)
            if s == scope or (nested and s.startswith(scope + "/")):
                out.append(node)
        return out

    def one(self, scope: str, op: str) -> onnx.NodeProto:
        found = self.in_scope(scope, op)
        if len(found) != 1:
            raise GraphStructureError(f"expected one {op} in {scope}, found {len(found)}")
        return found[0]

    def consumer_in(self, tensor: str, scope: str, op: str) -> onnx.NodeProto:
        found = [n for n in self.consumers[tensor] if n.op_type == op and self.scope(n) == scope]
        if len(found) != 1:
            raise GraphStructureError(f"expected one {op} in {scope} consuming {tensor}, found {len(found)}")
        return found[0]

    def crossing(self, from_scope: str, to_scope: str) -> str:
        """The one tensor produced inside ``from_scope`` and consumed inside ``to_scope``."""
        found = set()
        for node in self.graph.node:
            s = self.scope(node)
            if s == to_scope or s.startswith(to_scope + "/"):
                for t in node.input:
                    p = self.producer.get(t)
                    if p is not None and (self.scope(p) == from_scope or self.scope(p).startswith(from_scope + "/")):
                        found.add(t)
        if len(found) != 1:
            raise GraphStructureError(f"expected one tensor from {from_scope} into {to_scope}, found {sorted(found)}")
        return found.pop()


# Ops that only scale or re-type the scores between q·k and the mask (Div by √D, Cast to fp32).
_SCALING_OPS = ("Div", "Mul", "Cast")


def _unmasked_scores(g: _Graph, s: str, softmax: onnx.NodeProto) -> str:
    """The scaled q·k scores before any mask: walk back from the softmax to the q·k MatMul, then
    forward again through the scaling ops only. Eager exports scale after the MatMul (Div by √D)
    then mask (Where, Add); others fold the scale into q and k and only add the mask."""
    frontier, seen, qk = [softmax.input[0]], set(), None
    while frontier:
        t = frontier.pop()
        node = g.producer.get(t)
        if node is None or t in seen or not g.scope(node).startswith(f"{s}/attn"):
            continue
        seen.add(t)
        if node.op_type == "MatMul":
            qk = node
            break
        frontier.extend(node.input)
    if qk is None:
        raise GraphStructureError(f"no q·k MatMul feeds the softmax in {s}/attn")
    t = qk.output[0]
    while True:
        nxt = [n for n in g.consumers[t] if n.op_type in _SCALING_OPS and n.input[0] == t]
        if len(nxt) != 1:
            return t
        t = nxt[0].output[0]


def _block_tensors(g: _Graph, layer: int) -> dict[str, str]:
    """Map each per-block hook of block ``layer`` to the graph tensor that holds it."""
    s = f"/transformer/h.{layer}"
    out: dict[str, str] = {}
    ln1 = g.one(f"{s}/ln_1", "LayerNormalization")
    out["hook_resid_pre"] = ln1.input[0]

    split = g.one(f"{s}/attn", "Split")
    if len(split.output) != 3:
        raise GraphStructureError(f"{split.name} should split c_attn into q, k, v")
    for name, t in zip(("attn.hook_q", "attn.hook_k", "attn.hook_v"), split.output):
        out[name] = g.consumer_in(t, f"{s}/attn", "Reshape").output[0]  # [B, P, H, D]

    softmax = g.one(f"{s}/attn", "Softmax")
    out["attn.hook_pattern"] = softmax.output[0]
    out["attn.hook_attn_scores"] = _unmasked_scores(g, s, softmax)

    # z: the MatMul that applies the pattern to V (reached through NaN guards such as Where/Cast),
    # then its transpose back to [B, P, H, D].
    frontier, seen, z_mm = [softmax.output[0]], set(), None
    while frontier and z_mm is None:
        t = frontier.pop()
        for n in g.consumers[t]:
            if n.op_type == "MatMul":
                z_mm = n
                break
            if n.op_type in ("Where", "Cast", "Identity", "Dropout") and n.output[0] not in seen:
                seen.add(n.output[0])
                frontier.append(n.output[0])
    if z_mm is None:
        raise GraphStructureError(f"no MatMul applies the attention pattern in {s}/attn")
    out["attn.hook_z"] = g.consumer_in(z_mm.output[0], f"{s}/attn", "Transpose").output[0]

    adds = g.in_scope(s, "Add")
    first = [a for a in adds if out["hook_resid_pre"] in a.input]
    if len(first) != 1:
        raise GraphStructureError(f"expected one residual Add after attention in {s}")
    out["hook_resid_mid"] = first[0].output[0]
    out["hook_attn_out"] = next(t for t in first[0].input if t != out["hook_resid_pre"])
    second = [a for a in adds if out["hook_resid_mid"] in a.input]
    if len(second) != 1:
        raise GraphStructureError(f"expected one residual Add after the MLP in {s}")
    out["hook_resid_post"] = second[0].output[0]
    out["hook_mlp_out"] = next(t for t in second[0].input if t != out["hook_resid_mid"])

    ln2 = g.one(f"{s}/ln_2", "LayerNormalization")
    if ln2.input[0] != out["hook_resid_mid"]:
        raise GraphStructureError(f"{ln2.name} does not read the residual after attention")
    out["mlp.hook_pre"] = g.crossing(f"{s}/mlp/c_fc", f"{s}/mlp/act")
    out["mlp.hook_post"] = g.crossing(f"{s}/mlp/act", f"{s}/mlp/c_proj")
    return out


def locate_hooks(model: onnx.ModelProto, n_layer: int) -> dict[str, str]:
    """Map every hook name of the registry but the LayerNorm ones (:func:`locate_layernorms`) to the tensor
    of ``model`` that holds it."""
    g = _Graph(model.graph)
    found = {
        "hook_embed": g.one("/transformer/wte", "Gather").output[0],
        "hook_pos_embed": g.one("/transformer/wpe", "Gather").output[0],
    }
    for layer in range(n_layer):
        found.update({block_hook(layer, k): v for k, v in _block_tensors(g, layer).items()})
    ln_f = g.one("/transformer/ln_f", "LayerNormalization")
    if ln_f.input[0] != found[block_hook(n_layer - 1, "hook_resid_post")]:
        raise GraphStructureError("ln_f does not read the last block's residual")
    if "logits" not in {o.name for o in model.graph.output}:
        raise GraphStructureError("the graph has no `logits` output")
    found["logits"] = "logits"
    return found


def locate_layernorms(model: onnx.ModelProto, n_layer: int) -> dict[str, onnx.NodeProto]:
    """Each LayerNorm's hook prefix (``blocks.3.ln1``, ``ln_final``) -> its LayerNormalization node."""
    g = _Graph(model.graph)
    out = {}
    for layer in range(n_layer):
        out[block_hook(layer, "ln1")] = g.one(f"/transformer/h.{layer}/ln_1", "LayerNormalization")
        out[block_hook(layer, "ln2")] = g.one(f"/transformer/h.{layer}/ln_2", "LayerNormalization")
    out["ln_final"] = g.one("/transformer/ln_f", "LayerNormalization")
    return out


def _layernorm_nodes(ln: onnx.NodeProto, prefix: str) -> tuple[list[onnx.NodeProto], str, str]:
    """Nodes computing TransformerLens' ``hook_normalized`` and ``hook_scale`` of the LayerNormalization ``ln``.

    ``ln`` is given its optional outputs Mean and InvStdDev (= 1 / sqrt(var + eps), the numbers its kernel
    divides by anyway; its first output, which the model reads on, is the same floats with or without
    them, checked bit for bit by the tests). Then normalized = (x - Mean) * InvStdDev and
    scale = 1 / InvStdDev. Measured against the definition in float64, on atlas and the tests' exports:
    normalized within 5.4e-7, scale within 1.1e-7 of its size, the same as TransformerLens' own float32
    computation (6.3e-7); explicit ReduceMean / Sub / Mul / ReduceMean / Add / Sqrt / Div nodes agree as
    closely but cost three more passes over [B, P, E] per LayerNorm.

    Returns the nodes (named under :data:`LAYERNORM_TAG`) and the normalized and scale tensors.
    """
    attrs = {a.name: helper.get_attribute_value(a) for a in ln.attribute}
    if attrs.get("axis", -1) != -1 or attrs.get("stash_type", 1) != 1:
        raise GraphStructureError(f"{ln.name} does not normalize the last axis in float32")
    tag = f"{LAYERNORM_TAG}{prefix}"
    outs = [*ln.output, "", ""][:3]
    mean, inv = outs[1] or f"{tag}/mean", outs[2] or f"{tag}/inv_std_dev"
    del ln.output[:]
    ln.output.extend([outs[0], mean, inv])
    centred, normalized, scale = f"{tag}/centred", f"{tag}/normalized", f"{tag}/scale"
    nodes = [helper.make_node("Sub", [ln.input[0], mean], [centred], name=f"{tag}/Sub"),
             helper.make_node("Mul", [centred, inv], [normalized], name=f"{tag}/Mul"),
             helper.make_node("Reciprocal", [inv], [scale], name=f"{tag}/Reciprocal")]
    return nodes, normalized, scale


def expose_hooks(model: onnx.ModelProto, n_layer: int, dims: dict[str, int]) -> dict[str, str]:
    """Add every hook as a graph output named after the registry, in place.

    Parameters
    ----------
    model : onnx.ModelProto
        optimum's `text-generation-with-past` export of a GPT-2 with eager attention.
    n_layer : int
        Number of blocks.
    dims : dict
        Sizes for the shape letters H, D, E, M, V.

    Returns
    -------
    dict
        Hook name -> the graph tensor it was taken from (kept in the manifest for provenance).
    """
    found = locate_hooks(model, n_layer)
    for prefix, ln in locate_layernorms(model, n_layer).items():
        nodes, normalized, scale = _layernorm_nodes(ln, prefix)
        model.graph.node.extend(nodes)  # after every node: their inputs are all made before
        found[f"{prefix}.hook_normalized"], found[f"{prefix}.hook_scale"] = normalized, scale
    found = {name: found[name] for name in hook_names(n_layer)}  # the registry's order
    shapes = dict(EMBED_HOOKS)
    for layer in range(n_layer):
        shapes.update({block_hook(layer, h): sh for h, sh in BLOCK_HOOKS})
    shapes.update(FINAL_HOOKS)
    for name, tensor in found.items():
        if name == "logits":
            continue
        model.graph.node.append(helper.make_node("Identity", [tensor], [name], name=f"/gpt2viz/{name}"))
        dims_ = [DIM_NAMES.get(ch, dims.get(ch)) for ch in shapes[name].split()]
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, dims_))
    return found


def add_layernorm_hooks(model: onnx.ModelProto, n_layer: int) -> dict[str, str]:
    """Give a graph exported before format 3 TransformerLens' LayerNorm hooks, in place.

    There, ``*.hook_normalized`` showed the LayerNorm's output (after its weight and bias) and there was
    no ``*.hook_scale``. Each ``hook_normalized`` output is moved to the value before weight and bias, and
    ``hook_scale`` added, computed as a fresh export computes them (:func:`_layernorm_nodes`); every other
    node and output stays as it was. A pure graph transformation over the hook outputs: it applies to a
    folder whose checkpoint is gone, to the file (``gpt2viz export DIR --upgrade``) or in memory.

    Returns
    -------
    dict
        The hooks added or moved -> the tensor each now shows (for the manifest's ``hook_tensors``).
    """
    if "ln_final.hook_scale" in {o.name for o in model.graph.output}:
        raise GraphStructureError("the graph has the LayerNorm scale hooks already")
    identity = {n.output[0]: n for n in model.graph.node if n.op_type == "Identity" and n.name.startswith("/gpt2viz/")}
    outputs = model.graph.output
    added: dict[str, str] = {}
    for prefix, ln in locate_layernorms(model, n_layer).items():
        name, scale_name = f"{prefix}.hook_normalized", f"{prefix}.hook_scale"
        shown = identity.get(name)
        if shown is None or shown.input[0] != ln.output[0]:
            raise GraphStructureError(f"{name} does not show the output of {ln.name}")
        nodes, normalized, scale = _layernorm_nodes(ln, prefix)
        shown.input[0] = normalized
        nodes.append(helper.make_node("Identity", [scale], [scale_name], name=f"/gpt2viz/{scale_name}"))
        model.graph.node.extend(nodes)
        at = next(i for i, o in enumerate(outputs) if o.name == name)  # the registry's order: scale first
        outputs.insert(at, helper.make_tensor_value_info(scale_name, TensorProto.FLOAT,
                                                         ["batch_size", "sequence_length", 1]))
        added[scale_name], added[name] = scale, normalized
    _sort_topologically(model.graph)
    return added


def strip_layernorm_hooks(model: onnx.ModelProto) -> None:
    """Undo the LayerNorm hooks in place: ``hook_normalized`` shows the LayerNorm's output again and
    ``hook_scale`` is gone, the graph as format 2 had it (for the upgrade tests)."""
    g = model.graph
    producer = {t: n for n in g.node for t in n.output}
    ours = {id(n) for n in g.node if n.name.startswith(LAYERNORM_TAG)}
    back = {}  # the normalized tensor -> the LayerNorm's output, which the hook showed before
    for sub in (n for n in g.node if id(n) in ours and n.op_type == "Sub"):
        ln = producer[sub.input[1]]  # Sub(x, Mean): Mean is the LayerNorm's second output
        back[f"{sub.name.rsplit('/', 1)[0]}/normalized"] = ln.output[0]
        del ln.output[1:]
    scales = {n.output[0] for n in g.node if n.op_type == "Identity" and n.name.startswith("/gpt2viz/")
              and n.output[0].endswith(".hook_scale")}
    keep = [n for n in g.node if id(n) not in ours and n.output[0] not in scales]
    for n in keep:
        for i, t in enumerate(n.input):
            n.input[i] = back.get(t, t)
    del g.node[:]
    g.node.extend(keep)
    outs = [o for o in g.output if o.name not in scales]
    del g.output[:]
    g.output.extend(outs)


def add_interventions(model: onnx.ModelProto, n_layer: int) -> list[str]:
    """Add the intervention inputs of the registry and a last-position logits output, in place.

    A pure graph transformation over a graph that already carries the hook outputs (it finds each
    hook tensor through its ``Identity`` node), so it applies to a fresh export and to a folder
    exported before interventions existed. At every hook of ``INTERVENTION_HOOKS`` it inserts
    ``x' = x * scale + shift`` and moves every consumer of ``x`` (the hook output included) to ``x'``;
    the one exception is ``hook_resid_post`` of the block before, which is the same tensor and keeps
    showing the value before the next block's intervention. ``scale`` and ``shift`` are graph inputs
    with initializers (ones / zeros, every dimension 1), so a caller that feeds nothing gets the
    graph's old numbers (x * 1 + 0 is exact in float32).

    Returns
    -------
    list of str
        The names of the inputs added.
    """
    existing = {i.name for i in model.graph.input} | {i.name for i in model.graph.initializer}
    if scale_input(0, INTERVENTION_HOOKS[0][0]) in existing:
        raise GraphStructureError("the graph already has intervention inputs")
    identity = {n.output[0]: n for n in model.graph.node if n.op_type == "Identity" and n.name.startswith("/gpt2viz/")}
    added: list[str] = []
    new_nodes: list[onnx.NodeProto] = []
    for layer in range(n_layer):
        for hook, letters in INTERVENTION_HOOKS:
            name = block_hook(layer, hook)
            if name not in identity:
                raise GraphStructureError(f"no hook output {name}: expose the hooks first")
            x = identity[name].input[0]
            sc, sh = scale_input(layer, hook), shift_input(layer, hook)
            rank = len(letters.split())
            for inp, fill in ((sc, 1.0), (sh, 0.0)):
                init = numpy_helper.from_array(np.full((1,) * rank, fill, np.float32), inp)
                model.graph.initializer.append(init)
                model.graph.input.append(helper.make_tensor_value_info(inp, TensorProto.FLOAT, [f"{inp}.{i}" for i in range(rank)]))
                added.append(inp)
            scaled, out = f"/gpt2viz/iv/{name}/scaled", f"/gpt2viz/iv/{name}/out"
            # Every consumer of x reads x' from now on, except the previous block's resid_post hook.
            keep = {f"/gpt2viz/{block_hook(layer - 1, 'hook_resid_post')}"} if hook == "hook_resid_pre" else set()
            for node in model.graph.node:
                if node.name in keep:
                    continue
                for i, t in enumerate(node.input):
                    if t == x:
                        node.input[i] = out
            new_nodes += [helper.make_node("Mul", [x, sc], [scaled], name=f"/gpt2viz/iv/{name}/Mul"),
                          helper.make_node("Add", [scaled, sh], [out], name=f"/gpt2viz/iv/{name}/Add")]
    model.graph.node.extend(new_nodes)
    add_last_logits(model)
    _sort_topologically(model.graph)
    return added


def add_last_logits(model: onnx.ModelProto) -> None:
    """`last_logits` [B, 1, V]: the LM head MatMul applied to the last position only."""
    heads = [n for n in model.graph.node if "logits" in n.output]
    if len(heads) != 1 or heads[0].op_type != "MatMul":
        raise GraphStructureError("expected `logits` to come from one MatMul (the LM head)")
    head = heads[0]
    idx = "/gpt2viz/last_index"
    model.graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), idx))
    last = "/gpt2viz/last_position"
    model.graph.node.extend([
        helper.make_node("Gather", [head.input[0], idx], [last], name="/gpt2viz/last/Gather", axis=1),
        helper.make_node("MatMul", [last, head.input[1]], [LAST_LOGITS], name="/gpt2viz/last/MatMul"),
    ])
    model.graph.output.append(helper.make_tensor_value_info(LAST_LOGITS, TensorProto.FLOAT,
                                                            ["batch_size", 1, None]))


def _sort_topologically(graph: onnx.GraphProto) -> None:
    """ONNX requires nodes in topological order; the inserted nodes were appended at the end."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    pending = list(graph.node)
    ordered = []
    while pending:
        rest = []
        for node in pending:
            if all(t in ready for t in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                rest.append(node)
        if len(rest) == len(pending):
            raise GraphStructureError(f"the graph has a cycle or a missing tensor near {rest[0].name}")
        pending = rest
    del graph.node[:]
    graph.node.extend(ordered)


def strip_interventions(model: onnx.ModelProto, keep_last: bool = False) -> None:
    """Undo :func:`add_interventions` in place: the graph as format 1 had it (for the benchmark's
    side-by-side and the upgrade tests). ``keep_last`` keeps the ``last_logits`` output (the runtime's
    graph without interventions: a long prefill then skips the LM head of all but one position)."""
    g = model.graph
    last = () if keep_last else ("/gpt2viz/last/",)
    mul_in = {n.output[0]: n.input[0] for n in g.node if n.name.startswith("/gpt2viz/iv/") and n.op_type == "Mul"}
    add_in = {n.output[0]: mul_in[n.input[0]] for n in g.node if n.name.startswith("/gpt2viz/iv/") and n.op_type == "Add"}
    keep = [n for n in g.node if not n.name.startswith(("/gpt2viz/iv/", *last))]
    for n in keep:
        for i, t in enumerate(n.input):
            if t in add_in:
                n.input[i] = add_in[t]
    del g.node[:]
    g.node.extend(keep)
    drop = {i.name for i in g.input if i.name.endswith((".scale", ".shift"))}
    inputs = [i for i in g.input if i.name not in drop]
    del g.input[:]
    g.input.extend(inputs)
    inits = [i for i in g.initializer if i.name not in drop and (keep_last or i.name != "/gpt2viz/last_index")]
    del g.initializer[:]
    g.initializer.extend(inits)
    outs = [o for o in g.output if keep_last or o.name != "last_logits"]
    del g.output[:]
    g.output.extend(outs)
