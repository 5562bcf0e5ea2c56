"""On-demand hooks equal the full graph's, chunked prefills equal one-shot ones, cancel stops a run."""

import numpy as np
import pytest

import gpt2viz.core.engine.model as runtime
import gpt2viz.core.engine.ondemand as ondemand
from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.model import Model
from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from gpt2viz.core.interventions import HeadAblation, NeuronAblation, Steer

CONFIGS = ["l2h2e16", "l3h4e32", "l1h1e8", "l4h2e24", "l2h2e32"]


@pytest.fixture
def short_threshold(monkeypatch):
    """Tiny configs have short contexts: leave hooks on demand from 4 positions."""
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)


def _ids(model, n, seed=0):
    return [int(t) for t in np.random.default_rng(seed).integers(0, 50257, n)]


def _worst(a, b, names):
    return max(float(np.abs(a[n] - b[n]).max()) for n in names)


@pytest.mark.parametrize("name", CONFIGS)
def test_ondemand_hooks_equal_the_full_graph(exported, name, short_threshold):
    model = Model(exported[name])
    ids = _ids(model, model.config.n_positions - 3)
    full, _ = model.run(ids, hooks=model.hook_names)
    lazy, _ = model.run(ids)
    od = [n for n in model.hook_names if n.endswith(ondemand.ONDEMAND_HOOKS)]
    assert od and not set(od) & set(lazy.hooks)  # never run in the prefill...
    assert all(n in lazy for n in od) and len(lazy) == len(full)  # ...yet present
    for n in od:  # every layer, every head
        assert lazy[n].shape == full[n].shape
        assert float(np.abs(lazy[n] - full[n]).max()) <= 1e-6, n
    assert _worst(lazy, full, [n for n in model.hook_names if n != "logits"]) <= 1e-6
    np.testing.assert_array_equal(lazy.last_logits, full.last_logits)


def test_ondemand_hooks_after_cached_steps(exported, short_threshold):
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(_ids(model, 20))
    for _ in range(4):
        gen.step(SamplingSettings(temperature=0))
    hist = gen.history()
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names)
    for L in range(model.config.n_layer):
        for short in ("pattern", "attn_scores", "pre", "post"):
            for pos in range(len(hist.tokens)):
                got = hist.hook_at((short, L), pos)
                want = np.take(full[short, L], pos, axis=1 if short in ("pattern", "attn_scores") else 0)
                if short in ("pattern", "attn_scores"):
                    want = want[:, : pos + 1]
                # one-shot vs cached step: the same graph on other shapes, rounding only
                assert float(np.abs(got - want).max()) <= 1e-5 * max(1.0, float(np.abs(want).max()))


@pytest.mark.parametrize("ivs", [(NeuronAblation(1, 5, 2.5),), (HeadAblation(0, 1), NeuronAblation(2, 0, 0.0, (3, 4))),
                                 (Steer(1, None, tuple(np.linspace(-1, 1, 32))),)])
def test_ondemand_hooks_apply_interventions(exported, short_threshold, ivs):
    model = Model(exported["l3h4e32"])
    ids = _ids(model, 30, seed=1)
    full, _ = model.run(ids, hooks=model.hook_names, interventions=ivs)
    lazy, _ = model.run(ids, interventions=ivs)
    assert not any(n.endswith("hook_pattern") for n in lazy.hooks)
    assert _worst(lazy, full, [n for n in model.hook_names if n != "logits"]) <= 1e-6
    plain, _ = model.run(ids)
    assert _worst(lazy, plain, ["blocks.2.mlp.hook_post"]) > 1e-3  # the intervention did act


def test_short_prompts_and_steps_keep_every_hook(exported, monkeypatch):
    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 20)
    model = Model(exported["l3h4e32"])
    trace, cache = model.run(_ids(model, 19))
    assert trace.ondemand is None and "blocks.2.attn.hook_pattern" in trace.hooks
    step, _ = model.run(_ids(model, 25), cache)  # after a cache: [H, P, K] of a step is small
    assert step.ondemand is None and "blocks.2.mlp.hook_post" in step.hooks
    long, _ = model.run(_ids(model, 20))
    assert long.ondemand is not None and "blocks.2.attn.hook_pattern" not in long.hooks


