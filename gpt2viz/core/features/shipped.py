"""The SAEs stored inside a model folder: ``<model folder>/saes/<hook name>/`` (SAELens folders)."""

from __future__ import annotations

from pathlib import Path

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
