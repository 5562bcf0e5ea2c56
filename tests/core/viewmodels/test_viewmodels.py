"""View models against numpy on the trace and against transformers' PyTorch GPT-2 (tiny test models)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from gpt2viz.core.numeric import entropy, softmax
from gpt2viz.core.session.session import CHOOSE, Session, Stage, stages
from gpt2viz.core.viewmodels.attention import attention_summary
from gpt2viz.core.viewmodels.chart import chart_summary
from gpt2viz.core.viewmodels.embeddings import embedding_summary
from gpt2viz.core.viewmodels.lens import lens_grid, lens_target
from gpt2viz.core.viewmodels.mlp import mlp_summary
from gpt2viz.core.viewmodels.pipeline import pipeline_summary
from gpt2viz.core.viewmodels.residual import residual_summary
from gpt2viz.core.viewmodels.tokens import tokens_summary

PROMPT = [464, 3139, 286, 4881, 318]  # "The capital of France is"


def make_session(folder, prompt=PROMPT, steps=1, name="A", sampling=SamplingSettings(temperature=0)) -> Session:
    """A session filled the way the worker fills it: Generator history + the newest lens."""
    from gpt2viz.core.analysis.lens import lens_at

    model = Model(folder)
    weights = Weights(model.folder / "model.onnx", model.manifest["config"].get("layer_norm_epsilon", 1e-5))
    s = Session(name, sampling)
    s.set_model(model, weights)
    g = Generator(model)
    g.start(list(prompt))
    for _ in range(steps):
        g.step(sampling)
    h = g.history()
    s.accept(h, 1.0, lens_at(h, weights, model.config.n_layer, len(h.tokens) - 1), True)
    return s


@pytest.fixture(scope="module")
def sess(exported):
    return make_session(exported["l3h4e32"])


@pytest.fixture(scope="module")
def hf(sess, torch_models):
    """transformers' outputs on the session's whole text: hidden states, attentions, logits."""
    with torch.no_grad():
        out = torch_models["l3h4e32"](torch.tensor([list(sess.history.tokens)]), output_hidden_states=True,
                                      output_attentions=True)
    return out


def test_pipeline_summary_matches_transformers(sess, hf):
    pos = 3
    sess.select_position(pos)
    s = pipeline_summary(sess)
    assert s.position == pos and s.token == sess.history.tokens[pos]
    for L, b in enumerate(s.blocks):
        att = hf.attentions[L][0, :, pos, : pos + 1].numpy()  # [H, K]
        np.testing.assert_allclose(b.bars, att[b.head], atol=1e-5)
        # the head and key are the largest weight off the attention sink (position 0)
        h, k = np.unravel_index(np.argmax(att[:, 1:]), att[:, 1:].shape)
        assert (b.head, b.key) == (h, k + 1) and b.weight == pytest.approx(att[h, k + 1], abs=1e-5)
        resid = hf.hidden_states[L + 1][0, pos].numpy() if L + 1 < len(s.blocks) else None
        if resid is not None:  # HF's last hidden state is after ln_f: compare the inner ones only
            assert b.resid_norm == pytest.approx(np.linalg.norm(resid), rel=1e-4)
    # the final LayerNorm stage shows its output (HF's last hidden state), not ln_final.hook_normalized
    assert s.ln_out_norm == pytest.approx(np.linalg.norm(hf.hidden_states[-1][0, pos].numpy()), rel=1e-5)
    logits = hf.logits[0, pos].numpy()
    assert s.top_ids == tuple(np.argsort(-logits)[:3])
    p = torch.softmax(hf.logits[0, pos].double(), 0).numpy()
    np.testing.assert_allclose(s.top_probs, p[list(s.top_ids)], rtol=1e-3)
    assert s.entropy == pytest.approx(float(-(p * np.log(p)).sum()), rel=1e-3)
    # not the newest position: no choice, the token that followed instead
    assert s.choice is None and s.next_token == sess.history.tokens[pos + 1]
    sess.select_position(None)
    s = pipeline_summary(sess)
    dist, chosen = sess.distribution()
    assert s.choice.chosen == chosen == int(np.argmax(sess.history.current.logits))  # greedy
    # the newest position's probabilities are the chart's own (the same softmax of the step's logits)
    p = softmax(sess.history.current.logits)
    assert s.top_probs == tuple(float(p[i]) for i in s.top_ids) and s.entropy == float(entropy(p))


def test_an_earlier_positions_pipeline_cells_are_made_once_for_step_and_back(exported, monkeypatch):
    """With an earlier position selected, Back and Step leave its cells as they were (attention is causal): the
    summary is made once and kept, with the text's length brought up to date; another prompt is another key."""
    from dataclasses import replace

    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.viewmodels import pipeline

    s = make_session(exported["l2h2e16"], steps=2)
    full = s.history
    shorter = type(full)(full.frames[:-1], full.prompt_len)
    s.select_position(3)
    first = pipeline_summary(s)
    made = []
    make = pipeline._summary
    monkeypatch.setattr(pipeline, "_summary", lambda *a: made.append(a[3]) or make(*a))
    s.accept(shorter, 0.0, lens_at(shorter, s.weights, s.n_layer, len(shorter.tokens) - 1), False)  # Back
    back = pipeline_summary(s)
    assert made == [] and back.blocks is first.blocks and back.n_tokens == len(full.tokens) - 1
    fresh = make(s, shorter, s.model.config, 3, len(shorter.tokens))
    assert back == replace(fresh, blocks=back.blocks)
    for kept, new in zip(back.blocks, fresh.blocks, strict=True):
        np.testing.assert_array_equal(kept.bars, new.bars)
        assert replace(kept, bars=None) == replace(new, bars=None)
    s.accept(full, 0.0, None, False)  # and the Step again
    assert pipeline_summary(s) == first and made == []
    s.accept(type(full)(full.frames, full.prompt_len - 1), 0.0, None, False)  # the same tokens, another prompt
    pipeline_summary(s)
    assert made == [3]
    s.select_position(None)
    newest = pipeline_summary(s)
    n = len(full.tokens) - 1
    assert made == [3, n] and pipeline_summary(s) is newest and made == [3, n]
    s.accept(type(full)(full.frames[:-1], full.prompt_len - 1), 0.0, None, False)  # Back
    assert pipeline_summary(s).position == n - 1 and made == [3, n, n - 1]
    s.accept(type(full)(full.frames, full.prompt_len - 1), 0.0, None, False)  # and the Step again: kept
    assert pipeline_summary(s) is newest and made == [3, n, n - 1]
    # the step's choice follows the sampling settings: other settings, other cells
    assert newest.choice.sampling.greedy
    s.set_sampling(temperature=2.0, seed=7)
    hot = pipeline_summary(s)
    assert made == [3, n, n - 1, n] and hot.choice.sampling == s.sampling
    dist, chosen = s.distribution()
    assert hot.choice.chosen == chosen and hot.choice.p_final == pytest.approx(float(dist.final[chosen]))
    assert replace(hot, choice=None, blocks=()) == replace(newest, choice=None, blocks=())


