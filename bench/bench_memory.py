"""Peak memory of one long prompt, measured in a fresh process (run it under `/usr/bin/time -v`, or read
the VmHWM it prints: the process's own peak, not a parent's inherited figure).

    python bench/bench_memory.py engine FOLDER N   Model.run of N tokens, then every on-demand hook read
    python bench/bench_memory.py app FOLDER N      the app (offscreen) with an N-token prompt, every view shown
    python bench/bench_memory.py medium [--work build/bench] [--n 1024]
        a gpt2-medium-sized random model (24 layers, 16 heads, 1024 wide) exported by the tests' helper,
        opened in the app with an N-token prompt; prints its peak RSS (target <= 3 GB)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]


def vm_hwm_gb() -> float:
    """This process's peak resident set (VmHWM), GB."""
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024**2
    raise RuntimeError("no VmHWM in /proc/self/status")


def engine(folder: str, n: int) -> None:
    from bench_engine import long_prompt
    from gpt2viz.core.runtime import Model
    from gpt2viz.core.stepper import Generator

    model = Model(folder, verify=False)
    _, ids = long_prompt(model, n)
    gen = Generator(model)
    t0 = time.perf_counter()
    gen.start(ids)
    hist = gen.history()
    for L in range(model.config.n_layer):  # what the views read: one position's slice of each
        for h in ("pattern", "attn_scores", "pre", "post", "resid_post"):
            hist.hook_at((h, L), n - 1)
    print(f"engine: {n} tokens, prefill + every layer read in {time.perf_counter() - t0:.1f} s; "
          f"trace {hist.frames[0].trace.nbytes() / 2**20:.0f} MiB; VmHWM {vm_hwm_gb():.2f} GB")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "engine":
        engine(sys.argv[2], int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")
