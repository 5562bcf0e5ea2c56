"""Transcoders: a sparse replacement of one block's MLP that reads the MLP's input and writes ``hook_mlp_out``.

Formulas (circuit-tracer's ``SingleLayerTranscoder`` and SAELens' ``Transcoder``; numpy, float32)::

    h     = x @ W_enc + b_enc                      # x: the transcoder's input hook, [..., d_in]
    f     = act(h)                                 # standard (relu) | jumprelu | topk, as for SAEs
    y_hat = f @ W_dec + b_dec (+ x @ W_skip.T)     # [..., d_out], the MLP output it stands for

Shapes here follow SAELens: W_enc [d_in, d_sae], W_dec [d_sae, d_out]; circuit-tracer stores W_enc transposed
([d_sae, d_in]) and W_skip [d_out, d_in], and the readers below turn it around.

**Which input.** The default is ``blocks.L.ln2.hook_normalized``: the residual after attention, centred and divided by
ln2's scale, *before* ln2's weight and bias. That is what GPT-2 transcoders (Dunefsky et al., trained with
TransformerLens' folded LayerNorms, where ``hook_normalized`` is exactly this) read, and it is linear in the residual
once the scale is frozen, so a graph's edges into a feature add up exactly. ``blocks.L.hook_resid_mid`` (the residual
itself) and ``blocks.L.mlp.hook_in`` (the LayerNorm's output with weight and bias, what circuit-tracer's configs call
the MLP input) are read too; the graph linearises each.

Files: the SAELens transcoder folder (``cfg.json`` with ``d_out`` and ``hook_name_out`` + ``sae_weights.safetensors``)
and circuit-tracer's set (``config.yaml`` + ``layer_{i}.safetensors``), both read and written.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpt2viz.core.features.sae import ARCHITECTURES, SAEError, activate, check_tensors
from gpt2viz.core.features.saelens_folder import _read_tensors

INPUT_KINDS = ("ln2.hook_normalized", "hook_resid_mid", "mlp.hook_in")
DEFAULT_INPUT = "ln2.hook_normalized"
OUTPUT = "hook_mlp_out"
CFG_FILE, WEIGHTS_FILE = "cfg.json", "sae_weights.safetensors"
CT_CONFIG = "config.yaml"
_HOOK = re.compile(r"^blocks\.(\d+)\.(.+)$")


@dataclass(frozen=True)
class TranscoderConfig:
    """A transcoder's shape and hooks.

    Attributes
    ----------
    d_in, d_sae, d_out : int
        Input width, number of features, output width.
    architecture : str
        standard | jumprelu | topk.
    layer : int
        The block whose MLP it replaces.
    input_kind : str
        One of :data:`INPUT_KINDS` (the hook name without ``blocks.L.``).
    k : int or None
        TopK's active features.
    metadata : dict
        Training numbers and provenance, kept in the files.
    """

    d_in: int
    d_sae: int
    d_out: int
    architecture: str
    layer: int
    input_kind: str = DEFAULT_INPUT
    k: int | None = None
    metadata: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.architecture not in ARCHITECTURES:
            raise SAEError(f"transcoder architecture {self.architecture!r} is not supported "
                           f"(only {', '.join(ARCHITECTURES)})")
        if self.input_kind not in INPUT_KINDS:
            raise SAEError(f"a transcoder reading {self.input_kind!r} is not supported (it must read one of "
                           f"{', '.join(INPUT_KINDS)} and write {OUTPUT})")
        if self.architecture == "topk" and not (self.k and 0 < int(self.k) <= self.d_sae):
            raise SAEError(f"a topk transcoder needs k in 1..{self.d_sae}, not {self.k!r}")

    @property
    def hook_name(self) -> str:
        """The input hook (``blocks.3.ln2.hook_normalized``)."""
        return f"blocks.{self.layer}.{self.input_kind}"

    @property
    def hook_name_out(self) -> str:
        """The output hook (``blocks.3.hook_mlp_out``)."""
        return f"blocks.{self.layer}.{OUTPUT}"


@dataclass
class Transcoder:
    """A transcoder's config and float32 weights (SAELens' orientation; see the module docstring)."""

    cfg: TranscoderConfig
    W_enc: np.ndarray
    W_dec: np.ndarray
    b_enc: np.ndarray
    b_dec: np.ndarray
    threshold: np.ndarray | None = None
    W_skip: np.ndarray | None = None
    folder: Path | None = None

    def __post_init__(self):
        c = self.cfg
        want = {"W_enc": (c.d_in, c.d_sae), "W_dec": (c.d_sae, c.d_out), "b_enc": (c.d_sae,), "b_dec": (c.d_out,)}
        if self.W_skip is not None:
            want["W_skip"] = (c.d_out, c.d_in)
        check_tensors(self, want, "transcoder", f"d_in {c.d_in}, d_sae {c.d_sae} and d_out {c.d_out}")

    def hidden_pre(self, x: np.ndarray) -> np.ndarray:
        """Pre-activations h = x @ W_enc + b_enc ([..., d_sae])."""
        return np.asarray(x, np.float32) @ self.W_enc + self.b_enc

    def activation(self, h: np.ndarray) -> np.ndarray:
        """The architecture's activation of pre-activations ``h`` (SAELens' rules, as for SAEs)."""
        return activate(h, self.cfg.architecture, self.cfg.k, self.threshold)

    def encode(self, x: np.ndarray) -> np.ndarray:
        """Feature activations ([..., d_sae])."""
        return self.activation(self.hidden_pre(x))

    def decode(self, f: np.ndarray, x: np.ndarray | None = None) -> np.ndarray:
        """The MLP output it predicts: f @ W_dec + b_dec, plus the skip term when it has one (needs ``x``)."""
        y = np.asarray(f, np.float32) @ self.W_dec + self.b_dec
        if self.W_skip is not None:
            if x is None:
                raise SAEError("a transcoder with a skip connection decodes with its input")
            y = y + np.asarray(x, np.float32) @ self.W_skip.T
        return y

    def forward(self, x: np.ndarray) -> np.ndarray:
        """decode(encode(x), x)."""
        return self.decode(self.encode(x), x)


def transcoder_input(trace, layer: int, kind: str, weights=None) -> np.ndarray:
    """A transcoder's input [P, E] from a trace (batch dropped): the hook itself, or for ``mlp.hook_in`` ln2's
    output computed from ``hook_normalized`` with ln2's weight and bias (``weights`` needed)."""
    if kind == "mlp.hook_in":
        n = np.asarray(trace[f"blocks.{layer}.ln2.hook_normalized"], np.float32)
        return n * weights.get(f"transformer.h.{layer}.ln_2.weight") + weights.get(f"transformer.h.{layer}.ln_2.bias")
    return np.asarray(trace[f"blocks.{layer}.{kind}"], np.float32)


