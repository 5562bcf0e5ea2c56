"""Weights' lens calls split into calls of LENS_ROWS rows give what one call gives."""

import numpy as np
import pytest

from gpt2viz.core.engine import weights as weights_module
from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.weights import Weights


@pytest.fixture
def residuals(exported):
    model = Model(exported["l3h4e32"])
    w = Weights.of(model)
    rng = np.random.default_rng(0)
    return w, (rng.standard_normal((23, model.config.n_embd)) * 3).astype(np.float32)


def _every_output(w: Weights, x: np.ndarray) -> dict[str, np.ndarray]:
    (top, p), final = w.lens_tops_with_rows(x, [17, 2, 9, 2, 22])  # unsorted, repeated, across calls
    lens, (top2, p2) = w.lens_with_tops(x)
    rank, pt = w.lens_path(x, 1234)
    return {"lens": w.lens(x), "unembed": w.unembed(x), "top": top, "p": p, "final": final, "lens2": lens,
            "top2": top2, "p2": p2, "rank": rank, "p_target": pt}


def test_lens_in_calls_of_a_few_rows_equals_one_call(residuals, monkeypatch):
    w, x = residuals
    whole = _every_output(w, x)
    assert whole["final"].shape == (5, 50257)
    monkeypatch.setattr(weights_module, "LENS_ROWS", 5)
    calls = []
    real_run = w._lens_session.run
    monkeypatch.setattr(w._lens_session, "run", lambda *a, **k: calls.append(len(a[1]["resid"])) or real_run(*a, **k),
                        raising=False)
    split = _every_output(w, x)
    assert max(calls) == 5 and len(calls) >= 5 * 5  # each of the five methods ran in five calls
    for k, v in whole.items():
        assert split[k].shape == v.shape, k
        if v.dtype.kind in "iu":
            np.testing.assert_array_equal(split[k], v, err_msg=k)
        else:
            np.testing.assert_allclose(split[k], v, rtol=1e-6, atol=1e-6 * np.abs(v).max(), err_msg=k)
    np.testing.assert_array_equal(split["final"][1], split["lens"][2])  # row 2 of the lens, where rows said
