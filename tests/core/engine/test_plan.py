"""The engine's one API: a Plan and its keyword shorthands give the same call; the batched call's rows
equal single runs under the same interventions; the notebook entry points keep TransformerLens' meaning."""

from __future__ import annotations

import numpy as np
import pytest

from gpt2viz.core.engine.model import Model
from gpt2viz.core.engine.plan import Plan
from gpt2viz.core.interventions import Patch

IDS = [464, 3139, 286, 4881, 318]


def test_a_misspelt_option_names_itself():
    with pytest.raises(TypeError, match="'hook'"):
        Plan.of(hook=("logits",))
    assert Plan.of(Plan(keep_all_logits=True), chunk=3) == Plan(keep_all_logits=True, chunk=3)
    assert Plan(hooks=["a", "b"]).hooks == ("a", "b")  # a plan is a value: lists become tuples


def test_plan_and_keywords_are_one_call(exported):
    model = Model(exported["l3h4e32"])
    names = ("blocks.1.hook_resid_pre", "blocks.2.attn.hook_pattern")
    a, ca = model.run(IDS, plan=Plan(hooks=names))
    b, cb = model.run(IDS, hooks=names)
    assert set(a) == set(b) == set(names)
    for n in names:
        np.testing.assert_array_equal(a[n], b[n])
    np.testing.assert_array_equal(a.last_logits, b.last_logits)
    np.testing.assert_array_equal(ca.layers[0][0], cb.layers[0][0])


def test_batched_rows_equal_single_runs(exported):
    """Row r of run_batch patches position r's resid_pre of layer 1 from another prompt; each row must equal
    the same patch made by an ordinary run with a Patch intervention."""
    model = Model(exported["l3h4e32"])
    other = [464, 3139, 286, 4486, 318]
    source, _ = model.run(other, hooks=["blocks.1.hook_resid_pre"])
    E, P = model.config.n_embd, len(IDS)
    scale = np.ones((P, P, 1), np.float32)
    shift = np.zeros((P, P, E), np.float32)
    for r in range(P):
        scale[r, r] = 0.0
        shift[r, r] = source["resid_pre", 1][r]
    rows = model.run_batch(IDS, model.empty_cache(), {(1, "hook_resid_pre"): (scale, shift)}, P)
    assert rows.shape == (P, model.config.vocab_size)
    for r in range(P):
        single, _ = model.run(IDS, interventions=(Patch("resid_pre", 1, r, source["resid_pre", 1][r]),))
        np.testing.assert_allclose(rows[r], single.last_logits, rtol=1e-5, atol=1e-5)
    # a row with nothing changed is the model's own run
    plain = model.run_batch(IDS, model.empty_cache(), {}, 2)
    base, _ = model.run(IDS, hooks=[])
    np.testing.assert_allclose(plain, np.stack([base.last_logits] * 2), rtol=1e-5, atol=1e-5)


def test_run_with_cache_and_hooks(exported):
    model = Model(exported["l3h4e32"])
    logits, trace = model.run_with_cache(IDS)
    full, _ = model.run(IDS, keep_all_logits=True)
    np.testing.assert_array_equal(logits, full["logits"])
    assert trace["pattern", 2].shape == (model.config.n_head, len(IDS), len(IDS))  # no batch dimension
    only, kept = model.run_with_cache(IDS, names=["blocks.0.hook_resid_pre"])
    assert set(kept) == {"blocks.0.hook_resid_pre", "logits"}
    patched = model.run_with_hooks(IDS, [Patch("resid_pre", 1, 3, np.zeros(model.config.n_embd))])
    assert patched.shape == logits.shape
    np.testing.assert_array_equal(patched[:3], logits[:3])  # earlier positions cannot see position 3
    assert not np.allclose(patched[3:], logits[3:])
    assert model.to_tokens("abc") == model.tokenizer.encode("abc")


def test_a_call_without_the_lm_head_has_every_hook_and_no_logits(exported):
    """``lm_head=False``: the LM head does not run (its gate fed false), every other hook is the same; the caller
    gives the logits (Trace.with_last_logits). Asking for logits too is an error, not a silent empty array."""
    model = Model(exported["l3h4e32"])
    full, _ = model.run(IDS)
    bare, _ = model.run(IDS, lm_head=False)
    assert bare.last_logits is None and set(bare) == set(full)
    for n in full:
        np.testing.assert_array_equal(bare[n], full[n])
    given = bare.with_last_logits(full.last_logits)
    np.testing.assert_array_equal(given.last_logits, full.last_logits)
    assert not given.last_logits.flags.writeable and given.nbytes() == full.nbytes()
    for plan in (Plan(lm_head=False, keep_all_logits=True), Plan(lm_head=False, hooks=("logits",))):
        with pytest.raises(ValueError, match="LM head"):
            model.run(IDS, plan=plan)
