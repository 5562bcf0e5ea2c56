"""SAELens' folder format, read and written: ``cfg.json`` + ``sae_weights.safetensors`` (+ ``sparsity.safetensors``).

``cfg.json`` as SAELens 6 writes it (``SAEConfig.to_dict``): d_in, d_sae, dtype, device, apply_b_dec_to_input,
normalize_activations, reshape_activations, architecture (+ ``k`` for topk) and ``metadata`` with hook_name /
hook_head_index. Older files say ``hook_point`` / ``hook_point_head_index`` (or a top-level ``hook_name``) and may
give the activation as ``activation_fn_str`` (+ ``activation_fn_kwargs.k``) instead of ``architecture``: both read.
Only safetensors are read: a pickle can run code, a weights file cannot.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np

from gpt2viz.core.features.sae import SAE, SAEConfig, SAEError

CFG_FILE = "cfg.json"
WEIGHTS_FILE = "sae_weights.safetensors"
SPARSITY_FILE = "sparsity.safetensors"

# Keys of cfg.json that SAEConfig holds in its own fields, in any SAELens version; the rest goes to ``extra``.
_OWN_KEYS = ("d_in", "d_sae", "architecture", "k", "apply_b_dec_to_input", "normalize_activations", "dtype",
             "metadata", "hook_name", "hook_point", "hook_layer", "hook_point_layer", "hook_head_index",
             "hook_point_head_index", "activation_fn_str", "activation_fn_kwargs", "reshape_activations", "device")
# Older SAELens files name the activation instead of the architecture.
_ACTIVATION_ARCH = {"relu": "standard", "topk": "topk", "jumprelu": "jumprelu"}


def parse_cfg(raw: dict) -> SAEConfig:
    """An :class:`SAEConfig` from the dict in ``cfg.json`` (any SAELens version); SAEError when it lacks a field."""
    meta = dict(raw.get("metadata") or {})
    hook = meta.get("hook_name") or raw.get("hook_name") or raw.get("hook_point")
    if not hook:
        raise SAEError("cfg.json names no hook (metadata.hook_name, or hook_point in older files)")
    head = meta.get("hook_head_index")
    for key in ("hook_head_index", "hook_point_head_index"):
        if head is None:
            head = raw.get(key)
    arch = raw.get("architecture")
    kwargs = raw.get("activation_fn_kwargs") or {}
    if arch is None:
        fn = raw.get("activation_fn_str", "relu")
        if fn not in _ACTIVATION_ARCH:
            raise SAEError(f"cfg.json's activation {fn!r} is not supported (only relu, topk, jumprelu)")
        arch = _ACTIVATION_ARCH[fn]
    k = raw.get("k", kwargs.get("k"))
    try:
        d_in, d_sae = int(raw["d_in"]), int(raw["d_sae"])
    except KeyError as e:
        raise SAEError(f"cfg.json lacks {e.args[0]}") from None
    meta.pop("hook_name", None), meta.pop("hook_head_index", None)  # held by the config's own fields
    return SAEConfig(d_in=d_in, d_sae=d_sae, architecture=str(arch), hook_name=str(hook),
                     hook_head_index=None if head is None else int(head), k=None if k is None else int(k),
                     apply_b_dec_to_input=bool(raw.get("apply_b_dec_to_input", True)),
                     normalize_activations=str(raw.get("normalize_activations") or "none"),
                     dtype=str(raw.get("dtype", "float32")), metadata=meta,
                     extra={key: v for key, v in raw.items() if key not in _OWN_KEYS})


def cfg_dict(cfg: SAEConfig) -> dict:
    """The ``cfg.json`` SAELens 6 writes for ``cfg`` (its ``SAEConfig.to_dict`` keys)."""
    z = cfg.hook_name.endswith("hook_z") and cfg.hook_head_index is None
    out = {"d_in": cfg.d_in, "d_sae": cfg.d_sae, "dtype": "float32", "device": "cpu",
           "apply_b_dec_to_input": cfg.apply_b_dec_to_input, "normalize_activations": cfg.normalize_activations,
           "reshape_activations": "hook_z" if z else "none",
           "metadata": {**cfg.metadata, "hook_name": cfg.hook_name, "hook_head_index": cfg.hook_head_index},
           "architecture": cfg.architecture}
    if cfg.architecture == "topk":
        out["k"] = cfg.k
    return {**cfg.extra, **out}


def _read_tensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as numpy; bfloat16 (which numpy lacks) widened to float32."""
    from safetensors.numpy import load_file

    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        if not any(isinstance(v, dict) and v.get("dtype") == "BF16" for v in header.values()):
            return load_file(str(path))
        data = f.read()
    out = {}
    for name, v in header.items():
        if name == "__metadata__":
            continue
        s, e = v["data_offsets"]
        if v["dtype"] != "BF16":
            raise SAEError(f"{path} mixes bfloat16 with {v['dtype']}: not supported")
        bits = np.frombuffer(data[s:e], dtype="<u2").astype(np.uint32) << 16  # bfloat16 is float32's top half
        out[name] = bits.view(np.float32).reshape(v["shape"])
    return out


