"""What to change inside the graph, and the feeds that make the exported graph do it.

Each intervention is a frozen value. :func:`feeds` turns a tuple of them into the inputs
``blocks.{L}.{hook}.scale|shift`` of one call covering absolute positions ``start .. start+length-1``
(the graph computes ``x' = x * scale + shift`` there; see ``gpt2viz.core.hooks.INTERVENTION_HOOKS``).
Positions are absolute, so a cached step gets the slice for its own position and stays consistent
with a cache computed under the same interventions. Several interventions on one hook compose in
order: ``(x * s1 + b1) * s2 + b2``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from gpt2viz.core.config import ModelConfig
from gpt2viz.core.hooks import scale_input, shift_input


class InterventionError(ValueError):
    """A malformed or out-of-range intervention (one-line message)."""


def _positions(p) -> tuple[int, ...] | None:
    return None if p is None else tuple(int(x) for x in p)


def _vector(v) -> tuple[float, ...]:
    return tuple(float(x) for x in np.asarray(v, dtype=np.float32).ravel())


@dataclass(frozen=True)
class HeadAblation:
    """Ablate head ``head``'s output (``blocks.{layer}.attn.hook_z[:, :, head]``).

    ``mode`` "zero" sets it to 0; "mean" to its mean over the positions of the text (given to
    :func:`feeds` in ``means``; :func:`mean_activations` computes it from a run without interventions).
    ``positions`` None = every position.
    """

    layer: int
    head: int
    mode: str = "zero"
    positions: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))


@dataclass(frozen=True)
class NeuronAblation:
    """Set MLP neuron ``neuron`` of block ``layer`` (``mlp.hook_post[..., neuron]``) to ``value``."""

    layer: int
    neuron: int
    value: float = 0.0
    positions: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))


SITES = {"resid_pre": "hook_resid_pre", "attn_out": "hook_attn_out", "mlp_out": "hook_mlp_out", "head": "attn.hook_z"}


@dataclass(frozen=True)
class Patch:
    """Replace ``site`` of block ``layer`` at ``position`` with ``source`` (from another run).

    ``site`` is resid_pre | attn_out | mlp_out ([E] source) or head (``head`` given, [D] source:
    that head's z).
    """

    site: str
    layer: int
    position: int
    source: tuple[float, ...] = field(repr=False)
    head: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "source", _vector(self.source))


@dataclass(frozen=True)
class Steer:
    """Add ``scale * vector`` ([E]) to ``blocks.{layer}.hook_resid_pre`` at ``positions`` (None = all).

    ``feature`` says, for the chips and exports, that ``vector`` is that SAE feature's decoder direction; with
    ``clamp`` set, the steer sets the feature's activation to ``clamp`` at its one position (``scale`` is then the
    change made there; see :mod:`gpt2viz.core.features.steering`). The graph sees only ``vector`` and ``scale``.
    """

    layer: int
    positions: tuple[int, ...] | None
    vector: tuple[float, ...] = field(repr=False)
    scale: float = 1.0
    feature: int | None = None
    clamp: float | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))
        object.__setattr__(self, "vector", _vector(self.vector))


@dataclass(frozen=True)
class SublayerAblation:
    """Ablate a whole block's attention output (``site`` "attn_out") or MLP output ("mlp_out"),
    ``blocks.{layer}.hook_attn_out`` / ``hook_mlp_out``, biases included.

    ``mode`` "zero" sets it to 0; "mean" to its mean over the positions of the text (``means`` key
    ``(site, layer)``, see :func:`mean_activations`). ``positions`` None = every position.
    """

    layer: int
    site: str = "attn_out"
    mode: str = "zero"
    positions: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))


SUBLAYER_SITES = ("attn_out", "mlp_out")


@dataclass(frozen=True)
class MlpOutShift:
    """Add ``scale * vector`` ([E]) to block ``layer``'s MLP output (``blocks.{layer}.hook_mlp_out``) at ``positions``
    (None = all): what a transcoder feature wrote there, scaled or removed (a feature's write is its activation times
    its decoder row, and nothing else in the block reads it), the way circuit graphs are checked by intervention."""

    layer: int
    positions: tuple[int, ...] | None
    vector: tuple[float, ...] = field(repr=False)
    scale: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "positions", _positions(self.positions))
        object.__setattr__(self, "vector", _vector(self.vector))

@dataclass(frozen=True)
class RankOneEdit:
    """Add ``outer(u, v)`` to block ``layer``'s MLP output weight (the down-projection, [M, E] as GPT-2's Conv1D
    stores it: ``mlp_out = post @ W_out + b_out``), for every position: a model edit (ROME), made by feeding the
    edited weight to the graph (the weight is an input of the intervention graph), never by copying the file.

    ``label`` names the edit where it is listed ("France: Paris -> Rome").
    """

    layer: int
    u: tuple[float, ...] = field(repr=False)
    v: tuple[float, ...] = field(repr=False)
    label: str = ""

    def __post_init__(self):
        object.__setattr__(self, "u", _vector(self.u))
        object.__setattr__(self, "v", _vector(self.v))

    @property
    def positions(self) -> None:
        """A weight edit acts at every position."""
        return None

    def delta(self) -> np.ndarray:
        """The change to the weight, [M, E] float32."""
        return np.outer(np.asarray(self.u, np.float32), np.asarray(self.v, np.float32))


Intervention = HeadAblation | NeuronAblation | SublayerAblation | Patch | Steer | RankOneEdit | MlpOutShift
_KINDS = (HeadAblation, NeuronAblation, SublayerAblation, Patch, Steer, RankOneEdit, MlpOutShift)


def validate(interventions, config: ModelConfig) -> None:
    """Raise InterventionError (one line) for anything out of the model's range."""
    dims, n_positions = config, config.n_positions
    for iv in interventions:
        if not isinstance(iv, _KINDS):
            raise InterventionError(f"not an intervention: {iv!r}")
        if not 0 <= iv.layer < dims.n_layer:
            raise InterventionError(f"layer {iv.layer} is out of range: the model has layers 0..{dims.n_layer - 1}")
        head = getattr(iv, "head", None)
        if head is not None and not 0 <= head < dims.n_head:
            raise InterventionError(f"head {head} is out of range: the model has heads 0..{dims.n_head - 1}")
        if isinstance(iv, HeadAblation) and iv.mode not in ("zero", "mean"):
            raise InterventionError(f"head ablation mode must be zero or mean, not {iv.mode!r}")
        if isinstance(iv, SublayerAblation):
            if iv.site not in SUBLAYER_SITES:
                raise InterventionError(f"sublayer ablation site must be attn_out or mlp_out, not {iv.site!r}")
            if iv.mode not in ("zero", "mean"):
                raise InterventionError(f"sublayer ablation mode must be zero or mean, not {iv.mode!r}")
        if isinstance(iv, NeuronAblation) and not 0 <= iv.neuron < dims.d_mlp:
            raise InterventionError(f"neuron {iv.neuron} is out of range: block MLPs have neurons 0..{dims.d_mlp - 1}")
        pos = [iv.position] if isinstance(iv, Patch) else (iv.positions or [])
        bad = [p for p in pos if not 0 <= p < n_positions]
        if bad:
            raise InterventionError(f"position {bad[0]} is outside the context (0..{n_positions - 1})")
        if isinstance(iv, Patch):
            if iv.site not in SITES:
                raise InterventionError(f"patch site must be one of {', '.join(SITES)}, not {iv.site!r}")
            if (iv.site == "head") != (iv.head is not None):
                raise InterventionError("a head patch needs a head; other sites take none")
            want = dims.d_head if iv.site == "head" else dims.d_model
            if len(iv.source) != want:
                raise InterventionError(f"patch source has {len(iv.source)} values; {iv.site} needs {want}")
        if isinstance(iv, MlpOutShift) and len(iv.vector) != dims.d_model:
            raise InterventionError(f"an MLP output shift has {len(iv.vector)} values; the model is {dims.d_model} wide")
        if isinstance(iv, Steer) and len(iv.vector) != dims.d_model:
            raise InterventionError(f"steering vector has {len(iv.vector)} values; the model is {dims.d_model} wide")
        if isinstance(iv, RankOneEdit) and (len(iv.u), len(iv.v)) != (dims.d_mlp, dims.d_model):
            raise InterventionError(f"a rank-one edit of an MLP output weight needs u of {dims.d_mlp} and v of "
                                    f"{dims.d_model} values, not {len(iv.u)} and {len(iv.v)}")


