"""The Features tab and a feature's page: the SAE features active at the selected position and block, and one
feature's dashboard, from the model folder's own SAEs (``saes/``) and their stored dashboards.

The SAE reads ``blocks.L.hook_resid_pre`` from the session's history: the value onnxruntime computed in the run the
other views show (interventions in force included). Nothing here runs the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from gpt2viz.core.features.dashboards import BANDS
from gpt2viz.core.features.sae import SAEError
from gpt2viz.core.features.shipped import KIND_SAE, FeatureSet, feature_set
from gpt2viz.core.features.steering import top_features
from gpt2viz.core.session.session import Selection, Session

N_ROWS = 20  # active features listed
_SPLIT = re.compile(r"^(.*)\[(\d+)-(\d+)/(\d+)\]$")  # the tokenizer's display of part of a split character


@dataclass(frozen=True)
class FeatureRow:
    """One active feature: its activation here, its label and how often it fires on the dashboard's text."""

    feature: int
    activation: float
    label: str
    density: float | None


@dataclass(frozen=True)
class FeaturesSummary:
    """The SAE's reading of block ``layer``'s input at ``position``.

    ``relative_error`` is |x − x̂| / |x| (what the features leave out); ``missing`` is the one-line reason when the
    model has no usable SAE for that block (then the numbers are empty).
    """

    layer: int
    position: int
    token: int
    hook: str = ""
    d_sae: int = 0
    architecture: str = ""
    rows: tuple[FeatureRow, ...] = ()
    l0: int = 0
    x_norm: float = 0.0
    error_norm: float = 0.0
    has_dashboards: bool = False
    missing: str = ""

    @property
    def relative_error(self) -> float:
        """|x − x̂| / |x| at this position."""
        return self.error_norm / self.x_norm if self.x_norm > 0 else 0.0


def _open(session: Session, layer: int, kind: str = KIND_SAE) -> tuple[FeatureSet | None, str]:
    try:
        return feature_set(session.model, layer, kind), ""
    except SAEError as e:
        return None, str(e)


def features_summary(session: Session, selection: Selection | None = None, n_rows: int = N_ROWS,
                     layer: int | None = None) -> FeaturesSummary | None:
    """The active features at the selection's position and block (``layer`` overrides the block); None before a
    run."""
    h = session.history
    if h is None or session.model is None:
        return None
    sel = selection or session.selection
    pos = sel.position_in(len(h.tokens))
    L = sel.layer if layer is None else int(layer)
    fs, why = _open(session, L)
    if fs is None:
        return FeaturesSummary(L, pos, int(h.tokens[pos]), missing=why)
    x = np.asarray(h.hook_at(("resid_pre", L), pos), np.float32)[None]
    f = fs.sae.encode(x)
    err = float(np.linalg.norm(x - fs.sae.decode(f, x)))
    tok = session.model.tokenizer
    dash = fs.dashboards
    rows = tuple(FeatureRow(i, a, dash.label(i, tok) if dash else "",
                            float(dash.arrays["density"][i]) if dash else None)
                 for i, a in top_features(f, n_rows)[0])
    c = fs.sae.cfg
    return FeaturesSummary(L, pos, int(h.tokens[pos]), c.hook_name, c.d_sae, c.architecture, rows,
                           int((f[0] > 0).sum()), float(np.linalg.norm(x)), err, dash is not None)


@dataclass(frozen=True)
class ContextLine:
    """A context of a feature as readable pieces: (text, activation) per token; ``center`` the chosen token;
    ``band`` 0 for a top context, else the quantile band (``bands[band - 1]`` of the page)."""

    pieces: tuple[tuple[str, float], ...]
    center: int
    band: int


@dataclass(frozen=True)
class FeaturePage:
    """Feature ``feature`` of block ``layer``'s SAE: its dashboard in words and numbers.

    ``here`` is its activation at the session's selected position (None before a run); ``promotes`` /
    ``suppresses`` are (token text, logit effect); ``neighbours`` are (feature, cosine, label).
    """

    layer: int
    feature: int
    d_sae: int
    label: str
    density: float
    max_activation: float
    histogram: tuple[int, ...]
    contexts: tuple[ContextLine, ...]
    promotes: tuple[tuple[str, float], ...]
    suppresses: tuple[tuple[str, float], ...]
    neighbours: tuple[tuple[int, float, str], ...]
    bands: tuple[tuple[float, float], ...] = BANDS
    here: float | None = None
    corpus: str = ""
    corpus_tokens: int = 0
    kind: str = KIND_SAE


