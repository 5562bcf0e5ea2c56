"""A sub-graph run through onnxruntime's optimizer once: fewer nodes, the model file's own weights, the same floats."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import gpt2viz.core.engine.model as runtime
from gpt2viz.core.engine import ondemand
from gpt2viz.core.engine.model import Model
from gpt2viz.core.graph import onnx_file
from gpt2viz.core.interventions import HeadAblation, Steer


@pytest.fixture
def stubbed(monkeypatch):
    """Leave initializers of 1 KB or more in the file (tiny configs' weights are mostly < 64 KB), and hooks on
    demand from 4 positions."""
    monkeypatch.setattr(onnx_file, "STUB_FROM", 1024)
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)


def _ids(n, seed=0):
    return [int(t) for t in np.random.default_rng(seed).integers(0, 50257, n)]


def test_a_prepared_sub_graph_is_optimized_and_reads_the_files_weights(exported, stubbed):
    model = Model(exported["l3h4e32"])
    cuts = {k: onnx.load_from_string(blob) for k, (blob, _) in model._cuts.items()}
    assert model.prepare_ondemand() is True
    stored = model.layout[1]
    attn = [k for k in cuts if k[1] == "attn"]
    assert sorted(model._prepared) == sorted(attn) and len(attn) == model.config.n_layer
    for key in attn:
        graph = onnx.load_from_string(model._prepared[key])
        assert len(graph.graph.node) < len(cuts[key].graph.node)  # the optimizer ran (fusions, folding)
        assert model._cuts[key][0] is None  # the cut is let go
        external = [t for t in graph.graph.initializer if t.data_location == TensorProto.EXTERNAL]
        assert external  # the block's projections
        for t in external:
            info = {e.key: e.value for e in t.external_data}
            s = stored[t.name]
            assert (info["location"], int(info["offset"]), int(info["length"])) == (s.file, s.offset, s.length)
        # no weight held in the graph: what it holds is smaller than one of the weights it reads
        held = sum(len(t.raw_data) for t in graph.graph.initializer)
        assert held < min(t_len for t_len in (stored[t.name].length for t in external))
    for key in (k for k in cuts if k[1] == "mlp"):  # not prepared: opened as cut
        assert model._cuts[key][0] is not None and key not in model._prepared


def test_prepare_ondemand_goes_a_few_at_a_time(exported, stubbed):
    model = Model(exported["l3h4e32"])
    assert [model.prepare_ondemand(limit=1) for _ in range(3)] == [False, False, True]
    assert len(model._prepared) == 3 and model.prepare_ondemand(limit=1) is True


@pytest.mark.parametrize("ivs", [(), (HeadAblation(1, 2),),
                                 (HeadAblation(0, 1), Steer(2, (3, 4), tuple(np.linspace(-1, 1, 32))))])
def test_a_prepared_sub_graph_computes_the_same_floats(exported, stubbed, monkeypatch, ivs):
    monkeypatch.setattr(runtime, "ONDEMAND_SESSIONS", 1)  # every layer's session opened from its graph again
    cut, prepared = Model(exported["l3h4e32"]), Model(exported["l3h4e32"])
    prepared.prepare_ondemand()
    ids = _ids(40)
    full, _ = cut.run(ids, hooks=cut.hook_names, interventions=ivs)
    a, _ = cut.run(ids, interventions=ivs)
    b, _ = prepared.run(ids, interventions=ivs)
    names = [n for n in cut.hook_names if n.endswith(tuple(h for h in ondemand.ONDEMAND_HOOKS))]
    for n in names:
        np.testing.assert_array_equal(b[n], a[n], err_msg=n)
        assert float(np.abs(b[n] - full[n]).max()) <= 1e-6, n
    # many rows of one layer: its sub-graph over those positions
    for L in range(3):
        rows_a = a.ondemand.rows(f"blocks.{L}.attn.hook_pattern", a, 20, 40)
        rows_b = b.ondemand.rows(f"blocks.{L}.attn.hook_pattern", b, 20, 40)
        for x, y in zip(rows_a, rows_b):
            np.testing.assert_array_equal(x, y)
