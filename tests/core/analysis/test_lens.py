import numpy as np
import pytest
import torch

from gpt2viz.core.analysis.lens import lens_at, residual_stack_at, token_rank_and_prob
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights


def test_lens_last_layer_equals_model_logits(exported):
    for name in ("l2h2e16", "l3h4e32"):
        model = Model(exported[name])
        h = _history(model, [464, 3139, 286, 4881, 318], steps=0)
        trace = h.current.trace
        w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
        lens = lens_at(h, w, model.config.n_layer, 4)
        assert lens.shape == (model.config.n_layer + 1, 50257)
        scale = np.abs(trace.last_logits).max()
        assert np.abs(lens[-1] - trace.last_logits).max() <= 1e-4 * scale


def test_weights_are_the_checkpoints(exported, torch_models):
    w = Weights(exported["l3h4e32"] / "model.onnx")
    sd = torch_models["l3h4e32"].state_dict()
    for name in ("transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight"):
        np.testing.assert_array_equal(w.get(name), sd[name].numpy())


def test_residual_stack_and_ranks(tiny_model_dir):
    model = Model(tiny_model_dir)
    h = _history(model, [1, 2, 3], steps=0)
    trace = h.current.trace
    stack = residual_stack_at(h, 2, 1)
    assert stack.shape == (3, model.config.n_embd)
    np.testing.assert_allclose(stack[0], trace["hook_embed"][1] + trace["hook_pos_embed"][1], atol=1e-6)
    np.testing.assert_allclose(stack[2], trace["resid_post", 1][1], atol=1e-6)
    logits = np.array([[0.0, 2.0, 1.0], [3.0, 2.0, 1.0]])
    ranks, probs = token_rank_and_prob(logits, 1)
    assert ranks.tolist() == [0, 1]
    np.testing.assert_allclose(probs[1], torch.softmax(torch.tensor(logits[1]), 0)[1].item())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rank_and_prob_from_the_lens_graphs_top_probabilities(seed):
    """Given the rows' top probabilities (as the lens graph makes them), a token's probability is e^(x - max) ·
    p_top: the same softmax as summing the exponentials again, and the same ranks (ties included)."""
    from gpt2viz.core.numeric import lens_top, softmax

    rng = np.random.default_rng(seed)
    logits = (rng.standard_normal((13, 50257)) * 4).astype(np.float32)
    logits[3, 7] = logits[3].max()  # a tie with the top: rank 0, as many above it as the top has
    _, p_top = lens_top(logits)
    for token in (0, 7, 50256, int(logits[5].argmax())):
        ranks, probs = token_rank_and_prob(logits, token, p_top)
        want_ranks, want_probs = token_rank_and_prob(logits, token)
        np.testing.assert_array_equal(ranks, want_ranks)
        np.testing.assert_allclose(probs, want_probs, rtol=1e-6)
        np.testing.assert_allclose(probs, softmax(logits)[:, token], rtol=1e-5, atol=1e-12)


def test_token_probabilities_are_the_softmax():
    """The few-entries form of the lens softmax agrees with the [N, V] float64 one (float32 logits of GPT-2's size)."""
    from gpt2viz.core.numeric import lens_top, softmax, token_probabilities

    x = (np.random.default_rng(3).normal(size=(5, 50257)) * 4).astype(np.float32)
    full = softmax(x)
    tokens = np.array([0, 17, 50256, 4, int(np.argmax(x[4]))])
    np.testing.assert_allclose(token_probabilities(x, tokens), full[np.arange(5), tokens], rtol=1e-6)
    top, p = lens_top(x)
    np.testing.assert_array_equal(top, full.argmax(1))
    np.testing.assert_allclose(p, full.max(1), rtol=1e-6)


def _history(model, ids, steps=2):
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.generation.stepper import Generator

    g = Generator(model)
    g.start(ids)
    for _ in range(steps):
        g.step(SamplingSettings(temperature=0))
    return g.history()


