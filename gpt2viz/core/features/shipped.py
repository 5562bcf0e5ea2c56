"""The SAEs stored inside a model folder: ``<model folder>/saes/<hook name>/`` (SAELens folders), and their
dashboards."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpt2viz.core.features.dashboards import Dashboards, load_dashboards
from gpt2viz.core.features.sae import SAE, SAEError, check_fits
from gpt2viz.core.features.saelens_folder import CFG_FILE, read_sae

SAES_DIR = "saes"
RESID_PRE = "hook_resid_pre"


def saes_dir(model) -> Path:
    """Where ``model``'s own SAEs live (``model`` a Model or a model folder)."""
    return Path(getattr(model, "folder", model)) / SAES_DIR


def shipped_saes(model) -> dict[str, Path]:
    """Hook name -> SAE folder, for every SAE stored in ``model``'s folder (empty when it has none)."""
    root = saes_dir(model)
    if not root.is_dir():
        return {}
    return {p.name: p for p in sorted(root.iterdir()) if (p / CFG_FILE).is_file()}


def open_sae(model, folder: str | Path | None = None, *, layer: int | None = None, hook: str = RESID_PRE) -> SAE:
    """An SAE checked against ``model``: the folder given, else the model's own SAE at ``blocks.{layer}.{hook}``.

    Raises
    ------
    SAEError
        One line: no such SAE (naming the hooks that have one), or an SAE that does not fit the model.
    """
    if folder is None:
        if layer is None:
            raise SAEError("which SAE? give a layer or an SAE folder")
        name = f"blocks.{layer}.{hook}"
        have = shipped_saes(model)
        if name not in have:
            listed = ", ".join(have) if have else "none"
            raise SAEError(f"{getattr(model, 'name', model)} has no SAE for {name} (it has: {listed}); train one "
                           f"with `gpt2viz train-sae --hook {name} --out DIR` and pass --sae DIR")
        folder = have[name]
    sae = read_sae(folder)
    check_fits(sae, model.config)
    return sae


@dataclass(frozen=True)
class FeatureSet:
    """A model's own SAE at one block's ``hook_resid_pre`` with its stored dashboards (None when not built)."""

    layer: int
    sae: SAE
    dashboards: Dashboards | None


_CACHE: dict[tuple[str, int], tuple[float, FeatureSet]] = {}


def feature_set(model, layer: int) -> FeatureSet:
    """``model``'s own SAE of block ``layer`` and its dashboards, read once and kept while the files are unchanged
    (the views, the figures and the app share it). SAEError, one line, when there is none or it does not fit."""
    folder = shipped_saes(model).get(f"blocks.{layer}.{RESID_PRE}")
    key = (str(saes_dir(model)), int(layer))
    stamp = max((p.stat().st_mtime for p in folder.iterdir()), default=0.0) if folder is not None else -1.0
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    sae = open_sae(model, layer=layer)
    fs = FeatureSet(int(layer), sae, load_dashboards(sae))
    _CACHE[key] = (stamp, fs)
    return fs
