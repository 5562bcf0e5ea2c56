"""The gated graph the runtime runs returns the file's own numbers, and skips only what a call does not return."""

import numpy as np
import onnxruntime as ort
import pytest

import gpt2viz.core.engine.ondemand as ondemand
from gpt2viz.core.engine.model import Model
from gpt2viz.core.graph.gating import ALL_LOGITS, KEEP_HOOKS, LAST_LOGITS_SWITCH, gate, gate_feeds, gated_hooks
from gpt2viz.core.graph.onnx_file import read_skeleton, session_options_for
from gpt2viz.core.graph.surgery import LAYERNORM_TAG
from gpt2viz.core.hooks import LAST_LOGITS

CONFIGS = ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"]


def _ids(n, seed=0):
    return [int(t) for t in np.random.default_rng(seed).integers(0, 50257, n)]


def _feed(model, ids, past):
    total = past.length + len(ids)
    feed = {"input_ids": np.asarray([ids], np.int64), "attention_mask": np.ones((1, total), np.int64),
            "position_ids": np.arange(past.length, total, dtype=np.int64)[None]}
    for L, (k, v) in enumerate(past.layers):
        feed[f"past_key_values.{L}.key"], feed[f"past_key_values.{L}.value"] = k, v
    return feed


def _sessions(folder):
    """The file's graph as it is, and the same graph gated, each in its own session."""
    skeleton, _ = read_skeleton(folder / "model.onnx")
    opts = session_options_for(folder)
    plain = ort.InferenceSession(skeleton.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    gated = type(skeleton)()
    gated.CopyFrom(skeleton)
    gate(gated, int(sum(1 for i in skeleton.graph.input if i.name.endswith(".key") and "past" in i.name)))
    return plain, ort.InferenceSession(gated.SerializeToString(), opts, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("name", CONFIGS)
def test_defaults_give_the_file_graphs_outputs_bit_for_bit(exported, name):
    model = Model(exported[name])
    plain, gated = _sessions(exported[name])
    outs = [o.name for o in plain.get_outputs()]
    past = model.empty_cache()
    for ids in (_ids(7), _ids(1, 1), _ids(3, 2)):  # a prefill, then cached calls
        feed = _feed(model, ids, past)
        want = plain.run(outs, feed)
        on = {KEEP_HOOKS: np.array(True), ALL_LOGITS: np.array(True), LAST_LOGITS_SWITCH: np.array(True)}
        got = gated.run(outs, {**feed, **on})
        for o, a, b in zip(outs, want, got):
            np.testing.assert_array_equal(a, b, err_msg=o)
        got = gated.run(outs, {**feed, **model.gate_feeds(outs)})  # what the runtime feeds for all of them
        for o, a, b in zip(outs, want, got):
            np.testing.assert_array_equal(a, b, err_msg=o)
        past = model.empty_cache().__class__(tuple(
            (want[outs.index(f"present.{L}.key")], want[outs.index(f"present.{L}.value")])
            for L in range(model.config.n_layer)))


def test_switched_off_outputs_are_empty_and_the_rest_unchanged(exported):
    folder = exported["l3h4e32"]
    model = Model(folder)
    _, gated = _sessions(folder)
    outs = [o.name for o in gated.get_outputs()]
    feed = _feed(model, _ids(9), model.empty_cache())
    t, f = np.array(True), np.array(False)
    on = dict(zip(outs, gated.run(outs, {**feed, KEEP_HOOKS: t, ALL_LOGITS: t, LAST_LOGITS_SWITCH: t})))
    off = dict(zip(outs, gated.run(outs, {**feed, KEEP_HOOKS: f, ALL_LOGITS: f, LAST_LOGITS_SWITCH: f})))
    skipped = gated_hooks(model.config.n_layer) | {"logits", LAST_LOGITS}
    assert len(skipped & set(outs)) == 15 * model.config.n_layer + 2
    for o in outs:
        if o in skipped:
            assert off[o].size == 0, o
        else:  # residual stream, embeddings, final LayerNorm, KV cache: the same floats
            np.testing.assert_array_equal(off[o], on[o], err_msg=o)
    np.testing.assert_array_equal(on["logits"][:, -1:], on[LAST_LOGITS])


def test_gate_feeds_follow_what_a_call_returns():
    f = gate_feeds(["blocks.0.hook_resid_post", LAST_LOGITS], 2)
    assert not f[KEEP_HOOKS] and not f[ALL_LOGITS] and f[LAST_LOGITS_SWITCH]
    f = gate_feeds(["blocks.1.attn.hook_pattern"], 2)
    assert f[KEEP_HOOKS] and not f[ALL_LOGITS] and not f[LAST_LOGITS_SWITCH]
    assert gate_feeds(["logits"], 2)[ALL_LOGITS]


def test_each_blocks_switch_runs_right_after_its_block(exported):
    skeleton, _ = read_skeleton(exported["l4h2e24"] / "model.onnx")
    gate(skeleton, 4)
    names = [n.name for n in skeleton.graph.node]
    for L in range(4):
        at = names.index(f"/gpt2viz/gate/blocks.{L}")
        # after the block's MLP, before the next block starts computing
        assert names.index(f"/transformer/h.{L}/mlp/c_proj/Gemm") < at
        if L < 3:
            assert at < names.index(f"/transformer/h.{L + 1}/ln_1/LayerNormalization")
    # the nodes that compute a block's LayerNorm hooks run inside its switch: a call that skips the hooks
    # does not compute them (the final LayerNorm's stay in the graph: they are never skipped)
    ours = [n.name for n in skeleton.graph.node if n.name.startswith(LAYERNORM_TAG)]
    assert ours and all(n.startswith(f"{LAYERNORM_TAG}ln_final/") for n in ours)
    inside = {n.name for a in skeleton.graph.node if a.op_type == "If" for at in a.attribute if at.name == "then_branch"
              for n in at.g.node}
    assert {f"{LAYERNORM_TAG}blocks.{L}.{ln}/{op}" for L in range(4) for ln in ("ln1", "ln2")
            for op in ("Sub", "Mul", "Reciprocal")} <= inside
    with pytest.raises(ValueError, match="gated already"):
        gate(skeleton, 4)


class _Spy:
    """The real session, recording what each call fed the switches (the numbers are onnxruntime's)."""

    def __init__(self, session):
        self._session, self.calls = session, []

    def run(self, names, feed, *args):
        self.calls.append((len(feed["input_ids"][0]), bool(feed[KEEP_HOOKS]), bool(feed[LAST_LOGITS_SWITCH])))
        return self._session.run(names, feed, *args)

    def io_binding(self):
        return _SpyBinding(self, self._session.io_binding())

    def run_with_iobinding(self, binding, *args):
        binding.record()
        return self._session.run_with_iobinding(binding._binding, *args)

    def __getattr__(self, name):
        return getattr(self._session, name)


class _SpyBinding:
    """The real IO binding of the spied session, recording the switches it is bound to."""

    def __init__(self, spy, binding):
        self._spy, self._binding, self._feed = spy, binding, {}

    def bind_cpu_input(self, name, value):
        self._feed[name] = value
        self._binding.bind_cpu_input(name, value)

    def __getattr__(self, name):
        return getattr(self._binding, name)

    def record(self):
        f = self._feed
        self._spy.calls.append((len(f["input_ids"][0]), bool(f[KEEP_HOOKS]), bool(f[LAST_LOGITS_SWITCH])))


def test_a_long_prefill_copies_no_hook_it_leaves_on_demand(exported, monkeypatch):
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l3h4e32"])
    full, _ = model.run(_ids(40), hooks=model.hook_names)
    spy = _Spy(model.session)
    model.session = spy
    lazy, _ = model.run(_ids(40), chunk=16, release=False)
    # chunks of 16, 16 and 8 positions: none copies the hooks; only the last computes the last row
    assert spy.calls == [(16, False, False), (16, False, False), (8, False, True)]
    np.testing.assert_array_equal(lazy.last_logits, full.last_logits)
    for L in range(model.config.n_layer):
        np.testing.assert_array_equal(lazy["resid_post", L], full["resid_post", L])
    spy.calls.clear()
    lazy["pattern", 1]  # an on-demand read from its sub-graph: not the main session
    lazy.ondemand.row("blocks.2.mlp.hook_post", lazy, 30)  # one position of every layer: the main session
    assert spy.calls[0][:2] == (16, True)  # its block of 16 positions (24-39), hooks on (then the arena's release)


def test_a_released_run_writes_its_cache_and_hooks_into_arrays_of_its_own(exported, monkeypatch):
    """Long calls are bound to arrays allocated in Python (IO binding), not onnxruntime's arena: the
    same floats, and the chunks' caches take turns in two blocks of the final cache's size."""
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l4h2e24"])
    ids = _ids(37, 5)
    plain, plain_cache = model.run(ids, chunk=8, release=False)  # onnxruntime's own outputs
    owned, owned_cache = model.run(ids, chunk=8, release=True)
    np.testing.assert_array_equal(owned.last_logits, plain.last_logits)
    for name in plain.hooks:
        np.testing.assert_array_equal(owned.hooks[name], plain.hooks[name], err_msg=name)
    # the chunks wrote their kept hooks in place, into one block holding exactly those hooks
    kept = {id(a): a for a in owned.hooks.values()}.values()
    hook_bases = {id(a.base) for a in kept}
    assert len(hook_bases) == 1 and next(iter(kept)).base.size == sum(a.size for a in kept)
    bases = set()
    for (k, v), (pk, pv) in zip(owned_cache.layers, plain_cache.layers):
        np.testing.assert_array_equal(k, pk)
        np.testing.assert_array_equal(v, pv)
        for a in (k, v):
            base = a
            while base.base is not None:
                base = base.base
            assert isinstance(base, np.ndarray)  # numpy's memory, not a capsule over the arena
            bases.add(id(base))
    c = model.config
    assert len(bases) == 1  # every layer's keys and values in one block...
    assert base.size == 2 * c.n_layer * c.n_head * len(ids) * c.d_head  # ...of exactly the final cache's size
    # a step after it reads that cache like any other
    step, _ = model.run([ids[0]], owned_cache)
    want, _ = model.run([ids[0]], plain_cache)
    np.testing.assert_array_equal(step.last_logits, want.last_logits)
