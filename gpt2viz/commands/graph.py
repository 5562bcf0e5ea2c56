"""`gpt2viz graph`: the next token's transcoder attribution graph, written as circuit-tracer's graph JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpt2viz.core.circuits.prune import EDGE_THRESHOLD, NODE_THRESHOLD


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("graph", help="the next token's attribution graph through transcoders (circuit-tracer's "
                       "graph JSON)")
    p.add_argument("--prompt", required=True)
    add_model(p)
    p.add_argument("--target", help="a token to attribute first, e.g. ' Paris' (default: the most likely)")
    p.add_argument("--node-threshold", type=float, default=NODE_THRESHOLD,
                   help=f"keep nodes holding this share of the influence on the logits (default {NODE_THRESHOLD})")
    p.add_argument("--edge-threshold", type=float, default=EDGE_THRESHOLD,
                   help=f"keep edges holding this share (default {EDGE_THRESHOLD})")
    p.add_argument("--transcoders", type=Path, metavar="DIR",
                   help="a transcoder set: circuit-tracer's (config.yaml + layer_{i}.safetensors) or one SAELens "
                   "transcoder folder per block inside DIR (default: the model folder's own transcoders/)")
    p.add_argument("--out", type=Path, required=True,
                   help="FILE.json (circuit-tracer's graph), or FILE.png / FILE.svg (the graph drawn as a figure)")


def run(a, open_model) -> int:
    """Build, prune and write the graph; print its size and scores. Bad input raises ValueError."""
    from gpt2viz.core.analysis.attribution import token_id
    from gpt2viz.core.circuits.graph import build_graph
    from gpt2viz.core.circuits.graph_json import graph_json
    from gpt2viz.core.circuits.prune import graph_scores, prune
    from gpt2viz.core.features.dashboards import coder_labels
    from gpt2viz.core.features.transcoder import read_transcoders

    if a.out.suffix.lower() not in (".json", ".png", ".svg"):
        raise ValueError(f"--out {a.out}: write .json, .png or .svg")
    for name, v in (("--node-threshold", a.node_threshold), ("--edge-threshold", a.edge_threshold)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} must be between 0 and 1, not {v}")
    model = open_model(a.model)
    tc_dir = a.transcoders
    if tc_dir is None:
        tc_dir = model.folder / "transcoders"
        if not tc_dir.is_dir():
            raise ValueError(f"{model.name} ships no transcoders: give --transcoders DIR (train a set with "
                             "gpt2viz train-sae --transcoder --hook blocks.L.ln2.hook_normalized, one per block)")
    transcoders = read_transcoders(tc_dir)
    target = token_id(model.tokenizer, a.target) if a.target is not None else None
    g = build_graph(model, transcoders, a.prompt, target=target,
                    progress=lambda d, t: print(f"  block {d}/{t}", file=sys.stderr, flush=True))
    pruned = prune(g, a.node_threshold, a.edge_threshold)
    replacement, completeness = graph_scores(g)
    slug = a.out.stem
    labels = coder_labels(transcoders, [(int(k[0]), int(k[2])) for k in g.active_features], model.tokenizer)
    out = graph_json(g, pruned, model.tokenizer, prompt=a.prompt, slug=slug, scan=str(tc_dir),
                     node_threshold=a.node_threshold, labels=labels)
    out["metadata"]["info"] = {"generator": "gpt2viz graph", "model": model.name,
                               "replacement_score": replacement, "completeness_score": completeness}
    if a.out.suffix.lower() == ".json":
        a.out.write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
    else:
        target_text = model.tokenizer.token_display(int(g.logit_tokens[0]))
        write_figure(out, a.out, f"{a.prompt} → {target_text}")
    tok = model.tokenizer
    print(f"{a.out}: {len(out['nodes'])} nodes, {len(out['links'])} links (of {g.n_features} active features); "
          f"target {tok.token_display(int(g.logit_tokens[0]))} p={g.logit_probabilities[0]:.3f}; "
          f"replacement score {replacement:.3f}, completeness score {completeness:.3f}")
    return 0


def write_figure(data: dict, out: Path, title: str) -> None:
    """Draw graph JSON ``data`` as a PNG or SVG figure at ``out`` (offscreen Qt: no window opens)."""
    import os

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    from gpt2viz.core.viewmodels.graph_layout import graph_layout
    from gpt2viz.widgets.figures.base import render_png, svg_bytes
    from gpt2viz.widgets.figures.graph import graph_figure

    _app = QGuiApplication.instance() or QGuiApplication(["gpt2viz"])  # fonts need an application
    fig = graph_figure(graph_layout(data), title=title)
    if out.suffix.lower() == ".svg":
        out.write_bytes(svg_bytes(fig))
    elif not render_png(fig, scale=2.0).save(str(out)):
        raise ValueError(f"could not write {out}")