def read_sae(folder: str | Path) -> SAE:
    """Read an SAE folder (SAELens' format).

    Parameters
    ----------
    folder : str or Path
        Holding ``cfg.json`` and ``sae_weights.safetensors`` (and optionally ``sparsity.safetensors``).

    Returns
    -------
    SAE

    Raises
    ------
    SAEError
        One line: a missing or malformed file, an unsupported architecture or normalisation, wrong shapes.
    """
    folder = Path(folder)
    if not (folder / CFG_FILE).is_file():
        raise SAEError(f"{folder} is not an SAE folder: it has no {CFG_FILE}")
    weights = folder / WEIGHTS_FILE
    if not weights.is_file():
        others = sorted(p.name for p in folder.glob("*.pt*")) + sorted(p.name for p in folder.glob("*.bin"))
        raise SAEError(f"{folder} has no {WEIGHTS_FILE}" + (f" (only {others[0]}: gpt2viz reads safetensors only, "
                                                             "never pickles)" if others else ""))
    try:
        raw = json.loads((folder / CFG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SAEError(f"{folder / CFG_FILE} is unreadable: {e}") from None
    if not isinstance(raw, dict):
        raise SAEError(f"{folder / CFG_FILE} is not a JSON object")
    cfg = parse_cfg(raw)
    try:
        t = _read_tensors(weights)
    except SAEError:
        raise
    except Exception as e:  # noqa: BLE001 - a damaged file: say which, in one line
        raise SAEError(f"{weights} is not a readable safetensors file ({type(e).__name__}: {e})") from None
    missing = [n for n in ("W_enc", "W_dec", "b_enc", "b_dec") if n not in t]
    if missing:
        raise SAEError(f"{weights} lacks {', '.join(missing)}")
    threshold = t.get("threshold")
    if threshold is None and "log_threshold" in t:  # SAELens' JumpReLU training parameter
        threshold = np.exp(t["log_threshold"])
    sparsity = None
    if (folder / SPARSITY_FILE).is_file():
        s = _read_tensors(folder / SPARSITY_FILE)
        sparsity = s.get("sparsity", next(iter(s.values()), None))
    return SAE(cfg, t["W_enc"], t["W_dec"], t["b_enc"], t["b_dec"], threshold, sparsity, folder.resolve())


def write_sae(sae: SAE, folder: str | Path, *, force: bool = False) -> Path:
    """Write ``sae`` as an SAELens folder (float32); ``sparsity.safetensors`` too when its sparsity is known.

    An existing folder is replaced only with ``force`` (SAEError otherwise). Returns the folder.
    """
    from safetensors.numpy import save_file

    folder = Path(folder)
    if folder.exists():
        if not force:
            raise SAEError(f"{folder} exists: choose another folder or replace it (--force)")
        if not (folder / CFG_FILE).is_file() and any(folder.iterdir()):
            raise SAEError(f"{folder} is not empty and not an SAE folder: not replacing it")
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    tensors = {"W_enc": sae.W_enc, "W_dec": sae.W_dec, "b_enc": sae.b_enc, "b_dec": sae.b_dec}
    if sae.cfg.architecture == "jumprelu":
        tensors["threshold"] = sae.threshold
    save_file({k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()}, str(folder / WEIGHTS_FILE))
    if sae.sparsity is not None:
        save_file({"sparsity": np.ascontiguousarray(sae.sparsity, np.float32)}, str(folder / SPARSITY_FILE))
    (folder / CFG_FILE).write_text(json.dumps(cfg_dict(sae.cfg), indent=2) + "\n", encoding="utf-8")
    # safetensors creates its files owner-only (0600); an SAE is data to share, like cfg.json beside it
    umask = os.umask(0)
    os.umask(umask)
    for name in (WEIGHTS_FILE, SPARSITY_FILE):
        if (folder / name).is_file():
            os.chmod(folder / name, 0o666 & ~umask)
    return folder