def random_transcoder(layer: int, d_model: int, d_sae: int, *, architecture: str = "topk", k: int | None = 8,
                      input_kind: str = DEFAULT_INPUT, seed: int = 0, skip: bool = False) -> Transcoder:
    """A transcoder with seeded random weights (for timing and for the graph's exactness checks, whose sums hold
    whatever the weights)."""
    rng = np.random.default_rng(seed)
    s = 1.0 / np.sqrt(d_model)
    return Transcoder(
        TranscoderConfig(d_model, d_sae, d_model, architecture, layer, input_kind, k if architecture == "topk" else None,
                         {"random": True, "seed": seed}),
        W_enc=rng.normal(0, s, (d_model, d_sae)), W_dec=rng.normal(0, s, (d_sae, d_model)),
        b_enc=rng.normal(0, 0.1, d_sae), b_dec=rng.normal(0, 0.1, d_model),
        threshold=np.full(d_sae, 0.1) if architecture == "jumprelu" else None,
        W_skip=rng.normal(0, s, (d_model, d_model)) if skip else None)


# ---- SAELens transcoder folder -----------------------------------------------------------------------------------
def _split_hook(name: str) -> tuple[int, str]:
    m = _HOOK.match(name or "")
    if not m:
        raise SAEError(f"a transcoder's hook {name!r} is not a block's hook (blocks.L.{DEFAULT_INPUT})")
    return int(m.group(1)), m.group(2)


