"""Hooks computed on demand, exactly, by the model's own graph: a long prefill keeps only the residual stream.

Attention scores and patterns are [H, P, K] per layer (2 x 12 x 12 x 1000^2 floats at 1000 tokens on
GPT-2 small: 1.2 GB), MLP activations [P, M] per layer (0.3 GB), the other hooks 11 more [P, E] arrays
per layer. A prefill of ONDEMAND_FROM positions or more keeps the residual between blocks (and the
embeddings and the final LayerNorm); a view that reads another hook gets it from the model's own
onnxruntime graph, run on the positions it reads after the prefill's KV cache: the session itself for
one position of every layer (as one more chunk of the prefill), or a block's sub-graph (the very nodes
of ``model.onnx`` between the stored residual and the hook) for many positions of one layer. Tests hold
them to the full graph's output (1e-6).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict

import numpy as np
import onnxruntime as ort

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.engine.memory import trim_heap
from gpt2viz.core.graph.cuts import ONDEMAND_HOOKS, family
from gpt2viz.core.hooks import BLOCK_HOOKS, block_hook, concrete_shape

# Keys and values of a prefill are its KV cache, transposed ([1, H, P, D] there, [P, H, D] as hooks):
# the same floats (tested bit for bit), so they are read from the cache, never computed again.
FROM_CACHE = {"attn.hook_k": 0, "attn.hook_v": 1}

# A prefill of at least this many positions leaves ONDEMAND_HOOKS to on-demand computation. Below it
# they are small (0.6 MB of patterns at 32 tokens on GPT-2 small) and kept, so short prompts and cached
# steps ([H, 1, K]) stay exactly as before.
ONDEMAND_FROM = 64
# Views read on-demand hooks one position at a time, at every layer (the pipeline, attribution, the
# stage texts): those come ROW_BLOCK positions at a time from the model's own session, as one more
# chunk after the prefill's cache (what the chunked prefill itself runs), every layer in one call:
# ~50 ms for 16 positions at the end of 1000 tokens on GPT-2 small. A layer's many rows (an attention
# map) or a whole hook come from the layer's sub-graph over those positions, after the same cache.
ROW_BLOCK = 16

# Computed hooks kept per trace (rows and ranges together; see OnDemand._keep).
# At 1000 tokens on GPT-2 small a row block of every layer is 22 MB, a layer's 127-row attention map
# 15 MB: the position and the layer in view, and the one before.
KEEP_BYTES = 32 << 20

# A sub-graph run whose [H, P, K] tensors are at least this big gives its freed temporaries back to the system
# (glibc keeps them otherwise). Smaller ones stay with malloc, which the next run reuses: trimming them made a
# block click's rows at 200 tokens of GPT-2 small ~3 ms slower (their pages faulted in again at the next run).
TRIM_FROM_BYTES = 4 << 20


class BackgroundRun:
    """The handle of a computation run in the background (:meth:`OnDemand.prefetch`): :meth:`stop`, from any thread,
    ends its onnxruntime run at the next node (a few ms), so that a request never waits for work done ahead."""

    def __init__(self):
        self.run_options = ort.RunOptions()
        self.stopped = False

    def stop(self) -> None:
        """End the run now, or before it begins: it raises :class:`Cancelled`."""
        self.stopped = True
        self.run_options.terminate = True


def row_block(index: int, positions: int) -> tuple[int, int]:
    """(first, stop) of the row block that holds position ``index`` of a ``positions``-long prefill.

    Blocks are counted back from the prefill's end: the newest position's block (which the worker computes
    with every run) holds the ROW_BLOCK - 1 positions before it, those a reader looks at next, and only the
    first block of the text can be short. Counted from the start instead, the newest block held 0-15
    positions before the newest, and a click just before it ran the model on the GUI thread (~30 ms at 200
    tokens of GPT-2 small, bench/bench_latency.py).
    """
    stop = positions - (positions - 1 - index) // ROW_BLOCK * ROW_BLOCK
    return max(0, stop - ROW_BLOCK), stop


def _locked(method):
    """``method`` run holding its store's lock (see :class:`OnDemand`)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return run


