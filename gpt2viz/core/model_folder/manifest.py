"""The model folder's manifest (`gpt2viz.json`) and the checks made when a folder is opened."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from gpt2viz.core.config import ModelConfig

FORMAT = "gpt2viz-model"
# 2: intervention inputs (`blocks.{L}.{hook}.scale|shift`) and the `last_logits` output. Version 1 folders
# still open and run; asking them for an intervention says how to upgrade them (`gpt2viz export DIR --upgrade`).
# 3: the LayerNorm hooks hold what TransformerLens holds: `*.hook_normalized` before the weight and bias,
# and `*.hook_scale`. Version 1 and 2 folders (whose `hook_normalized` is the LayerNorm's output) get the
# same hooks in memory when opened (gpt2viz.core.graph.surgery.add_layernorm_hooks); what they lack is the
# export-time check of those hooks, which `gpt2viz export DIR --upgrade` makes and records.
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
MANIFEST = "gpt2viz.json"
MODEL_FILE = "model.onnx"
DATA_FILE = "model.onnx.data"
TOKENIZER_FILE = "tokenizer.json"


class ModelFolderError(ValueError):
    """A model folder is missing, incomplete, damaged or of another format."""


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in 4 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def redo_hint(folder: Path) -> str:
    """What a person can do about a damaged model folder (one clause, for the end of a message)."""
    return f"copy the folder again, or export it again with `gpt2viz export SOURCE --out {folder}`"


def _positive_int(v) -> bool:
    # JSON has one number type: 4.0 is fine, 4.5, "4", true and -4 are not a layer count.
    return not isinstance(v, bool) and isinstance(v, (int, float)) and v == int(v) and v > 0


def _check_fields(m: dict, path: Path) -> None:
    """Types of every field the app reads, so a hand-edited manifest fails here and not mid-run."""
    def bad(what: str) -> ModelFolderError:
        return ModelFolderError(f"{path} is damaged: {what}; {redo_hint(path.parent)}")

    c = m.get("config")
    if not isinstance(c, dict):
        raise bad("'config' is missing or not an object")
    for k in ModelConfig.__dataclass_fields__:
        if k not in c:
            raise bad(f"config has no '{k}'")
        if not _positive_int(c[k]):
            raise bad(f"config '{k}' must be a positive whole number, not {c[k]!r}")
    if int(c["n_embd"]) % int(c["n_head"]):
        raise bad(f"config n_embd {c['n_embd']} is not a multiple of n_head {c['n_head']}")
    eps = c.get("layer_norm_epsilon", 1e-5)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0 < eps < 1:
        raise bad(f"config 'layer_norm_epsilon' must be a small positive number, not {eps!r}")
    if "name" in m and not isinstance(m["name"], str):
        raise bad(f"'name' must be text, not {m['name']!r}")
    n = m.get("n_params", 0)
    if isinstance(n, bool) or not isinstance(n, (int, float)) or n < 0 or n != int(n):
        raise bad(f"'n_params' must be a whole number, not {n!r}")
    files = m.get("files", {})
    if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and len(v) == 64 for k, v in files.items()):
        raise bad("'files' must map file names to sha256 hex digests")


def read_manifest(folder: Path) -> dict:
    """Read and check a folder's manifest.

    Parameters
    ----------
    folder : path
        A model folder.

    Returns
    -------
    dict
        The manifest, with every field the app reads present and of the right type.

    Raises
    ------
    ModelFolderError
        With a one-line message naming the file, what is wrong and what to do.
    """
    folder = Path(folder)
    if not folder.is_dir():
        why = "" if folder.exists() else ": it does not exist (was it moved or deleted?)"
        raise ModelFolderError(f"{folder} is not a folder{why}; choose a model folder (`gpt2viz models` lists them)")
    path = folder / MANIFEST
    if not path.is_file():
        raise ModelFolderError(f"{folder} has no {MANIFEST}: not a gpt2viz model folder "
                               f"(make one with `gpt2viz export SOURCE --out {folder}`)")
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ModelFolderError(f"{path} is unreadable: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ModelFolderError(f"{path} is unreadable (damaged: not UTF-8 text); {redo_hint(folder)}") from None
    except json.JSONDecodeError as e:
        raise ModelFolderError(f"{path} is unreadable (damaged: invalid JSON at line {e.lineno} column {e.colno}); "
                               f"{redo_hint(folder)}") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ModelFolderError(f"{path} is not a gpt2viz manifest (no \"format\": \"{FORMAT}\"); "
                               f"{redo_hint(folder)}")
    if m.get("format_version") not in READABLE_VERSIONS:
        raise ModelFolderError(f"{path} has format version {m.get('format_version')!r}; this gpt2viz "
                               f"reads version {FORMAT_VERSION}: export the model again "
                               f"(`gpt2viz export SOURCE --out {folder}`) or use the gpt2viz that wrote it")
    _check_fields(m, path)
    for f in (MODEL_FILE, TOKENIZER_FILE):
        if not (folder / f).is_file():
            raise ModelFolderError(f"{folder} is missing {f}; {redo_hint(folder)}")
    return m


def config_of(manifest: dict) -> ModelConfig:
    """The model's config from a manifest."""
    c = manifest["config"]
    return ModelConfig(**{k: int(c[k]) for k in ModelConfig.__dataclass_fields__})


def verify_files(folder: Path, manifest: dict) -> None:
    """Check the weights' sha256 against the manifest; raise ModelFolderError on a mismatch."""
    for name, want in manifest.get("files", {}).items():
        f = Path(folder) / name
        if not f.is_file():
            raise ModelFolderError(f"{folder} is missing {name}; {redo_hint(folder)}")
        got = sha256_file(f)
        if got != want:
            raise ModelFolderError(f"{f} is damaged or was changed: sha256 {got[:12]}… "
                                   f"but the manifest says {want[:12]}…; {redo_hint(folder)}")


def describe_folder(folder: Path) -> dict | None:
    """Manifest facts of a model folder without loading it, or None when it is not one."""
    try:
        m = read_manifest(folder)
    except ModelFolderError:
        return None
    return {"name": m.get("name") or folder.name, "folder": str(folder), "n_params": m.get("n_params"),
            "source": m.get("source"), "config": m.get("config"),
            "size_bytes": sum(f.stat().st_size for f in folder.iterdir() if f.is_file())}