def weight_edits(interventions) -> dict[int, np.ndarray]:
    """Layer -> the sum of the rank-one edits to its MLP output weight ([M, E]), for the layers edited."""
    out: dict[int, np.ndarray] = {}
    for iv in interventions:
        if isinstance(iv, RankOneEdit):
            out[iv.layer] = out[iv.layer] + iv.delta() if iv.layer in out else iv.delta()
    return out


def needs_means(interventions) -> list[tuple[int, int]]:
    """(layer, head) pairs whose mean z a tuple of interventions needs."""
    return sorted({(iv.layer, iv.head) for iv in interventions if isinstance(iv, HeadAblation) and iv.mode == "mean"})


def needs_sublayer_means(interventions) -> list[tuple[str, int]]:
    """(site, layer) pairs whose mean output ([E]) a tuple of interventions needs."""
    return sorted({(iv.site, iv.layer) for iv in interventions
                   if isinstance(iv, SublayerAblation) and iv.mode == "mean"})


def mean_activations(model, token_ids, interventions) -> dict[tuple, np.ndarray]:
    """Mean z ([D]) over the positions of ``token_ids`` for each mean-ablated head (key (layer, head)),
    and the mean output ([E]) of each mean-ablated sublayer (key (site, layer)), from a run of the
    model without interventions (one prefill requesting only the hooks needed)."""
    pairs, subs = needs_means(interventions), needs_sublayer_means(interventions)
    if not pairs and not subs:
        return {}
    names = [f"blocks.{L}.attn.hook_z" for L in sorted({L for L, _ in pairs})]
    names += [f"blocks.{L}.{SITES[site]}" for site, L in subs]
    trace, _ = model.run(list(token_ids), hooks=names)
    out = {(L, h): trace["z", L][:, h].mean(axis=0) for L, h in pairs}
    out.update({(site, L): trace[f"blocks.{L}.{SITES[site]}"].mean(axis=0) for site, L in subs})
    return out