class OnDemand:
    """The hooks a long prefill's trace left out, computed exactly when first read (some kept).

    Parameters
    ----------
    model : Model
        The model that ran the prefill.
    layers : int
        Number of blocks.
    positions : int
        Positions of the prefill (its keys are the same positions: no cache before it).
    past : KVCache
        The prefill's cache (or a longer one of the same context, see :meth:`follow`).
    interventions : tuple, optional
        The interventions the prefill ran under (and ``means`` for mean ablations): on-demand hooks
        are computed under them too.
    """

    def __init__(self, model, layers: int, positions: int, past, interventions=(), means=None):
        self.model = model
        self.positions = positions
        self.names = frozenset(block_hook(L, h) for L in range(layers) for h in ONDEMAND_HOOKS)
        self.past = past
        self.interventions, self.means = tuple(interventions), means
        # Computed hooks, newest last: (first, stop) -> every on-demand hook of every layer for those
        # positions (main session); (layer, family, first, stop) -> a family's hooks (sub-graph).
        self._kept: OrderedDict[tuple, dict[str, np.ndarray]] = OrderedDict()
        # The worker and the GUI thread may read one run's store at once (the app's worker computes what the
        # views will read of a run, also of a run taken back that a view may still be drawing): one at a time.
        self._lock = threading.RLock()

    def follow(self, cache) -> None:
        """Read keys and values from ``cache`` from now on: a longer cache of the same context (a step's),
        whose first positions are the prefill's own, bit for bit. The prefill's cache is then freed."""
        if cache.length >= self.positions:
            self.past = cache

    # ---- reading ---------------------------------------------------------------------------------
    @_locked
    def row(self, name: str, trace, index: int) -> np.ndarray:
        """The ``index``-th position of hook ``name`` (keys 0..index for attention hooks), read-only."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            return self._cached_kv(layer, hook)[index]
        group = self._holding(name, index, index + 1)
        if group is None:
            first, stop = row_block(index, self.positions)
            group = self._keep((first, stop), lambda: self._block(trace, first, stop))
        return _take(group[1][name], name, index - group[0], index + 1)

    @_locked
    def rows(self, name: str, trace, first: int, stop: int) -> list[np.ndarray]:
        """Positions ``first .. stop-1`` of hook ``name``, each as :meth:`row` gives it, from one computation."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            kv = self._cached_kv(layer, hook)
            return [kv[i] for i in range(first, stop)]
        group = self._holding(name, first, stop)
        if group is None:
            group = (first, self._range(layer, family(hook), trace, first, stop))
        return [_take(group[1][name], name, i - group[0], i + 1) for i in range(first, stop)]

    @_locked
    def get(self, name: str, trace) -> np.ndarray:
        """Hook ``name`` over every position of ``trace`` (without the batch dimension), read-only."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            return self._cached_kv(layer, hook)
        group = self._holding(name, 0, self.positions)
        if group is None:
            group = (0, self._range(layer, family(hook), trace, 0, self.positions))
        return group[1][name]

    def prefetch(self, name: str, trace, first: int, stop: int, background: BackgroundRun | None = None) -> bool:
        """Compute hook ``name`` at positions ``first .. stop-1`` before a view reads it, if it fits: True when it
        is held now, False when it would not fit (nothing run or kept then). Attention hooks only.

        For the worker while the app is idle (a block click then reads the layer's attention map, not the model:
        its sub-graph's open and run were ~20 ms of the click at 200 tokens of GPT-2 small). It evicts nothing
        and changes no other group's place: only that hook is kept, as the least recent group (the first to go),
        and only while every kept group fits in KEEP_BYTES. The sub-graph runs in a session of its own on one
        thread (:meth:`Model.ondemand_session`), so the GUI thread keeps a core and the kept sessions stay open,
        and outside the store's lock, so a view's read meanwhile (a token click's row) waits for no such run;
        ``background`` stops it (:class:`Cancelled`)."""
        layer, hook = _split(name)
        if hook in FROM_CACHE:
            return True
        if family(hook) != "attn":  # an MLP hook's sub-graph reads the attention's output, on demand itself
            raise ValueError(f"only attention hooks are prefetched, not {name}")
        size = 4 * int(np.prod(concrete_shape(dict(BLOCK_HOOKS)[hook], self.model.config, stop - first, stop)))
        with self._lock:
            if self._held(name, first, stop) is not None:
                return True
            if self.nbytes() + size > KEEP_BYTES:
                return False
        # the attention's sub-graph reads only the stored residual: nothing of the store
        try:
            a = self._subgraph(layer, "attn", trace, first, stop, keep_session=False,
                               run_options=background and background.run_options)[name]
        except Exception:
            if background is not None and background.stopped:
                raise Cancelled() from None
            raise
        with self._lock:
            if self._held(name, first, stop) is not None:  # a view read them meanwhile
                return True
            if self.nbytes() + size > KEEP_BYTES:
                return False
            key = (layer, "attn", first, stop)
            if key in self._kept:  # a prefetched group of another hook of these rows: this one joins it, in place
                self._kept[key][name] = a
            else:
                self._kept[key] = {name: a}
                self._kept.move_to_end(key, last=False)
        return True

    def _held(self, name: str, first: int, stop: int):
        """The key of the newest kept group with hook ``name`` at positions first..stop-1, or None (its place
        unchanged: a computation ahead must not make a group recent)."""
        return next((k for k, g in reversed(self._kept.items()) if k[-2] <= first and stop <= k[-1] and name in g),
                    None)

    @_locked
    def nbytes(self) -> int:
        """Memory of the computed hooks kept."""
        return sum(a.nbytes for g in self._kept.values() for a in g.values())

    # ---- computing -------------------------------------------------------------------------------
    def _holding(self, name: str, first: int, stop: int):
        """(first position, group) of a kept group with hook ``name`` at positions first..stop-1, now the most
        recent, or None."""
        key = self._held(name, first, stop)
        if key is None:
            return None
        self._kept.move_to_end(key)
        return key[-2], self._kept[key]

    def _keep(self, key: tuple, compute) -> tuple[int, dict[str, np.ndarray]]:
        """(first position, group) for ``key``, computed by ``compute()`` unless kept; the oldest groups
        go once more than KEEP_BYTES are kept."""
        group = self._kept.get(key)
        if group is None:
            group = self._kept[key] = compute()
        self._kept.move_to_end(key)
        # The newest row block and the newest range stay whatever their size: the pipeline reads the
        # one at every redraw while an attention map of another layer reads the other (on gpt2-medium a
        # row block of every layer is 55 MB, and computing it again holds the 0.2 GB cache twice).
        newest = {next((k for k in reversed(self._kept) if len(k) == n), None) for n in (2, 4)}
        total = self.nbytes()
        for k in [k for k in self._kept if k not in newest]:
            if total <= KEEP_BYTES:
                break
            total -= sum(a.nbytes for a in self._kept.pop(k).values())
        return key[-2], group

    def _cached_kv(self, layer: int, hook: str) -> np.ndarray:
        a = self.past.layers[layer][FROM_CACHE[hook]][0, :, : self.positions].transpose(1, 0, 2)
        a.flags.writeable = False
        return a

    def _block(self, trace, first: int, stop: int) -> dict[str, np.ndarray]:
        """Every on-demand hook of every layer at positions first..stop-1: the model's own graph run on
        them after the cache of the positions before, as the chunked prefill ran them."""
        names = sorted(n for n in self.names if _split(n)[1] not in FROM_CACHE)
        # Its new cache is made and dropped: handed back to the system only when it would not be left in the arena
        # (Model.cache_may_stay); handing back a smaller one cost ~5 ms of a token click (page faults on the next call).
        part, _ = self.model.run(trace.tokens[first:stop], self.past.truncated(first), hooks=names,
                                 interventions=self.interventions, means=self.means,
                                 release=not self.model.cache_may_stay(stop))
        return {n: part.hooks[n] for n in names}

    def _range(self, layer: int, fam: str, trace, first: int, stop: int) -> dict[str, np.ndarray]:
        """A family's hooks at positions first..stop-1 of one layer, from the layer's sub-graph (kept)."""
        return self._keep((layer, fam, first, stop), lambda: self._subgraph(layer, fam, trace, first, stop))[1]

    def _subgraph(self, layer: int, fam: str, trace, first: int, stop: int,
                  keep_session: bool = True, run_options=None) -> dict[str, np.ndarray]:
        sess, reads = self.model.ondemand_session(layer, fam, keep_session)
        feed = {}
        for i, r in zip(sess.get_inputs(), reads):
            # the MLP reads the residual after attention, itself on demand: the layer's attention first
            if r in trace.hooks:
                a = trace.hooks[r][first:stop]
            else:
                a = self._range(layer, family(_split(r)[1]), trace, first, stop)[r]
            feed[i.name] = np.ascontiguousarray(a)[None]
        c = self.model.config
        extra = {"input_ids": np.zeros((1, stop - first), np.int64), "attention_mask": np.ones((1, stop), np.int64)}
        inputs = {i.name for i in sess.get_inputs()[len(reads):]}
        for name in inputs:
            if name in extra:
                feed[name] = extra[name]
            elif name.startswith("past_key_values."):  # the keys and values of the positions before
                _, L, kv = name.split(".")
                past = self.past.layers[int(L)][0 if kv == "key" else 1]
                feed[name] = np.ascontiguousarray(past[:, :, :first]) if first else \
                    np.zeros((1, c.n_head, 0, c.d_head), np.float32)
        if self.interventions:  # those the sub-graph has (scale/shift inputs are overridable initializers)
            settable = inputs | {i.name for i in sess.get_overridable_initializers()}
            ivs = self.model.intervention_feeds(self.interventions, first, stop - first, self.means)
            feed.update({k: v for k, v in ivs.items() if k in settable})
        outs = [o.name for o in sess.get_outputs()]
        group = {}
        for o, arr in zip(outs, sess.run(outs, feed, run_options)):
            a = arr[0]
            a.flags.writeable = False
            group[o] = a

        if c.n_head * (stop - first) * stop * 4 >= TRIM_FROM_BYTES:
            trim_heap()  # the sub-graph's temporaries ([H, P, K] masks, scores before softmax) were freed to malloc
        return group


def _split(name: str) -> tuple[int, str]:
    """(layer, hook without its block prefix) of a per-block hook name."""
    _, layer, hook = name.split(".", 2)
    return int(layer), hook


@functools.lru_cache(maxsize=None)
def _axes(hook: str) -> tuple[int, int | None]:
    """Where the P and K axes of a block hook are, the batch dimension dropped."""
    letters = dict(BLOCK_HOOKS)[hook].split()[1:]
    return letters.index("P"), (letters.index("K") if "K" in letters else None)


def _take(a: np.ndarray, name: str, i: int, keys: int) -> np.ndarray:
    """Row ``i`` along the P axis of an on-demand hook's array, attention hooks cut to their first ``keys`` keys."""
    p, k = _axes(_split(name)[1])
    where: list = [slice(None)] * a.ndim
    where[p] = i
    if k is not None:
        where[k] = slice(0, keys)
    return a[tuple(where)]


