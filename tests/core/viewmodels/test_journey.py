"""The journey's pages: every stage visited, each number equal to the view model it comes from."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpt2viz.core.model_folder.locations import resolve_model
from gpt2viz.core.session.session import Stage
from gpt2viz.core.viewmodels.attention import attention_summary
from gpt2viz.core.viewmodels.chart import chart_summary
from gpt2viz.core.viewmodels.embeddings import embedding_summary
from gpt2viz.core.viewmodels.journey import PAGES, VIEW, attention_focus, journey, journey_page
from gpt2viz.core.viewmodels.lens import lens_target
from gpt2viz.core.viewmodels.mlp import mlp_summary
from gpt2viz.core.viewmodels.pipeline import pipeline_summary
from gpt2viz.core.viewmodels.residual import residual_summary
from gpt2viz.core.viewmodels.tokens import tokens_summary
from gpt2viz.widgets.view_names import VIEWS
from tests.core.viewmodels.test_viewmodels import make_session


@pytest.fixture(scope="module")
def sess():
    # the bundled model carries GPT-2's real tokenizer: the BPE page's word split is the real one
    s = make_session(resolve_model(None), steps=0)
    return s


def test_every_stage_is_visited_in_the_story_order(sess):
    pages = journey(sess)
    assert tuple(p.key for p in pages) == PAGES
    assert all(p.view in VIEWS for p in pages) and set(VIEW) == set(PAGES)
    for k in ("TOKENS", "EMBED", "BLOCK", "LM_HEAD", "SOFTMAX", "CHOOSE"):
        assert any(p.stage.kind.name == k for p in pages), k


def test_bpe_page_uses_the_models_tokenizer(sess):
    n = journey_page(sess, "tokens").numbers
    tok = sess.model.tokenizer
    assert [i for i, _ in n["word_pieces"]] == tok.encode("unbelievable")
    assert [i for i, _ in n["spaced_pieces"]] == tok.encode(" unbelievable")
    # GPT-2's BPE: four pieces without the space, one token with it
    assert len(n["word_pieces"]) == 4 and len(n["spaced_pieces"]) == 1
    ts = tokens_summary(sess)
    assert n["n_tokens"] == len(ts.rows) and n["n_bytes"] == ts.n_bytes
    assert n["rows"][0] == (0, ts.rows[0].id, ts.rows[0].display, ts.rows[0].bytes_hex)


def test_numbers_equal_the_view_models(sess):
    sel = replace(sess.selection, position=None)
    es = embedding_summary(sess, sel, k=3)
    e = journey_page(sess, "embedding").numbers
    assert e["token"] == es.token and e["nearest"][0][0] == es.nearest[0][0]
    assert e["nearest"][0][2] == pytest.approx(es.nearest[0][1])
    p = journey_page(sess, "position").numbers
    assert (p["token_norm"], p["pos_norm"], p["sum_norm"]) == pytest.approx(es.norms)

    L, head = attention_focus(sess)
    a = journey_page(sess, "attention").numbers
    asum = attention_summary(sess, "pattern", replace(sel, stage=Stage.block(L), layer=L, head=head))
    assert (a["layer"], a["head"]) == (L, head)
    assert a["keys"][0][2] == pytest.approx(float(asum.bars.max()))
    assert a["entropy"] == pytest.approx(float(asum.entropies[head]))

    m = journey_page(sess, "mlp").numbers
    msum = mlp_summary(sess, None, replace(sel, stage=Stage.block(L), layer=L, head=head))
    assert m["n_active"] == msum.n_active and m["top"][0][0] == msum.top[0][0] and m["neuron"] == msum.top[0][0]

    r = journey_page(sess, "residual").numbers
    rs = residual_summary(sess, sel)
    assert r["norm_end"] == pytest.approx(float(rs.resid_norm[-1]))
    assert r["mlp_max_layer"] == int(np.argmax(rs.mlp_norm))

    b = journey_page(sess, "blocks").numbers
    lt = lens_target(sess, None, sel)
    assert b["target"] == lt.target and b["final_prob"] == pytest.approx(float(lt.probs[-1]))

    h = journey_page(sess, "lm_head").numbers
    ps = pipeline_summary(sess, sel)
    assert h["vocab_size"] == ps.vocab_size == sess.model.config.vocab_size
    assert h["top"][0][1] == pytest.approx(ps.top_logits[0]) and h["top"][0][2] == pytest.approx(ps.top_probs[0])

    c = journey_page(sess, "choose").numbers
    cs = chart_summary(sess)
    assert c["chosen"] == cs.chosen and c["n_kept"] == cs.n_kept

    k = journey_page(sess, "kv_cache").numbers
    assert k["now_mb"] == pytest.approx(sess.kv_cache_mb())
    assert k["full_mb"] == pytest.approx(k["per_token_kb"] * k["n_positions"] / 1024)


def test_sampling_changes_reach_the_choose_page(sess):
    sess.set_sampling(temperature=1.0, top_k=2)
    try:
        c = journey_page(sess, "choose").numbers
        assert c["top_k"] == 2 and c["n_kept"] <= 2 and not c["greedy"]
    finally:
        sess.set_sampling(temperature=0.0, top_k=0)


def test_unknown_page_is_refused(sess):
    with pytest.raises(KeyError):
        journey_page(sess, "nowhere")
