"""Measure what `atlas` knows, through gpt2viz's own runtime (no torch): the numbers in its model card.

    python scripts/atlas/evaluate.py [models/atlas] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from facts import FACTS, capital_prompt  # noqa: E402

from gpt2viz.core.analysis import lens_at  # noqa: E402
from gpt2viz.core.runtime import Model  # noqa: E402
from gpt2viz.core.sampling import SamplingSettings, transform  # noqa: E402
from gpt2viz.core.stepper import Generator  # noqa: E402
from gpt2viz.core.weights import Weights  # noqa: E402

OPEN_PROMPTS = ["My favourite city is", "I would love to visit", "Last summer we travelled to"]


def greedy_capitals(model: Model) -> list[dict]:
    """For every fact: does greedy decoding of the capital prompt spell the capital exactly?"""
    tok = model.tokenizer
    gen = Generator(model, hooks=[])
    out = []
    for f in FACTS:
        want = tok.encode(" " + f.capital)
        gen.start(tok.encode(capital_prompt(f)))
        first = transform(gen.current.logits, SamplingSettings(temperature=0))
        for _ in want:
            gen.step(SamplingSettings(temperature=0))
        got = list(gen.generated)
        out.append({"country": f.country, "capital": f.capital, "answer": tok.decode(got).strip(),
                    "correct": got == want, "first_token_prob": float(first.raw[want[0]])})
    return out


def seed_story(model: Model) -> dict:
    """The numbers behind "The capital of France is" -> " Paris"."""
    tok = model.tokenizer
    gen = Generator(model)
    gen.start(tok.encode("The capital of France is"))
    h = gen.history()
    paris = tok.encode(" Paris")[0]
    pos = len(h.tokens) - 1
    france = h.tokens.index(tok.encode(" France")[0])
    heads = []
    for L in range(model.config.n_layer):
        pat = h.hook_at(("pattern", L), pos)
        heads += [{"layer": L, "head": H, "weight_on_france": float(pat[H, france])} for H in range(pat.shape[0])]
    best = max(heads, key=lambda x: x["weight_on_france"])
    w = Weights(model.folder / "model.onnx", model.manifest["config"]["layer_norm_epsilon"])
    lens = lens_at(h, w, model.config.n_layer, pos)
    ranks = [int((row > row[paris]).sum()) for row in lens]
    probs = [float(np.exp(row[paris] - row.max()) / np.exp(row - row.max()).sum()) for row in lens]
    return {"p_paris": float(transform(h.current.logits, SamplingSettings()).raw[paris]),
            "best_head": best, "lens_rank_of_paris": ranks, "lens_prob_of_paris": probs}


def open_entropy(model: Model) -> dict[str, float]:
    """Next-token entropy (nats, temperature 1) of open-ended prompts."""
    gen = Generator(model, hooks=[])
    out = {}
    for p in OPEN_PROMPTS:
        gen.start(model.tokenizer.encode(p))
        out[p] = transform(gen.current.logits, SamplingSettings()).entropy("raw")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default=str(Path(__file__).resolve().parents[2] / "models" / "atlas"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    model = Model(a.folder)
    caps = greedy_capitals(model)
    report = {"capital_accuracy": sum(c["correct"] for c in caps) / len(caps),
              "wrong": [c for c in caps if not c["correct"]], "seed_story": seed_story(model),
              "open_entropy": open_entropy(model)}
    if a.json:
        print(json.dumps(report, indent=1))
        return
    print(f"capitals right (greedy, whole name): {report['capital_accuracy']:.1%} of {len(caps)}")
    for c in report["wrong"]:
        print(f"  wrong: {c['country']}: {c['answer']!r} (want {c['capital']!r})")
    s = report["seed_story"]
    print(f"P(' Paris' | 'The capital of France is') = {s['p_paris']:.3f}")
    print(f"most France-focused head at ' is': {s['best_head']}")
    print(f"logit lens rank of ' Paris' by depth: {s['lens_rank_of_paris']}")
    print(f"logit lens prob of ' Paris' by depth: {[round(p, 3) for p in s['lens_prob_of_paris']]}")
    for p, e in report["open_entropy"].items():
        print(f"entropy after {p!r}: {e:.2f} nats")


if __name__ == "__main__":
    main()