def test_ondemand_memory_is_bounded(exported, short_threshold, monkeypatch):
    model = Model(exported["l3h4e32"])
    trace, _ = model.run(_ids(model, 30))
    stored = sum(a.nbytes for a in trace.hooks.values()) + trace.last_logits.nbytes
    group = sum(a.nbytes for a in trace.ondemand._subgraph(0, "attn", trace, 0, 30).values())
    monkeypatch.setattr(ondemand, "KEEP_BYTES", int(group * 1.5))
    for L in range(3):
        trace["pattern", L], trace["attn_scores", L], trace["post", L]
    assert 0 < trace.ondemand.nbytes() <= int(group * 1.5)
    assert trace["pattern", 0] is not None and trace.nbytes() > stored


def _count_runs(monkeypatch):
    """Calls of the main session (row blocks) and of sub-graphs (ranges) made from now on."""
    runs = []
    block, sub = ondemand.OnDemand._block, ondemand.OnDemand._subgraph
    monkeypatch.setattr(ondemand.OnDemand, "_block",
                        lambda self, t, a, b: runs.append(("block", a, b)) or block(self, t, a, b))
    monkeypatch.setattr(ondemand.OnDemand, "_subgraph", lambda self, L, fam, t, a, b, **k: runs.append(
        (fam, L, a, b)) or sub(self, L, fam, t, a, b, **k))
    return runs


def test_rows_of_every_block_come_from_one_run(exported, short_threshold, monkeypatch):
    """A redraw reads one position of every block (pattern rows, sub-layer outputs, MLP activations):
    one run of the model's own session over that position's block of ROW_BLOCK positions, after the
    prefill's cache, gives them all; a second redraw runs nothing; the rows are the full graph's."""
    monkeypatch.setattr(ondemand, "ROW_BLOCK", 8)
    model = Model(exported["l4h2e24"])
    gen = Generator(model)
    gen.start(_ids(model, 30))
    hist = gen.history()
    runs = _count_runs(monkeypatch)
    names = ("pattern", "attn_scores", "z", "attn_out", "resid_mid", "pre", "post", "mlp_out", "ln1", "ln2",
             "ln1_scale", "ln2_scale")
    for _ in range(2):
        rows = {(n, L): hist.hook_at((n, L), 29) for n in names for L in range(4)}
    assert runs == [("block", 22, 30)]  # the newest position's block holds the 7 before it
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names)
    for (n, L), r in rows.items():
        assert not r.flags.writeable
        want = np.take(full[n, L], 29, axis=1 if n in ("pattern", "attn_scores") else 0)
        assert r.shape == want.shape and float(np.abs(r - want).max()) <= 1e-6, (n, L)
    for p in (0, 5, 6, 13, 14, 22):  # other blocks: one run each (counted back from the end: 0-6 is short)
        assert float(np.abs(hist.hook_at(("pattern", 3), p) - full["pattern", 3][:, p, : p + 1]).max()) <= 1e-6
    assert runs[1:] == [("block", 0, 6), ("block", 6, 14), ("block", 14, 22)]


@pytest.mark.parametrize("positions", [1, 15, 16, 17, 64, 200, 1000])
def test_row_blocks_tile_the_text_back_from_its_end(positions):
    """Row blocks cover every position once; every block but the first is whole, and the newest position's
    block holds the ROW_BLOCK - 1 positions before it (the first block allowing)."""
    blocks = sorted({ondemand.row_block(i, positions) for i in range(positions)})
    assert blocks[0][0] == 0 and blocks[-1][1] == positions
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    assert all(b - a == ondemand.ROW_BLOCK for a, b in blocks[1:])
    assert 0 < blocks[0][1] - blocks[0][0] <= ondemand.ROW_BLOCK
    for i in range(positions):
        first, stop = ondemand.row_block(i, positions)
        assert first <= i < stop
    assert ondemand.row_block(positions - 1, positions) == (max(0, positions - ondemand.ROW_BLOCK), positions)