def test_mlp_neuron_projection_is_w_out_times_unembedding(exported, torch_models):
    from gpt2viz.core.analysis.lens import project_to_vocab, projections_to_vocab, top_neurons

    model = Model(exported["l3h4e32"])
    w = Weights(model.folder / "model.onnx")
    sd = torch_models["l3h4e32"].state_dict()
    W_out = sd["transformer.h.1.mlp.c_proj.weight"].numpy()  # [M, E]
    np.testing.assert_array_equal(w.W_out(1), W_out)
    W_U = sd["lm_head.weight"].numpy()
    up, down = project_to_vocab(w, W_out[7], 5)
    ref = W_out[7] @ W_U.T
    assert [i for i, _ in up] == list(np.argsort(-ref)[:5])
    assert [i for i, _ in down] == list(np.argsort(ref)[:5])
    np.testing.assert_allclose([v for _, v in up], np.sort(ref)[::-1][:5], rtol=1e-4)
    # several vectors in one unembedding call (the MLP view's two): each as projected alone, against transformers
    calls = []
    unembed = w.unembed
    w.unembed = lambda x: calls.append(np.shape(x)) or unembed(x)
    both = projections_to_vocab(w, [W_out[7], W_out[3]], [5, 4])
    assert calls == [(2, W_out.shape[1])]
    for (got_up, got_down), row, k in zip(both, (7, 3), (5, 4)):
        ref = W_out[row] @ W_U.T
        assert [i for i, _ in got_up] == list(np.argsort(-ref)[:k])
        assert [i for i, _ in got_down] == list(np.argsort(ref)[:k])
        np.testing.assert_allclose([v for _, v in got_up], np.sort(ref)[::-1][:k], rtol=1e-4)
    post = np.random.default_rng(0).normal(size=48).astype(np.float32)
    np.testing.assert_allclose(w.W_out_norms(1), np.linalg.norm(W_out.astype(np.float64), axis=1), rtol=1e-6)
    np.testing.assert_array_equal(w.W_out_row(1, 7), W_out[7])
    top = top_neurons(post, w.W_out_norms(1), 3)
    score = np.abs(post * np.linalg.norm(W_out, axis=1))
    assert [n for n, _, _ in top] == list(np.argsort(-score)[:3])


def test_attention_matrix_residual_profile_and_lens_top(exported):
    from gpt2viz.core.analysis.lens import attention_matrices, pattern_entropy, residual_profile
    from gpt2viz.core.numeric import lens_top

    model = Model(exported["l2h2e16"])
    h = _history(model, [464, 3139, 286, 4881, 318])
    full, _ = model.run(list(h.tokens), keep_all_logits=True)
    mats, first = attention_matrices(h, 1, "pattern")
    m = mats[1]
    assert first == 0 and mats.shape == (2, 7, 7)
    np.testing.assert_allclose(np.tril(m), np.tril(full["pattern", 1][1]), atol=1e-5)
    assert np.isnan(m[np.triu_indices(7, 1)]).all()
    ent = pattern_entropy(h.hook_at(("pattern", 0), 6))
    p = full["pattern", 0][:, 6]
    np.testing.assert_allclose(ent, -(p * np.log(np.clip(p, 1e-30, 1))).sum(-1), rtol=1e-4)

    prof = residual_profile(h, 2, 6)
    np.testing.assert_allclose(prof["resid_norm"][-1], np.linalg.norm(full["resid_post", 1][6]), rtol=1e-4)
    np.testing.assert_allclose(prof["mlp_norm"][0], np.linalg.norm(full["mlp_out", 0][6]), rtol=1e-4)
    assert prof["cos_to_final"][-1] == pytest.approx(1.0, abs=1e-5)

    w = Weights(model.folder / "model.onnx")
    cols = [lens_top(lens_at(h, w, 2, p)) for p in (2, 6)]
    tops, probs = np.stack([c[0] for c in cols], 1), np.stack([c[1] for c in cols], 1)
    assert tops[-1].tolist() == full["logits"][[2, 6]].argmax(-1).tolist()
    np.testing.assert_allclose(probs[-1], [torch.softmax(torch.tensor(full["logits"][i]), 0).max().item()
                                           for i in (2, 6)], rtol=1e-3)


def test_nearest_tokens_and_analogy(tiny_model_dir):
    from gpt2viz.core.analysis.lens import analogy, nearest_tokens

    w = Weights(tiny_model_dir / "model.onnx")
    W = w.W_U.astype(np.float64)
    near = nearest_tokens(w, W[500], 5)
    assert near[0][0] == 500 and near[0][1] == pytest.approx(1.0, abs=1e-5)
    cos = W @ W[500] / (np.linalg.norm(W, axis=1) * np.linalg.norm(W[500]))
    assert [i for i, _ in near] == list(np.argsort(-cos)[:5])
    res = analogy(w, 10, 20, 30, k=3)
    v = W[10] - W[20] + W[30]
    cos = W @ v / (np.linalg.norm(W, axis=1) * np.linalg.norm(v))
    cos[[10, 20, 30]] = -np.inf
    assert [i for i, _ in res] == list(np.argsort(-cos)[:3])


