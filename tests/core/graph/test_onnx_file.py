"""The skeleton reader: graphs made from it compute what the file computes, weights are the file's own,
and a file replaced after opening is refused instead of read at the old offsets."""

import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

import gpt2viz.core.graph.onnx_file as onnx_file
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.graph.onnx_file import OnnxFileError, WeightFiles, read_skeleton
from gpt2viz.core.interventions import HeadAblation
from gpt2viz.core.model_folder.manifest import ModelFolderError


@pytest.fixture
def stub_everything(monkeypatch):
    """Leave every initializer with raw data in the file (tiny configs' weights are mostly < 64 KB)."""
    monkeypatch.setattr(onnx_file, "STUB_FROM", 1)


def test_skeleton_points_at_the_files_own_bytes(exported, stub_everything):
    path = exported["l2h2e16"] / "model.onnx"
    full = onnx.load(str(path))
    skeleton, stored = read_skeleton(path)
    assert skeleton.ByteSize() < full.ByteSize() / 10
    assert [n.name for n in skeleton.graph.node] == [n.name for n in full.graph.node]
    files = WeightFiles(path.parent, stored)
    expected = {t.name: numpy_helper.to_array(t) for t in full.graph.initializer}
    assert set(stored) and set(stored) <= set(expected)
    for t in skeleton.graph.initializer:
        if t.name in stored:
            assert t.data_location == TensorProto.EXTERNAL and not t.raw_data
            a = files.array(t.name)
            assert not a.flags.writeable
            np.testing.assert_array_equal(a, expected[t.name])
        else:  # kept in the skeleton: no raw data to leave behind
            np.testing.assert_array_equal(numpy_helper.to_array(t), expected[t.name])


def test_model_on_the_skeleton_equals_the_file_run_by_onnxruntime(exported, stub_everything):
    folder = exported["l3h4e32"]
    model = Model(folder)
    ref = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    ids = [464, 3139, 286, 4881, 318]
    trace, cache = model.run(ids, hooks=model.hook_names, keep_all_logits=True)
    feed = {"input_ids": np.asarray([ids]), "attention_mask": np.ones((1, 5), np.int64),
            "position_ids": np.arange(5)[None]}
    for i in ref.get_inputs():
        if i.name.startswith("past_key_values."):
            feed[i.name] = np.zeros((1, model.config.n_head, 0, model.config.d_head), np.float32)
    outs = ref.run(["logits", *model.hook_names], feed)
    np.testing.assert_array_equal(trace["logits"], outs[0][0])
    for name, value in zip(model.hook_names, outs[1:]):
        np.testing.assert_array_equal(trace.hooks[name], value[0], err_msg=name)
    # A cached step and the intervention graph read the same weights.
    step, _ = model.run([13], cache)
    abl, _ = model.run(ids, interventions=(HeadAblation(1, 2),))
    assert np.isfinite(step.last_logits).all() and not np.array_equal(abl.last_logits, trace.last_logits)


def test_weights_are_the_files_parameters(exported, stub_everything):
    folder = exported["l2h2e16"]
    model = Model(folder)
    full = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(folder / "model.onnx")).graph.initializer}
    for w in (Weights(folder / "model.onnx", layout=model.layout), Weights(folder / "model.onnx")):
        np.testing.assert_array_equal(w.W_U, full["transformer.wte.weight"])
        np.testing.assert_array_equal(w.W_out(1), full["transformer.h.1.mlp.c_proj.weight"])
        norms = np.linalg.norm(full["transformer.wte.weight"], axis=1)
        np.testing.assert_allclose(w.embedding_norms, norms, rtol=1e-6)
        np.testing.assert_array_equal(w.embedding_rows([7, 0, 7]), full["transformer.wte.weight"][[7, 0, 7]])
        np.testing.assert_array_equal(w.embedding_rows(range(100, 140)), full["transformer.wte.weight"][100:140])
        v = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)  # the LM head's product alone
        np.testing.assert_allclose(w.unembed(v), v @ full["transformer.wte.weight"].T, rtol=1e-5, atol=1e-5)
        with pytest.raises(IndexError):
            w.embedding_rows([50257])
        with pytest.raises(IndexError):
            w.embedding_rows(range(50250, 50260))


