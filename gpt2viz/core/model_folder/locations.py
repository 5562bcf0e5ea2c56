"""Where gpt2viz finds its files: bundled models, the user's exported models, resources.

One place resolves them, both from a source checkout and from an installed wheel.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gpt2viz.core.model_folder.manifest import ModelFolderError, read_manifest

DEFAULT_MODEL = "atlas"
ENV_MODELS = "GPT2VIZ_MODELS"  # extra folders to search, separated like PATH

_PACKAGE = Path(__file__).resolve().parents[2]  # gpt2viz/, from gpt2viz/core/model_folder/


def _first_existing(*candidates: Path) -> Path:
    for c in candidates:
        if c.is_dir():
            return c
    return candidates[0]


def bundled_models_dir() -> Path:
    """`models/` of a checkout, or the copy a wheel installs under ``<prefix>/share/gpt2viz``."""
    return _first_existing(_PACKAGE.parent / "models", Path(sys.prefix) / "share" / "gpt2viz" / "models")


def resources_dir() -> Path:
    """`resources/` (icons, style sheets), from a checkout or a wheel."""
    return _first_existing(_PACKAGE.parent / "resources", Path(sys.prefix) / "share" / "gpt2viz" / "resources")


def user_models_dir() -> Path:
    """Where `gpt2viz export` puts models by default (the platform's per-user data folder)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("gpt2viz", appauthor=False)) / "models"


def search_dirs() -> list[Path]:
    """Folders searched for model folders, in order: $GPT2VIZ_MODELS, the user's, the bundled ones."""
    extra = [Path(p).expanduser() for p in os.environ.get(ENV_MODELS, "").split(os.pathsep) if p]
    return [*extra, user_models_dir(), bundled_models_dir()]


def find_models() -> list[Path]:
    """Every model folder in the search folders (a folder with a valid manifest), first name wins."""
    seen: set[str] = set()
    found = []
    for d in search_dirs():
        if not d.is_dir():
            continue
        for sub in sorted(p for p in d.iterdir() if p.is_dir()):
            try:
                read_manifest(sub)
            except ModelFolderError:
                continue
            if sub.name not in seen:
                seen.add(sub.name)
                found.append(sub)
    return found


def resolve_model(spec: str | None) -> Path:
    """A model folder from a path or a name (default: the bundled `atlas`)."""
    spec = spec or DEFAULT_MODEL
    p = Path(spec).expanduser()
    if p.is_dir():
        return p
    for d in search_dirs():
        if (d / spec / "gpt2viz.json").is_file():
            return d / spec
    names = ", ".join(m.name for m in find_models()) or "none"
    raise ModelFolderError(f"no model folder or model named {spec!r} (found: {names}). "
                           f"Make one with `gpt2viz export gpt2 --out {user_models_dir() / 'gpt2'}`")