def test_many_rows_of_one_layer_come_from_its_sub_graph(exported, short_threshold, monkeypatch):
    """An attention map reads every row of one layer: one sub-graph run over those positions (after
    the cache of the ones before), equal to the full graph and to one-by-one reads."""
    model = Model(exported["l4h2e24"])
    gen = Generator(model)
    gen.start(_ids(model, 30, seed=4))
    gen.step(SamplingSettings(temperature=0))
    hist = gen.history()
    runs = _count_runs(monkeypatch)
    rows = hist.hook_rows(("pattern", 2), 10, 31)  # 20 prompt positions, then the step's
    assert runs == [("attn", 2, 10, 30)]
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names)
    for p, r in zip(range(10, 31), rows):
        assert float(np.abs(r - full["pattern", 2][:, p, : p + 1]).max()) <= 1e-5
        assert float(np.abs(r - hist.hook_at(("pattern", 2), p)).max()) <= 1e-6
    post = hist.hook_rows(("post", 1), 3, 9)  # the MLP reads the residual after attention, on demand too
    assert runs[1:3] == [("mlp", 1, 3, 9), ("attn", 1, 3, 9)]
    assert float(np.abs(np.stack(post) - full["post", 1][3:9]).max()) <= 1e-6


def test_a_prefetch_keeps_one_hook_behind_the_views_own_groups(exported, short_threshold, monkeypatch):
    """A prefetch runs the layer's sub-graph in a session of its own on one thread (the kept sessions stay as they
    were), keeps only that hook, as the least recent group, evicting nothing; a view's read of those rows, and of
    fewer rows after a step, then runs nothing, and the rows are the full graph's."""
    model = Model(exported["l4h2e24"])
    gen = Generator(model)
    gen.start(_ids(model, 30, seed=5))
    hist = gen.history()
    hist.hook_rows(("pattern", 1), 10, 30)  # a view's own read: the layer's whole group, kept and its session open
    before, sessions = list(hist.frames[0].trace.ondemand._kept), list(model._ondemand_sessions)
    runs = _count_runs(monkeypatch)
    opened = []
    open_ondemand = model._open_ondemand
    monkeypatch.setattr(model, "_open_ondemand", lambda key, threads=None: opened.append(
        (key, threads)) or open_ondemand(key, threads))
    assert hist.prefetch_rows(("pattern", 2), 10, 30)
    assert hist.prefetch_rows(("pattern", 1), 12, 30)  # held already: no run
    assert runs == [("attn", 2, 10, 30)] and opened == [((2, "attn"), 1)]
    od = hist.frames[0].trace.ondemand
    assert list(od._kept) == [(2, "attn", 10, 30), *before] and list(model._ondemand_sessions) == sessions
    assert list(od._kept[2, "attn", 10, 30]) == ["blocks.2.attn.hook_pattern"]
    gen.step(SamplingSettings(temperature=0))
    hist = gen.history()
    rows = hist.hook_rows(("pattern", 2), 11, 31)
    assert runs == [("attn", 2, 10, 30)]
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names)
    for p, r in zip(range(11, 31), rows):
        assert float(np.abs(r - full["pattern", 2][:, p, : p + 1]).max()) <= 1e-5
    hist.hook_rows(("attn_scores", 2), 11, 31)  # another hook of the layer: not prefetched, computed as before
    assert runs[1:] == [("attn", 2, 11, 30)]


def test_a_prefetch_that_does_not_fit_keeps_nothing(exported, short_threshold, monkeypatch):
    """When the hook would take the store past KEEP_BYTES the prefetch says so, runs nothing and keeps nothing; MLP
    hooks (whose sub-graph reads the attention's output, on demand itself) are not prefetched."""
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(_ids(model, 30))
    hist = gen.history()
    hist.hook_rows(("pattern", 0), 0, 30)
    od = hist.frames[0].trace.ondemand
    kept = dict(od._kept)
    runs = _count_runs(monkeypatch)
    monkeypatch.setattr(ondemand, "KEEP_BYTES", od.nbytes() + 4 * 4 * 30 * 30 - 1)  # a pattern is 4 x 30 x 30
    assert not hist.prefetch_rows(("pattern", 1), 0, 30)
    assert od._kept == kept and runs == []
    monkeypatch.setattr(ondemand, "KEEP_BYTES", od.nbytes() + 4 * 4 * 30 * 30)
    assert hist.prefetch_rows(("pattern", 1), 0, 30) and len(od._kept) == len(kept) + 1
    assert runs == [("attn", 1, 0, 30)] and od.nbytes() == ondemand.KEEP_BYTES
    with pytest.raises(ValueError, match="attention"):
        hist.prefetch_rows(("post", 1), 0, 30)


