"""Hooks computed on demand, exactly, by small graphs cut from the model's own exported graph.

A long prefill keeps only what is cheap to keep and read at every layer: the residual stream and the
sub-layer outputs. Attention scores and patterns are [H, P, K] per layer (2 x 12 x 12 x 1000^2 floats
at 1000 tokens on GPT-2 small: 1.2 GB), MLP activations [P, M] per layer (0.3 GB), and LayerNorm
outputs, q, k, v and z six more [P, E] arrays per layer (0.2 GB; 0.6 GB for gpt2-medium at 1024
tokens); onnxruntime computes only what requested outputs need, so a prefill that does not ask for
them never holds them. A view that shows one gets it from the block's sub-graph: the very nodes of
``model.onnx`` between a stored hook and the hook, run by onnxruntime on the same shapes, so the
numbers are the full graph's own (tests hold them to 1e-6).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gpt2viz.core.hooks import block_hook

# Each family of on-demand hooks is the output of one sub-graph per block, read from one stored hook
# (the residual stream as the block's attention or MLP sees it, after any intervention there):
# "attn": LayerNorm 1, q, k, v, z, scores, pattern from hook_resid_pre (hook_embed only gives the graph
# its [B, P] shape); "mlp": LayerNorm 2, pre- and post-activations from hook_resid_mid. The residual
# stream and the two sub-layer outputs (5 of a block's 14 hooks) stay stored: they are what the
# pipeline, lens, residual and attribution views read at every layer.
FAMILIES = {
    "attn": (("hook_resid_pre",), ("ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
                                   "attn.hook_z", "attn.hook_attn_scores", "attn.hook_pattern")),
    "mlp": (("hook_resid_mid",), ("ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post")),
}
ONDEMAND_HOOKS = tuple(h for _, outs in FAMILIES.values() for h in outs)

# A prefill of at least this many positions leaves ONDEMAND_HOOKS to on-demand sub-graphs. Below it
# they are small (0.6 MB of patterns at 32 tokens on GPT-2 small) and kept, so short prompts and cached
# steps ([H, 1, K]) stay exactly as before.
ONDEMAND_FROM = 64
CACHE_GROUPS = 2  # blocks' computed families kept per trace (e.g. one layer's attention and its MLP)
# One position's slice of an on-demand hook, kept apart from the whole arrays: the pipeline, the
# attribution and the stage texts read one query row ([H, K] of a pattern) of every block per redraw;
# at 1000 tokens on GPT-2 small a row is 48 KB, a block's attention family 0.2 GB.
CACHE_ROWS = 1024


def _cut(graph: onnx.GraphProto, inputs: list[str], outputs: list[str], name: str, opset) -> bytes:
    """The nodes of ``graph`` that compute ``outputs`` from the tensors ``inputs``, serialized.

    Walks back from the outputs and stops at ``inputs``, initializers and graph inputs. Graph inputs it
    reaches (mask inputs, cached keys, intervention scale/shift) stay inputs. Like
    ``onnx.utils.Extractor`` without its shape inference over the whole model (a copy of every weight).
    """
    producer = {t: n for n in graph.node for t in n.output}
    inits = {t.name for t in graph.initializer}
    ginputs = {i.name for i in graph.input}
    stop = set(inputs)
    picked, used_inits, used_inputs, seen = set(), set(), set(), set()
    frontier = list(outputs)
    while frontier:
        t = frontier.pop()
        if not t or t in seen or t in stop:
            continue
        seen.add(t)
        if t in ginputs:  # overridable initializers (interventions) are both
            used_inputs.add(t)
        if t in inits:
            used_inits.add(t)
        if t in ginputs or t in inits:
            continue
        node = producer[t]
        if id(node) not in picked:
            picked.add(id(node))
            frontier.extend(node.input)
    nodes = [n for n in graph.node if id(n) in picked]
    g_inputs = [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in inputs]
    g_inputs += [i for i in graph.input if i.name in used_inputs]
    g_outputs = [helper.make_tensor_value_info(t, TensorProto.FLOAT, None) for t in outputs]
    sub = helper.make_graph(nodes, name, g_inputs, g_outputs,
                            initializer=[t for t in graph.initializer if t.name in used_inits])
    return helper.make_model(sub, opset_imports=list(opset), ir_version=8).SerializeToString()


def hook_source(graph: onnx.GraphProto, hook: str) -> str:
    """The graph tensor a hook output shows (the input of the Identity node named after it)."""
    for n in graph.node:
        if n.op_type == "Identity" and n.output[0] == hook:
            return n.input[0]
    raise KeyError(f"the graph has no hook output {hook!r}")


def cut_graphs(model: onnx.ModelProto, n_layer: int) -> dict[tuple[int, str], tuple[bytes, tuple[str, ...]]]:
    """Per (layer, family) the serialized sub-graph and the stored hooks it reads, in input order.

    Families are :data:`FAMILIES`; the attention one also reads hook_embed (for the shape) and the
    mask inputs. Cut from the graph with intervention inputs, when it has them, so an intervention
    inside the sub-graph (a head's z, a neuron) applies on demand too. ``model`` may be a skeleton
    (:func:`gpt2viz.core.onnx_file.read_skeleton`): the sub-graphs then read their weights from the file.
    """
    g = model.graph
    src = {n.output[0]: n.input[0] for n in g.node if n.op_type == "Identity"}
    out = {}
    for layer in range(n_layer):
        for fam, (reads, hooks) in FAMILIES.items():
            reads = tuple(block_hook(layer, h) for h in reads) + (("hook_embed",) if fam == "attn" else ())
            outs = [block_hook(layer, h) for h in hooks]
            out[(layer, fam)] = (_cut(g, [src[r] for r in reads], outs, f"{fam}_{layer}", model.opset_import),
                                 reads)
    return out


def family(hook: str) -> str:
    """The family (:data:`FAMILIES`) of an on-demand hook name without its block prefix."""
    return next(f for f, (_, outs) in FAMILIES.items() if hook in outs)


class OnDemand:
    """The hooks a long prefill's trace left out, computed when first read (a few kept).

    Parameters
    ----------
    model : Model
        The model that ran the prefill (its sub-graph sessions are shared by all traces).
    layers : int
        Number of blocks.
    positions : int
        Positions of the prefill (its keys are the same positions: no cache before it).
    feeds : callable, optional
        ``feeds(layer)`` -> extra inputs of the layer's MLP sub-graph (the interventions in force).
    """

    def __init__(self, model, layers: int, positions: int, feeds=None):
        self.model = model
        self.positions = positions
        self.names = frozenset(block_hook(L, h) for L in range(layers) for h in ONDEMAND_HOOKS)
        self._feeds = feeds
        # (layer, family) -> every hook its sub-graph computed: a view reading q, then k, then the
        # pattern of one block runs the sub-graph once.
        self._cache: OrderedDict[tuple[int, str], dict[str, np.ndarray]] = OrderedDict()
        self._rows: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()

    def row(self, name: str, trace, index: int, take) -> np.ndarray:
        """``take(array)`` for the ``index``-th position of hook ``name`` (read-only; kept, CACHE_ROWS of them)."""
        key = (name, index)
        r = self._rows.get(key)
        if r is None:
            r = np.array(take(self.get(name, trace)))  # a copy: the whole array may be dropped
            r.flags.writeable = False
            self._rows[key] = r
            while len(self._rows) > CACHE_ROWS:
                self._rows.popitem(last=False)
        self._rows.move_to_end(key)
        return r

    def get(self, name: str, trace) -> np.ndarray:
        """Hook ``name`` of ``trace`` (without the batch dimension), read-only."""
        layer, hook = int(name.split(".")[1]), name.split(".", 2)[2]
        key = (layer, family(hook))
        group = self._cache.get(key)
        if group is None:
            group = self._cache[key] = self._compute(layer, key[1], trace)
            while len(self._cache) > CACHE_GROUPS:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return group[name]

    def _compute(self, layer: int, fam: str, trace) -> dict[str, np.ndarray]:
        sess, reads = self.model.ondemand_session(layer, fam)
        feed = {i.name: trace.hooks[r][None] for i, r in zip(sess.get_inputs(), reads)}
        P, c = self.positions, self.model.config
        extra = {"input_ids": np.zeros((1, P), np.int64), "attention_mask": np.ones((1, P), np.int64)}
        empty = np.zeros((1, c.n_head, 0, c.d_head), np.float32)
        inputs = {i.name for i in sess.get_inputs()[len(reads):]}
        for name in inputs:
            if name in extra:
                feed[name] = extra[name]
            elif name.startswith("past_key_values."):
                feed[name] = empty
        if self._feeds is not None:  # the interventions in force, where the sub-graph has them
            # (scale/shift inputs have no-op initializers: onnxruntime lists them apart from get_inputs)
            settable = inputs | {i.name for i in sess.get_overridable_initializers()}
            feed.update({k: v for k, v in self._feeds(layer).items() if k in settable})
        outs = [o.name for o in sess.get_outputs()]
        group = {}
        for o, arr in zip(outs, sess.run(outs, feed)):
            a = arr[0]
            a.flags.writeable = False
            group[o] = a
        from gpt2viz.core.runtime import trim_heap

        trim_heap()  # the sub-graph's temporaries ([H, P, P] masks, scores before softmax) were freed to malloc
        return group

    def nbytes(self) -> int:
        """Memory of the computed hooks kept."""
        return sum(a.nbytes for g in self._cache.values() for a in g.values()) + \
            sum(r.nbytes for r in self._rows.values())


def lens_graph(model: onnx.ModelProto) -> bytes:
    """The model's own final LayerNorm and LM head as a graph from ``resid`` [N, E] to ``lens`` [N, V].

    The logit lens applies exactly these two to the residual after each block. Both work row by row,
    so the N rows can be every depth of several positions at once: one onnxruntime call for a lens
    grid's new columns. The nodes are copied from ``model.onnx`` (``ln_f``'s LayerNormalization with
    its epsilon, the ``lm_head`` MatMul and the nodes that make its weight, a Transpose of the tied
    embedding); only the Reshape between them, which restores [B, P], is left out. ``model`` must hold
    its weights in memory (loaded with its external data, if any).
    """
    g = model.graph
    producer = {t: n for n in g.node for t in n.output}
    inits = {t.name: t for t in g.initializer}
    head = producer["logits"]
    if head.op_type != "MatMul":
        raise ValueError(f"logits are made by {head.op_type}, not the LM head's MatMul")
    t = head.input[0]
    while producer[t].op_type in ("Reshape", "Identity"):
        t = producer[t].input[0]
    ln = producer[t]
    if ln.op_type != "LayerNormalization":
        raise ValueError(f"the LM head reads {ln.op_type}, not the final LayerNorm")
    nodes, used, frontier = [], [], [head.input[1], *ln.input[1:]]
    while frontier:  # the parameter side: back to initializers (through Transpose, Identity, ...)
        w = frontier.pop()
        if w in inits:
            used.append(w)
        elif w in producer and producer[w] not in nodes:
            nodes.insert(0, producer[w])
            frontier.extend(producer[w].input)
    norm = helper.make_node("LayerNormalization", ["resid", *ln.input[1:]], ["normalized"], name=ln.name)
    norm.attribute.extend(ln.attribute)
    mm = helper.make_node("MatMul", ["normalized", head.input[1]], ["lens"], name=head.name)
    # Each row's top token and its probability, as analysis.lens_top defines them (first index of the
    # maximum; 1 / sum(e^(x - max)), exponentials in float32 summed in float64), computed here so a
    # lens grid's columns never bring [N, V] logits back to Python (numpy's pass over them cost as
    # much as the product while auto-stepping).
    tops = [
        helper.make_node("ArgMax", ["lens"], ["top_index"], axis=1, keepdims=1),
        helper.make_node("GatherElements", ["lens", "top_index"], ["top_logit"], axis=1),
        helper.make_node("Sub", ["lens", "top_logit"], ["shifted"]),
        helper.make_node("Exp", ["shifted"], ["exps"]),
        helper.make_node("Cast", ["exps"], ["exps64"], to=TensorProto.DOUBLE),
        helper.make_node("ReduceSum", ["exps64", "row_axis"], ["exp_sum"], keepdims=0),
        helper.make_node("Reciprocal", ["exp_sum"], ["p_top"]),
        helper.make_node("Squeeze", ["top_index", "row_axis"], ["top"]),
    ]
    axis = numpy_helper.from_array(np.array([1], dtype=np.int64), "row_axis")
    sub = helper.make_graph([*nodes, norm, mm, *tops], "lens",
                            [helper.make_tensor_value_info("resid", TensorProto.FLOAT, [None, None])],
                            [helper.make_tensor_value_info("lens", TensorProto.FLOAT, None),
                             helper.make_tensor_value_info("top", TensorProto.INT64, None),
                             helper.make_tensor_value_info("p_top", TensorProto.DOUBLE, None)],
                            initializer=[inits[n] for n in dict.fromkeys(used)] + [axis])
    return helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=8).SerializeToString()
