"""The attribution graph adds up: each feature's incoming edges plus its bias are its real pre-activation, each
logit's are its real demeaned logit (numbers from onnxruntime's run of the exported graph)."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.circuits.graph import build_graph, logit_targets
from gpt2viz.core.circuits.prune import graph_scores, influence, normalize_rows, prune
from gpt2viz.core.features.transcoder import INPUT_KINDS, random_transcoder

PROMPT = "The capital of France is"


def _set(model, kind="ln2.hook_normalized", arch="topk", skip=False, d_sae=64):
    c = model.config
    return [random_transcoder(L, c.n_embd, d_sae, architecture=arch, k=6, input_kind=kind, seed=L, skip=skip)
            for L in range(c.n_layer)]


def _check_sums(g, tol):
    sums = g.adjacency.sum(1) + g.bias
    scale = max(1.0, np.abs(g.pre_activations).max())
    assert g.n_features > 0
    np.testing.assert_allclose(sums[:g.n_features], g.pre_activations, atol=tol * scale)
    np.testing.assert_allclose(sums[g.logit_slice], g.logit_values, atol=tol * max(1.0, np.abs(g.logit_values).max()))
    # errors and tokens take no inputs; nothing reads a later layer or a later position
    assert not g.adjacency[g.error_slice].any() and not g.adjacency[g.token_slice].any()
    L, p = g.active_features[:, 0], g.active_features[:, 1]
    later = (L[None, :] >= L[:, None]) | (p[None, :] > p[:, None])
    assert not g.adjacency[:g.n_features, :g.n_features][later].any()


@pytest.mark.parametrize("kind", INPUT_KINDS)
def test_edges_add_up_on_a_tiny_model_for_each_input(circuit_model, kind):
    g = build_graph(circuit_model, _set(circuit_model, kind), PROMPT)
    _check_sums(g, 2e-5)


@pytest.mark.parametrize("arch,skip", [("standard", False), ("jumprelu", True)])
def test_edges_add_up_for_other_activations_and_a_skip_connection(circuit_model, arch, skip):
    # the skip term is linear in the input but gpt2viz leaves it inside the error node: the sums must still hold
    g = build_graph(circuit_model, _set(circuit_model, arch=arch, skip=skip), PROMPT)
    _check_sums(g, 2e-5)


def test_edges_add_up_on_atlas_and_the_target_leads(atlas):
    paris = atlas.tokenizer.encode(" Paris")[0]
    g = build_graph(atlas, _set(atlas, d_sae=256), PROMPT, target=paris)
    _check_sums(g, 2e-5)
    assert g.logit_tokens[0] == paris
    logits, _ = atlas.run_with_cache(PROMPT, names=[])
    z = logits[-1].astype(np.float64)
    np.testing.assert_allclose(g.logit_values[0], z[paris] - z.mean(), atol=1e-4)


def test_an_edge_is_the_change_of_a_linear_replacement(circuit_model):
    # Removing one source's write from the frozen linear system changes a target by exactly its edge: check one
    # error -> logit edge against a direct computation with the error's vector and the frozen final LayerNorm
    # (the last layer's error writes straight into the residual the logits read).
    from gpt2viz.core.engine.weights import Weights

    m = circuit_model
    tcs = _set(m)
    g = build_graph(m, tcs, PROMPT)
    nL, P = g.n_layer, g.n_pos
    _, tr = m.run_with_cache(PROMPT, names=["ln_final.hook_scale", f"blocks.{nL - 1}.hook_mlp_out",
                                            f"blocks.{nL - 1}.ln2.hook_normalized"])
    w = Weights.of(m)
    tc = tcs[-1]
    x = tr[f"blocks.{nL - 1}.ln2.hook_normalized"][-1]
    err = tr[f"blocks.{nL - 1}.hook_mlp_out"][-1].astype(np.float64) - (tc.encode(x) @ tc.W_dec + tc.b_dec)
    d = w.embedding_rows([g.logit_tokens[0]])[0].astype(np.float64) - w.W_U.mean(0, dtype=np.float64)
    gd = d * w.get("transformer.ln_f.weight")
    want = (err - err.mean()) @ gd / float(tr["ln_final.hook_scale"].reshape(-1)[-1])
    got = g.adjacency[g.logit_slice.start, g.n_features + (nL - 1) * P + P - 1]
    assert got == pytest.approx(want, rel=1e-4)  # the test decodes in float32


def test_logit_targets_follow_circuit_tracer():
    z = np.log(np.array([0.5, 0.3, 0.16, 0.03, 0.01]))
    ids, p = logit_targets(z)
    assert ids.tolist() == [0, 1, 2]  # 0.96 >= 0.95 after three
    assert p == pytest.approx([0.5, 0.3, 0.16])
    ids, _ = logit_targets(np.zeros(50))
    assert len(ids) == 10  # at most ten
    ids, _ = logit_targets(z, target=4)
    assert ids.tolist() == [4, 0, 1, 2]


def test_pruning_keeps_tokens_logits_and_shrinks_with_the_threshold(circuit_model):
    g = build_graph(circuit_model, _set(circuit_model), PROMPT)
    full = prune(g, 1.0, 1.0)
    small = prune(g, 0.5, 0.9)
    assert small.node_mask[g.token_slice.start:].all()
    assert small.node_mask.sum() < full.node_mask.sum()
    assert small.edge_mask.sum() < full.edge_mask.sum()
    # a kept edge joins kept nodes
    d, s = np.nonzero(small.edge_mask)
    assert small.node_mask[d].all() and small.node_mask[s].all()
    with pytest.raises(ValueError, match="between 0 and 1"):
        prune(g, 1.5)


def test_influence_is_the_matrix_series():
    rng = np.random.default_rng(0)
    A = np.tril(rng.normal(size=(6, 6)), -1)  # a DAG: the series stops
    An = normalize_rows(A)
    w = np.zeros(6)
    w[-1] = 1.0
    series = sum(np.linalg.matrix_power(An, k) for k in range(1, 7))
    np.testing.assert_allclose(influence(An, w), w @ series, atol=1e-12)


def test_scores_are_one_when_errors_are_zero_and_fall_with_them(circuit_model):
    g = build_graph(circuit_model, _set(circuit_model), PROMPT)
    r, c = graph_scores(g)
    assert 0.0 < r < 1.0 and 0.0 < c < 1.0
    g.adjacency[:, g.error_slice] = 0.0  # a perfect replacement: no error edges
    r1, c1 = graph_scores(g)
    assert r1 == pytest.approx(1.0) and c1 == pytest.approx(1.0)


def test_a_float32_backward_pass_still_adds_up(circuit_model):
    g = build_graph(circuit_model, _set(circuit_model), PROMPT, dtype=np.float32)
    _check_sums(g, 1e-4)


def test_progress_per_block_and_cancel(circuit_model):
    from gpt2viz.core.engine.errors import Cancelled

    seen = []
    build_graph(circuit_model, _set(circuit_model), PROMPT, progress=lambda d, t: seen.append((d, t)))
    n = circuit_model.config.n_layer
    assert seen == [(i, n) for i in range(1, n + 1)]
    with pytest.raises(Cancelled):
        build_graph(circuit_model, _set(circuit_model), PROMPT, cancel=lambda: True)


def test_the_wrong_set_is_refused_in_one_line(circuit_model, atlas):
    from gpt2viz.core.features.sae import SAEError

    with pytest.raises(SAEError, match="one transcoder per block"):
        build_graph(circuit_model, _set(circuit_model)[:-1], PROMPT)
    with pytest.raises(SAEError, match="wide"):
        build_graph(circuit_model, _set(atlas)[:circuit_model.config.n_layer], PROMPT)
