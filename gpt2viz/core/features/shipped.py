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


KIND_SAE, KIND_TRANSCODER = "sae", "transcoder"  # the kinds of feature a model folder ships (saes/, transcoders/)
TRANSCODERS_DIR = "transcoders"


@dataclass(frozen=True)
class FeatureSet:
    """A model's own feature dictionary at one block, with its stored dashboards (None when not built).

    ``kind`` "sae": ``sae`` is the SAE of the block's ``hook_resid_pre``; "transcoder": ``sae`` is the transcoder that
    stands for the block's MLP (what the attribution graph's feature nodes are).
    """

    layer: int
    sae: object  # SAE | Transcoder
    dashboards: Dashboards | None
    kind: str = KIND_SAE


_CACHE: dict[tuple[str, int, str], tuple[float, FeatureSet]] = {}


def _transcoder_folder(model, layer: int) -> Path | None:
    root = Path(getattr(model, "folder", model)) / TRANSCODERS_DIR
    if not root.is_dir():
        return None
    return next((p for p in sorted(root.iterdir()) if p.name.startswith(f"blocks.{layer}.") and (p / CFG_FILE).is_file()),
                None)


def feature_set(model, layer: int, kind: str = KIND_SAE) -> FeatureSet:
    """``model``'s own SAE (or transcoder) of block ``layer`` and its dashboards, read once and kept while the files
    are unchanged (the views, the figures and the app share it). SAEError, one line, when there is none or it does
    not fit."""
    if kind not in (KIND_SAE, KIND_TRANSCODER):
        raise SAEError(f"features are of an SAE or a transcoder, not {kind!r}")
    folder = (shipped_saes(model).get(f"blocks.{layer}.{RESID_PRE}") if kind == KIND_SAE
              else _transcoder_folder(model, layer))
    key = (str(saes_dir(model)), int(layer), kind)
    stamp = max((p.stat().st_mtime for p in folder.iterdir()), default=0.0) if folder is not None else -1.0
    hit = _CACHE.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    if kind == KIND_SAE:
        coder = open_sae(model, layer=layer)
    else:
        from gpt2viz.core.features.transcoder import read_saelens_transcoder

        if folder is None:
            raise SAEError(f"{getattr(model, 'name', model)} has no transcoder for block {layer} (transcoders/)")
        coder = read_saelens_transcoder(folder)
    fs = FeatureSet(int(layer), coder, load_dashboards(coder), kind)
    _CACHE[key] = (stamp, fs)
    return fs
