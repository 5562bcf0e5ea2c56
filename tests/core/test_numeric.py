"""The shared numeric rules: the vocabulary's descending order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpt2viz.core.numeric import descending_order

# few distinct values (many runs of equal ones), both zeros, and the probabilities' range
values = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 0.5, 2.0, -1.0]), st.floats(-1e3, 1e3, width=64))


@settings(max_examples=400, deadline=None)
@given(arrays(np.float64, st.integers(1, 400), elements=values))
def test_the_descending_order_is_numpys_stable_one(x):
    np.testing.assert_array_equal(descending_order(x), np.argsort(-x, kind="stable"))


def test_a_vocabulary_with_equal_float32_logits_and_underflowed_probabilities():
    rng = np.random.default_rng(0)
    logits = np.round(rng.standard_normal(50257) * 3, 2).astype(np.float32)  # many equal values
    for scale in (1.0, 40.0):  # 40: most probabilities underflow to exactly 0
        z = logits.astype(np.float64) * scale
        p = np.exp(z - z.max())
        p /= p.sum()
        assert scale == 1.0 or (p == 0).sum() > 1000
        np.testing.assert_array_equal(descending_order(p), np.argsort(-p, kind="stable"))
