"""Each detail view shows the model's numbers: its data equals numpy computed on the trace."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.runtime import Model


@pytest.fixture
def win(stepped_window):
    return stepped_window("l3h4e32")


def test_attention_bars_equal_the_pattern_row(win):
    st, view = win.state, win.detail.views["Attention"]
    st.select_stage("block.2")
    st.select_head(3)
    st.select_position(3)
    np.testing.assert_allclose(view.bar_values, st.history.hook_at(("pattern", 2), 3)[3])
    assert view.bar_values.size == 4  # keys 0..3 only: the future is not a bar
    assert len(view.cells) == 4
    view.mode.setCurrentIndex(1)  # scores before softmax
    np.testing.assert_allclose(view.bar_values, st.history.hook_at(("attn_scores", 2), 3)[3])
    e = st.history.hook_at(("pattern", 2), 3)
    np.testing.assert_allclose(view.entropies, -(e * np.log(np.clip(e, 1e-30, 1))).sum(-1), rtol=1e-5)


def test_mlp_view_projects_the_neuron_through_the_unembedding(win):
    st, view = win.state, win.detail.views["MLP"]
    st.select_stage("block.1")
    win.detail.setCurrentWidget(view)  # hidden views wait to be shown before they redraw
    post = st.history.hook_at(("post", 1), st.selected_position)
    W_out = st.weights.W_out(1)
    score = post * np.linalg.norm(W_out, axis=1)
    assert view.top[0][0] == int(np.argmax(np.abs(score)))
    view.select_neuron(5)
    logits = W_out[5] @ st.weights.W_U.T
    assert [i for i, _ in view.projection[0]] == list(np.argsort(-logits)[:10])


def test_lens_view_last_row_is_the_models_output(win):
    st, view = win.state, win.detail.views["Logit lens"]
    win.detail.setCurrentWidget(view)
    model = Model(st.model.folder)
    full, _ = model.run(list(st.history.tokens), keep_all_logits=True)
    assert view.tops[-1].tolist() == full["logits"][view.positions].argmax(-1).tolist()
    st.select_position(2)
    # target defaults to the token that followed position 2; its final rank is the model's own
    target = st.history.tokens[3]
    assert view.target_ranks[-1] == int((full["logits"][2] > full["logits"][2][target]).sum())


def test_embedding_sum_is_block_0_input(win):
    st, view = win.state, win.detail.views["Embeddings"]
    win.detail.setCurrentWidget(view)
    st.select_position(3)
    np.testing.assert_allclose(view.data["sum"], st.history.hook_at(("resid_pre", 0), 3), atol=1e-6)
    np.testing.assert_array_equal(view.data["token"], st.weights.W_U[st.history.tokens[3]])
    assert view.data["nearest"][0][1] <= 1.0 and len(view.data["nearest"]) == 10
    view.a.setText(" king"), view.b.setText(" man"), view.c.setText(" woman")
    view.run_analogy()
    assert len(view.data["analogy"]) == 5
    view.a.setText("unbelievable")
    view.run_analogy()
    assert "4 tokens" in view.analogy_out.text()


def test_tokens_and_residual_views(win):
    st = win.state
    tv = win.detail.views["Tokens"]
    win.detail.setCurrentWidget(tv)
    assert [r["id"] for r in tv.rows] == list(st.history.tokens)
    assert [r["generated"] for r in tv.rows] == [False] * 5 + [True]
    rv = win.detail.views["Residual"]
    win.detail.setCurrentWidget(rv)
    np.testing.assert_allclose(rv.profile["resid_norm"][0],
                               np.linalg.norm(st.history.hook_at(("resid_pre", 0), 5)), rtol=1e-5)


def test_pipeline_stage_opens_its_tab(win):
    st, tabs = win.state, win.detail
    for stage, name in (("tokens", "Tokens"), ("embed", "Embeddings"), ("block.0", "Attention"),
                        ("lm_head", "Logit lens"), ("ln_final", "Residual")):
        st.select_stage(stage)
        assert tabs.currentWidget() is tabs.views[name]


def test_hidden_views_wait_and_catch_up_when_shown(win):
    st, tabs = win.state, win.detail
    mlp = tabs.views["MLP"]
    tabs.setCurrentWidget(tabs.views["Tokens"])
    before = mlp.caption.text()
    st.select_position(1)
    assert mlp.caption.text() == before  # not redrawn while hidden
    tabs.setCurrentWidget(mlp)
    assert "position 1" in mlp.caption.text()