def test_lens_at_every_depth_is_transformers_ln_f_and_lm_head(exported, torch_models):
    """Every row of the lens (onnxruntime on the graph's ln_f + lm_head) against transformers' own modules."""
    from gpt2viz.core.numeric import lens_top

    model = Model(exported["l3h4e32"])
    h = _history(model, [464, 3139, 286, 4881, 318], steps=2)
    w = Weights(model.folder / "model.onnx")
    hf = torch_models["l3h4e32"]
    with torch.no_grad():
        out = hf(torch.tensor([list(h.tokens)]), output_hidden_states=True)
        # hidden_states[L] is the residual before block L; the last entry is already after ln_f
        ref = [hf.lm_head(hf.transformer.ln_f(s)) for s in out.hidden_states[:-1]] + [out.logits]
    ref = torch.stack(ref, 2)[0].numpy()  # [P, L + 1, V]
    positions = [1, 4, 6]
    for p in positions:
        lens = lens_at(h, w, 3, p)
        assert lens.shape == (4, 50257) and lens.dtype == np.float32
        np.testing.assert_allclose(lens, ref[p], atol=1e-4 * np.abs(ref[p]).max())
    # The tops made inside the lens graph are lens_top of those logits, and of transformers' own
    stack = np.concatenate([residual_stack_at(h, 3, p) for p in positions])
    top, prob = w.lens_tops(stack)
    want_top, want_prob = lens_top(np.concatenate([lens_at(h, w, 3, p) for p in positions]))
    np.testing.assert_array_equal(top, want_top)
    np.testing.assert_allclose(prob, want_prob, rtol=1e-6)
    lens, (top1, prob1) = w.lens_with_tops(stack[:4])  # one call: the logits and their tops together
    np.testing.assert_array_equal(lens, lens_at(h, w, 3, positions[0]))
    np.testing.assert_array_equal(top1, top[:4])
    np.testing.assert_allclose(prob1, prob[:4], rtol=1e-12)
    ref_top, ref_prob = lens_top(ref[positions].reshape(-1, 50257).astype(np.float64))
    np.testing.assert_array_equal(top, ref_top)
    np.testing.assert_allclose(prob, ref_prob, rtol=1e-3)


def test_lens_top_is_the_float64_softmax(exported):
    from gpt2viz.core.numeric import lens_top, softmax

    lens = np.random.default_rng(3).normal(scale=4, size=(5, 50257)).astype(np.float32)
    top, prob = lens_top(lens)
    p64 = softmax(lens)
    assert top.tolist() == p64.argmax(1).tolist()
    np.testing.assert_allclose(prob, p64.max(1), rtol=1e-6)


def test_both_ends_of_a_row_of_logits_come_from_one_partition_as_a_full_sort_gives_them():
    """The top and bottom k of one row, in order, as argsort gives them; also when both ends together are more than
    the row (a small vocabulary), where one partition for both cannot be made."""
    from gpt2viz.core.analysis.lens import _promoted

    rng = np.random.default_rng(3)
    for n, k in ((50257, 10), (50257, 8), (21, 10), (21, 11), (5, 5)):
        row = rng.normal(size=n).astype(np.float32)
        up, down = _promoted(row, k)
        assert [i for i, _ in up] == list(np.argsort(-row)[:k])
        assert [i for i, _ in down] == list(np.argsort(row)[:k])
        assert [v for _, v in up] == [float(row[i]) for i in np.argsort(-row)[:k]]


def test_the_lens_graph_runs_a_targets_path_only_when_one_is_asked(exported, tmp_path):
    """onnxruntime runs every node of a graph whatever outputs are asked for: the target path's passes over the
    [N, V] logits (a rank and a probability per row) must run only in a call that gives a target, and then equal
    token_rank_and_prob of the lens."""
    import json

    import onnx
    import onnxruntime as ort

    from gpt2viz.core.engine.weights import _lens_feed
    from gpt2viz.core.graph.cuts import lens_graph

    folder = exported["l2h2e16"]
    options = ort.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "lens")
    s = ort.InferenceSession(lens_graph(onnx.load(str(folder / "model.onnx"))), options,
                             providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((5, 16)).astype(np.float32)
    lens, _, _ = s.run(["lens", "top", "p_top"], _lens_feed(x))
    for _ in range(3):
        s.run(["top", "p_top"], _lens_feed(x))
    ran = [e["args"]["op_name"] for e in json.load(open(s.end_profiling()))
           if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    assert "ArgMax" in ran and "Greater" not in ran
    s = ort.InferenceSession(lens_graph(onnx.load(str(folder / "model.onnx"))), providers=["CPUExecutionProvider"])
    for target in (0, 7, int(np.argmax(lens[2]))):
        rank, p = s.run(["rank_target", "p_target"], _lens_feed(x, target=target))
        want_rank, want_p = token_rank_and_prob(lens, target)
        assert rank.tolist() == want_rank.tolist()
        np.testing.assert_allclose(p, want_p, rtol=1e-5)
