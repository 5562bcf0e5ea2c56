"""The Path view's summary: edges are the attribution's parts, pruning and renormalising as documented."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.analysis.attribution import attribute
from gpt2viz.core.analysis.path_graph import _parts, build_path_summary, prune, pruned_parts, ranked_bars
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator


@pytest.fixture(scope="module")
def setup(exported):
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start([464, 3139, 286, 4881, 318])
    gen.step(SamplingSettings(temperature=0.0))
    w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
    return model, gen.history(), w


def test_unpruned_parts_add_up_to_the_logit(setup):
    model, h, w = setup
    a = attribute(h, w, 3, 4)
    parts = _parts(a)
    assert len(parts) == 2 + 3 * (4 * len(h.tokens) + 2)
    assert abs(sum(e.value for e in parts) + a.ln_bias_term - a.logit) <= 1e-4 * abs(a.logit)


@pytest.mark.parametrize("threshold", [0.0, 0.01, 0.04, 0.2])
def test_pruning_keeps_parts_over_the_threshold_and_renormalises(setup, threshold):
    model, h, w = setup
    a = attribute(h, w, 3, 4)
    values = np.array([e.value for e in _parts(a)])
    kept, total, dropped = prune(_parts(a), threshold)
    assert total == pytest.approx(np.abs(values).sum())
    assert len(kept) == int((np.abs(values) > threshold * total).sum()) and dropped == len(values) - len(kept)
    if kept:
        assert sum(e.share for e in kept) == pytest.approx(1.0)
        assert [abs(e.value) for e in kept] == sorted((abs(e.value) for e in kept), reverse=True)


def test_summary_matches_numpy(setup):
    model, h, w = setup
    s = build_path_summary(h, w, 3, 4, model.tokenizer, threshold=0.01)
    a = attribute(h, w, 3, 4)
    assert s.position == 5 and s.target == a.target and s.token_labels[3] == "␣France"
    for e in s.edges:
        if e.kind == "head":
            assert e.value == pytest.approx(a.by_source[e.layer, e.head, e.source])
            assert (e.y0, e.y1, e.target) == (e.layer, e.layer + 0.5, 5)
        elif e.kind == "mlp":
            assert e.value == pytest.approx(a.mlp[e.layer])
    top = [n for n in s.nodes if n.position == 5 and n.depth == 3]
    assert top[0].value == pytest.approx(a.logit - a.ln_bias_term, rel=1e-4)  # the column ends at the logit
    bars = ranked_bars(a, model.tokenizer.token_display)
    vals = [b.value for b in bars]
    assert vals == sorted(vals, reverse=True) and vals[0] == pytest.approx(max(c.value for c in a.components()))
    for b in bars:  # a head's bar names the source it carried most (the words are the app's)
        if b.kind == "head":
            assert b.source_text == model.tokenizer.token_display(h.tokens[b.source])
    t = s.top_source
    assert abs(t.value) == pytest.approx(float(np.abs(a.by_source).max()))
    assert t.value == pytest.approx(a.by_source[t.layer, t.head, t.position])
    assert t.token_text == s.token_labels[t.position - s.first]


def test_typed_targets(setup):
    model, h, w = setup
    s = build_path_summary(h, w, 3, 4, model.tokenizer, target_text=" Paris", vs_text=" London")
    assert (s.target, s.vs, s.message) == (6342, 3576, "")
    logits = h.current.logits
    assert s.logit == pytest.approx(float(logits[6342] - logits[3576]), rel=1e-6)
    bad = build_path_summary(h, w, 3, 4, model.tokenizer, target_text=" Paris France")
    assert bad.target == int(np.argmax(logits)) and "not one" in bad.message
    narrow = build_path_summary(h, w, 3, 4, model.tokenizer, threshold=0.0, window=2)
    assert narrow.first == 4 and all(e.source >= 4 for e in narrow.edges) and "not drawn" in narrow.message


@pytest.mark.parametrize("threshold", [0.0, 0.01, 0.04, 0.2, 2.0])
@pytest.mark.parametrize("position", [None, 2])
def test_pruned_parts_equal_pruning_every_part(setup, threshold, position):
    """The summary's pruning without an edge per part: the same edges, order, shares, total and count."""
    _, h, w = setup
    a = attribute(h, w, 3, 4, position=position)
    assert pruned_parts(a, threshold) == prune(_parts(a), threshold)