def read_saelens_transcoder(folder: str | Path) -> Transcoder:
    """Read a SAELens transcoder folder (``cfg.json`` with ``d_out`` + ``sae_weights.safetensors``)."""
    folder = Path(folder)
    try:
        raw = json.loads((folder / CFG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SAEError(f"cannot read {folder / CFG_FILE}: {e}") from None
    if "d_out" not in raw:
        raise SAEError(f"{folder} is an SAE, not a transcoder (its cfg.json has no d_out)")
    meta = dict(raw.get("metadata") or {})
    hook_in = meta.pop("hook_name", None) or raw.get("hook_name") or raw.get("hook_point")
    hook_out = raw.get("hook_name_out") or meta.pop("hook_name_out", None) or ""
    layer, kind = _split_hook(hook_in)
    if hook_out and _split_hook(hook_out) != (layer, OUTPUT):
        raise SAEError(f"the transcoder writes {hook_out}; gpt2viz's graph needs blocks.{layer}.{OUTPUT}")
    arch = raw.get("architecture", "standard")
    if arch == "transcoder":  # SAELens' class name for a ReLU transcoder
        arch = "standard"
    arch = {"jumprelu_transcoder": "jumprelu", "topk_transcoder": "topk"}.get(arch, arch)
    t = _read_tensors(folder / WEIGHTS_FILE)
    cfg = TranscoderConfig(int(raw["d_in"]), int(raw["d_sae"]), int(raw["d_out"]), arch, layer, kind,
                           raw.get("k"), meta)
    return Transcoder(cfg, t["W_enc"], t["W_dec"], t["b_enc"], t["b_dec"], t.get("threshold"), t.get("W_skip"),
                      folder=folder)


def _share(path: Path) -> None:
    # safetensors writes 0600; transcoders are data to share, like cfg.json beside them
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_saelens_transcoder(tc: Transcoder, folder: str | Path) -> Path:
    """Write ``tc`` as a SAELens transcoder folder (float32); the folder must not hold another one."""
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    c = tc.cfg
    cfg = {"architecture": c.architecture, "d_in": c.d_in, "d_sae": c.d_sae, "d_out": c.d_out, "dtype": "float32",
           "apply_b_dec_to_input": False, "normalize_activations": "none", "hook_name_out": c.hook_name_out,
           "hook_layer_out": c.layer, "hook_head_index_out": None,
           "metadata": {**c.metadata, "hook_name": c.hook_name, "hook_head_index": None}}
    if c.k is not None:
        cfg["k"] = int(c.k)
    tensors = {"W_enc": tc.W_enc, "W_dec": tc.W_dec, "b_enc": tc.b_enc, "b_dec": tc.b_dec}
    if tc.threshold is not None:
        tensors["threshold"] = tc.threshold
    if tc.W_skip is not None:
        tensors["W_skip"] = tc.W_skip
    save_file({k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()}, str(folder / WEIGHTS_FILE))
    _share(folder / WEIGHTS_FILE)
    (folder / CFG_FILE).write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    return folder


# ---- circuit-tracer's transcoder set -----------------------------------------------------------------------------
def _ct_kind(hook: str) -> str:
    # circuit-tracer's configs name hooks without the block ("hook_resid_mid", "mlp.hook_in", "ln2.hook_normalized")
    hook = re.sub(r"^blocks\.\d+\.", "", hook or "")
    if hook not in INPUT_KINDS:
        raise SAEError(f"config.yaml's feature_input_hook {hook!r} is not one gpt2viz reads ({', '.join(INPUT_KINDS)})")
    return hook


def read_circuit_tracer(folder: str | Path) -> list[Transcoder]:
    """Read circuit-tracer's transcoder set: ``config.yaml`` (feature_input_hook, feature_output_hook, transcoders:
    the per-layer files) and ``layer_{i}.safetensors`` (W_enc [d_sae, d_in], W_dec [d_sae, d_out], b_enc, b_dec,
    optional ``activation_function.threshold``, ``k`` and ``W_skip``). Returns one transcoder per layer, in order."""
    import yaml

    folder = Path(folder)
    try:
        conf = yaml.safe_load((folder / CT_CONFIG).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise SAEError(f"cannot read {folder / CT_CONFIG}: {e}") from None
    kind = _ct_kind(conf.get("feature_input_hook", DEFAULT_INPUT))
    out_hook = re.sub(r"^blocks\.\d+\.", "", conf.get("feature_output_hook", OUTPUT))
    if out_hook != OUTPUT:
        raise SAEError(f"config.yaml's feature_output_hook is {out_hook!r}; gpt2viz's graph needs {OUTPUT}")
    files = conf.get("transcoders") or sorted(p.name for p in folder.glob("layer_*.safetensors"))
    paths = []
    for f in files:
        p = Path(str(f).removeprefix("file://"))
        paths.append(p if p.is_absolute() else folder / p)
    by_layer = {}
    for p in paths:
        m = re.search(r"layer_(\d+)\.safetensors$", p.name)
        if not m:
            raise SAEError(f"{p.name}: circuit-tracer's per-layer files are named layer_{{i}}.safetensors")
        t = _read_tensors(p)
        W_enc, W_dec = t["W_enc"].T, t["W_dec"]
        thr = t.get("activation_function.threshold")
        k = int(t["k"]) if "k" in t else None
        arch = "jumprelu" if thr is not None else "topk" if k is not None else "standard"
        layer = int(m.group(1))
        cfg = TranscoderConfig(W_enc.shape[0], W_enc.shape[1], W_dec.shape[1], arch, layer, kind, k,
                               {"model_kind": conf.get("model_kind", ""), "model_name": conf.get("model_name", "")})
        by_layer[layer] = Transcoder(cfg, W_enc, W_dec, t["b_enc"], t["b_dec"], thr, t.get("W_skip"), folder=folder)
    if not by_layer or sorted(by_layer) != list(range(len(by_layer))):
        raise SAEError(f"{folder}: circuit-tracer's set needs layer_0 .. layer_N files, found layers {sorted(by_layer)}")
    return [by_layer[i] for i in range(len(by_layer))]


def write_circuit_tracer(transcoders: list[Transcoder], folder: str | Path, *, model_name: str = "") -> Path:
    """Write a set as circuit-tracer does (``layer_{i}.safetensors`` with its orientation, ``config.yaml``)."""
    import yaml
    from safetensors.numpy import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    kinds = {tc.cfg.input_kind for tc in transcoders}
    if len(kinds) != 1:
        raise SAEError(f"a circuit-tracer set reads one hook in every layer, not {sorted(kinds)}")
    names = []
    for i, tc in enumerate(sorted(transcoders, key=lambda t: t.cfg.layer)):
        if tc.cfg.layer != i:
            raise SAEError(f"a circuit-tracer set has one transcoder per layer from 0; layer {i} is missing")
        tensors = {"W_enc": tc.W_enc.T, "W_dec": tc.W_dec, "b_enc": tc.b_enc, "b_dec": tc.b_dec}
        if tc.threshold is not None:
            tensors["activation_function.threshold"] = tc.threshold
        if tc.W_skip is not None:
            tensors["W_skip"] = tc.W_skip
        arrays = {k: np.ascontiguousarray(v, np.float32) for k, v in tensors.items()}
        if tc.cfg.k is not None:
            arrays["k"] = np.asarray(int(tc.cfg.k), np.int64)
        name = f"layer_{i}.safetensors"
        save_file(arrays, str(folder / name))
        _share(folder / name)
        names.append(name)
    conf = {"model_kind": "transcoder_set", "model_name": model_name, "feature_input_hook": kinds.pop(),
            "feature_output_hook": OUTPUT, "transcoders": names}
    (folder / CT_CONFIG).write_text(yaml.safe_dump(conf, sort_keys=False), encoding="utf-8")
    return folder


def read_transcoders(folder: str | Path) -> list[Transcoder]:
    """A transcoder set from a folder: circuit-tracer's (``config.yaml``) or SAELens folders, one per layer, in
    subfolders (``blocks.L.*``), ordered by layer."""
    folder = Path(folder)
    if (folder / CT_CONFIG).is_file():
        return read_circuit_tracer(folder)
    if (folder / CFG_FILE).is_file():
        return [read_saelens_transcoder(folder)]
    subs = [read_saelens_transcoder(p) for p in sorted(folder.iterdir()) if (p / CFG_FILE).is_file()]
    if not subs:
        raise SAEError(f"{folder} holds no transcoders (config.yaml, or SAELens folders with cfg.json)")
    subs.sort(key=lambda t: t.cfg.layer)
    return subs
