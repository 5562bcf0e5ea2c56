"""`gpt2viz features`: the SAE features active at each position of a prompt, as a table or one JSON object."""

from __future__ import annotations

import json

import numpy as np

TOP = 10


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("features", help="the sparse-autoencoder features active at each position of a prompt")
    p.add_argument("--prompt", required=True)
    add_model(p)
    p.add_argument("--layer", type=int, help="the block whose hook_resid_pre SAE is read (default: the middle block)")
    p.add_argument("--sae", metavar="DIR", help="an SAE folder (SAELens format) instead of the model's own")
    p.add_argument("--position", type=int, help="only this position (negative counts from the end)")
    p.add_argument("--top", type=int, default=TOP, help=f"features listed per position (default {TOP})")
    p.add_argument("--json", action="store_true", help="one JSON object")


def run(a, open_model) -> int:
    """Encode the prompt's hook values with the SAE and print the top features; bad input raises ValueError."""
    from gpt2viz.core.features.activations import sae_activations
    from gpt2viz.core.features.shipped import open_sae
    from gpt2viz.core.features.steering import top_features

    if a.top < 1:
        raise ValueError(f"--top must be at least 1, got {a.top}")
    model = open_model(a.model)
    layer = a.layer
    if layer is None and a.sae is None:
        layer = model.config.n_layer // 2
    ids = model.to_tokens(a.prompt)
    if not ids:
        raise ValueError("the prompt has no tokens")
    positions = list(range(len(ids)))
    if a.position is not None:
        if not -len(ids) <= a.position < len(ids):
            raise ValueError(f"--position {a.position} is outside the prompt's {len(ids)} tokens")
        positions = [positions[a.position]]
    sae = open_sae(model, a.sae, layer=layer)
    x, f = sae_activations(model, sae, ids)
    err = np.linalg.norm(x - sae.decode(f, x), axis=-1) / np.maximum(np.linalg.norm(x, axis=-1), 1e-12)
    tops = top_features(f, a.top)
    tok = model.tokenizer
    rows = [{"position": p, "token": tok.token_text(ids[p]), "l0": int((f[p] > 0).sum()),
             "relative_error": round(float(err[p]), 4),
             "features": [{"feature": i, "activation": round(v, 4)} for i, v in tops[p]]} for p in positions]
    out = {"sae": str(sae.folder), "hook": sae.cfg.hook_name, "architecture": sae.cfg.architecture,
           "d_sae": sae.cfg.d_sae, "model": model.name, "positions": rows}
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{sae.cfg.hook_name}: {sae.cfg.architecture} SAE, {sae.cfg.d_sae} features ({sae.folder})")
    for r in rows:
        feats = "  ".join(f"{d['feature']}:{d['activation']:.2f}" for d in r["features"]) or "(none active)"
        print(f"{r['position']:4d} {tok.token_display(ids[r['position']]):<14} L0 {r['l0']:3d}  "
              f"error {r['relative_error']:6.1%}  {feats}")
    print("error = |x - reconstruction| / |x| at that position: what the features leave out")
    return 0
