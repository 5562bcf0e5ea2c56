"""The patching table equals the one made the slow way (one full prefill per cell), and reports progress."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.analysis.patching import patching_table
from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.model import Model
from gpt2viz.core.interventions import InterventionError, Patch

CLEAN = [464, 3139, 286, 4881, 318]
CORRUPT = [464, 3139, 286, 4486, 318]
TARGET = 6342


def prob(model, ids, ivs=()):
    trace, _ = model.run(ids, interventions=ivs)
    x = trace.last_logits.astype(np.float64)
    e = np.exp(x - x.max())
    return e[TARGET] / e.sum()


@pytest.mark.parametrize("site", ["resid_pre", "attn_out", "mlp_out", "head"])
def test_table_equals_one_full_prefill_per_cell(exported, site):
    model = Model(exported["l3h4e32"])
    seen = []
    t = patching_table(model, CLEAN, CORRUPT, TARGET, site, progress=lambda d, n: seen.append((d, n)))
    hook = {"resid_pre": "resid_pre", "attn_out": "attn_out", "mlp_out": "mlp_out", "head": "z"}[site]
    clean, _ = model.run(CLEAN)
    assert t.clean_prob == pytest.approx(prob(model, CLEAN), rel=1e-5)
    assert t.corrupt_prob == pytest.approx(prob(model, CORRUPT), rel=1e-5)
    for L in range(3):
        for c in range(t.prob.shape[1]):
            if site == "head":
                ivs = tuple(Patch("head", L, p, clean["z", L][p, c], head=c) for p in range(5))
            else:
                ivs = (Patch(site, L, c, clean[hook, L][c]),)
            assert t.prob[L, c] == pytest.approx(prob(model, CORRUPT, ivs), rel=1e-4, abs=1e-9)
    np.testing.assert_allclose(t.metric, (t.prob - t.corrupt_prob) / (t.clean_prob - t.corrupt_prob))
    assert seen[-1][0] == seen[-1][1]
    assert t.calls == 2 + (3 if site == "head" else 5)


def test_cancel_and_bad_input(exported):
    model = Model(exported["l2h2e16"])
    with pytest.raises(Cancelled):
        patching_table(model, CLEAN, CORRUPT, TARGET, "resid_pre", cancel=lambda: True)
    with pytest.raises(InterventionError, match="equal lengths"):
        patching_table(model, CLEAN, CORRUPT[:4], TARGET, "resid_pre")
    with pytest.raises(InterventionError, match="site"):
        patching_table(model, CLEAN, CORRUPT, TARGET, "ln1")
