"""A sparse autoencoder over one hook, and SAELens' formulas for it (numpy, float32 like SAELens' default).

Encode (SAELens ``SAE.encode`` for each architecture)::

    x'  = normalize_in(x)                       # "none": x itself
    h   = (x' - b_dec if apply_b_dec_to_input else x') @ W_enc + b_enc
    standard: f = relu(h)
    jumprelu: f = relu(h) * (h > threshold)
    topk:     f = relu(h) on the k largest entries of h, 0 elsewhere

Decode: ``x_hat = normalize_out(f @ W_dec + b_dec)``. Shapes: W_enc [d_in, d_sae], W_dec [d_sae, d_in],
b_enc [d_sae], b_dec [d_in], threshold [d_sae].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpt2viz.core.config import ModelConfig
from gpt2viz.core.hooks import concrete_shape, hook_shapes

ARCHITECTURES = ("standard", "jumprelu", "topk")
# SAELens' run-time normalisations that a folder can carry and the formulas below apply. SAELens'
# "expected_average_only_in" is refused: its scaling factor is not stored in the folder.
NORMALIZATIONS = ("none", "constant_norm_rescale", "layer_norm")
LN_EPS = 1e-5  # SAELens' layer_norm normalisation: (x - mu) / (std + eps), std unbiased like torch's

_LAYER = re.compile(r"^blocks\.(\d+)\.")


class SAEError(ValueError):
    """An SAE that cannot be read, written or used with a model (one-line message)."""


@dataclass(frozen=True)
class SAEConfig:
    """What ``cfg.json`` says about an SAE (the fields gpt2viz uses; the rest is kept in ``extra``).

    Attributes
    ----------
    d_in, d_sae : int
        Input width and number of features.
    architecture : str
        standard | jumprelu | topk.
    hook_name : str
        The TransformerLens hook the SAE reads (``blocks.3.hook_resid_pre``).
    hook_head_index : int or None
        For ``attn.hook_z``: the one head read ([D] input); None reads all heads flattened ([H * D]).
    k : int or None
        TopK's number of active features.
    apply_b_dec_to_input : bool
        Subtract b_dec before encoding.
    normalize_activations : str
        One of :data:`NORMALIZATIONS`.
    dtype : str
        The stored dtype ("float32").
    metadata : dict
        ``cfg.json``'s ``metadata`` (model_name, context_size, training numbers, ...) but its hook fields.
    extra : dict
        Other top-level keys, written back unchanged.
    """

    d_in: int
    d_sae: int
    architecture: str
    hook_name: str
    hook_head_index: int | None = None
    k: int | None = None
    apply_b_dec_to_input: bool = True
    normalize_activations: str = "none"
    dtype: str = "float32"
    metadata: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.architecture not in ARCHITECTURES:
            raise SAEError(f"SAE architecture {self.architecture!r} is not supported (only {', '.join(ARCHITECTURES)})")
        if self.normalize_activations not in NORMALIZATIONS:
            why = (": its scaling factor is not stored in the folder (fold it into the weights first)"
                   if self.normalize_activations == "expected_average_only_in" else "")
            raise SAEError(f"SAE input normalisation {self.normalize_activations!r} is not supported{why} "
                           f"(supported: {', '.join(NORMALIZATIONS)})")
        if self.architecture == "topk" and not (self.k and 0 < int(self.k) <= self.d_sae):
            raise SAEError(f"a topk SAE needs k in 1..{self.d_sae}, not {self.k!r}")
        if self.d_in <= 0 or self.d_sae <= 0:
            raise SAEError(f"SAE sizes must be positive (d_in {self.d_in}, d_sae {self.d_sae})")

    @property
    def layer(self) -> int | None:
        """The block the hook belongs to (None for hooks outside the blocks)."""
        m = _LAYER.match(self.hook_name)
        return int(m.group(1)) if m else None


@dataclass
class SAE:
    """An SAE's config and weights (float32 numpy arrays), plus its feature firing rates when known.

    ``sparsity`` is SAELens' ``sparsity.safetensors`` content: log10 of each feature's firing rate [d_sae].
    ``folder`` is where it was read from (None for one made in memory).
    """

    cfg: SAEConfig
    W_enc: np.ndarray
    W_dec: np.ndarray
    b_enc: np.ndarray
    b_dec: np.ndarray
    threshold: np.ndarray | None = None
    sparsity: np.ndarray | None = None
    folder: Path | None = None

    def __post_init__(self):
        c = self.cfg
        want = {"W_enc": (c.d_in, c.d_sae), "W_dec": (c.d_sae, c.d_in), "b_enc": (c.d_sae,), "b_dec": (c.d_in,)}
        if self.sparsity is not None:
            want["sparsity"] = (c.d_sae,)
        check_tensors(self, want, "SAE", f"cfg.json's d_in {c.d_in} and d_sae {c.d_sae}")

    # ---- SAELens' formulas -------------------------------------------------------------------------
    def _norm_in(self, x: np.ndarray) -> tuple[np.ndarray, tuple]:
        how = self.cfg.normalize_activations
        if how == "constant_norm_rescale":
            coeff = np.float32(np.sqrt(self.cfg.d_in)) / np.linalg.norm(x, axis=-1, keepdims=True)
            return x * coeff, (coeff,)
        if how == "layer_norm":
            mu = x.mean(axis=-1, keepdims=True)
            x = x - mu
            std = x.std(axis=-1, keepdims=True, ddof=1)
            return x / (std + np.float32(LN_EPS)), (mu, std)
        return x, ()

    def _norm_out(self, y: np.ndarray, stats: tuple) -> np.ndarray:
        how = self.cfg.normalize_activations
        if how == "constant_norm_rescale":
            return y / stats[0]
        if how == "layer_norm":
            return y * stats[1] + stats[0]
        return y

    def hidden_pre(self, x: np.ndarray) -> np.ndarray:
        """The encoder's pre-activation h ([..., d_sae]) of inputs ``x`` ([..., d_in])."""
        x, _ = self._norm_in(np.asarray(x, np.float32))
        if self.cfg.apply_b_dec_to_input:
            x = x - self.b_dec
        return x @ self.W_enc + self.b_enc

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Feature activations f ([..., d_sae]) of inputs ``x`` ([..., d_in]), by the architecture's rule."""
        return self.activation(self.hidden_pre(x))

    def activation(self, h: np.ndarray) -> np.ndarray:
        """The architecture's activation function applied to pre-activations ``h``."""
        return activate(h, self.cfg.architecture, self.cfg.k, self.threshold)

    def decode(self, f: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
        """The reconstruction ``f @ W_dec + b_dec`` ([..., d_in]).

        ``x`` (the encoded inputs) is needed only when the SAE normalises its input: the output is scaled back
        with the input's own statistics, as SAELens does.
        """
        y = np.asarray(f, np.float32) @ self.W_dec + self.b_dec
        if self.cfg.normalize_activations == "none":
            return y
        if x is None:
            raise SAEError(f"decoding an SAE with {self.cfg.normalize_activations} normalisation needs the input")
        return self._norm_out(y, self._norm_in(np.asarray(x, np.float32))[1])

    def reconstruct(self, x: np.ndarray) -> np.ndarray:
        """decode(encode(x)): the SAE's reconstruction of ``x``."""
        return self.decode(self.encode(x), x)


def activate(h: np.ndarray, architecture: str, k: int | None = None, threshold: np.ndarray | None = None) -> np.ndarray:
    """SAELens' activation of pre-activations ``h`` for SAEs and transcoders alike: relu (standard), relu where
    h > threshold (jumprelu), or relu on the k largest entries of each row and 0 elsewhere (topk)."""
    relu = np.maximum(h, 0)
    if architecture == "standard":
        return relu
    if architecture == "jumprelu":
        return relu * (h > threshold)
    k = int(k)
    top = np.argpartition(-h, k - 1, axis=-1)[..., :k]
    out = np.zeros_like(h)
    np.put_along_axis(out, top, np.take_along_axis(relu, top, axis=-1), axis=-1)
    return out


def check_tensors(obj, want: dict, what: str, sizes: str) -> None:
    """Make ``obj``'s weight tensors float32 and contiguous, and raise SAEError (one line) when one has not the
    shape ``want`` gives (``threshold`` is required, shape [d_sae], for a jumprelu ``obj.cfg``)."""
    for name in ("W_enc", "W_dec", "b_enc", "b_dec", "threshold", "sparsity", "W_skip"):
        v = getattr(obj, name, None)
        if v is not None:
            setattr(obj, name, np.ascontiguousarray(v, dtype=np.float32))
    if obj.cfg.architecture == "jumprelu":
        if obj.threshold is None:
            raise SAEError(f"a jumprelu {what} needs its 'threshold' tensor")
        want = {**want, "threshold": (obj.cfg.d_sae,)}
    for name, shape in want.items():
        if getattr(obj, name).shape != shape:
            raise SAEError(f"{what} tensor {name} is {list(getattr(obj, name).shape)}; {sizes} make it {list(shape)}")


def layer_of(hook_name: str) -> int | None:
    """The block number in a hook name (``blocks.3.hook_resid_pre`` -> 3), None outside the blocks."""
    m = _LAYER.match(hook_name)
    return int(m.group(1)) if m else None


def hook_width(hook_name: str, head_index: int | None, config: ModelConfig) -> int:
    """The input width an SAE at ``hook_name`` must have on a model of ``config`` (SAEError when the hook
    is not a per-position vector of that model)."""
    shapes = hook_shapes(config.n_layer)
    letters = shapes.get(hook_name)
    if letters is None:
        layer = layer_of(hook_name)
        if layer is not None and layer >= config.n_layer:
            raise SAEError(f"the SAE reads {hook_name}, but the model has blocks 0..{config.n_layer - 1}")
        raise SAEError(f"the SAE reads {hook_name!r}, which is not one of the model's hooks")
    if "K" in letters.split() or letters.split()[:2] != ["B", "P"]:
        raise SAEError(f"the SAE reads {hook_name} ({letters}), which is not one vector per position")
    dims = concrete_shape(letters, config, 1, 1)[2:]
    if head_index is not None:
        if len(dims) != 2:
            raise SAEError(f"the SAE names head {head_index}, but {hook_name} has no heads")
        if not 0 <= head_index < dims[0]:
            raise SAEError(f"the SAE reads head {head_index}, but the model has heads 0..{dims[0] - 1}")
        return int(dims[1])
    return int(np.prod(dims))


def check_fits(sae: SAE, config: ModelConfig) -> None:
    """Raise SAEError (one line saying why) when ``sae`` cannot read a model of ``config``."""
    c = sae.cfg
    width = hook_width(c.hook_name, c.hook_head_index, config)
    if c.d_in != width:
        raise SAEError(f"the SAE's d_in is {c.d_in}, but {c.hook_name}"
                       f"{'' if c.hook_head_index is None else f' head {c.hook_head_index}'} is {width} wide "
                       "in this model (an SAE trained for another model?)")


def sae_input(value: np.ndarray, head_index: int | None = None) -> np.ndarray:
    """An SAE's input [P, d_in] from a trace's value of its hook ([P, E], [P, M] or [P, H, D]).

    ``attn.hook_z``: head ``head_index`` (the config's ``hook_head_index``) when given, else the heads flattened
    (SAELens' hook_z reshaping, "n_heads d_head -> (n_heads d_head)").
    """
    v = np.asarray(value, np.float32)
    if head_index is not None:
        v = v[:, head_index]
    return v.reshape(v.shape[0], -1)


def variance_explained(x: np.ndarray, x_hat: np.ndarray) -> float:
    """1 - sum |x - x_hat|^2 / sum |x - mean x|^2 over all positions (the mean taken over the positions)."""
    x = np.asarray(x, np.float64)
    resid = float(((x - np.asarray(x_hat, np.float64)) ** 2).sum())
    total = float(((x - x.mean(axis=0)) ** 2).sum())
    return 1.0 - resid / total if total > 0 else float("nan")
