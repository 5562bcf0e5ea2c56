"""Graphs cut out of the model's own graph: one block's attention or MLP (hooks computed on demand) and
the final LayerNorm + LM head (the logit lens). Pure ONNX: nothing here runs a session."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gpt2viz.core.hooks import block_hook

# Each family of on-demand hooks is the output of one sub-graph per block, read from the residual
# stream as the block's attention or MLP sees it (after any intervention there): "attn": LayerNorm 1's
# scale and normalized value, q, k, v, z, scores, pattern, the attention output and the residual after
# it, from hook_resid_pre (hook_embed only gives the graph its [B, P] shape); "mlp": LayerNorm 2's two,
# pre- and post-activations and the MLP output, from hook_resid_mid. A long prefill stores only the residual stream between
# blocks (one array per boundary, see Model.run): the lens grid reads it at every layer of many
# positions; everything else views read one position at a time.
FAMILIES = {
    "attn": (("hook_resid_pre",), ("ln1.hook_scale", "ln1.hook_normalized", "attn.hook_q", "attn.hook_k",
                                   "attn.hook_v", "attn.hook_z", "attn.hook_attn_scores", "attn.hook_pattern",
                                   "hook_attn_out", "hook_resid_mid")),
    "mlp": (("hook_resid_mid",), ("ln2.hook_scale", "ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post",
                                  "hook_mlp_out")),
}


ONDEMAND_HOOKS = tuple(h for _, outs in FAMILIES.values() for h in outs)


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


def cut_graphs(model: onnx.ModelProto, n_layer: int) -> dict[tuple[int, str], tuple[bytes, tuple[str, ...]]]:
    """Per (layer, family) the serialized sub-graph and the stored hooks it reads, in input order.

    Families are :data:`FAMILIES`; the attention one also reads hook_embed (for the shape) and the
    mask inputs. Cut from the graph with intervention inputs, when it has them, so an intervention
    inside the sub-graph (a head's z, a neuron) applies on demand too. ``model`` may be a skeleton
    (:func:`gpt2viz.core.graph.onnx_file.read_skeleton`): the sub-graphs then read their weights from the file.
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
    ln_node = helper.make_node("LayerNormalization", ["resid", *ln.input[1:]], ["ln_out"], name=ln.name)
    ln_node.attribute.extend(ln.attribute)
    # ``normalize`` False skips the LayerNorm: the LM head's product alone, on vectors that are not
    # residuals (an MLP output, a neuron's value vector: what a direction promotes). onnxruntime runs
    # every node of a graph whatever outputs are asked for, so the choice is an If, not two branches.
    branch = lambda name, nodes, out: helper.make_graph(  # noqa: E731
        nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    norm = helper.make_node("If", ["normalize"], ["normalized"],
                            then_branch=branch("final_layernorm", [ln_node], "ln_out"),
                            else_branch=branch("raw", [helper.make_node("Identity", ["resid"], ["raw_out"])],
                                               "raw_out"))
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
        # The whole rows ``final_rows`` (a position's last depth: the model's output there), brought back with the
        # tops of a call that reads the unembedding anyway: the pipeline's output stage at an earlier position
        # read it again in a one-row call (~10 ms of a token click at 200 tokens of GPT-2 small, 2-core EPYC).
        helper.make_node("Gather", ["lens", "final_rows"], ["final_logits"], axis=0),
    ]
    # One target token per row (the lens tab's path): its probability by the same rule, and its rank (the number
    # of logits above it, 0 = top), so that path needs no [N, V] logits in Python either. Only when ``path`` is
    # asked: onnxruntime runs every node of a graph, and these passes over the [N, V] logits were ~2 of a 13-row
    # call's ~12 ms (GPT-2 small, 2-core EPYC) that made only the tops. The count of logits above the target is
    # summed in float32 (exact below 2^24, V = 50,257): int64's ReduceSum took 1.35 ms of those 2.
    path = [
        helper.make_node("Unsqueeze", ["target", "row_axis"], ["target_index"]),
        helper.make_node("GatherElements", ["lens", "target_index"], ["target_logit"], axis=1),
        helper.make_node("Sub", ["target_logit", "top_logit"], ["target_shifted"]),
        helper.make_node("Exp", ["target_shifted"], ["target_exp"]),
        helper.make_node("Cast", ["target_exp"], ["target_exp64"], to=TensorProto.DOUBLE),
        helper.make_node("Squeeze", ["target_exp64", "row_axis"], ["target_exp_row"]),
        helper.make_node("Div", ["target_exp_row", "exp_sum"], ["path_p"]),
        helper.make_node("Greater", ["lens", "target_logit"], ["above"]),
        helper.make_node("Cast", ["above"], ["above32"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["above32", "row_axis"], ["above_count"], keepdims=0),
        helper.make_node("Cast", ["above_count"], ["path_rank"], to=TensorProto.INT64),
    ]
    no_path = [helper.make_node("Cast", ["target"], ["no_path_p"], to=TensorProto.DOUBLE),  # placeholders, [N]
               helper.make_node("Identity", ["target"], ["no_path_rank"])]
    path_outputs = lambda name, nodes, p, rank: helper.make_graph(  # noqa: E731
        nodes, name, [], [helper.make_tensor_value_info(p, TensorProto.DOUBLE, None),
                          helper.make_tensor_value_info(rank, TensorProto.INT64, None)])
    tops.append(helper.make_node("If", ["path"], ["p_target", "rank_target"],
                                 then_branch=path_outputs("target_path", path, "path_p", "path_rank"),
                                 else_branch=path_outputs("no_path", no_path, "no_path_p", "no_path_rank")))
    # The length of each token's row of the unembedding (cosine similarities): onnxruntime folds it
    # into a constant when it loads the graph, so the session still holds the matrix once.
    raw = [helper.make_node("ReduceL2", [head.input[1], "vocab_axis"], ["embedding_norms"], keepdims=0)]
    axes = [numpy_helper.from_array(np.array([1], dtype=np.int64), "row_axis"),
            numpy_helper.from_array(np.array([0], dtype=np.int64), "vocab_axis")]
    sub = helper.make_graph([*nodes, norm, mm, *tops, *raw], "lens",
                            [helper.make_tensor_value_info("resid", TensorProto.FLOAT, [None, None]),
                             helper.make_tensor_value_info("normalize", TensorProto.BOOL, []),
                             helper.make_tensor_value_info("target", TensorProto.INT64, [None]),
                             helper.make_tensor_value_info("path", TensorProto.BOOL, []),
                             helper.make_tensor_value_info("final_rows", TensorProto.INT64, [None])],
                            [helper.make_tensor_value_info("lens", TensorProto.FLOAT, None),
                             helper.make_tensor_value_info("top", TensorProto.INT64, None),
                             helper.make_tensor_value_info("p_top", TensorProto.DOUBLE, None),
                             helper.make_tensor_value_info("p_target", TensorProto.DOUBLE, None),
                             helper.make_tensor_value_info("rank_target", TensorProto.INT64, None),
                             helper.make_tensor_value_info("final_logits", TensorProto.FLOAT, None),
                             helper.make_tensor_value_info("embedding_norms", TensorProto.FLOAT, None)],
                            initializer=[inits[n] for n in dict.fromkeys(used)] + axes)
    return helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=8).SerializeToString()
