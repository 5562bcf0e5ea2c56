"""Activation patching as a whole table: copy one state of a clean run into a corrupted run.

For a site (resid_pre | attn_out | mlp_out) the table has one cell per (layer, position): the target's
probability when that state of the corrupted run is replaced by the clean run's, and the normalised
effect (p_patched - p_corrupt) / (p_clean - p_corrupt) (TransformerLens' patching metric).
For the head site the cells are (layer, head): that head's z replaced at every position.

What is reused: a patch at position p leaves positions before p untouched (causal attention), so a
cell runs only positions p..P-1 on top of the corrupted run's cache truncated to p; all layers of one
position go in one call as a batch; only the last position's logits are asked for (`last_logits`),
so onnxruntime skips every hook and the LM head on the other positions. Layers below the patched one
are recomputed (one graph; the batch makes that cheap).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.engine.errors import Cancelled
from gpt2viz.core.hooks import block_hook
from gpt2viz.core.interventions import SITES, InterventionError
from gpt2viz.core.numeric import softmax

TABLE_SITES = ("resid_pre", "attn_out", "mlp_out", "head")


@dataclass(frozen=True)
class PatchingTable:
    """The result of :func:`patching_table`.

    Attributes
    ----------
    site : str
    target : int
        Target token id.
    columns : str
        What the columns are: "position" for resid_pre/attn_out/mlp_out, "head" for head (rows are layers).
    prob : np.ndarray
        [layers, positions] (or [layers, heads]) target probability after patching.
    metric : np.ndarray
        Same shape: (prob - corrupt_prob) / (clean_prob - corrupt_prob).
    clean_prob, corrupt_prob : float
    ms : float
        Wall time of the whole table.
    calls : int
        Model calls made.
    """

    site: str
    target: int
    columns: str
    prob: np.ndarray
    metric: np.ndarray
    clean_prob: float
    corrupt_prob: float
    ms: float
    calls: int


def patching_table(model, clean_ids, corrupt_ids, target: int, site: str, *,
                   progress: Callable[[int, int], None] | None = None,
                   cancel: Callable[[], bool] | None = None) -> PatchingTable:
    """Patch every (layer, position) of ``site`` from the clean run into the corrupted run.

    Parameters
    ----------
    model : gpt2viz.core.engine.model.Model
        A model folder of format 2 (with intervention inputs).
    clean_ids, corrupt_ids : sequence of int
        Two prompts of the same number of tokens.
    target : int
        The token whose probability at the last position is measured.
    site : str
        resid_pre | attn_out | mlp_out (cells: layer x position) or head (cells: layer x head, the
        head's z patched at every position).
    progress : callable(done, total), optional
        Called after each model call.
    cancel : callable() -> bool, optional
        Polled before each call; when it returns True, :class:`Cancelled` is raised.

    Returns
    -------
    PatchingTable
    """
    clean_ids, corrupt_ids = [int(t) for t in clean_ids], [int(t) for t in corrupt_ids]
    if site not in TABLE_SITES:
        raise InterventionError(f"site must be one of {', '.join(TABLE_SITES)}, not {site!r}")
    if len(clean_ids) != len(corrupt_ids):
        raise InterventionError(f"the clean prompt has {len(clean_ids)} tokens and the corrupted one "
                                f"{len(corrupt_ids)}: patching needs equal lengths")
    if not 0 <= int(target) < model.config.vocab_size:
        raise InterventionError(f"target id {target} is outside the vocabulary")
    model.intervention_session  # opened now: raises the upgrade message for an older folder before any run
    c = model.config
    n_layer, P = c.n_layer, len(clean_ids)
    hook = SITES[site]
    t0 = time.perf_counter()
    names = [block_hook(L, hook) for L in range(n_layer)]
    clean, _ = model.run(clean_ids, hooks=names)
    corrupt, corrupt_cache = model.run(corrupt_ids, hooks=[])
    p_clean = float(softmax(clean.last_logits)[target])
    p_corrupt = float(softmax(corrupt.last_logits)[target])

    calls = 2
    if site == "head":
        H, D = c.n_head, c.d_head
        prob = np.zeros((n_layer, H))
        total = n_layer
        empty = model.empty_cache()
        for L in range(n_layer):
            if cancel and cancel():
                raise Cancelled()
            z = clean["z", L]  # [P, H, D]
            scale = np.ones((H, P, H, 1), np.float32)
            shift = np.zeros((H, P, H, D), np.float32)
            for h in range(H):  # batch row h patches head h at every position
                scale[h, :, h] = 0.0
                shift[h, :, h] = z[:, h]
            logits = model.run_batch(corrupt_ids, empty, {(L, hook): (scale, shift)}, H)
            prob[L] = softmax(logits)[:, target]
            calls += 1
            if progress:
                progress(L + 1, total)
        columns = "head"
    else:
        E = c.n_embd
        prob = np.zeros((n_layer, P))
        for p in range(P):
            if cancel and cancel():
                raise Cancelled()
            past = corrupt_cache.truncated(p)
            n = P - p
            edits = {}
            for L in range(n_layer):  # batch row L patches layer L at position p (row 0 of this call)
                scale = np.ones((n_layer, n, 1), np.float32)
                shift = np.zeros((n_layer, n, E), np.float32)
                scale[L, 0] = 0.0
                shift[L, 0] = clean[hook, L][p]
                edits[(L, hook)] = (scale, shift)
            logits = model.run_batch(corrupt_ids[p:], past, edits, n_layer)
            prob[:, p] = softmax(logits)[:, target]
            calls += 1
            if progress:
                progress(p + 1, P)
        columns = "position"
    denom = p_clean - p_corrupt
    metric = (prob - p_corrupt) / denom if abs(denom) > 1e-12 else np.full_like(prob, np.nan)
    return PatchingTable(site, int(target), columns, prob, metric, p_clean, p_corrupt,
                         (time.perf_counter() - t0) * 1000, calls)


def table_json(table: PatchingTable, tokenizer, clean_ids, corrupt_ids) -> dict:
    """The `gpt2viz patch --json` object."""
    tok = lambda ids: [tokenizer.token_text(int(t)) for t in ids]  # noqa: E731
    n_layer = table.prob.shape[0]
    cols = list(range(table.prob.shape[1]))
    return {"site": table.site, "target_id": table.target, "target": tokenizer.token_text(table.target),
            "tokens": {"clean": tok(clean_ids), "corrupt": tok(corrupt_ids)}, "layers": list(range(n_layer)),
            "positions" if table.columns == "position" else "heads": cols,
            **({"positions": list(range(len(clean_ids)))} if table.columns == "head" else {}),
            "columns": table.columns,
            "prob": table.prob.tolist(), "metric": [[None if np.isnan(x) else float(x) for x in row] for row in table.metric],
            "clean_prob": table.clean_prob, "corrupt_prob": table.corrupt_prob, "ms": round(table.ms, 2),
            "calls": table.calls}


def format_table(table: PatchingTable, tokenizer, clean_ids, corrupt_ids) -> str:
    """The table as text: one row per layer, the normalised effect per column, and the best cell."""
    lines = [f"patching {table.site}: target {tokenizer.token_display(table.target)}  "
             f"p(clean) {table.clean_prob:.4f}  p(corrupt) {table.corrupt_prob:.4f}  "
             f"({table.calls} calls, {table.ms:.0f} ms)",
             "normalised effect (p_patched - p_corrupt) / (p_clean - p_corrupt):"]
    if table.columns == "position":
        heads = [f"{tokenizer.token_display(int(a))}/{tokenizer.token_display(int(b))}" if a != b
                 else tokenizer.token_display(int(a)) for a, b in zip(clean_ids, corrupt_ids)]
    else:
        heads = [f"head {h}" for h in range(table.prob.shape[1])]
    w = max(8, *(len(h) for h in heads)) + 1
    lines.append("layer " + "".join(f"{h:>{w}}" for h in heads))
    for L, row in enumerate(table.metric):
        lines.append(f"{L:5d} " + "".join(f"{x:>{w}.3f}" for x in row))
    L, c = np.unravel_index(np.nanargmax(table.metric), table.metric.shape)
    lines.append(f"best: layer {L}, {table.columns} {c} ({heads[c]}): p = {table.prob[L, c]:.4f}, "
                 f"effect {table.metric[L, c]:.3f}")
    return "\n".join(lines)
