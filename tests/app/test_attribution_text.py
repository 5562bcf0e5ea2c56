"""The attribution's part names and largest source are worded in the current language."""

from __future__ import annotations

import re

import pytest

from gpt2viz.app import attribution_text as at
from gpt2viz.app import i18n
from gpt2viz.core.analysis.path_graph import Bar, build_path_summary
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator

CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def summary(exported):
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(model.tokenizer.encode("The capital of France is"))
    gen.step(SamplingSettings(temperature=0.0))
    w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
    return build_path_summary(gen.history(), w, 3, 4, model.tokenizer)


@pytest.fixture
def english(qapp):
    i18n.install("en", qapp)
    yield
    i18n.install("en", qapp)  # the language is process-wide: leave English for the next test


def test_english_words(summary, english):
    assert [at.part_label(k, 1, 2) for k in ("embed", "pos_embed", "head", "attn_bias", "mlp")] == \
        ["token embed", "pos embed", "L1.H2", "L1 b_O", "MLP 1"]
    assert at.bar_label(Bar(0.5, "head", 1, 2, 3, "␣France")) == "L1.H2 ← ␣France"
    assert at.bar_label(Bar(0.5, "mlp", 0)) == "MLP 0"
    t = summary.top_source
    text = at.headline(summary)
    assert text.startswith(f"{t.token_text} (position {t.position}), carried by head {t.layer}.{t.head}, ")
    assert f"{t.value:+.3f}" in text and text.endswith(summary.target_text)
    with pytest.raises(ValueError):
        at.part_label("nothing")


def test_chinese_words(summary, english, qapp):
    # the catalogue is committed: failing to load it is a bug, not a reason to skip
    assert i18n.install("zh", qapp) == "zh", "the committed Chinese catalogue did not load"
    assert at.part_label("embed") == "词元嵌入" and at.part_label("pos_embed") == "位置编码"
    for k in ("head", "attn_bias", "mlp"):
        assert CJK.search(at.part_label(k, 1, 2)), k
    for b in summary.bars:
        assert CJK.search(at.bar_label(b)), b
    t = summary.top_source
    text = at.headline(summary)
    assert CJK.search(text) and f"{t.value:+.3f}" in text and t.token_text in text