def test_a_stopped_prefetch_is_cancelled_and_keeps_nothing(exported, short_threshold):
    """A background run stopped (from any thread: the GUI's, as a request goes out) ends its onnxruntime run and
    keeps nothing; the same rows prefetched afterwards are the full graph's."""
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(_ids(model, 30))
    hist = gen.history()
    od = hist.frames[0].trace.ondemand
    run = ondemand.BackgroundRun()
    run.stop()
    with pytest.raises(Cancelled):
        hist.prefetch_rows(("pattern", 1), 0, 30, run)
    assert od.nbytes() == 0
    assert hist.prefetch_rows(("pattern", 1), 0, 30, ondemand.BackgroundRun())
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names)
    rows = od.rows("blocks.1.attn.hook_pattern", hist.frames[0].trace, 0, 30)
    assert max(float(np.abs(r - full["pattern", 1][:, p, : p + 1]).max()) for p, r in enumerate(rows)) <= 1e-5


def test_a_prefetch_runs_its_sub_graph_outside_the_stores_lock(exported, short_threshold, monkeypatch):
    """A view's read of the store (another thread: the GUI's) need not wait for a prefetch's run."""
    import threading

    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(_ids(model, 30))
    hist = gen.history()
    od = hist.frames[0].trace.ondemand
    free = []
    sub = ondemand.OnDemand._subgraph

    def probe(self, *a, **k):
        def other():
            got = od._lock.acquire(blocking=False)
            free.append(got)
            if got:
                od._lock.release()
        t = threading.Thread(target=other)
        t.start()
        t.join()
        return sub(self, *a, **k)
    monkeypatch.setattr(ondemand.OnDemand, "_subgraph", probe)
    assert hist.prefetch_rows(("pattern", 2), 0, 30)
    hist.hook_rows(("pattern", 1), 0, 30)  # a view's own read holds it: one computation of those rows
    assert free == [True, False]


def test_only_a_sub_graph_run_over_large_tensors_trims_the_heap(exported, short_threshold, monkeypatch):
    """Small runs leave their temporaries to malloc, which the next run reuses (trimming them made the next run
    fault their pages in again); runs whose [H, P, K] tensors reach TRIM_FROM_BYTES give them back."""
    model = Model(exported["l3h4e32"])
    trims = []
    monkeypatch.setattr(ondemand, "trim_heap", lambda: trims.append(1))
    trace, _ = model.run(_ids(model, 30))
    trace.ondemand.rows("blocks.1.attn.hook_pattern", trace, 10, 30)  # 4 heads x 20 x 30 floats: 9.6 KB
    assert trims == []
    monkeypatch.setattr(ondemand, "TRIM_FROM_BYTES", 4 * 20 * 30 * 4)
    trace.ondemand.rows("blocks.2.attn.hook_pattern", trace, 10, 30)
    assert trims == [1]


def test_keys_and_values_are_the_cache(exported, short_threshold):
    """k and v of a long prefill are its KV cache transposed, bit for bit; after a step they are read
    from the step's longer cache (the prefill's is not held twice) and stay the same."""
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    gen.start(_ids(model, 24, seed=5))
    trace = gen.frames[0].trace
    full, _ = model.run(list(trace.tokens), hooks=model.hook_names)
    for L in range(3):
        np.testing.assert_array_equal(trace["k", L], full["k", L])
        np.testing.assert_array_equal(trace["v", L], full["v", L])
    gen.step(SamplingSettings(temperature=0))
    assert trace.ondemand.past is gen._cache and gen._cache.length == 25
    for L in range(3):
        np.testing.assert_array_equal(trace["k", L], full["k", L])
        np.testing.assert_array_equal(gen.history().hook_at(("v", L), 23), full["v", L][23])


@pytest.mark.parametrize("ivs", [(NeuronAblation(1, 5, 2.5),), (HeadAblation(0, 1, "mean"), Steer(2, (20, 21), tuple(np.linspace(-1, 1, 32))))])
def test_ondemand_rows_apply_interventions(exported, short_threshold, monkeypatch, ivs):
    monkeypatch.setattr(ondemand, "ROW_BLOCK", 8)
    model = Model(exported["l3h4e32"])
    gen = Generator(model, interventions=ivs)
    gen.start(_ids(model, 30, seed=6))
    hist = gen.history()
    full, _ = model.run(list(hist.tokens), hooks=model.hook_names, interventions=ivs, means=gen._means)
    for L in range(3):
        for n in ("z", "pattern", "attn_out", "post", "mlp_out"):
            for p in (5, 21, 29):
                want = np.take(full[n, L], p, axis=1 if n == "pattern" else 0)
                if n == "pattern":
                    want = want[:, : p + 1]
                assert float(np.abs(hist.hook_at((n, L), p) - want).max()) <= 1e-6, (n, L, p)
            rows = hist.hook_rows((n, L), 16, 30)
            assert float(max(np.abs(r - hist.hook_at((n, L), p)).max() for p, r in zip(range(16, 30), rows))) <= 1e-6