def test_output_logits_are_the_models_at_every_position(exported, torch_models):
    """A prompt position's from one LM-head row on its residual, a generated one's from its own step, the newest
    the last call's: each transformers' logits there; the pipeline's top tokens at an earlier position use them."""
    s = make_session(exported["l3h4e32"], steps=3)
    with torch.no_grad():
        want = torch_models["l3h4e32"](torch.tensor([list(s.history.tokens)])).logits[0].numpy()
    for pos in range(len(s.history.tokens)):
        np.testing.assert_allclose(s.output_logits(pos), want[pos], atol=1e-4)
    first_step = len(PROMPT) - 1  # its logits chose the first generated token: held by the prefill's trace
    assert s.output_logits(first_step) is s.history.frames[0].trace.last_logits
    assert s.output_logits(len(PROMPT)) is s.history.frames[1].trace.last_logits
    s.select_position(1)
    assert pipeline_summary(s).top_ids == tuple(np.argsort(-want[1])[:3])


def test_stage_explanation_uses_the_cell_numbers(sess):
    from gpt2viz.app.stages import cell_text, explain

    s = pipeline_summary(sess)
    show = sess.model.tokenizer.token_display
    b = s.blocks[1]
    assert f"{b.weight:.0%}" in cell_text(Stage.block(1), s, show)
    assert f"head {b.head} puts {b.weight:.0%}" in explain(Stage.block(1), s, show)
    assert f"({b.lens_prob:.0%})" in explain(Stage.block(1), s, show)
    for st in stages(3):
        explain(st, s, show), cell_text(st, s, show)  # every stage has words