def _rows(positions, start: int, length: int):
    """Rows of this call ([0, length)) that the absolute ``positions`` (None = all) fall on."""
    if positions is None:
        return slice(None)
    rows = [p - start for p in positions if start <= p < start + length]
    return rows


def feeds(interventions, start: int, length: int, dims: ModelConfig, means=None) -> dict[str, np.ndarray]:
    """The graph inputs for a call of ``length`` positions starting at absolute ``start``.

    Only the hooks an intervention touches get inputs; the graph's defaults (no-ops) cover the rest.

    Parameters
    ----------
    interventions : tuple of Intervention
    start, length : int
        Absolute position of the call's first token, and its number of tokens.
    dims : ModelConfig
    means : dict, optional
        (layer, head) -> [D] mean z, for mean ablations (see :func:`mean_activations`).

    Returns
    -------
    dict
        Input name -> float32 array, [1, length, ...] broadcastable against the hook.
    """
    acc: dict[tuple[int, str], tuple[np.ndarray, np.ndarray]] = {}

    def get(layer, hook, sshape, bshape):
        if (layer, hook) not in acc:
            acc[(layer, hook)] = (np.ones((1, length, *sshape), np.float32), np.zeros((1, length, *bshape), np.float32))
        return acc[(layer, hook)]

    H, D, E, M = dims.n_head, dims.d_head, dims.d_model, dims.d_mlp
    for iv in interventions:
        if isinstance(iv, HeadAblation):
            s, b = get(iv.layer, "attn.hook_z", (H, 1), (H, D))
            r = _rows(iv.positions, start, length)
            value = 0.0
            if iv.mode == "mean":
                if not means or (iv.layer, iv.head) not in means:
                    raise InterventionError(f"mean ablation of {iv.layer}.{iv.head} needs the head's mean activation")
                value = np.asarray(means[(iv.layer, iv.head)], np.float32)
            s[0, r, iv.head] = 0.0
            b[0, r, iv.head] = value
        elif isinstance(iv, NeuronAblation):
            s, b = get(iv.layer, "mlp.hook_post", (M,), (M,))
            r = _rows(iv.positions, start, length)
            s[0, r, iv.neuron] = 0.0
            b[0, r, iv.neuron] = iv.value
        elif isinstance(iv, SublayerAblation):
            s, b = get(iv.layer, SITES[iv.site], (1,), (E,))
            r = _rows(iv.positions, start, length)
            value = 0.0
            if iv.mode == "mean":
                if not means or (iv.site, iv.layer) not in means:
                    raise InterventionError(f"mean ablation of block {iv.layer}'s {iv.site} needs its mean output")
                value = np.asarray(means[(iv.site, iv.layer)], np.float32)
            s[0, r] = 0.0
            b[0, r] = value
        elif isinstance(iv, Patch):
            r = _rows([iv.position], start, length)
            if iv.site == "head":
                s, b = get(iv.layer, "attn.hook_z", (H, 1), (H, D))
                s[0, r, iv.head] = 0.0
                b[0, r, iv.head] = iv.source
            else:
                s, b = get(iv.layer, SITES[iv.site], (1,), (E,))
                s[0, r] = 0.0
                b[0, r] = iv.source
        elif isinstance(iv, MlpOutShift):
            s, b = get(iv.layer, "hook_mlp_out", (1,), (E,))
            b[0, _rows(iv.positions, start, length)] += np.float32(iv.scale) * np.asarray(iv.vector, np.float32)
        elif isinstance(iv, Steer):
            s, b = get(iv.layer, "hook_resid_pre", (1,), (E,))
            b[0, _rows(iv.positions, start, length)] += np.float32(iv.scale) * np.asarray(iv.vector, np.float32)
    out = {}
    for (layer, hook), (s, b) in acc.items():
        out[scale_input(layer, hook)], out[shift_input(layer, hook)] = s, b
    return out


