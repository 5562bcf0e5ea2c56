"""Hooks computed on demand, exactly, by the model's own graph: a long prefill keeps only the residual stream.

Attention scores and patterns are [H, P, K] per layer (2 x 12 x 12 x 1000^2 floats at 1000 tokens on
GPT-2 small: 1.2 GB), MLP activations [P, M] per layer (0.3 GB), the other hooks 11 more [P, E] arrays
per layer. A prefill of ONDEMAND_FROM positions or more keeps the residual between blocks (and the
embeddings and the final LayerNorm); a view that reads another hook gets it from the model's own
onnxruntime graph, run on the positions it reads after the prefill's KV cache: the session itself for
one position of every layer (as one more chunk of the prefill), or a block's sub-graph (the very nodes
of ``model.onnx`` between the stored residual and the hook) for many positions of one layer. Tests hold
them to the full graph's output (1e-6).
"""

from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from gpt2viz.core.hooks import BLOCK_HOOKS, block_hook

# Each family of on-demand hooks is the output of one sub-graph per block, read from the residual
# stream as the block's attention or MLP sees it (after any intervention there): "attn": LayerNorm 1,
# q, k, v, z, scores, pattern, the attention output and the residual after it, from hook_resid_pre
# (hook_embed only gives the graph its [B, P] shape); "mlp": LayerNorm 2, pre- and post-activations
# and the MLP output, from hook_resid_mid. A long prefill stores only the residual stream between
# blocks (one array per boundary, see Model.run): the lens grid reads it at every layer of many
# positions; everything else views read one position at a time.
FAMILIES = {
    "attn": (("hook_resid_pre",), ("ln1.hook_normalized", "attn.hook_q", "attn.hook_k", "attn.hook_v",
                                   "attn.hook_z", "attn.hook_attn_scores", "attn.hook_pattern",
                                   "hook_attn_out", "hook_resid_mid")),
    "mlp": (("hook_resid_mid",), ("ln2.hook_normalized", "mlp.hook_pre", "mlp.hook_post", "hook_mlp_out")),
}
ONDEMAND_HOOKS = tuple(h for _, outs in FAMILIES.values() for h in outs)
# Keys and values of a prefill are its KV cache, transposed ([1, H, P, D] there, [P, H, D] as hooks):
# the same floats (tested bit for bit), so they are read from the cache, never computed again.
FROM_CACHE = {"attn.hook_k": 0, "attn.hook_v": 1}