def test_stage_explanation_does_not_repeat_the_title(sess):
    # the pipeline widget and figure put the title in front ("Block 1. ..."): the explanation must not
    # say it again ("Block 1. Block 1: ...")
    from gpt2viz.app.stages import explain, stage_title

    s = pipeline_summary(sess)
    show = sess.model.tokenizer.token_display
    for st in stages(3):
        title, text = stage_title(st), explain(st, s, show)
        assert f"{title}:" not in text and f"{title}." not in text, (title, text)
        if st.is_block:
            assert title not in text, (title, text)


def test_chart_summary_is_the_distribution(sess):
    sess.set_sampling(temperature=0.7, top_k=3, seed=1)
    try:
        c = chart_summary(sess)
        logits = sess.history.current.logits.astype(np.float64)
        raw = np.exp(logits - logits.max())
        raw /= raw.sum()
        assert [r.id for r in c.rows[:3]] == list(np.argsort(-raw)[:3])
        np.testing.assert_allclose([r.raw for r in c.rows], raw[[r.id for r in c.rows]], rtol=1e-6)
        assert sum(r.kept for r in c.rows) == c.n_kept == 3
        assert sum(r.final for r in c.rows) == pytest.approx(1.0)
        assert [r.chosen for r in c.rows].count(True) == 1
    finally:
        sess.set_sampling(temperature=0, top_k=0, seed=0)


def test_attention_summary_matches_transformers(sess, hf):
    sess.select_stage(Stage.block(2))
    sess.select_head(3)
    sess.select_position(3)
    a = attention_summary(sess)
    n = len(sess.history.tokens)
    att = hf.attentions[2][0].numpy()  # [H, Q, K]
    np.testing.assert_allclose(np.nan_to_num(a.matrices), np.tril(att), atol=1e-5)
    assert np.isnan(a.matrices[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]]).all()
    np.testing.assert_allclose(a.bars, att[3, 3, :4], atol=1e-5)
    p = att[:, 3, :4].astype(np.float64)
    np.testing.assert_allclose(a.entropies, -(p * np.log(p)).sum(-1), rtol=1e-4)
    scores = attention_summary(sess, "attn_scores")
    np.testing.assert_allclose(scores.bars, sess.history.hook_at(("attn_scores", 2), 3)[3])
    assert scores.levels[0] == (float(np.nanmin(scores.matrices[0])), float(np.nanmax(scores.matrices[0])))
    sess.select_stage(CHOOSE)
    sess.select_position(None)


def test_mlp_summary_top_writers_and_projection(sess, torch_models):
    sess.select_stage(Stage.block(1))
    w = sess.weights
    calls = []
    unembed = w.unembed
    w.unembed = lambda x: calls.append(np.shape(x)) or unembed(x)
    try:
        m = mlp_summary(sess, neuron=5)
    finally:
        del w.unembed
    assert len(calls) == 1  # the whole MLP output and the neuron's value vector: one read of the unembedding
    sd = torch_models["l3h4e32"].state_dict()
    W_out, W_U = sd["transformer.h.1.mlp.c_proj.weight"].numpy(), sd["lm_head.weight"].numpy()
    post = sess.history.hook_at(("post", 1), m.position)
    score = post * np.linalg.norm(W_out, axis=1)
    assert [n for n, _, _ in m.top] == list(np.argsort(-np.abs(score))[:15])
    assert m.n_active == int((post > 0.1).sum())
    assert [i for i, _ in m.neuron_promotes] == list(np.argsort(-(W_out[5] @ W_U.T))[:10])
    mlp_out = sess.history.hook_at(("mlp_out", 1), m.position)
    assert [i for i, _ in m.promotes] == list(np.argsort(-(mlp_out @ W_U.T))[:8])
    assert mlp_summary(sess).neuron == m.top[0][0]  # default: the biggest writer
    sess.select_stage(CHOOSE)