@pytest.mark.parametrize("name", ["l3h4e32", "l4h2e24"])
def test_chunked_prefill_equals_one_shot(exported, name, short_threshold, monkeypatch):
    monkeypatch.setattr(runtime, "CHUNK", 7)
    model = Model(exported[name])
    ids = _ids(model, model.config.n_positions - 2, seed=2)
    one, c1 = model.run(ids, chunk=0)
    seen = []
    chunked, c2 = model.run(ids, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(min(s + 7, len(ids)), len(ids)) for s in range(0, len(ids), 7)]
    for n in model.hook_names:
        if n == "logits":
            continue
        scale = max(1.0, float(np.abs(one[n]).max()))
        assert float(np.abs(one[n] - chunked[n]).max()) <= 1e-5 * scale, n
    np.testing.assert_allclose(chunked.last_logits, one.last_logits, atol=1e-5 * np.abs(one.last_logits).max())
    for (k1, v1), (k2, v2) in zip(c1.layers, c2.layers):
        np.testing.assert_allclose(k2, k1, atol=1e-5 * max(1.0, np.abs(k1).max()))
        np.testing.assert_allclose(v2, v1, atol=1e-5 * max(1.0, np.abs(v1).max()))


def test_cancel_stops_between_chunks_and_keeps_the_generator(exported, short_threshold, monkeypatch):
    monkeypatch.setattr(runtime, "CHUNK", 5)
    model = Model(exported["l3h4e32"])
    gen = Generator(model)
    first = gen.start(_ids(model, 10))
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 2  # after two chunks

    with pytest.raises(Cancelled):
        gen.start(_ids(model, 30, seed=3), progress=lambda d, t: None, cancel=cancel)
    assert len(calls) == 3 and gen.current is first and gen.tokens == first.tokens


def test_the_residual_between_blocks_is_stored_once(exported, short_threshold):
    """After block L and before block L + 1 is one tensor of the graph: a long prefill keeps one array
    under both names, except where a resid_pre intervention makes block L + 1's hook show another."""
    model = Model(exported["l3h4e32"])
    ids = _ids(model, 30, seed=7)
    trace, _ = model.run(ids)
    full, _ = model.run(ids, hooks=model.hook_names)
    released, _ = model.run(ids, release=True)  # its copies out of onnxruntime's arena too
    for t in (trace, released):
        for L in range(2):
            assert t["resid_post", L] is t["resid_pre", L + 1]
            np.testing.assert_array_equal(t["resid_post", L], full["resid_post", L])
    steer = (Steer(2, None, tuple(np.linspace(-1, 1, 32))),)
    steered, _ = model.run(ids, interventions=steer)
    assert steered["resid_post", 0] is steered["resid_pre", 1]
    assert steered["resid_post", 1] is not steered["resid_pre", 2]
    want, _ = model.run(ids, hooks=model.hook_names, interventions=steer)
    np.testing.assert_array_equal(steered["resid_post", 1], want["resid_post", 1])
    assert float(np.abs(steered["resid_pre", 2] - steered["resid_post", 1]).max()) > 0.1


def test_a_store_is_read_by_one_thread_at_a_time(monkeypatch, exported):
    """The app's worker computes what the views will read of a run while the GUI thread may be reading it (a run
    taken back): a read waits while another thread holds the store."""
    import threading

    monkeypatch.setattr(ondemand, "ONDEMAND_FROM", 4)
    model = Model(exported["l3h4e32"])
    ids = [464, 3139, 286, 4881, 318, 6342, 11, 262, 3139, 286, 8031, 318]
    trace, _ = model.run(ids)
    od = trace.ondemand
    got = []
    with od._lock:  # another thread in the middle of a read
        reader = threading.Thread(target=lambda: got.append(od.row("blocks.1.attn.hook_pattern", trace, 5)))
        reader.start()
        reader.join(0.5)
        assert reader.is_alive() and got == []
    reader.join()
    full, _ = model.run(ids, hooks=["blocks.1.attn.hook_pattern"])
    np.testing.assert_allclose(got[0], full["pattern", 1][:, 5, :6], atol=1e-6)
