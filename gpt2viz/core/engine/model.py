"""Open a model folder and run GPT-2 with onnxruntime: a prefill or a cached step, one Trace each."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnxruntime as ort

from gpt2viz.core.config import ModelConfig
from gpt2viz.core.engine import ondemand as on_demand
from gpt2viz.core.engine.device import DeviceError, open_session, providers_for
from gpt2viz.core.engine.errors import Cancelled, ContextLimitError
from gpt2viz.core.engine.kv_cache import KVCache
from gpt2viz.core.engine.memory import ARENA_KEEPS, release_memory, trim_heap
from gpt2viz.core.engine.plan import Plan
from gpt2viz.core.engine.trace import Trace
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.graph.attention_rewrites import rewrite_attention
from gpt2viz.core.graph.cuts import ONDEMAND_HOOKS, cut_graphs, family
from gpt2viz.core.graph.gating import gate, gate_feeds, skipped_outputs
from gpt2viz.core.graph.onnx_file import quiet_options, read_skeleton, session_options_for
from gpt2viz.core.graph.optimized import optimized_graph
from gpt2viz.core.graph.surgery import add_layernorm_hooks, strip_interventions
from gpt2viz.core.graph.weight_inputs import WeightNotFound, expose_weights, mlp_out_weights
from gpt2viz.core.hooks import (
    LAST_LOGITS,
    block_hook,
    concrete_shape,
    hook_names,
    hook_shapes,
    intervention_inputs,
    scale_input,
    shift_input,
)
from gpt2viz.core.interventions import InterventionError, RankOneEdit, feeds, validate, weight_edits
from gpt2viz.core.model_folder.manifest import (
    MODEL_FILE,
    TOKENIZER_FILE,
    ModelFolderError,
    config_of,
    read_manifest,
    redo_hint,
    verify_files,
)
from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

# A long prefill runs in chunks of this many positions, each after the cache of the ones before: a
# single onnxruntime call cannot be interrupted, and it holds every graph output it computes (the hooks
# it was not asked for too) until it ends: one call of 1000 tokens on GPT-2 small peaks at 3.7 GB, the
# same in chunks at ~1.2 GB. A cached chunk is what a step is, which export validation checks against
# transformers; chunked == one-shot to 1e-5 (tested).
CHUNK = 128
# ...and fewer when a chunk's outputs would take more than this: onnxruntime holds every graph output of a
# call until it ends. A call that keeps every hook makes 2 MB per position at 1000 tokens on GPT-2 small
# (so 80-position chunks at the end), 5 MB on gpt2-medium (32); a long prefill's chunks keep only the
# residual stream and make no other hook (gpt2viz.core.graph.gating), so they run 128 positions.
CALL_BYTES = 160 << 20
# A call of at least this many positions hands back its peak when it ends: what it keeps is written into
# arrays of its own (Model._call), the arena is shrunk (Model._release_arena) and the C heap trimmed (glibc
# keeps freed temporaries otherwise). Without the arena a 32-token prefill is 1.16x slower and a 300-token one
# 1.34x (measured side by side), so it stays for short calls and steps.
TRIM_FROM = 64
ONDEMAND_SESSIONS = 3  # on-demand sub-graph sessions kept open (see Model.ondemand_session)
# The sub-graphs Model.prepare_ondemand runs through onnxruntime's optimizer ahead of use: a block's attention,
# which a block click opens while the user waits (~10-14 ms -> ~3 ms to open on a GPT-2-small-sized model). An
# MLP sub-graph opens in ~3 ms as it is (~1 ms prepared), not worth its ~30 ms of preparing.
PREPARED_FAMILIES = ("attn",)


class Model:
    """An opened gpt2viz model folder: manifest, tokenizer and an onnxruntime session.

    Parameters
    ----------
    folder : path
        A folder written by ``gpt2viz export``.
    verify : bool
        Check the weights' sha256 against the manifest (a damaged download fails here, clearly).
    threads : int, optional
        onnxruntime intra-op threads; default: one per physical core
        (:func:`~gpt2viz.core.graph.onnx_file.quiet_options`).
    device : {"cpu", "cuda"}
        Where every session of the model runs (:mod:`gpt2viz.core.engine.device`); "cuda" raises
        :class:`~gpt2viz.core.engine.device.DeviceError` when onnxruntime has no usable CUDA provider.
    """

    def __init__(self, folder: str | Path, *, verify: bool = True, threads: int | None = None, device: str = "cpu"):
        providers_for(device)  # an impossible device fails before the folder is read
        self.device = device
        self.folder = Path(folder).resolve()
        self.manifest = read_manifest(self.folder)
        if verify:
            verify_files(self.folder, self.manifest)
        self.config: ModelConfig = config_of(self.manifest)
        self.name: str = self.manifest.get("name") or self.folder.name
        self.n_params: int = int(self.manifest.get("n_params", 0))
        hint = redo_hint(self.folder)
        try:
            self.tokenizer = GPT2Tokenizer.from_file(self.folder / TOKENIZER_FILE)
        except Exception as e:  # noqa: BLE001 - TokenizerFileError, or anything tokenizers raises
            raise ModelFolderError(f"{self.folder / TOKENIZER_FILE} is unreadable (damaged: {e}); {hint}") from None
        if self.tokenizer.vocab_size > self.config.vocab_size:
            raise ModelFolderError(f"{self.folder / TOKENIZER_FILE} has {self.tokenizer.vocab_size} tokens but the "
                                   f"model only {self.config.vocab_size}: it belongs to another model; {hint}")

        self._opts = quiet_options(threads)
        path = self.folder / MODEL_FILE
        # A format-2 graph carries the intervention inputs. Fed with their no-op defaults they still
        # cost 60-120 tiny Mul/Add nodes per call (measured on GPT-2 small: a cached step 1.30x), so
        # calls without interventions run the same graph with those nodes stripped (built in memory
        # from the file's skeleton; today's graph exactly), and the intervention graph gets its own
        # session the first time an intervention is asked for (then the weights are held twice).
        try:
            self.session, self._iv_inputs = self._open_sessions(path)
        except DeviceError:
            raise
        except Exception as e:  # onnxruntime raises its own exception types for bad graphs
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ModelFolderError(f"{self.folder / MODEL_FILE} cannot be loaded (damaged or not an ONNX model: "
                                   f"{why}); {hint}") from None
        # A manifest edited by hand (or from another export) must not drive the graph with wrong shapes.
        n_past = sum(1 for i in self.session.get_inputs() if i.name.startswith("past_key_values.")) // 2
        logits = next((o for o in self.session.get_outputs() if o.name == "logits"), None)
        vocab = logits.shape[-1] if logits is not None and logits.shape else None
        if n_past != self.config.n_layer or (isinstance(vocab, int) and vocab != self.config.vocab_size):
            raise ModelFolderError(f"{self.folder / 'gpt2viz.json'} does not describe {MODEL_FILE} (manifest: "
                                   f"{self.config.n_layer} layers, vocabulary {self.config.vocab_size}; graph: "
                                   f"{n_past} layers, vocabulary {vocab}); {hint}")
        outputs = {o.name for o in self.session.get_outputs()}
        missing = [h for h in hook_names(self.config.n_layer) if h not in outputs]
        if missing:
            raise ModelFolderError(f"{self.folder / MODEL_FILE} lacks hook outputs, e.g. {missing[:3]}: "
                                   "export it again with `gpt2viz export`")
        self.hook_names = hook_names(self.config.n_layer)
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.supports_interventions = bool(self._iv_inputs)

    def _open_sessions(self, path: Path):
        # One scan of the file: the graph without its weights (the skeleton) and where each weight lies.
        # Every session below is a graph made from the skeleton and reads its weights from the file
        # itself, so no copy of them is ever held in Python (a parsed 500 MB graph, then its serialized
        # bytes, was the load's peak: 2.1 GB for GPT-2 small; now 0.86 GB).
        self.layout = read_skeleton(path)
        skeleton, stored = self.layout
        # A folder of format 1 or 2 shows the LayerNorm's output as `hook_normalized`: its graph gets the
        # LayerNorm hooks of format 3 here, in memory, so a name holds the same tensor in every folder.
        # What such a folder lacks is their export-time check (`gpt2viz export DIR --upgrade` makes it).
        self.unchecked_hooks: tuple[str, ...] = ()
        if "ln_final.hook_scale" not in {o.name for o in skeleton.graph.output}:
            self.unchecked_hooks = tuple(add_layernorm_hooks(skeleton, self.config.n_layer))
        self._file_ids = {name: _identity(self.folder / name) for name in {s.file for s in stored.values()}}
        session_options_for(self.folder, self._opts)
        self._iv_session = None
        self._weights: Weights | None = None  # read on the first model edit
        self._edited_for: tuple = ()  # the edits the weights in self._edited were made for
        self._edited: dict[str, np.ndarray] = {}
        self._ondemand_sessions: OrderedDict = OrderedDict()
        # Sub-graphs as onnxruntime's optimizer left them (prepare_ondemand); their cuts are then let go.
        self._prepared: dict[tuple[int, str], bytes] = {}
        names = {i.name for i in skeleton.graph.input}
        ivs = set(intervention_inputs(self.config.n_layer)) & names
        # A graph that takes interventions also takes each block's MLP output weight (model edits, ROME):
        # declared as inputs in memory only, in the graphs that run interventions and their sub-graphs.
        iv_skeleton = skeleton
        self._edit_weights: dict[int, str] = {}
        if ivs:
            try:
                self._edit_weights = mlp_out_weights(skeleton, self.config.n_layer)
            except WeightNotFound:  # a graph of another shape runs without model edits
                self._edit_weights = {}
            if self._edit_weights:
                iv_skeleton = type(skeleton)()
                iv_skeleton.CopyFrom(skeleton)
                expose_weights(iv_skeleton, self._edit_weights.values())
        # Cut before stripping, so MLP sub-graphs keep the hook_post intervention inputs (and the edit weights).
        self._cuts = cut_graphs(iv_skeleton, self.config.n_layer)
        # Both graphs run gated (gpt2viz.core.graph.gating): a call skips the hooks and the LM head rows it
        # does not return; and their attention is rewritten to the same floats in fewer passes
        # (gpt2viz.core.graph.attention_rewrites). The skeleton itself stays as the file has it (lens and
        # sub-graphs read it).
        self._iv_blob = self._runtime_graph(iv_skeleton, strip=False)
        blob = self._runtime_graph(skeleton, strip=True) if ivs else self._iv_blob
        sess = open_session(blob, self._opts, self.device)
        if not ivs:
            self._iv_session = sess
        release_memory()
        return sess, ivs

    def _runtime_graph(self, skeleton, *, strip: bool) -> bytes:
        """The serialized graph a session runs: the skeleton with its attention rewritten and gated, with the
        intervention nodes stripped when ``strip``."""
        graph = type(skeleton)()
        graph.CopyFrom(skeleton)
        if strip:
            strip_interventions(graph, keep_last=True)
        # before gating: the rewrites check who reads each tensor, and gated hooks are read inside If branches
        rewrite_attention(graph, self.config.d_head)
        gate(graph, self.config.n_layer)
        return graph.SerializeToString()

    def _check_files(self) -> None:
        """Refuse to open a graph on weight files that were deleted or replaced since the model was opened:
        the skeleton's offsets would read another file's bytes."""
        for name, ident in self._file_ids.items():
            f = self.folder / name
            try:
                now = _identity(f)
            except OSError:
                raise ModelFolderError(f"{f} was moved or deleted after the model was opened; open the model "
                                       "again to use this") from None
            if now != ident:
                raise ModelFolderError(f"{f} changed on disk after the model was opened; open the model again "
                                       "to use this")

    @property
    def intervention_session(self):
        """The onnxruntime session of the graph with intervention inputs (opened on first use)."""
        if not self.supports_interventions:
            self.intervention_feeds((), 0, 1)  # raises the upgrade message
        if self._iv_session is None:
            self._check_files()
            self._iv_session = open_session(self._iv_blob, self._opts, self.device)
        return self._iv_session

    def ondemand_session(self, layer: int, family: str, keep: bool = True):
        """The session of block ``layer``'s ``"attn"`` or ``"mlp"`` sub-graph and the hooks it reads.

        ``keep`` False: a session opened for one run in the background (:meth:`OnDemand.prefetch`), on one thread
        and not kept, so that it neither takes a core from the GUI thread nor closes a kept session a view reads."""
        key = (layer, family)
        if not keep:  # a kept one as it is, its place among the kept untouched
            return self._ondemand_sessions.get(key) or self._open_ondemand(key, threads=1)
        if key not in self._ondemand_sessions:
            self._ondemand_sessions[key] = self._open_ondemand(key)
            # An MLP sub-graph holds its block's two weight matrices (19 MB on GPT-2 small, 67 MB on
            # gpt2-large); opening one again takes ~30 ms, so only the newest few are kept.
            while len(self._ondemand_sessions) > ONDEMAND_SESSIONS:
                self._ondemand_sessions.popitem(last=False)
        self._ondemand_sessions.move_to_end(key)
        return self._ondemand_sessions[key]

    def _open_ondemand(self, key: tuple[int, str], threads: int | None = None):
        self._check_files()
        # the cut first: prepare_ondemand (another thread) lets it go only after it stores the prepared graph
        blob, reads = self._cuts[key]
        opts = self._ondemand_opts(threads)
        prepared = self._prepared.get(key)
        if prepared is not None:
            blob = prepared
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return open_session(blob, opts, self.device), reads

    def prepare_ondemand(self, limit: int | None = None) -> bool:
        """Run up to ``limit`` (None: all) of the sub-graphs of :data:`PREPARED_FAMILIES` not yet prepared through
        onnxruntime's optimizer, so that :meth:`ondemand_session` opens them without it; True when none is left.

        ~30 ms each on a GPT-2-small-sized model; the app's worker prepares one at a time when idle. Only on the
        CPU: the CUDA provider's optimized graph would carry its own copy nodes, and it is not measured.
        """
        if self.device != "cpu":
            return True
        todo = [k for k in self._cuts if k[1] in PREPARED_FAMILIES and k not in self._prepared]
        for key in todo[:limit]:
            self._check_files()
            blob, reads = self._cuts[key]
            self._prepared[key] = optimized_graph(blob, self._ondemand_opts(), self.layout[1], self.folder)
            self._cuts[key] = (None, reads)
        return limit is None or len(todo) <= limit

    def _ondemand_opts(self, threads: int | None = None) -> ort.SessionOptions:
        # No memory arena: a sub-graph runs rarely, on [H, P, P] tensors (~50 MB each at 1000 tokens on
        # GPT-2 small); an arena per layer would keep its peak for good (measured: 24 sessions, +6 GB).

        opts = quiet_options(threads or self._opts.intra_op_num_threads)
        opts.enable_cpu_mem_arena = False
        # Nor pre-packed weights: packing a block's matrices is a third of opening its attention sub-graph
        # (13 -> 10 ms on a GPT-2-small-sized model; an MLP's 6 -> 2.5 ms), which a block click waits for,
        # and its runs were no faster with them (200 and 1,000 positions, measured side by side).
        opts.add_session_config_entry("session.disable_prepacking", "1")

        return session_options_for(self.folder, opts)

    def ondemand_hooks(self, positions: int, past_length: int) -> frozenset[str]:
        """Hooks a call of ``positions`` after ``past_length`` cached ones leaves to on-demand sub-graphs."""
        if past_length or positions < on_demand.ONDEMAND_FROM:  # read at call time: tests lower it
            return frozenset()
        return frozenset(block_hook(L, h) for L in range(self.config.n_layer) for h in ONDEMAND_HOOKS
                         if (L, family(h)) in self._cuts)

    def __repr__(self) -> str:
        on = "" if self.device == "cpu" else f", on {self.device}"
        return f"Model({self.name!r}, {self.n_params:,} params, {self.folder}{on})"

    def cache_may_stay(self, positions: int) -> bool:
        """Whether a released call's new KV cache of ``positions`` positions may stay in onnxruntime's arena
        (:data:`~gpt2viz.core.engine.memory.ARENA_KEEPS`) instead of being handed back to the system."""
        c = self.config
        return 2 * c.n_layer * c.n_head * positions * c.d_head * 4 <= ARENA_KEEPS

    def empty_cache(self) -> KVCache:
        """A cache with no positions, for a prefill."""
        c = self.config
        z = np.zeros((1, c.n_head, 0, c.d_head), dtype=np.float32)
        return KVCache(tuple((z, z) for _ in range(c.n_layer)))

    def to_tokens(self, prompt: str | Sequence[int]) -> list[int]:
        """Token ids of ``prompt`` (text is encoded with the folder's tokenizer; ids pass through).

        Unlike TransformerLens' ``to_tokens``, no ``<|endoftext|>`` is prepended: GPT-2 reads the text
        as typed, which is what the app shows.
        """
        if isinstance(prompt, str):
            return self.tokenizer.encode(prompt)
        return [int(t) for t in prompt]

    def run_with_cache(self, prompt: str | Sequence[int], names: Sequence[str] | None = None,
                       **options) -> tuple[np.ndarray, Trace]:
        """TransformerLens' ``run_with_cache``: the logits of every position [P, V] and the trace of hooks.

        ``names`` filters the hooks kept (TransformerLens' ``names_filter``, as a list of names); other
        ``options`` are a :class:`Plan`'s fields (``interventions=...``). The batch dimension is dropped:
        ``trace["pattern", 3]`` is [H, P, K], not [1, H, P, K].
        """
        plan = Plan.of(hooks=names, keep_all_logits=True, **options)
        trace, _ = self.run(self.to_tokens(prompt), plan=plan)
        return trace["logits"], trace

    def run_with_hooks(self, prompt: str | Sequence[int], interventions=(), **options) -> np.ndarray:
        """TransformerLens' ``run_with_hooks``, with interventions in place of hook functions: the logits
        of every position [P, V] with ``interventions`` (:mod:`gpt2viz.core.interventions`) applied
        inside the graph."""
        plan = Plan.of(hooks=(), keep_all_logits=True, interventions=tuple(interventions), **options)
        trace, _ = self.run(self.to_tokens(prompt), plan=plan)
        return trace["logits"]

    def run(self, input_ids: Sequence[int], past: KVCache | None = None, plan: Plan | None = None, *,
            progress=None, cancel=None, **options) -> tuple[Trace, KVCache]:
        """Run the positions ``input_ids`` after the cached ``past``; return their trace and the new cache.

        Parameters
        ----------
        input_ids : sequence of int
            Token ids for this call (the whole prompt for a prefill, one token for a step).
        past : KVCache, optional
            The cache of the positions before them; None for a prefill.
        plan : Plan, optional
            What to keep and change (:class:`~gpt2viz.core.engine.plan.Plan`); default every hook, no
            intervention.
        progress : callable, optional
            ``progress(done, total)`` after each chunk of positions.
        cancel : callable, optional
            Checked between chunks; when it returns True the call raises :class:`Cancelled`.
        **options
            A plan's fields given directly (``hooks=[...]``, ``interventions=(...)``, ...), over ``plan``.
        """
        plan = Plan.of(plan, **options)
        hooks, keep_all_logits, interventions = plan.hooks, plan.keep_all_logits, plan.interventions
        means, chunk, release = plan.means, plan.chunk, plan.release
        ids = [int(t) for t in input_ids]
        if not ids:
            raise ValueError("nothing to run: the prompt has no tokens")
        bad = [t for t in ids if not 0 <= t < self.config.vocab_size]
        if bad:
            raise ValueError(f"token id {bad[0]} is outside the vocabulary (size {self.config.vocab_size})")
        past = past if past is not None else self.empty_cache()
        total = past.length + len(ids)
        if total > self.config.n_positions:
            raise ContextLimitError(f"{total} tokens do not fit in {self.name}'s context of "
                                    f"{self.config.n_positions} positions")
        session = self.intervention_session if interventions else self.session
        shapes = hook_shapes(self.config.n_layer)
        ondemand = self.ondemand_hooks(len(ids), past.length) if hooks is None else frozenset()
        wanted = [h for h in (self.hook_names if hooks is None else dict.fromkeys(hooks)) if h not in ondemand]
        # The residual after block L is the tensor block L + 1 starts from: stored once, unless an
        # intervention at block L + 1's resid_pre makes its hook show another value.
        same = self._same_residuals(interventions, past.length, len(ids), means) if ondemand else {}
        wanted = [h for h in wanted if h not in same]
        # Only the last position's logits when that is all we keep: the LM head on P positions is a fifth
        # of a 1000-token prefill of GPT-2 small.
        last_only = not keep_all_logits and "logits" not in (hooks or ())  # every gated graph has last_logits
        if not plan.lm_head and not last_only:
            raise ValueError("a call without the LM head keeps no logits (keep_all_logits, or 'logits' asked for)")
        wanted = [h for h in wanted if h not in ("logits", "last_logits")] + \
            (["last_logits"] if last_only else ["logits"]) * plan.lm_head
        # [B, H, P, K] hooks of chunks do not join into the one-shot's [B, H, P, P]: those runs go in one call.
        positional = all("K" not in shapes.get(h, "") for h in wanted)
        size = CHUNK if chunk is None else (int(chunk) or len(ids))
        if len(ids) <= size or not positional:
            spans = [(0, len(ids))]
        else:
            spans, s = [], 0
            while s < len(ids):
                n = size if chunk is not None else self._positions_within(CALL_BYTES, past.length + s + size, size,
                                                                          wanted)
                spans.append((s, min(s + n, len(ids))))
                s = spans[-1][1]
        # Each chunk's hooks go straight into arrays of the whole run's size: joining the chunks at the
        # end held every hook twice (measured: +0.4 GB at 1000 tokens on GPT-2 small).
        merged: dict[str, np.ndarray] = {}
        cache = past
        if release is None:
            release = len(ids) >= TRIM_FROM
        # A released call writes what it keeps into arrays of its own (see _call); intervention inputs are
        # inputs with defaults, which onnxruntime's IO binding cannot feed, so those calls copy at the end.
        own = release and not interventions
        # The arena is shrunk at the end of the last chunk itself when nothing it keeps lives there (``own``), or when
        # what does (the new cache, the last chunk's hooks) is small enough to stay; else one more call does it.
        shrink_last = release and (own or self.cache_may_stay(total))
        # Chunks write their caches into two blocks of the final cache's size by turns (each chunk reads
        # the other's): their pages are touched once, not once per chunk (a new block each time cost
        # ~0.1 s of page faults over a 1000-token prefill on GPT-2 small).
        c = self.config
        in_place = own and len(spans) > 1
        turns = [np.empty(2 * c.n_layer * c.n_head * total * c.d_head, np.float32) for _ in range(2)] \
            if in_place else [None, None]
        if in_place:
            # ...and write their kept hooks straight into the run's arrays, one block for all of them: a
            # chunk's rows of a [1, P, ...] hook are contiguous, so no chunk's copy is made and copied again
            # (76 MB less copying at 1000 tokens on GPT-2 small; its time was within the machine's noise).
            merged = self._blocks([w for w in wanted if w not in ("logits", "last_logits")], len(ids), total)
        for i, (s, e) in enumerate(spans):
            if cancel is not None and cancel():
                raise Cancelled("cancelled")
            part = ids[s:e]
            names = wanted if e >= len(ids) else [w for w in wanted if w not in ("logits", "last_logits")
                                                  or keep_all_logits]
            rows = {k: a[:, s:e] for k, a in merged.items()} if in_place else None
            shrink = self._shrinking() if shrink_last and e >= len(ids) else None
            got, cache = self._call(session, part, cache, names, interventions, means, shrink, own=own,
                                    into=turns[i % 2], rows=rows)
            for k, v in got.items():
                if rows is not None and k in rows:
                    continue  # written in place
                if len(spans) == 1 or (k in ("logits", "last_logits") and not keep_all_logits):
                    merged[k] = v  # one call, or the last chunk's logits
                    continue
                # every hook kept from a chunked run is positional ([B, P, ...]); K-shaped ones are on demand
                axis = shapes.get(k, "B P").split().index("P")
                if k not in merged:
                    shape = list(v.shape)
                    shape[axis] = len(ids)
                    merged[k] = np.empty(shape, dtype=v.dtype)
                where = [slice(None)] * v.ndim
                where[axis] = slice(s, s + v.shape[axis])
                merged[k][tuple(where)] = v
            del got
            if progress is not None:
                progress(e, len(ids))
        del turns  # the block the last chunk did not write goes now
        od = None
        if ondemand:
            od = on_demand.OnDemand(self, self.config.n_layer, len(ids), cache, interventions, means)
            od.names = ondemand
        if release:
            # What the call keeps was written into arrays of our own (see _call), so the arena holds only
            # the temporaries of the call's peak: shrunk (see _release_arena). Under interventions the
            # outputs came from the arena: owned copies first, or their regions stay pinned.
            if interventions:
                merged = {k: v if v.flags.owndata else np.array(v) for k, v in merged.items()}
                cache = KVCache(tuple((np.array(k), np.array(v)) for k, v in cache.layers))
                if od is not None:
                    od.past = cache
            if not shrink_last:
                self._release_arena(session)
            trim_heap()
        for post, pre in same.items():  # after any copy: one array under both names
            merged[post] = merged[pre]
        trace = Trace.from_outputs(ids, past.length, merged, keep_all_logits, od)
        return trace, cache

    def _shrinking(self) -> ort.RunOptions:
        """Run options that hand back, when the call ends, the arena's regions no live tensor uses."""
        ro = ort.RunOptions()
        # on CUDA the call's temporaries are in the GPU's arena; the CPU's still holds what it fed and copied back
        ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0;gpu:0" if self.device == "cuda"
                                else "cpu:0")
        return ro

    def _release_arena(self, session) -> None:
        """Give the memory ``session``'s arena holds for no tensor back to the system.

        Every hook is a graph output, and onnxruntime never reuses a graph output's buffer within a
        call, asked for or not: a call's peak holds every hook of its positions (a 128-position chunk
        after 872 cached ones on GPT-2 small: ~0.2 GB), and the arena keeps that peak for good
        (measured: 0.49 GB held after a 1000-token prefill, 0.26 GB with this). onnxruntime shrinks an
        arena only at the end of a call run with ``memory.enable_memory_arena_shrinkage``, and only
        its regions that no live tensor uses. A call whose outputs are arrays of our own (``own``), or whose cache
        may stay (:data:`ARENA_KEEPS`), runs its last chunk with that option itself; a call under interventions
        with a larger cache (outputs from the arena, copied once it ends) is followed by this: one position with
        no cache, a whole forward pass (~15 ms on GPT-2 small)."""
        self._call(session, [0], self.empty_cache(), ["last_logits"], (), None, self._shrinking())

    def _same_residuals(self, interventions, start: int, length: int, means) -> dict[str, str]:
        """``blocks.L.hook_resid_post`` -> ``blocks.{L+1}.hook_resid_pre`` wherever both show the same tensor."""
        moved = set(self.intervention_feeds(interventions, start, length, means)) if interventions else set()
        return {block_hook(L, "hook_resid_post"): block_hook(L + 1, "hook_resid_pre")
                for L in range(self.config.n_layer - 1)
                if not {scale_input(L + 1, "hook_resid_pre"), shift_input(L + 1, "hook_resid_pre")} & moved}

    def _positions_within(self, budget: int, keys: int, most: int, wanted) -> int:
        """How many positions a call returning ``wanted`` and attending to ``keys`` keys can run with every
        output it makes under ``budget`` bytes (at least 16, at most ``most``)."""
        L = self.config.n_layer
        skipped = skipped_outputs(wanted, L)
        per = sum(int(np.prod(concrete_shape(letters, self.config, 1, keys))) * 4
                  for name, letters in hook_shapes(L).items() if name not in skipped)
        return max(min(16, most), min(most, budget // per))

    def _blocks(self, names, positions: int, keys: int) -> dict[str, np.ndarray]:
        """Arrays for the positional hooks ``names`` of a run of ``positions`` positions, carved from one block
        (one allocation, freed at once)."""
        shapes = hook_shapes(self.config.n_layer)
        dims = [concrete_shape(shapes[n], self.config, positions, keys) for n in names]
        if any(d[0] != 1 or shapes[n].split()[1] != "P" for n, d in zip(names, dims)):
            raise ValueError(f"not [1, P, ...] hooks: {names}")
        sizes = [int(np.prod(d)) for d in dims]
        block = np.empty(sum(sizes), np.float32)
        offsets = np.cumsum([0, *sizes])
        return {n: block[o:o + z].reshape(d) for n, d, o, z in zip(names, dims, offsets, sizes)}

    def _call(self, session, ids, past: KVCache, wanted, interventions, means, run_options=None, own=False,
              into=None, rows=None):
        """One onnxruntime call of ``ids`` after ``past``: the ``wanted`` outputs and the new cache.

        ``own``: the outputs and the new cache are written into arrays allocated here (the cache as one
        block) instead of onnxruntime's arena. A graph output handed over from the arena pins its region
        for as long as it lives; a long prefill's cache, the largest output and the longest-lived, then
        grew the arena by about a cache per chunk (a 1024-token prefill of a gpt2-medium-sized model:
        +0.11 GB per chunk of 128 positions). ``into``: a flat float32 array to write the cache at the front
        of (at least as large as the new cache; not the past's own memory). ``rows``: contiguous arrays to
        write some of the ``wanted`` outputs into (a chunk's rows of the run's arrays)."""
        total = past.length + len(ids)
        feed = self._feed(ids, past)
        if interventions:
            feed.update(self.intervention_feeds(interventions, past.length, len(ids), means))
        feed.update(self.gate_feeds(wanted))
        n_layer = self.config.n_layer
        present_names = [f"present.{L}.{kv}" for L in range(n_layer) for kv in ("key", "value")]
        if not own:
            values = session.run(list(wanted) + present_names, feed, run_options)
            pres = values[len(wanted):]
            cache = KVCache(tuple((pres[2 * L], pres[2 * L + 1]) for L in range(n_layer)))
            return dict(zip(wanted, values[: len(wanted)])), cache

        c, shapes = self.config, hook_shapes(n_layer)
        binding = session.io_binding()
        for name, value in feed.items():
            binding.bind_cpu_input(name, np.ascontiguousarray(value))
        out = {}
        for name in wanted:
            shape = (1, 1, c.vocab_size) if name == "last_logits" else concrete_shape(shapes[name], c, len(ids), total)
            given = (rows or {}).get(name)
            if given is not None and (given.shape != tuple(shape) or not given.flags.c_contiguous):
                raise ValueError(f"{name}: rows of shape {given.shape} for an output of shape {tuple(shape)}")
            out[name] = np.empty(shape, np.float32) if given is None else given
        shape = (n_layer, 2, 1, c.n_head, total, c.d_head)
        size = int(np.prod(shape))
        # one block, freed at once; or the front of ``into`` (see run: two blocks take turns)
        block = (np.empty(size, np.float32) if into is None else into[:size]).reshape(shape)
        for i, name in enumerate(present_names):
            out[name] = block[i // 2, i % 2]
        for name, a in out.items():
            binding.bind_output(name, "cpu", 0, np.float32, list(a.shape), a.ctypes.data)
        session.run_with_iobinding(binding, run_options)
        cache = KVCache(tuple((block[L, 0], block[L, 1]) for L in range(n_layer)))
        return {name: out[name] for name in wanted}, cache

    def _feed(self, ids, past: KVCache, batch: int = 1) -> dict[str, np.ndarray]:
        """The graph's own inputs for ``ids`` after ``past``, ``batch`` identical rows: the one place a feed is
        built (ids, the mask and positions when the graph takes them, the past keys and values)."""
        total = past.length + len(ids)
        feed = {"input_ids": np.tile(np.asarray([ids], dtype=np.int64), (batch, 1))}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = np.ones((batch, total), dtype=np.int64)
        if "position_ids" in self._inputs:
            feed["position_ids"] = np.tile(np.arange(past.length, total, dtype=np.int64)[None, :], (batch, 1))
        for layer, (k, v) in enumerate(past.layers):
            # a single row feeds the cache as it is (no copy: a long prefill's cache is hundreds of MB)
            feed[f"past_key_values.{layer}.key"] = k if batch == 1 else np.repeat(k, batch, axis=0)
            feed[f"past_key_values.{layer}.value"] = v if batch == 1 else np.repeat(v, batch, axis=0)
        return feed

    def run_batch(self, input_ids: Sequence[int], past: KVCache, edits, batch: int, extra=None) -> np.ndarray:
        """Last-position logits [batch, V] of ``batch`` copies of one call, each row changed on its own.

        The batched call behind activation patching and causal tracing: every row runs ``input_ids``
        after ``past``, and ``edits`` maps (layer, hook) of an intervention hook
        (:data:`gpt2viz.core.hooks.INTERVENTION_HOOKS`) to ``(scale, shift)`` arrays [batch, P, ...] that
        the graph applies there as ``x * scale + shift`` (the intervention inputs). Only the last
        position's logits are computed: no hook is copied out. ``extra`` are more graph inputs by name, the same
        for every row (:meth:`intervention_feeds` of interventions in force in all of them: a model edit's
        weights, an ablation); a positional one of batch 1 is repeated for the rows.
        """
        ids = [int(t) for t in input_ids]
        session = self.intervention_session  # raises the upgrade message for an older folder
        feed = self._feed(ids, past, batch)
        for name, value in (extra or {}).items():
            is_hook_input = name.endswith((".scale", ".shift")) and value.ndim >= 2 and value.shape[0] == 1
            feed[name] = np.ascontiguousarray(np.broadcast_to(value, (batch, *value.shape[1:]))) \
                if is_hook_input and batch > 1 else value
        for (layer, hook), (scale, shift) in edits.items():
            b = lambda a: np.ascontiguousarray(np.broadcast_to(a, (batch, *a.shape[1:])))
            feed[scale_input(layer, hook)], feed[shift_input(layer, hook)] = b(scale), b(shift)
        feed.update(self.gate_feeds([LAST_LOGITS]))
        return session.run([LAST_LOGITS], feed)[0][:, -1]

    def gate_feeds(self, wanted) -> dict[str, np.ndarray]:
        """What a call returning the outputs ``wanted`` feeds the gated graph (``gpt2viz.core.graph.gating``): the
        hooks and all-position logits it does not return are not computed."""
        return gate_feeds(wanted, self.config.n_layer)

    def intervention_feeds(self, interventions, start: int, length: int, means=None) -> dict:
        """Checked graph inputs for ``interventions`` over positions ``start .. start+length-1``."""
        if not self.supports_interventions:
            raise InterventionError(f"{self.folder} was exported before gpt2viz supported interventions: "
                                    f"upgrade it with `gpt2viz export {self.folder} --upgrade` or export it again")
        validate(interventions, self.config)
        out = feeds(interventions, start, length, self.config, means)
        edits = tuple(iv for iv in interventions if isinstance(iv, RankOneEdit))
        if edits:
            if not self._edit_weights:
                raise InterventionError(f"{self.folder}'s graph has no MLP output weight gpt2viz can feed: "
                                        "model edits need a GPT-2 exported by gpt2viz")
            out.update(self._edited_weights(edits))
        return out

    def _edited_weights(self, edits: tuple) -> dict[str, np.ndarray]:
        """The MLP output weights with ``edits`` added, by input name. The newest set is kept: every step of a
        generation feeds the same edits, and the same objects compare equal at once (no outer product per step)."""
        if edits != self._edited_for:
            if self._weights is None:
                self._weights = Weights.of(self)
            self._edited = {self._edit_weights[L]: np.ascontiguousarray(
                self._weights.get(self._edit_weights[L]) + d, dtype=np.float32) for L, d in weight_edits(edits).items()}
            self._edited_for = edits
        return self._edited


def _identity(path: Path) -> tuple[int, int, int]:
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