def test_lens_summaries_end_at_the_models_logits(sess, hf):
    g = lens_grid(sess)
    logits = hf.logits[0].numpy()
    assert g.tops[-1].tolist() == logits[list(g.positions)].argmax(-1).tolist()
    p = torch.softmax(hf.logits[0].double(), -1).numpy()
    np.testing.assert_allclose(g.probs[-1], p[list(g.positions)].max(-1), rtol=1e-3)
    sess.select_position(2)
    t = lens_target(sess)
    assert t.default and t.target == sess.history.tokens[3]
    assert t.ranks[-1] == int((logits[2] > logits[2][t.target]).sum())
    assert t.probs[-1] == pytest.approx(p[2, t.target], rel=1e-3)
    assert lens_target(sess, 42).target == 42
    sess.select_position(None)


def test_embedding_residual_and_tokens_summaries(sess, hf):
    sess.select_position(3)
    e = embedding_summary(sess)
    W_U = sess.weights.W_U
    np.testing.assert_array_equal(e.token_vec, W_U[sess.history.tokens[3]])
    np.testing.assert_allclose(e.sum_vec, hf.hidden_states[0][0, 3].numpy(), atol=1e-5)
    cos = W_U @ W_U[e.token] / (np.linalg.norm(W_U, axis=1) * np.linalg.norm(W_U[e.token]))
    cos[e.token] = -np.inf
    assert [i for i, _ in e.nearest] == list(np.argsort(-cos)[:10])
    np.testing.assert_allclose([c for _, c in e.nearest], np.sort(cos)[::-1][:10], rtol=1e-4)
    r = residual_summary(sess)
    np.testing.assert_allclose(r.resid_norm[:-1], [np.linalg.norm(hf.hidden_states[L][0, 3].numpy())
                                                   for L in range(3)], rtol=1e-4)
    assert r.cos_to_final[-1] == pytest.approx(1.0, abs=1e-5)
    t = tokens_summary(sess)
    assert [row.id for row in t.rows] == list(sess.history.tokens)
    assert [row.generated for row in t.rows] == [False] * 5 + [True]
    sess.select_position(None)


def test_lens_grid_columns_are_one_onnxruntime_call(exported, monkeypatch):
    """A redraw that finds several new positions computes their lens together, once (issue 9, item 5)."""
    from gpt2viz.core.analysis.lens import lens_at
    from gpt2viz.core.numeric import lens_top

    s = make_session(exported["l3h4e32"], steps=6)
    calls = []
    W = type(s.weights)
    real_lens, real_tops, real_rows = W.lens, W.lens_tops, W.lens_tops_with_rows
    monkeypatch.setattr(W, "lens", lambda self, x: calls.append(("lens", x.shape)) or real_lens(self, x))
    monkeypatch.setattr(W, "lens_tops", lambda self, x: calls.append(("tops", x.shape)) or real_tops(self, x))
    monkeypatch.setattr(W, "lens_tops_with_rows",
                        lambda self, x, rows: calls.append(("tops", x.shape)) or real_rows(self, x, rows))
    g = lens_grid(s)
    # every column in one call, [columns x (layers + 1), E]; the logits stay inside onnxruntime
    assert calls == [("tops", (len(g.positions) * 4, 32))]
    pipeline_summary(s)
    lens_target(s)
    lens_grid(s)
    assert len(calls) == 1
    for c, p in enumerate(g.positions):  # and each column is that position's own lens
        top, prob = lens_top(lens_at(s.history, s.weights, 3, p))
        assert g.tops[:, c].tolist() == top.tolist()
        np.testing.assert_allclose(g.probs[:, c], prob, rtol=1e-6)


