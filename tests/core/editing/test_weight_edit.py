"""A rank-one edit of an MLP output weight, fed to the graph, equals the same edit made to transformers'
weights, for every hook, in a prefill, a cached step and a long prefill's on-demand hooks; without it the
numbers are the graph's own, bit for bit."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from gpt2viz.core.engine import ondemand
from gpt2viz.core.engine.model import Model
from gpt2viz.core.export.reference import reference_hooks
from gpt2viz.core.interventions import HeadAblation, InterventionError, RankOneEdit

PROMPT = [464, 3139, 286, 4881, 318]
TOL = 1e-4


def edited_torch(tm, edits):
    """A copy of the transformers model with each edit added to its MLP down-projection's weight."""
    out = copy.deepcopy(tm)
    with torch.no_grad():
        for e in edits:
            out.transformer.h[e.layer].mlp.c_proj.weight += torch.from_numpy(e.delta())
    return out


def assert_match(trace, ref):
    for name, r in ref.items():
        r = r[0]
        err = float(np.abs(trace[name].astype(np.float64) - r).max()) / max(float(np.abs(r).max()), 1e-12)
        assert err <= TOL, f"{name}: {err:.2e} of scale"


def edits_for(cfg, rng):
    M = cfg.n_inner or 4 * cfg.n_embd
    L = cfg.n_layer - 1
    e1 = RankOneEdit(0, rng.normal(size=M) * 0.3, rng.normal(size=cfg.n_embd), "first")
    e2 = RankOneEdit(L, rng.normal(size=M) * 0.3, rng.normal(size=cfg.n_embd))
    return (e1, e2) if L else (e1,)


@pytest.mark.parametrize("name", ["l3h4e32", "l1h1e8"])
def test_edit_through_the_graph_equals_edited_transformers_weights(name, exported, torch_models):
    model, tm = Model(exported[name]), torch_models[name]
    edits = edits_for(tm.config, np.random.default_rng(7))
    ivs = (*edits, HeadAblation(0, 0))  # combinable with the other interventions
    etm = edited_torch(tm, edits)
    trace, cache = model.run(PROMPT, keep_all_logits=True, interventions=ivs)
    ref, ref_cache = reference_hooks(etm, np.asarray([PROMPT]), interventions=(HeadAblation(0, 0),))
    assert_match(trace, ref)
    nxt = [int(np.argmax(trace.last_logits))]
    step, _ = model.run(nxt, cache, keep_all_logits=True, interventions=ivs)
    ref, _ = reference_hooks(etm, np.asarray([nxt]), ref_cache, interventions=(HeadAblation(0, 0),))
    assert_match(step, ref)
    plain, _ = model.run(PROMPT, keep_all_logits=True)
    assert not np.allclose(plain["logits"], trace["logits"])  # the edit did something


def test_removing_the_edit_restores_the_numbers_bit_for_bit(exported):
    model = Model(exported["l3h4e32"])
    before, _ = model.run(PROMPT, keep_all_logits=True)
    edits = edits_for(model_cfg(model), np.random.default_rng(1))
    model.run(PROMPT, interventions=edits)
    after, _ = model.run(PROMPT, keep_all_logits=True)
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])


def model_cfg(model):
    class C:  # the fields edits_for reads, from the engine's config
        n_inner, n_embd, n_layer = model.config.d_mlp, model.config.n_embd, model.config.n_layer
    return C


def test_on_demand_hooks_of_a_long_prefill_carry_the_edit(exported, monkeypatch):
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l3h4e32"])
    edits = edits_for(model_cfg(model), np.random.default_rng(2))
    ids = PROMPT * 2
    lazy, _ = model.run(ids, interventions=edits)
    assert "blocks.2.mlp.hook_post" in lazy.ondemand.names
    full, _ = model.run(ids, interventions=edits, hooks=model.hook_names)
    for name in ("blocks.0.hook_mlp_out", "blocks.2.hook_mlp_out", "blocks.2.mlp.hook_post", "blocks.1.hook_resid_post"):
        np.testing.assert_allclose(lazy[name], full[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_wrongly_sized_edit_is_one_line(exported):
    model = Model(exported["l3h4e32"])
    with pytest.raises(InterventionError, match="u of 48 and v of 32"):
        model.run(PROMPT, interventions=(RankOneEdit(0, np.zeros(5), np.zeros(32)),))
