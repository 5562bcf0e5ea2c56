"""Feature dashboards: every number agrees with the SAE encoding hook values that onnxruntime computes in a run of
its own (the context's window run alone from its text's start), the weights' products computed directly, and the
stored file reads back the same."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.features.activations import sae_activations, shipped_texts, windows
from gpt2viz.core.features.dashboards import BANDS, BEFORE, N_TOP, build_dashboards, feature_label, load_dashboards
from gpt2viz.core.features.sae import SAEError
from gpt2viz.core.features.saelens_folder import write_sae
from tests.core.features.test_steering import random_sae

TEXTS = shipped_texts()[:2]
CONTEXT = 24


@pytest.fixture(scope="module", params=["topk", "jumprelu", "standard"])
def built(request, tiny_model, tmp_path_factory):
    sae = random_sae(1, request.param, seed=3)
    folder = write_sae(sae, tmp_path_factory.mktemp("dash") / request.param)
    from gpt2viz.core.features.saelens_folder import read_sae

    sae = read_sae(folder)
    return sae, build_dashboards(tiny_model, sae, TEXTS, context=CONTEXT, seed=1)


def test_top_contexts_are_the_real_activations_in_order(built, tiny_model):
    sae, dash = built
    runs = windows(tiny_model, TEXTS, CONTEXT)
    acts = np.concatenate([sae_activations(tiny_model, sae, r)[1] for r in runs])  # [N, d_sae], run by run
    tokens = np.concatenate(runs)
    checked = 0
    for f in range(sae.cfg.d_sae):
        d = dash.feature(f)
        col = acts[:, f]
        assert d.density == pytest.approx((col > 0).mean(), abs=1e-6)
        assert d.max_activation == pytest.approx(col.max(initial=0.0), rel=1e-5, abs=1e-6)
        assert sum(d.histogram) == (col > 0).sum()
        top = [c for c in d.contexts if c.band == 0]
        assert len(top) == min(N_TOP, int((col > 0).sum()))
        want = np.sort(col[col > 0])[::-1][:len(top)]
        assert np.allclose([c.acts[c.center] for c in top], want, rtol=1e-3, atol=1e-3)  # float16 storage
        for c in d.contexts:
            # the window is a run of the text's tokens ending AFTER tokens past the centre at most
            i = [k for k in range(len(tokens) - len(c.tokens) + 1)
                 if tuple(tokens[k:k + len(c.tokens)]) == c.tokens]
            assert i, "a context is not a stretch of the text"
            got = np.asarray(c.acts)
            assert any(np.allclose(acts[k:k + len(c.tokens), f], got, rtol=1e-3, atol=1e-3) for k in i)
            if c.band:
                lo, hi = BANDS[c.band - 1]
                assert lo * d.max_activation - 1e-3 < c.acts[c.center] <= hi * d.max_activation + 1e-3
            assert c.center <= BEFORE
            checked += 1
    assert checked > sae.cfg.d_sae  # most features fired in more than one context


def test_logit_effects_and_neighbours_equal_the_weights_products(built, tiny_model):
    from gpt2viz.core.engine.weights import Weights

    sae, dash = built
    w = Weights.of(tiny_model)
    eff = (sae.W_dec * w.get("transformer.ln_f.weight")) @ w.W_U.T
    cos = (sae.W_dec / np.linalg.norm(sae.W_dec, axis=1, keepdims=True))
    cos = cos @ cos.T
    np.fill_diagonal(cos, -np.inf)
    for f in (0, 7, sae.cfg.d_sae - 1):
        d = dash.feature(f)
        assert [t for t, _ in d.promotes] == list(np.argsort(-eff[f], kind="stable")[:len(d.promotes)])
        assert [v for _, v in d.suppresses] == pytest.approx(np.sort(eff[f])[:len(d.suppresses)], rel=1e-4, abs=1e-5)
        assert [n for n, _ in d.neighbours] == list(np.argsort(-cos[f], kind="stable")[:len(d.neighbours)])


def test_the_stored_file_reads_back_and_belongs_to_its_sae(built, tiny_model):
    sae, dash = built
    dash.save(sae.folder)
    back = load_dashboards(sae)
    assert back.meta == dash.meta
    for k, v in dash.arrays.items():
        assert np.array_equal(back.arrays[k], v), k
    assert back.feature(3) == dash.feature(3)
    other = random_sae(1, "standard", seed=4, d_sae=32)
    other.folder = sae.folder
    with pytest.raises(SAEError, match="32"):
        load_dashboards(other)


def test_a_label_names_the_tokens_it_fires_on_and_the_token_it_writes(built, tiny_model):
    _, dash = built
    f = int(np.argmax(dash.arrays["density"]))
    d = dash.feature(f)
    tok = tiny_model.tokenizer
    label = feature_label(d, tok)
    fires, writes = label.split(" → ")
    assert writes == tok.token_display(d.promotes[0][0])
    top = next(c for c in d.contexts if c.band == 0)
    assert tok.describe(list(top.tokens))[top.center].display.split("[")[0] in fires.split(" / ")


def test_cancel_stops_the_build(tiny_model):
    sae = random_sae(0, "topk", seed=1)
    with pytest.raises(Cancelled):
        build_dashboards(tiny_model, sae, TEXTS, context=CONTEXT, cancel=lambda: True)
