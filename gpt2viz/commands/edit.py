"""`gpt2viz edit`: change one fact by ROME and measure the edit (efficacy, paraphrase, neighbourhood, fluency)."""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from gpt2viz.core.editing.evaluation import measure_edit, stats_text
from gpt2viz.core.editing.rome import EditRequest, compute_edit, subject_last_index


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("edit", help="change one fact by a rank-one update of one MLP (ROME) and measure the edit")
    p.add_argument("--prompt", required=True, help='a prompt that names the subject, e.g. "The capital of France is"')
    p.add_argument("--subject", required=True, help='the subject as it appears in the prompt, e.g. " France"')
    p.add_argument("--target", required=True, help='the new continuation, e.g. " Rome"')
    p.add_argument("--layer", type=int, help="block whose MLP is edited (default: the causal trace's peak MLP "
                   "layer at the subject's last token)")
    add_model(p)
    p.add_argument("--seed", type=int, default=0, help="seed of the prefixes the model writes, the neighbours "
                   "chosen and the fluency samples")
    p.add_argument("--identity", action="store_true", help="u = k* (no key statistics: ROME's mom2_adjustment off)")
    p.add_argument("--out", metavar="DIR", help="also write the edited model as a new model folder, validated "
                   "hook by hook against the edit made by the graph's input")
    p.add_argument("--force", action="store_true", help="replace an existing --out folder")
    p.add_argument("--json", action="store_true", help="one JSON object")


def run(a, open_model) -> int:
    """Compute the edit, measure it, print (text or JSON); bad input raises ValueError."""
    model = open_model(a.model)
    tok = model.tokenizer
    t0 = time.perf_counter()
    request = EditRequest(a.prompt, a.subject, a.target)
    ids = tok.encode(a.prompt)
    last = subject_last_index(tok, "", a.prompt, a.subject)
    layer_from = "given"
    layer = a.layer
    if layer is None:
        from gpt2viz.core.analysis.causal_trace import causal_trace
        from gpt2viz.core.engine.weights import Weights

        start = len(tok.encode(a.prompt[: a.prompt.rfind(a.subject)]))
        subject = tuple(range(min(start, last), last + 1))
        tr = causal_trace(model, Weights.of(model), ids, subject, kinds=("mlp",), window=1, seed=a.seed)
        layer, layer_from = int(np.argmax(tr.prob["mlp"][:, last])), "causal trace"
    texts = [] if a.identity else stats_text()
    say = (lambda m: None) if a.json else (lambda m: print(m, file=sys.stderr))
    say(f"editing block {layer}'s MLP ({layer_from}); key statistics: "
        f"{'identity' if not texts else 'the text gpt2viz ships'}")
    result = compute_edit(model, request, layer, stats_texts=texts, seed=a.seed)
    scores, fact, n_neighbours = measure_edit(model, result.edit, a.prompt, a.subject, a.target, seed=a.seed)
    out = {"prompt": a.prompt, "subject": a.subject, "target": a.target, "old": fact["true"],
           "layer": layer, "layer_from": layer_from, "covariance": result.covariance,
           "stats_tokens": result.stats_tokens, "u_norm": round(result.u_norm, 4),
           "v_norm": round(result.v_star_norm, 4), "delta_norm": round(result.delta_norm, 4),
           **scores.as_json(), "paraphrases": len(fact["paraphrases"]), "neighbours": n_neighbours,
           "seconds": round(time.perf_counter() - t0, 1)}
    if not fact["paraphrases"]:
        out["paraphrase"] = None
    if a.out:
        from gpt2viz.core.editing.save import save_edited

        folder = save_edited(model, (result.edit,), a.out, force=a.force, request=out)
        out["out"] = str(folder)
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    pct = lambda x: "n/a" if x is None else f"{x:.0%}"
    print(f"{a.prompt!r}: {fact['true']!r} -> {a.target!r} at block {layer} ({layer_from})")
    print(f"  P(new) {scores.p_new_before:.3f} -> {scores.p_new_after:.3f}   "
          f"P(old) {scores.p_old_before:.3f} -> {scores.p_old_after:.3f}")
    print(f"  efficacy {pct(scores.efficacy)}  paraphrase {pct(out['paraphrase'])}  "
          f"paraphrase (Chinese) {pct(scores.paraphrase_zh)}  neighbourhood {pct(scores.neighbourhood)} "
          f"(before: {pct(scores.neighbourhood_before)})")
    print(f"  fluency (n-gram entropy, bits) {scores.fluency_before:.2f} -> {scores.fluency_after:.2f}")
    print(f"  |u| {result.u_norm:.3f}  |v*| {result.v_star_norm:.3f}  |v* - Wk| {result.delta_norm:.3f}  "
          f"key statistics: {result.covariance}" + (f"  saved: {out['out']}" if a.out else ""))
    return 0