def test_mlp_output_norms_and_rows_are_read_without_the_matrix(exported, stub_everything, monkeypatch, torch_models):
    """The MLP view's ‖W_out[n]‖ and one neuron's row, against transformers' weights: read in chunks of a few
    rows (one that does not divide the matrix), the matrix itself never kept; a kept matrix is normed as it is."""
    import gpt2viz.core.graph.onnx_file as onnx_file

    w = Weights.of(Model(exported["l3h4e32"]))
    W = torch_models["l3h4e32"].state_dict()["transformer.h.1.mlp.c_proj.weight"].numpy()  # [M, E]
    assert W.shape[0] % 5  # 5 rows a read: the last read is shorter
    monkeypatch.setattr(onnx_file, "NORM_CHUNK_BYTES", 5 * W.shape[1] * 4)
    w._table  # noqa: B018 - opens the weight files
    reads = []
    read = w._files._read
    monkeypatch.setattr(w._files, "_read",
                        lambda name, view, offset: reads.append(len(view)) or read(name, view, offset))
    norms = w.W_out_norms(1)
    assert norms.dtype == np.float32 and not norms.flags.writeable
    np.testing.assert_allclose(norms, np.linalg.norm(W.astype(np.float64), axis=1), rtol=1e-6)
    assert len(reads) == -(-W.shape[0] // 5) and max(reads) == 5 * W.shape[1] * 4
    assert w.W_out_norms(1) is norms  # kept: a show reads nothing
    np.testing.assert_array_equal(w.W_out_row(1, 37), W[37])
    assert "transformer.h.1.mlp.c_proj.weight" not in w._files._arrays
    kept = w.W_out(2)
    reads.clear()
    np.testing.assert_allclose(w.W_out_norms(2), np.linalg.norm(kept.astype(np.float64), axis=1), rtol=1e-6)
    assert reads == []


def test_parameters_kept_are_bounded(exported, stub_everything, monkeypatch):
    """Analyses read a few blocks' matrices at a time: the newest are kept up to KEEP_BYTES, bigger
    ones (the 154 MB embedding of GPT-2 small) are read on each use, equal every time."""
    import gpt2viz.core.graph.onnx_file as onnx_file

    w = Weights.of(Model(exported["l3h4e32"]))
    one = w.W_out(0).nbytes
    monkeypatch.setattr(onnx_file, "KEEP_BYTES", 2 * one)
    first = [w.W_out(L) for L in range(3)]
    kept = w._files._arrays
    assert list(kept) == ["transformer.h.1.mlp.c_proj.weight", "transformer.h.2.mlp.c_proj.weight"]
    assert w.W_out(2) is first[2] and w.W_out(0) is not first[0]
    np.testing.assert_array_equal(w.W_out(0), first[0])
    assert w.W_U is not w.W_U and "transformer.wte.weight" not in kept


def test_a_file_replaced_or_deleted_after_opening_is_refused_not_misread(exported, tmp_path, stub_everything):
    folder = tmp_path / "m"
    shutil.copytree(exported["l2h2e16"], folder)
    model = Model(folder)
    ids = [464, 3139, 286, 4881, 318]
    before, cache = model.run(ids)
    shutil.copyfile(exported["l3h4e32"] / "model.onnx", folder / "model.onnx.new")
    os.replace(folder / "model.onnx.new", folder / "model.onnx")
    # The open session keeps working: it holds its weights.
    again, _ = model.run(ids)
    np.testing.assert_array_equal(again.last_logits, before.last_logits)
    with pytest.raises(ModelFolderError, match="changed on disk after the model was opened"):
        model.intervention_session
    shutil.rmtree(folder)
    with pytest.raises(ModelFolderError, match="moved or deleted after the model was opened"):
        model.ondemand_session(0, "attn")


def test_weights_read_after_the_folder_is_replaced_are_the_old_files(exported, tmp_path, stub_everything):
    folder = tmp_path / "m"
    shutil.copytree(exported["l2h2e16"], folder)
    expected = numpy_helper.to_array(next(t for t in onnx.load(str(folder / "model.onnx")).graph.initializer
                                          if t.name == "transformer.wte.weight"))
    w = Weights(folder / "model.onnx", layout=Model(folder).layout)
    w.get("transformer.ln_f.weight")  # opened before the folder goes
    shutil.rmtree(folder)
    shutil.copytree(exported["l3h4e32"], folder)  # a new export over the same path
    np.testing.assert_array_equal(w.W_U, expected)


def test_a_file_cut_short_in_place_is_a_clear_error(exported, tmp_path, stub_everything):
    folder = tmp_path / "m"
    shutil.copytree(exported["l2h2e16"], folder)
    _, stored = read_skeleton(folder / "model.onnx")
    files = WeightFiles(folder, stored)
    with open(folder / "model.onnx", "r+b") as f:
        f.truncate(stored["transformer.wte.weight"].offset + 10)
    with pytest.raises(OnnxFileError, match="ends before transformer.wte.weight"):
        files.array("transformer.wte.weight")


def test_not_an_onnx_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")
    with pytest.raises(OnnxFileError):
        read_skeleton(bad)


def test_every_session_runs_nodes_in_the_graphs_order_and_spins_only_inside_runs(exported):
    """The options of quiet_options reach the model's sessions (the main one and an on-demand one)."""
    model = Model(exported["l2h2e16"])
    for sess in (model.session, model.ondemand_session(0, "attn")[0]):
        opts = sess.get_session_options()
        assert opts.execution_order == ort.ExecutionOrder.PRIORITY_BASED
        assert opts.get_session_config_entry("session.intra_op.allow_spinning") == "1"
        assert opts.get_session_config_entry("session.force_spinning_stop") == "1"
    # on-demand sub-graphs open often and run rarely: no arena, no pre-packed weights (see Model._ondemand_opts)
    sub = model.ondemand_session(0, "attn")[0].get_session_options()
    assert sub.get_session_config_entry("session.disable_prepacking") == "1" and not sub.enable_cpu_mem_arena
    assert model.session.get_session_options().enable_cpu_mem_arena


def _thread_affinities() -> dict[int, set[int]]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            out[int(tid)] = os.sched_getaffinity(int(tid))
        except OSError:  # the thread ended meanwhile
            pass
    return out


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or not os.path.isdir("/proc/self/task")
                    or onnx_file.physical_cores() < 2, reason="needs Linux and two cores (one thread has no pool)")
def test_the_sessions_pool_threads_are_not_pinned_to_a_core(exported):
    """onnxruntime pins its pool threads when its thread count is left to it; every session sets the count,
    so the threads it starts may run on any CPU the process may (the worker thread then never shares a
    pinned thread's core while another idles)."""
    allowed = os.sched_getaffinity(0)
    before = set(_thread_affinities())
    model = Model(exported["l2h2e16"])
    assert model.session.get_session_options().intra_op_num_threads == onnx_file.physical_cores() >= 1
    model.run([1, 2, 3])
    new = {tid: aff for tid, aff in _thread_affinities().items() if tid not in before}
    assert new, "the session started no pool thread"
    assert all(aff == allowed for aff in new.values()), new