# A prefill of at least this many positions leaves ONDEMAND_HOOKS to on-demand computation. Below it
# they are small (0.6 MB of patterns at 32 tokens on GPT-2 small) and kept, so short prompts and cached
# steps ([H, 1, K]) stay exactly as before.
ONDEMAND_FROM = 64
# Views read on-demand hooks one position at a time, at every layer (the pipeline, attribution, the
# stage texts): those come ROW_BLOCK positions at a time from the model's own session, as one more
# chunk after the prefill's cache (what the chunked prefill itself runs), every layer in one call:
# ~50 ms for 16 positions at the end of 1000 tokens on GPT-2 small. A layer's many rows (an attention
# map) or a whole hook come from the layer's sub-graph over those positions, after the same cache.
ROW_BLOCK = 16
# Computed hooks kept per trace (rows and ranges together; see OnDemand._keep).
# At 1000 tokens on GPT-2 small a row block of every layer is 22 MB, a layer's 127-row attention map
# 15 MB: the position and the layer in view, and the one before.
KEEP_BYTES = 32 << 20


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
    """The hooks a long prefill's trace left out, computed exactly when first read (some kept).

    Parameters
    ----------
    model : Model
        The model that ran the prefill.
    layers : int
        Number of blocks.
    positions : int
        Positions of the prefill (its keys are the same positions: no cache before it).
    past : KVCache
        The prefill's cache (or a longer one of the same context, see :meth:`follow`).
    interventions : tuple, optional
        The interventions the prefill ran under (and ``means`` for mean ablations): on-demand hooks
        are computed under them too.
    """

    def __init__(self, model, layers: int, positions: int, past, interventions=(), means=None):
        self.model = model
        self.positions = positions
        self.names = frozenset(block_hook(L, h) for L in range(layers) for h in ONDEMAND_HOOKS)
        self.past = past
        self.interventions, self.means = tuple(interventions), means
        # Computed hooks, newest last: (first, stop) -> every on-demand hook of every layer for those
        # positions (main session); (layer, family, first, stop) -> a family's hooks (sub-graph).
        self._kept: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()

    def follow(self, cache) -> None:
        """Read keys and values from ``cache`` from now on: a longer cache of the same context (a step's),
        whose first positions are the prefill's own, bit for bit. The prefill's cache is then freed."""
        if cache.length >= self.positions:
            self.past = cache

    # ---- reading ---------------------------------------------------------------------------------
    def row(self, name: str, trace, index: int) -> np.ndarray:
        """The ``index``-th position of hook ``name`` (keys 0..index for attention hooks), read-only."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            return self._cached_kv(layer, hook)[index]
        group = self._holding(name, index, index + 1)
        if group is None:
            first = index - index % ROW_BLOCK
            stop = min(first + ROW_BLOCK, self.positions)
            group = self._keep((first, stop), lambda: self._block(trace, first, stop))
        return _take(group[1][name], name, index - group[0], index + 1)

    def rows(self, name: str, trace, first: int, stop: int) -> list[np.ndarray]:
        """Positions ``first .. stop-1`` of hook ``name``, each as :meth:`row` gives it, from one computation."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            kv = self._cached_kv(layer, hook)
            return [kv[i] for i in range(first, stop)]
        group = self._holding(name, first, stop)
        if group is None:
            group = (first, self._range(layer, family(hook), trace, first, stop))
        return [_take(group[1][name], name, i - group[0], i + 1) for i in range(first, stop)]

    def get(self, name: str, trace) -> np.ndarray:
        """Hook ``name`` over every position of ``trace`` (without the batch dimension), read-only."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            return self._cached_kv(layer, hook)
        group = self._holding(name, 0, self.positions)
        if group is None:
            group = (0, self._range(layer, family(hook), trace, 0, self.positions))
        return group[1][name]

    def nbytes(self) -> int:
        """Memory of the computed hooks kept."""
        return sum(a.nbytes for g in self._kept.values() for a in g.values())

    # ---- computing -------------------------------------------------------------------------------
    def _holding(self, name: str, first: int, stop: int):
        """(first position, group) of a kept group with hook ``name`` at positions first..stop-1, or None."""
        for key, group in reversed(self._kept.items()):
            lo, hi = key[-2:]
            if lo <= first and stop <= hi and name in group:
                self._kept.move_to_end(key)
                return lo, group
        return None

    def _keep(self, key: tuple, compute) -> tuple[int, dict[str, np.ndarray]]:
        """(first position, group) for ``key``, computed by ``compute()`` unless kept; the oldest groups
        go once more than KEEP_BYTES are kept."""
        group = self._kept.get(key)
        if group is None:
            group = self._kept[key] = compute()
        self._kept.move_to_end(key)
        # The newest row block and the newest range stay whatever their size: the pipeline reads the
        # one at every redraw while an attention map of another layer reads the other (on gpt2-medium a
        # row block of every layer is 55 MB, and computing it again holds the 0.2 GB cache twice).
        newest = {next((k for k in reversed(self._kept) if len(k) == n), None) for n in (2, 4)}
        total = self.nbytes()
        for k in [k for k in self._kept if k not in newest]:
            if total <= KEEP_BYTES:
                break
            total -= sum(a.nbytes for a in self._kept.pop(k).values())
        return key[-2], group

    def _cached_kv(self, layer: int, hook: str) -> np.ndarray:
        a = self.past.layers[layer][FROM_CACHE[hook]][0, :, : self.positions].transpose(1, 0, 2)
        a.flags.writeable = False
        return a

    def _block(self, trace, first: int, stop: int) -> dict[str, np.ndarray]:
        """Every on-demand hook of every layer at positions first..stop-1: the model's own graph run on
        them after the cache of the positions before, as the chunked prefill ran them."""
        names = sorted(n for n in self.names if _split(n)[1] not in FROM_CACHE)
        part, _ = self.model.run(trace.tokens[first:stop], self.past.truncated(first), hooks=names,
                                 interventions=self.interventions, means=self.means, release=True)
        return {n: part.hooks[n] for n in names}

    def _range(self, layer: int, fam: str, trace, first: int, stop: int) -> dict[str, np.ndarray]:
        """A family's hooks at positions first..stop-1 of one layer, from the layer's sub-graph (kept)."""
        return self._keep((layer, fam, first, stop), lambda: self._subgraph(layer, fam, trace, first, stop))[1]

    def _subgraph(self, layer: int, fam: str, trace, first: int, stop: int) -> dict[str, np.ndarray]:
        sess, reads = self.model.ondemand_session(layer, fam)
        feed = {}
        for i, r in zip(sess.get_inputs(), reads):
            # the MLP reads the residual after attention, itself on demand: the layer's attention first
            if r in trace.hooks:
                a = trace.hooks[r][first:stop]
            else:
                a = self._range(layer, family(_split(r)[1]), trace, first, stop)[r]
            feed[i.name] = np.ascontiguousarray(a)[None]
        c = self.model.config
        extra = {"input_ids": np.zeros((1, stop - first), np.int64), "attention_mask": np.ones((1, stop), np.int64)}
        inputs = {i.name for i in sess.get_inputs()[len(reads):]}
        for name in inputs:
            if name in extra:
                feed[name] = extra[name]
            elif name.startswith("past_key_values."):  # the keys and values of the positions before
                _, L, kv = name.split(".")
                past = self.past.layers[int(L)][0 if kv == "key" else 1]
                feed[name] = np.ascontiguousarray(past[:, :, :first]) if first else \
                    np.zeros((1, c.n_head, 0, c.d_head), np.float32)
        if self.interventions:  # those the sub-graph has (scale/shift inputs are overridable initializers)
            settable = inputs | {i.name for i in sess.get_overridable_initializers()}
            ivs = self.model.intervention_feeds(self.interventions, first, stop - first, self.means)
            feed.update({k: v for k, v in ivs.items() if k in settable})
        outs = [o.name for o in sess.get_outputs()]
        group = {}
        for o, arr in zip(outs, sess.run(outs, feed)):
            a = arr[0]
            a.flags.writeable = False
            group[o] = a
        from gpt2viz.core.runtime import trim_heap

        trim_heap()  # the sub-graph's temporaries ([H, P, K] masks, scores before softmax) were freed to malloc
        return group


def _split(name: str) -> tuple[int, str]:
    """(layer, hook without its block prefix) of a per-block hook name."""
    _, layer, hook = name.split(".", 2)
    return int(layer), hook


@functools.lru_cache(maxsize=None)
def _axes(hook: str) -> tuple[int, int | None]:
    """Where the P and K axes of a block hook are, the batch dimension dropped."""
    letters = dict(BLOCK_HOOKS)[hook].split()[1:]
    return letters.index("P"), (letters.index("K") if "K" in letters else None)


def _take(a: np.ndarray, name: str, i: int, keys: int) -> np.ndarray:
    """Row ``i`` along the P axis of an on-demand hook's array, attention hooks cut to their first ``keys`` keys."""
    p, k = _axes(_split(name)[1])
    where: list = [slice(None)] * a.ndim
    where[p] = i
    if k is not None:
        where[k] = slice(0, keys)
    return a[tuple(where)]


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
    ]
    # The length of each token's row of the unembedding (cosine similarities): onnxruntime folds it
    # into a constant when it loads the graph, so the session still holds the matrix once.
    raw = [helper.make_node("ReduceL2", [head.input[1], "vocab_axis"], ["embedding_norms"], keepdims=0)]
    axes = [numpy_helper.from_array(np.array([1], dtype=np.int64), "row_axis"),
            numpy_helper.from_array(np.array([0], dtype=np.int64), "vocab_axis")]
    sub = helper.make_graph([*nodes, norm, mm, *tops, *raw], "lens",
                            [helper.make_tensor_value_info("resid", TensorProto.FLOAT, [None, None]),
                             helper.make_tensor_value_info("normalize", TensorProto.BOOL, [])],
                            [helper.make_tensor_value_info("lens", TensorProto.FLOAT, None),
                             helper.make_tensor_value_info("top", TensorProto.INT64, None),
                             helper.make_tensor_value_info("p_top", TensorProto.DOUBLE, None),
                             helper.make_tensor_value_info("embedding_norms", TensorProto.FLOAT, None)],
                            initializer=[inits[n] for n in dict.fromkeys(used)] + axes)
    return helper.make_model(sub, opset_imports=list(model.opset_import), ir_version=8).SerializeToString()
