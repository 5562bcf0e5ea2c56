"""Feature steering, ablation and clamping, done inside the graph by its intervention inputs.

Each becomes :class:`gpt2viz.core.interventions.Steer` values at ``blocks.{L}.hook_resid_pre`` (the SAE's hook):

- :class:`FeatureSteer` adds ``scale * W_dec[f]`` at its positions (None: every position, generated ones too);
- :class:`FeatureClamp` sets the feature's activation to ``value`` (0: ablation) the way SAE tools do it,
  ``x' = x + (value - a_f(x)) * W_dec[f]`` per position: the SAE's reconstruction with the feature changed, plus
  the SAE's error term, so nothing but that feature's share moves. ``a_f(x)`` is read from a run of the graph:
  an intervention at hook L does not change the value the graph computes *into* hook L, so the clean value at L is
  what a run with only the interventions of earlier layers shows, and the sum is exact.

Layers are processed from the first up: a clamp at layer 4 reads the residual as the interventions at layers 0..3
(base, steering and clamps) left it. All feature interventions at one layer read the same value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.features.sae import SAE, SAEError, sae_input
from gpt2viz.core.interventions import Steer


def _positions(p) -> tuple[int, ...] | None:
    return None if p is None else tuple(int(x) for x in p)


@dataclass(frozen=True)
class FeatureSteer:
    """Add ``scale`` times feature ``feature``'s decoder direction to ``blocks.{layer}.hook_resid_pre``.

    ``positions`` None = every position, including positions generated later.
    """

    layer: int
    feature: int
    scale: float
    positions: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))


@dataclass(frozen=True)
class FeatureClamp:
    """Set feature ``feature`` of layer ``layer``'s SAE to ``value`` at ``positions`` (0 = ablation).

    ``positions`` None = every position of the tokens given to :func:`to_interventions` (a clamp needs the
    feature's activation there, so it covers the positions run, not ones generated later).
    """

    layer: int
    feature: int
    value: float = 0.0
    positions: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))


FeatureIntervention = FeatureSteer | FeatureClamp


def _sae_of(saes, layer: int) -> SAE:
    sae = saes.get(layer) if isinstance(saes, Mapping) else saes
    if sae is None or sae.cfg.layer != layer:
        raise SAEError(f"no SAE for block {layer}'s hook_resid_pre was given")
    if sae.cfg.hook_name != f"blocks.{layer}.hook_resid_pre" or sae.cfg.hook_head_index is not None:
        raise SAEError(f"feature steering acts at hook_resid_pre; this SAE reads {sae.cfg.hook_name}")
    if sae.cfg.normalize_activations != "none":
        raise SAEError(f"feature steering needs an SAE without input normalisation, not "
                       f"{sae.cfg.normalize_activations}")
    return sae


def to_interventions(model, saes: SAE | Mapping[int, SAE], specs: Sequence[FeatureIntervention],
                     token_ids: Sequence[int] | None = None, base=()) -> tuple[Steer, ...]:
    """The graph interventions that do ``specs``.

    Parameters
    ----------
    model : Model
        Runs the graph for the clean activations clamps need.
    saes : SAE or dict
        The SAE of each layer named (layer -> SAE at ``blocks.{layer}.hook_resid_pre``), or the one SAE.
    specs : sequence of FeatureSteer / FeatureClamp
    token_ids : sequence of int, optional
        The tokens the interventions will run on; needed when there is a clamp.
    base : tuple of Intervention, optional
        Other interventions that will run with these (their effect is in the value a clamp reads).

    Returns
    -------
    tuple of Steer
        To be given after ``base`` (``interventions=(*base, *result)``).
    """
    out: list[Steer] = []
    for layer in sorted({s.layer for s in specs}):
        here = [s for s in specs if s.layer == layer]
        sae = _sae_of(saes, layer)
        for s in here:
            if not 0 <= s.feature < sae.cfg.d_sae:
                raise SAEError(f"feature {s.feature} is out of range: the SAE has features 0..{sae.cfg.d_sae - 1}")
        clamps = [s for s in here if isinstance(s, FeatureClamp)]
        acts = None
        if clamps:
            if token_ids is None:
                raise SAEError("clamping a feature needs the tokens it will run on")
            trace, _ = model.run(list(token_ids), hooks=[sae.cfg.hook_name], interventions=(*base, *out))
            acts = sae.encode(sae_input(trace[sae.cfg.hook_name], sae.cfg.hook_head_index))  # [P, d_sae]
        steers = []
        for s in here:
            direction = sae.W_dec[s.feature]
            if isinstance(s, FeatureSteer):
                steers.append(Steer(layer, s.positions, direction, float(s.scale), feature=s.feature))
                continue
            positions = range(len(acts)) if s.positions is None else s.positions
            for p in positions:
                if not 0 <= p < len(acts):
                    raise SAEError(f"position {p} is outside the {len(acts)} tokens run")
                delta = float(s.value) - float(acts[p, s.feature])
                if delta != 0.0:
                    steers.append(Steer(layer, (p,), direction, delta, feature=s.feature, clamp=float(s.value)))
        out += steers
    return tuple(out)


_SPEC = re.compile(r"^\s*(\d+)\s*\.\s*(\d+)\s*=\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def parse_feature_value(spec: str, what: str = "--steer-feature L.F=VALUE") -> tuple[int, int, float]:
    """``"3.812=8"`` -> (3, 812, 8.0); SAEError naming ``what`` otherwise."""
    m = _SPEC.match(spec)
    if not m:
        raise SAEError(f"malformed {what} {spec!r}: expected LAYER.FEATURE=VALUE like 3.812=8")
    return int(m.group(1)), int(m.group(2)), float(m.group(3))


def describe(spec: FeatureIntervention) -> dict:
    """A JSON-able description of a feature intervention."""
    d = {"kind": "feature_steer" if isinstance(spec, FeatureSteer) else "feature_clamp", "layer": spec.layer,
         "feature": spec.feature, "positions": None if spec.positions is None else list(spec.positions)}
    if isinstance(spec, FeatureSteer):
        d["scale"] = spec.scale
    else:
        d["value"] = spec.value
    return d


def top_features(acts: np.ndarray, n: int) -> list[list[tuple[int, float]]]:
    """Per position, the ``n`` most active features as (feature, activation), largest first, zeros left out."""
    out = []
    for row in np.asarray(acts):
        idx = np.argsort(-row, kind="stable")[:n]
        out.append([(int(i), float(row[i])) for i in idx if row[i] > 0])
    return out
