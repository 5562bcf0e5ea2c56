"""The runtime's attention rewrites give the file graph's numbers bit for bit, and leave alone what they cannot."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.graph.attention_rewrites import fold_masks, rewrite_attention, scale_queries
from gpt2viz.core.graph.gating import ALL_LOGITS, KEEP_HOOKS, LAST_LOGITS_SWITCH, gate
from gpt2viz.core.graph.onnx_file import read_skeleton, session_options_for

CONFIGS = ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"]
ON = {KEEP_HOOKS: np.array(True), ALL_LOGITS: np.array(True), LAST_LOGITS_SWITCH: np.array(True)}


def _feed(model, ids, past, mask=None):
    total = past.length + len(ids)
    feed = {"input_ids": np.asarray([ids], np.int64),
            "attention_mask": np.ones((1, total), np.int64) if mask is None else np.asarray([mask], np.int64),
            "position_ids": np.arange(past.length, total, dtype=np.int64)[None]}
    for L, (k, v) in enumerate(past.layers):
        feed[f"past_key_values.{L}.key"], feed[f"past_key_values.{L}.value"] = k, v
    return feed


def _graphs(folder, d_head):
    skeleton, _ = read_skeleton(folder / "model.onnx")
    n_layer = sum(1 for i in skeleton.graph.input if i.name.startswith("past_key_values.") and i.name.endswith(".key"))
    rewritten = onnx.ModelProto()  # as the runtime makes it: rewritten, then gated
    rewritten.CopyFrom(skeleton)
    counts = rewrite_attention(rewritten, d_head)
    gate(rewritten, n_layer)
    return skeleton, rewritten, counts


@pytest.mark.parametrize("name", CONFIGS)
def test_rewritten_graph_returns_the_file_graphs_outputs_bit_for_bit(exported, name):
    model = Model(exported[name])
    cfg = model.config
    skeleton, rewritten, (folded, scaled) = _graphs(exported[name], cfg.d_head)
    assert folded == cfg.n_layer
    # heads of 16 or 64 have a power-of-two square root; heads of 8 or 12 do not
    assert scaled == (cfg.n_layer if cfg.d_head in (16, 64) else 0)
    opts = session_options_for(exported[name])
    plain = ort.InferenceSession(skeleton.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    fast = ort.InferenceSession(rewritten.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    outs = [o.name for o in plain.get_outputs()]
    rng = np.random.default_rng(5)
    for padded in (False, True):
        past = model.empty_cache()
        for n in (7, 1, 3):  # a prefill, then cached calls
            ids = [int(t) for t in rng.integers(0, 50257, n)]
            total = past.length + n
            # padded: the first key hidden by attention_mask too, as a left-padded batch row has it
            mask = [0] + [1] * (total - 1) if padded else None
            feed = _feed(model, ids, past, mask)
            want = plain.run(outs, feed)
            got = fast.run(outs, {**feed, **ON})
            for o, a, b in zip(outs, want, got):
                np.testing.assert_array_equal(a, b, err_msg=f"{o} (padded={padded})")
            past = type(past)(tuple((want[outs.index(f"present.{L}.key")], want[outs.index(f"present.{L}.value")])
                                    for L in range(cfg.n_layer)))


def test_the_runtime_runs_the_rewritten_graph(exported):
    """What Model opens is gated and rewritten: no select over the scores, no division of them."""
    model = Model(exported["l2h2e32"])
    skeleton, rewritten, _ = _graphs(exported["l2h2e32"], model.config.d_head)
    blob = onnx.load_from_string(model._runtime_graph(skeleton, strip=False))
    assert [n.op_type for n in blob.graph.node] == [n.op_type for n in rewritten.graph.node]
    softmax_inputs = {n.input[0] for n in blob.graph.node if n.op_type == "Softmax"}
    producer = {t: n for n in blob.graph.node for t in n.output}
    assert {producer[t].op_type for t in softmax_inputs} == {"Add"}
    assert not [n for n in blob.graph.node if n.op_type == "Div" and "/attn/" in n.name]


def test_rewrites_leave_other_graphs_alone(exported):
    skeleton, _, _ = _graphs(exported["l1h1e8"], 8)
    # l1h1e8 divides its scores by the layer's number after the square root: never scaled, whatever d_head says
    again = onnx.ModelProto()
    again.CopyFrom(skeleton)
    assert scale_queries(again, 64) == 0
    assert fold_masks(again) == 1 and fold_masks(again) == 0  # a folded graph has nothing left to fold
    # a select whose output is also a graph output keeps its pass (it must be made anyway)
    kept = onnx.ModelProto()
    kept.CopyFrom(skeleton)
    where = next(n for n in kept.graph.node if n.op_type == "Where" and "/attn/" in n.name)
    kept.graph.output.append(onnx.helper.make_tensor_value_info(where.output[0], onnx.TensorProto.FLOAT, None))
    assert fold_masks(kept) == 0
