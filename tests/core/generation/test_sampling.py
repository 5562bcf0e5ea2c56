import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpt2viz.core.generation.sampling import SamplingSettings, choose, transform
from gpt2viz.core.numeric import softmax

logits_st = arrays(np.float32, st.integers(2, 60), elements=st.floats(-30, 30, width=32))
settings_st = st.builds(SamplingSettings, temperature=st.floats(0.05, 5), top_k=st.integers(0, 70),
                        top_p=st.floats(0.01, 1.0), seed=st.integers(0, 2**31))


@settings(max_examples=300, deadline=None)
@given(logits_st, settings_st)
def test_final_distribution_is_valid_and_respects_cutoffs(logits, s):
    d = transform(logits, s)
    for p in (d.raw, d.tempered, d.final):
        assert np.all(p >= 0) and math.isclose(p.sum(), 1.0, rel_tol=1e-9)
    assert np.all(d.final[~d.kept] == 0)
    kept = int(d.kept.sum())
    assert kept >= 1
    if s.top_k:
        assert kept <= s.top_k
    # whatever is kept is at least as likely as whatever is cut
    if kept < logits.size:
        assert d.tempered[d.kept].min() >= d.tempered[~d.kept].max() - 1e-12
    # top-p keeps the smallest prefix reaching p: without its least likely member it falls short
    if s.top_p < 1 and not s.top_k:
        mass = d.tempered[d.kept]
        assert mass.sum() >= s.top_p - 1e-9
        assert mass.sum() - mass.min() < s.top_p + 1e-9
    t = choose(d, s.seed, 3)
    assert d.kept[t] and t == choose(d, s.seed, 3)


@settings(max_examples=100, deadline=None)
@given(logits_st, st.integers(0, 2**31))
def test_temperature_zero_is_greedy(logits, seed):
    d = transform(logits, SamplingSettings(temperature=0, seed=seed))
    assert choose(d, seed, 0) == int(np.argmax(logits))
    np.testing.assert_allclose(d.raw, softmax(logits))


def test_off_switches_change_nothing():
    logits = np.random.default_rng(0).normal(size=100)
    d = transform(logits, SamplingSettings(temperature=1.0, top_k=0, top_p=1.0))
    np.testing.assert_allclose(d.final, softmax(logits))
    assert d.kept.all()


def test_top_k_one_and_low_temperature_concentrate():
    logits = np.array([1.0, 3.0, 2.0])
    assert transform(logits, SamplingSettings(top_k=1)).final.tolist() == [0, 1, 0]
    cold = transform(logits, SamplingSettings(temperature=0.1)).final
    hot = transform(logits, SamplingSettings(temperature=10)).final
    assert cold[1] > 0.99 and hot.max() < 0.4


def test_sampling_follows_the_distribution():
    logits = np.log(np.array([0.5, 0.3, 0.2]))
    d = transform(logits, SamplingSettings())
    counts = np.bincount([choose(d, 1, pos) for pos in range(6000)], minlength=3) / 6000
    np.testing.assert_allclose(counts, [0.5, 0.3, 0.2], atol=0.03)


@pytest.mark.parametrize("kwargs", [
    dict(temperature=-0.1), dict(temperature=float("nan")), dict(temperature=float("inf")),
    dict(top_k=-1), dict(top_k=2.5), dict(top_p=0), dict(top_p=1.5), dict(top_p=float("nan")), dict(seed=-3),
])
def test_bad_settings_rejected(kwargs):
    with pytest.raises(ValueError):
        SamplingSettings(**kwargs)


def test_nan_logits_rejected():
    with pytest.raises(ValueError, match="NaN"):
        transform(np.array([0.0, np.nan]), SamplingSettings())


def test_top_k_text_is_the_one_rule_for_off():
    from gpt2viz.core.generation.sampling import top_k_text

    assert top_k_text(0) == "off" and top_k_text(0, "关闭") == "关闭"
    assert top_k_text(40) == top_k_text(np.int64(40)) == "40"
    assert top_k_text(SamplingSettings().top_k) == "off"  # the default cuts nothing


@settings(max_examples=200, deadline=None)
@given(logits_st, st.integers(1, 40), st.sampled_from(["raw", "final"]))
def test_top_is_the_ranking_by_probability_then_id_and_stays_as_made(logits, n, which):
    """top(n) is the n most likely ids (ties by id), whether it comes from the ranking kept for the views (n <= 16) or
    is ranked for the call; a caller writing into what it got leaves the kept ranking as it was."""
    d = transform(logits, SamplingSettings(temperature=1.0, top_k=5))
    p = getattr(d, which)
    want = sorted(range(p.size), key=lambda i: (-p[i], i))[:n]
    got = d.top(n, which)
    # ids of equal probability at the cut may be any of the tied ones: compare probabilities there, ids above it
    np.testing.assert_array_equal(p[got], p[want])
    assert list(got[p[got] > p[want[-1]]]) == [i for i in want if p[i] > p[want[-1]]]
    got[:] = -1
    np.testing.assert_array_equal(p[d.top(n, which)], p[want])
    assert d.entropy(which) == d.entropy(which) == pytest.approx(float(-(p[p > 0] * np.log(p[p > 0])).sum()))
