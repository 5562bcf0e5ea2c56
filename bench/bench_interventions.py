"""What putting an ablation on a text costs the app's worker, against one run of that text, side by side in one run.

The app shows an intervened run beside the same text run without interventions (the chart's ghost, the deltas,
the Path view's "before"). Per round, on a new text each time (its first tokens shifted by one):

  A  the worker's ``start`` of the text, one step, then ``intervene`` with one head ablated: the time of the
     ``intervene`` call, which runs the text again under the ablation and brings the run without it;
  B  the same ablated text run once by ``Model.run`` (every hook, as the generator's run), the least an ablation
     can cost: A / B is how many runs of the text an ablation costs;
  C  Back under that ablation (the worker's ``back``: the state's lens, made on the worker, and the run without
     the ablation, taken from the frames kept), beside D, a Back without any (a state shown before: nothing made);

each after the same 150 ms idle pause as bench_latency.py's actions.

    python bench/bench_interventions.py --model build/bench/model-l12h12e768 --tokens 200 --rounds 5
    python bench/bench_interventions.py --tokens 1000 --rounds 3   # the GPT-2-small-sized model (made if missing)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

PAUSE = 0.15  # as bench_latency.QUIET: the idle time before each of the window's actions


def main(argv: list[str] | None = None) -> int:
    """Print the medians of A-D and the ratio A / B."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a model folder (default: the GPT-2-small-sized bench model, made if missing)")
    ap.add_argument("--tokens", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_engine import SMALL, ensure_model, long_prompt

    from gpt2viz.app.worker import InferenceWorker
    from gpt2viz.core.generation.sampling import SamplingSettings
    from gpt2viz.core.interventions import HeadAblation
    from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

    folder = Path(a.model) if a.model else ensure_model(Path("build/bench"), SMALL)[1]
    tok = GPT2Tokenizer.from_file(folder / "tokenizer.json")
    ids = long_prompt(tok, a.tokens + a.rounds + 1)[1]
    w = InferenceWorker()
    got: list = []
    w.sigResult.connect(lambda _r, _s, res: got.append(res))
    w.sigFailed.connect(lambda _r, _s, msg: (_ for _ in ()).throw(RuntimeError(msg)))
    req = iter(range(1, 1 << 30))
    w.load_model(next(req), "A", str(folder))
    model = w.gens["A"].model  # B runs the worker's own model: the same sessions, no second copy of the weights
    n_head = model.config.n_head
    # untimed: the first ablation opens the intervention graph's session
    w.start(next(req), "A", tok.decode(ids[: a.tokens]), ())
    w.intervene(next(req), "A", (HeadAblation(0, 0),))
    times: dict[str, list[float]] = {k: [] for k in "ABCD"}

    def timed(key: str, fn) -> None:
        time.sleep(PAUSE)
        t0 = time.perf_counter()
        fn()
        times[key].append((time.perf_counter() - t0) * 1000)

    for r in range(a.rounds):
        text = tok.decode(ids[r + 1: r + 1 + a.tokens])  # a text the worker has not run
        iv = (HeadAblation(0, r % n_head),)
        w.start(next(req), "A", text, ())
        w.step(next(req), "A", SamplingSettings(1.0, 0, 1.0, r), None, (), True)
        timed("A", lambda: w.intervene(next(req), "A", iv))
        timed("C", lambda: w.back(next(req), "A"))
        w.intervene(next(req), "A", ())
        w.step(next(req), "A", SamplingSettings(1.0, 0, 1.0, r), None, (), True)
        timed("D", lambda: w.back(next(req), "A"))
        timed("B", lambda: model.run(tok.encode(text), interventions=iv))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"model: {folder.name}, {a.tokens}-token texts, median of {a.rounds} rounds (a new text each)")
    print(f"A the first ablation on a text (worker)   {med['A']:8.1f} ms")
    print(f"B one ablated run of the text (Model.run) {med['B']:8.1f} ms")
    print(f"C Back under the ablation (worker)        {med['C']:8.1f} ms")
    print(f"D Back without interventions (worker)     {med['D']:8.1f} ms")
    print(f"ratio A / B: {med['A'] / med['B']:.2f} runs of the text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
