"""The model folder's manifest (`gpt2viz.json`) and the checks made when a folder is opened."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from gpt2viz.core.hooks import Dims

FORMAT = "gpt2viz-model"
# 2: intervention inputs (`blocks.{L}.{hook}.scale|shift`) and the `last_logits` output. Version 1 folders
# still open and run; asking them for an intervention says how to upgrade them (`gpt2viz export DIR --upgrade`).
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MANIFEST = "gpt2viz.json"
MODEL_FILE = "model.onnx"
DATA_FILE = "model.onnx.data"
TOKENIZER_FILE = "tokenizer.json"


class ModelFolderError(ValueError):
    """A model folder is missing, incomplete, damaged or of another format."""


@dataclass(frozen=True)
class ModelConfig:
    """GPT-2's shape: enough to name every tensor and to bound the context."""

    n_layer: int
    n_head: int
    n_embd: int
    n_positions: int
    vocab_size: int
    d_mlp: int

    @property
    def d_head(self) -> int:
        return self.n_embd // self.n_head

    @property
    def dims(self) -> Dims:
        return Dims(self.n_layer, self.n_head, self.n_embd, self.d_mlp, self.vocab_size)

    def kv_bytes_per_token(self) -> int:
        """Bytes of key + value cache one token costs across all layers (float32)."""
        return 2 * self.n_layer * self.n_embd * 4


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in 4 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def read_manifest(folder: Path) -> dict:
    """Read and check a folder's manifest; raise ModelFolderError with a clear reason."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelFolderError(f"{folder} is not a folder")
    path = folder / MANIFEST
    if not path.is_file():
        raise ModelFolderError(f"{folder} has no {MANIFEST}: not a gpt2viz model folder "
                               f"(make one with `gpt2viz export SOURCE --out {folder}`)")
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFolderError(f"{path} is unreadable: {e}") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT:
        raise ModelFolderError(f"{path} is not a gpt2viz manifest")
    if m.get("format_version") not in READABLE_VERSIONS:
        raise ModelFolderError(f"{path} has format version {m.get('format_version')}; this gpt2viz "
                               f"reads version {FORMAT_VERSION}: export the model again")
    for f in (MODEL_FILE, TOKENIZER_FILE):
        if not (folder / f).is_file():
            raise ModelFolderError(f"{folder} is missing {f}")
    try:
        config_of(m)
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFolderError(f"{path} has a broken config: {e}") from None
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
            raise ModelFolderError(f"{folder} is missing {name}")
        got = sha256_file(f)
        if got != want:
            raise ModelFolderError(f"{f} is damaged or was changed: sha256 {got[:12]}… "
                                   f"but the manifest says {want[:12]}…")
