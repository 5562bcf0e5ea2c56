"""Save a generation's numbers so a figure can be reproduced in a notebook: one .npz and one .json."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from gpt2viz.core.analysis.attribution import attribute, attribution_json
from gpt2viz.core.engine.weights import Weights
from gpt2viz.core.hooks import hook_shapes
from gpt2viz.core.interventions import describe as _describe
from gpt2viz.core.model_folder.files import StagedFiles


def full_context_hooks(history) -> dict[str, np.ndarray]:
    """Every hook over the whole text, as if one prefill had computed it.

    Position hooks are joined along P; attention hooks become [H, n, n] with the masked future as 0
    (pattern) or NaN (scores). ``logits`` is the last position only, [V], as the app keeps it.
    """
    frames = history.frames
    names = [n for n in frames[0].trace.hooks if n != "logits"]
    shapes = hook_shapes(max(int(n.split(".")[1]) for n in names if n.startswith("blocks.")) + 1)
    n = len(history.tokens)
    out: dict[str, np.ndarray] = {}
    for name in names:
        letters = shapes[name].split()[1:]
        parts = [f.trace[name] for f in frames]
        if "K" not in letters:
            out[name] = np.concatenate(parts, axis=letters.index("P"))
            continue
        fill = 0.0 if name.endswith("hook_pattern") else np.nan
        h = parts[0].shape[0]
        full = np.full((h, n, n), fill, dtype=np.float32)
        for f, part in zip(frames, parts):
            s, p, k = f.trace.start, part.shape[1], part.shape[2]
            full[:, s:s + p, :k] = part
            if np.isnan(fill):  # scores exist for future keys inside a prefill; blank them like later rows
                rows = np.arange(s, s + p)[:, None]
                full[:, s:s + p, :k][:, np.arange(k)[None, :] > rows] = np.nan
        out[name] = full
    out["logits_last"] = history.current.logits
    return out


def describe(iv) -> dict:
    return _describe(iv)


def export_trace(history, model, settings, npz_path: Path, force: bool = False,
                 weights=None) -> tuple[Path, Path]:
    """Write ``npz_path`` (every hook) and the JSON beside it (tokens, ids, settings, model, hash).

    ``weights`` (the session's already-read :class:`Weights`) is used for the attribution; without it
    they are read from the model folder.

    Both files appear together or neither does (a full disk half way leaves nothing behind).
    """
    npz_path = Path(npz_path)
    json_path = npz_path.with_suffix(".json")
    arrays = full_context_hooks(history)
    attribution = _attribution(history, model, arrays, weights)
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    tok = model.tokenizer
    meta = {
        "tokens": [tok.token_text(t) for t in history.tokens], "ids": list(history.tokens),
        "prompt_length": history.prompt_len, "text": tok.decode(list(history.tokens)),
        "settings": {"temperature": settings.temperature, "top_k": settings.top_k, "top_p": settings.top_p,
                     "seed": settings.seed},
        "model": {"name": model.name, "folder": str(model.folder), "config": model.manifest.get("config"),
                  "files_sha256": model.manifest.get("files", {})},
        "arrays": {k: list(v.shape) for k, v in arrays.items()},
        "attribution": attribution,
        # what was changed inside the graph for these numbers (every hook shows values after it)
        "interventions": [describe(iv) for iv in history.current.interventions],
        "note": "attention hooks are [H, query, key] over the whole text; future keys are 0 (pattern) or NaN (scores). "
                "Each LayerNorm's hook_normalized is its value before the weight and bias and hook_scale its divisor, "
                "as in TransformerLens (gpt2viz's docs/hooks.md)",
    }
    with StagedFiles(npz_path.parent if str(npz_path.parent) else Path("."), force) as staged:
        staged.write(npz_path.name, buf.getvalue())
        staged.write(json_path.name, json.dumps(meta, indent=1, ensure_ascii=False).encode("utf-8"))
    return npz_path, json_path


def _attribution(history, model, arrays: dict, weights=None) -> dict | None:
    """Direct logit attribution of the model's top-1 next token: arrays into ``arrays``, the summary returned."""
    cfg = model.config
    try:
        w = weights or Weights.of(model)
        a = attribute(history, w, cfg.n_layer, cfg.n_head)
    except KeyError:  # a history run with only some hooks kept: nothing to attribute
        return None
    for name in ("heads", "attn_bias", "mlp", "by_source", "neurons", "mlp_out_bias"):
        arrays[f"attribution.{name}"] = getattr(a, name)
    js = attribution_json(a, model.tokenizer)
    del js["by_source"]  # [L, H, K] values are in the .npz as attribution.by_source; as JSON objects it is huge
    js["arrays"] = "attribution.* in the .npz: heads [L, H], by_source [L, H, K], neurons [L, M], attn_bias, mlp, " \
                   "mlp_out_bias [L]"
    return js