def pieces(tokenizer, ids, acts, center: int | None = None) -> tuple[tuple[tuple[str, float], ...], int | None]:
    """Tokens as readable text with their activations, and where ``center`` went.

    Spaces stay spaces (a context is read as a sentence); a character whose bytes are split over several tokens
    is shown once, whole, with the largest activation of its pieces (it is one thing to a reader).
    """
    out: list[tuple[str, float]] = []
    where = None
    prev = None
    for i, (info, a) in enumerate(zip(tokenizer.describe(list(ids)), acts, strict=True)):
        m = _SPLIT.match(info.display) if info.partial else None
        if m and prev is not None and prev[0] == (m.group(1), m.group(4)) and int(m.group(2)) == prev[1] + 1:
            text, prev_a = out[-1]
            out[-1] = (text, max(prev_a, float(a)))
            prev = (prev[0], int(m.group(3)))
        else:
            out.append((m.group(1) if m else info.text.replace("\n", "↵"), float(a)))
            prev = ((m.group(1), m.group(4)), int(m.group(3))) if m else None
        if i == center:
            where = len(out) - 1
    return tuple(out), where


def _input_here(session: Session, fs: FeatureSet, position: int) -> np.ndarray | None:
    """The coder's input at ``position`` from the session's history ([1, d_in]); None when the history does not
    hold it as is (a transcoder reading ``mlp.hook_in``)."""
    h = session.history
    if fs.kind == KIND_SAE:
        return np.asarray(h.hook_at(("resid_pre", fs.layer), position), np.float32)[None]
    alias = {"ln2.hook_normalized": "ln2", "hook_resid_mid": "resid_mid"}.get(fs.sae.cfg.input_kind)
    return None if alias is None else np.asarray(h.hook_at((alias, fs.layer), position), np.float32)[None]


def feature_page(session: Session, layer: int, feature: int, selection: Selection | None = None,
                 kind: str = KIND_SAE) -> FeaturePage | None:
    """The page of ``feature`` of block ``layer``'s SAE (``kind`` "sae") or transcoder ("transcoder"); None when
    the model has none with dashboards there or the feature is out of range."""
    if session.model is None:
        return None
    fs, _ = _open(session, layer, kind)
    if fs is None or fs.dashboards is None or not 0 <= feature < fs.sae.cfg.d_sae:
        return None
    tok = session.model.tokenizer
    d = fs.dashboards.feature(feature)
    contexts = tuple(ContextLine(*pieces(tok, c.tokens, c.acts, c.center), c.band) for c in d.contexts)
    here = None
    h = session.history
    if h is not None:
        sel = selection or session.selection
        x = _input_here(session, fs, sel.position_in(len(h.tokens)))
        here = None if x is None else float(fs.sae.encode(x)[0, feature])
    neigh = tuple((n, c, fs.dashboards.label(n, tok)) for n, c in d.neighbours)
    meta = fs.dashboards.meta
    return FeaturePage(layer, feature, fs.sae.cfg.d_sae, fs.dashboards.label(feature, tok), d.density,
                       d.max_activation, d.histogram, contexts,
                       tuple((tok.token_display(t), v) for t, v in d.promotes),
                       tuple((tok.token_display(t), v) for t, v in d.suppresses), neigh,
                       tuple(tuple(b) for b in meta.get("bands", BANDS)), here, str(meta.get("corpus", "")),
                       int(meta.get("tokens", 0)), kind)


def feature_on_text(model, layer: int, feature: int, text: str, kind: str = KIND_SAE) -> tuple[tuple[str, float], ...]:
    """"Test your own text": ``feature``'s activation on every token of ``text`` (runs the model: call it off the
    GUI thread). ValueError (one line) for an empty text or a model without that SAE or transcoder."""
    ids = model.to_tokens(text)[:model.config.n_positions]
    if not ids:
        raise ValueError("the text has no tokens")
    fs = feature_set(model, layer, kind)
    if not 0 <= feature < fs.sae.cfg.d_sae:
        raise SAEError(f"feature {feature} is out of range 0..{fs.sae.cfg.d_sae - 1}")
    if kind == KIND_SAE:
        from gpt2viz.core.features.activations import sae_activations

        f = sae_activations(model, fs.sae, ids)[1]
    else:
        from gpt2viz.core.engine.weights import Weights
        from gpt2viz.core.features.transcoder import transcoder_input

        c = fs.sae.cfg
        hook = f"blocks.{layer}.ln2.hook_normalized" if c.input_kind == "mlp.hook_in" else c.hook_name
        _, trace = model.run_with_cache(ids, names=[hook])
        tr = {hook: np.asarray(trace[hook]).reshape(len(ids), -1)}
        f = fs.sae.encode(transcoder_input(tr, layer, c.input_kind, Weights.of(model)))
    return pieces(model.tokenizer, ids, f[:, feature])[0]
