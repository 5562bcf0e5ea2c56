"""`gpt2viz sae-dashboards`: build the feature dashboards of SAE folders (stored beside each SAE as dashboard.npz)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("sae-dashboards", help="build the feature dashboards (top contexts, density, logit effects, "
                       "neighbours) of SAE folders; default: every SAE the model folder ships")
    add_model(p)
    p.add_argument("--sae", action="append", default=[], type=Path, metavar="DIR",
                   help="an SAE or transcoder folder (SAELens format; repeatable); default: all of the model's own "
                        "SAEs (saes/)")
    p.add_argument("--transcoders", action="store_true", help="also every transcoder of the model folder's "
                   "transcoders/ (the attribution graph's features: their labels and pages)")
    p.add_argument("--layer", action="append", default=[], type=int, metavar="L",
                   help="only the model's own SAE of block L's hook_resid_pre (repeatable)")
    p.add_argument("--text", type=Path, metavar="FILE", help="UTF-8 text, one text per line (default: the text "
                   "gpt2viz ships, resources/corpus/atlas.txt)")
    p.add_argument("--context", type=int, help="tokens per window (default: the SAE's training context, else 64)")
    p.add_argument("--seed", type=int, default=0, help="draws the quantile-band contexts (default 0)")
    p.add_argument("--json", action="store_true", help="one JSON object per SAE")


def run(a, open_model) -> int:
    """Build and store the dashboards of each SAE named; bad input raises ValueError (SAEError)."""
    from gpt2viz.core.features.activations import read_texts, shipped_texts
    from gpt2viz.core.features.dashboards import build_dashboards
    from gpt2viz.core.features.sae import SAEError
    from gpt2viz.core.features.shipped import open_sae, shipped_saes
    from gpt2viz.core.features.transcoder import read_transcoders

    model = open_model(a.model)
    saes = [_open(model, f) for f in a.sae]
    saes += [open_sae(model, layer=L) for L in a.layer]
    if a.transcoders:
        if not (model.folder / "transcoders").is_dir():
            raise SAEError(f"{model.name} ships no transcoders (transcoders/)")
        saes += read_transcoders(model.folder / "transcoders")
    if not saes:
        saes = [open_sae(model, f) for f in shipped_saes(model).values()]
        if not saes:
            raise SAEError(f"{model.name} ships no SAE: name one with --sae DIR")
    texts = read_texts(a.text) if a.text else shipped_texts()
    corpus = str(a.text) if a.text else "resources/corpus/atlas.txt"
    say = (lambda m: None) if a.json else (lambda m: print(m, file=sys.stderr, flush=True))
    for sae in saes:
        t0 = time.perf_counter()

        def tick(done, total, name=sae.cfg.hook_name, last=[0.0]):  # noqa: B006 - one clock per SAE, by design
            now = time.perf_counter()
            if done == total or now - last[0] > 2.0:
                last[0] = now
                say(f"  {name}: {done}/{total}")

        dash = build_dashboards(model, sae, texts, context=a.context, seed=a.seed, corpus=corpus, progress=tick)
        path = dash.save(sae.folder)
        alive = int((dash.arrays["density"] > 0).sum())
        out = {"sae": str(Path(sae.folder).resolve()), "hook": sae.cfg.hook_name, "dashboard": str(path.resolve()),
               "features": dash.d_sae, "fired": alive, "tokens": dash.meta["tokens"],
               "seconds": round(time.perf_counter() - t0, 1)}
        if a.json:
            print(json.dumps(out, ensure_ascii=False), flush=True)
        else:
            print(f"{path}: {dash.d_sae} features ({alive} fired) over {dash.meta['tokens']:,} tokens of {corpus} "
                  f"in {out['seconds']:.1f} s")
    return 0


def _open(model, folder: Path):
    """An SAE folder, or a transcoder folder (its cfg.json has d_out), checked against the model."""
    import json

    from gpt2viz.core.features.shipped import open_sae
    from gpt2viz.core.features.transcoder import read_saelens_transcoder

    try:
        is_transcoder = "d_out" in json.loads((Path(folder) / "cfg.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        is_transcoder = False  # open_sae says what is wrong with the folder
    return read_saelens_transcoder(folder) if is_transcoder else open_sae(model, folder)