def test_a_lens_path_made_in_the_lens_graph_equals_the_rule_on_the_full_lens(sess, monkeypatch):
    """The lens tab's target path (rank and probability of one token per depth) is made inside onnxruntime, or
    from the position's full lens when the session holds it; both must be token_rank_and_prob of the full lens."""
    from gpt2viz.core.analysis.lens import token_rank_and_prob

    calls = []
    in_graph = sess.weights.lens_path
    monkeypatch.setattr(sess.weights, "lens_path", lambda *a: calls.append(a) or in_graph(*a))
    n = len(sess.history.tokens)
    for pos in (0, n // 2, n - 1):
        full = sess.lens(pos)
        for target in (int(np.argmax(full[-1])), int(sess.history.tokens[pos]), 42):
            want_r, want_p = token_rank_and_prob(full, target)
            sess._path_cache.clear()
            held = sess.lens_path(pos, target)
            assert calls == []  # the held lens: no call
            sess._lens_cache.clear()
            sess._path_cache.clear()
            made = sess.lens_path(pos, target)
            assert len(calls) == 1
            calls.clear()
            for ranks, probs in (held, made):
                assert ranks.tolist() == want_r.tolist()
                np.testing.assert_allclose(probs, want_p, rtol=1e-5, atol=1e-12)
            sess.lens(pos)


def test_back_comes_back_to_the_distribution_shown_before(exported):
    """A session keeps the next-token distributions of the states it showed: after Back (the worker hands over the
    earlier history) the chart and the pipeline read the same distribution, ranked once, not made again; another
    setting makes its own."""
    from gpt2viz.core.analysis.lens import lens_at

    s = make_session(exported["l2h2e16"], steps=2, sampling=SamplingSettings(temperature=1.0, seed=3))
    g_hist = s.history
    newest = s.distribution()
    shorter = type(g_hist)(g_hist.frames[:-1], g_hist.prompt_len)
    s.accept(shorter, 0.0, lens_at(shorter, s.weights, s.n_layer, len(shorter.tokens) - 1), False)
    earlier = s.distribution()
    assert earlier is not newest
    s.accept(g_hist, 0.0, None, False)  # and on again, as a Step to the same token
    assert s.distribution() is newest
    assert chart_summary(s).rows[0].id == pipeline_summary(s).top_ids[0] == int(np.argmax(g_hist.current.logits))
    s.set_sampling(temperature=0.5)
    assert s.distribution() is not newest
    s.set_sampling(temperature=1.0)
    assert s.distribution() is newest


def test_the_path_view_reads_an_earlier_positions_logits_from_the_session(sess):
    """The Path view at an earlier position attributes the model's logits there as the session keeps them: shown
    again, it makes no LM-head call (the attribution made its own at every show)."""
    from gpt2viz.core.viewmodels.path import path_summary

    sess.select_position(2)
    try:
        first = path_summary(sess)
        lens = sess.weights.lens
        sess.weights.lens = lambda *a: pytest.fail("an LM-head call at a second show")
        try:
            again = path_summary(sess)
        finally:
            del sess.weights.lens
        assert again.logit == first.logit and again.target == first.target == sess.history.tokens[3]
        want = lens(sess.history.hook_at(("resid_post", sess.n_layer - 1), 2))
        assert first.logit == pytest.approx(float(want[first.target]), rel=1e-6)
    finally:
        sess.select_position(None)


def test_a_lens_made_ahead_is_kept_for_its_own_model_only(exported):
    """The newest lens the worker makes ahead (AppState._on_lens) is kept under its tokens and interventions, so
    the newest position's lens is then read, not made; one made for another model (a load since) is ignored."""
    s = make_session(exported["l2h2e16"], steps=1)
    h, newest = s.history, len(s.history.tokens) - 1
    lens = s.lens(newest)
    tops = s.lens_tops(newest)
    s._lens_cache.clear()
    s._tops_cache.clear()
    s.accept_lens(Model(exported["l2h2e16"]), h.tokens, (), lens * 0, tops)  # the same files, another model
    assert not s.holds_lens(newest, (), whole=False)
    s.accept_lens(s.model, h.tokens, [], lens, tops)
    assert s.holds_lens(newest, ()) and s.lens(newest) is lens and s.lens_tops(newest) is tops


def test_an_earlier_positions_pipeline_reads_the_unembedding_once(exported, monkeypatch):
    """A prompt position's lens tops and the model's output there (its last row) come from one lens-graph call: the
    output stage's top tokens, probabilities and entropy are those of the LM head on the position's last residual."""
    from gpt2viz.core.numeric import entropy, softmax

    s = make_session(exported["l3h4e32"], steps=2)
    W = type(s.weights)
    want = s.weights.lens(s.history.hook_at(("resid_post", 2), 2)[None])[0]
    calls = []
    for name in ("lens", "lens_tops", "lens_with_tops", "lens_tops_with_rows"):
        real = getattr(W, name)
        monkeypatch.setattr(W, name, lambda self, *a, _r=real, _n=name: calls.append(_n) or _r(self, *a))
    s.select_position(2)
    ps = pipeline_summary(s)
    assert calls == ["lens_tops_with_rows"]
    p = softmax(want)
    assert list(ps.top_ids) == [int(i) for i in np.argsort(-want)[:3]]
    np.testing.assert_allclose(ps.top_logits, want[list(ps.top_ids)], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ps.top_probs, p[list(ps.top_ids)], rtol=1e-5)
    np.testing.assert_allclose(ps.entropy, entropy(p), rtol=1e-5)
    s.select_position(None)


def test_an_earlier_positions_mlp_is_made_once_across_steps(exported, monkeypatch):
    """A position's MLP summary reads only the tokens up to it: after a Step it is the one made before (no
    unembedding read), while another block, another neuron or an intervention makes its own."""
    from gpt2viz.core.interventions import HeadAblation

    s = make_session(exported["l3h4e32"], steps=0)
    g = Generator(s.model)
    g.start(PROMPT)
    s.accept(g.history(), 1.0, None, True)
    s.select_position(2)
    s.select_block(1)
    first = mlp_summary(s)
    calls = []
    real = Weights.unembed
    monkeypatch.setattr(Weights, "unembed", lambda self, x: calls.append(1) or real(self, x))
    g.step(SamplingSettings(temperature=0))
    s.accept(g.history(), 1.0, None, True)
    assert mlp_summary(s) is first and calls == []
    s.select_block(2)
    assert mlp_summary(s).layer == 2 and len(calls) == 1
    s.select_block(1)
    assert mlp_summary(s, neuron=first.neuron + 1).neuron == first.neuron + 1 and len(calls) == 2
    g.set_interventions((HeadAblation(0, 1),))
    s.accept(g.history(), 1.0, None, True)
    ablated = mlp_summary(s)
    assert ablated is not first and len(calls) == 3
    np.testing.assert_array_equal(ablated.post, g.history().hook_at(("post", 1), 2))
    s.select_position(None)


def test_a_sliders_ticks_remake_the_newest_cells_in_place(exported, monkeypatch):
    """The sampling settings are the newest cells' stamp, not their key: twenty slider ticks remake them twenty
    times in one place, and an earlier position's kept cells stay kept."""
    from gpt2viz.core.viewmodels import pipeline

    s = make_session(exported["l2h2e16"], steps=2)
    s.select_position(3)
    pipeline_summary(s)
    s.select_position(None)
    made = []
    make = pipeline._summary
    monkeypatch.setattr(pipeline, "_summary", lambda *a: made.append(a[3]) or make(*a))
    for tick in range(20):
        s.set_sampling(temperature=1.0 + tick / 100)
        assert pipeline_summary(s).choice.sampling == s.sampling
    assert len(made) == 20
    s.select_position(3)
    pipeline_summary(s)
    assert len(made) == 20  # position 3's cells were not pushed out
