"""Attribution-graph speed (issue 29: <= 5 s for a 10-token prompt on atlas, <= 60 s on a GPT-2-small-sized model
with 24,576-feature transcoders, 2 cores). Prints, never asserts.

Transcoders are random (TopK, k features per position; the cost depends on how many features are active, not on
their meaning). The GPT-2-small-sized model is random-init, exported once under --work (bench_engine's cache).

    python bench/bench_graph.py [--small] [--k 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PROMPT = "The capital of France is a city that has many"  # 10 tokens


def time_graph(folder, d_sae: int, k: int, rounds: int, dtype="float64") -> None:
    """Build (and prune) the graph ``rounds`` times; print the median and the sizes."""
    from gpt2viz.core.circuits.graph import build_graph
    from gpt2viz.core.circuits.prune import graph_scores, prune
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.engine.weights import Weights
    from gpt2viz.core.features.transcoder import random_transcoder

    m = Model(folder)
    c = m.config
    t0 = time.perf_counter()
    tcs = [random_transcoder(L, c.n_embd, d_sae, k=k, seed=L) for L in range(c.n_layer)]
    made = time.perf_counter() - t0
    ids = m.to_tokens(PROMPT)
    build, total = [], []
    for _ in range(rounds):
        w = Weights.of(m)
        t0 = time.perf_counter()
        g = build_graph(m, tcs, ids, weights=w, dtype=dtype)
        t1 = time.perf_counter()
        prune(g)
        graph_scores(g)
        t2 = time.perf_counter()
        build.append(t1 - t0)
        total.append(t2 - t0)
    print(f"{m.name}: {c.n_layer} layers, width {c.n_embd}, {len(ids)} tokens, transcoders {d_sae} features "
          f"(TopK k {k}; made in {made:.1f} s): {g.n_features} active features, {g.adjacency.shape[0]} nodes; "
          f"graph {statistics.median(build):.2f} s, with pruning and scores {statistics.median(total):.2f} s "
          f"(median of {rounds}, {dtype})", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", action="store_true", help="also the GPT-2-small-sized model (exported once)")
    p.add_argument("--k", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--work", type=Path, default=Path("build/bench"))
    p.add_argument("--dtype", default="float64", help="of the backward pass: float64 (default) or float32")
    a = p.parse_args()
    from gpt2viz.core.model_folder.locations import resolve_model

    time_graph(resolve_model(None), 1024, a.k, a.rounds, a.dtype)
    if a.small:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_engine import SMALL, ensure_model

        _, folder = ensure_model(a.work, SMALL)
        time_graph(folder, 24576, a.k, max(1, a.rounds // 3), a.dtype)


if __name__ == "__main__":
    main()