def describe(iv) -> dict:
    """A JSON-able description (vectors summarised by their length and norm)."""
    if isinstance(iv, HeadAblation):
        d = {"kind": "head_ablation", "layer": iv.layer, "head": iv.head, "mode": iv.mode}
    elif isinstance(iv, NeuronAblation):
        d = {"kind": "neuron_ablation", "layer": iv.layer, "neuron": iv.neuron, "value": iv.value}
    elif isinstance(iv, SublayerAblation):
        d = {"kind": "sublayer_ablation", "layer": iv.layer, "site": iv.site, "mode": iv.mode}
    elif isinstance(iv, Patch):
        d = {"kind": "patch", "site": iv.site, "layer": iv.layer, "position": iv.position, "head": iv.head,
             "source_norm": float(np.linalg.norm(iv.source))}
    elif isinstance(iv, RankOneEdit):
        d = {"kind": "rank_one_edit", "layer": iv.layer, "label": iv.label, "u_norm": float(np.linalg.norm(iv.u)),
             "v_norm": float(np.linalg.norm(iv.v))}
    elif isinstance(iv, MlpOutShift):
        d = {"kind": "mlp_out_shift", "layer": iv.layer, "scale": iv.scale,
             "vector_norm": float(np.linalg.norm(iv.vector))}
    else:
        d = {"kind": "steer", "layer": iv.layer, "scale": iv.scale, "vector_norm": float(np.linalg.norm(iv.vector))}
        if iv.feature is not None:
            d["feature"] = iv.feature
        if iv.clamp is not None:
            d["clamp"] = iv.clamp
    if not isinstance(iv, Patch):
        d["positions"] = None if iv.positions is None else list(iv.positions)
    return d


_SPEC = re.compile(r"^\s*(\d+)\s*\.\s*(\d+)\s*$")


def parse_pair(spec: str, what: str) -> tuple[int, int]:
    """``"3.7"`` -> (3, 7); InterventionError naming ``what`` ("L.H") otherwise."""
    m = _SPEC.match(spec)
    if not m:
        raise InterventionError(f"malformed {what} {spec!r}: expected two integers like 1.2")
    return int(m.group(1)), int(m.group(2))
