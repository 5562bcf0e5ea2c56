"""Engine speed, measured side by side in one run, printed as ratios.

A GPT-2-small-sized model (12 layers, 12 heads, 768 wide, 50,257 vocabulary) with random weights is
made with transformers and exported with `gpt2viz export` (cached under --work). Then, interleaved
round by round so machine noise hits all contenders alike:

  prefill of --prompt-len tokens and one cached decode step, each as
    A  gpt2viz, onnxruntime, every hook returned
    B  gpt2viz, onnxruntime, logits (and KV cache) only
    C  transformers PyTorch eager, with hidden states and attentions
    D  gpt2viz on the same export with the intervention inputs stripped (format 1's graph), every hook
    E  the same stripped graph, logits only
    F  the floor: every weight matrix read once (a vector-matrix product each, memory-bound), by torch
    G  the same by numpy's BLAS
  A / D and B / E are the cost of the intervention inputs when no intervention is fed; A over the faster of
  F and G how far a step with every hook is from the memory-bandwidth floor.

  Then the activation patching table (resid_pre, --patch-len tokens) against layers x positions full
  prefills (logits only), interleaved for --patch-rounds rounds.

With --long: the long-prompt figures of issue 11 instead, side by side in one run: at --long-len
(1000) and at 32 tokens, the prefill the app runs (everything it shows: scores, patterns and MLP
activations left to on-demand sub-graphs) against the logits-only prefill and transformers eager with
hidden states + attentions; what an on-demand layer costs when a view reads it; and peak RSS (VmHWM of a
fresh process each) of `gpt2viz run`, of Model.run with every view's hooks read, and of the app.

Needs the [export] extra.  python bench/bench_engine.py [--tiny | --medium] [--rounds 20] [--long [--rounds 3]]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

SMALL = dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024)
TINY = dict(n_layer=2, n_head=2, n_embd=64, n_positions=128)
MEDIUM = dict(n_layer=24, n_head=16, n_embd=1024, n_positions=1024)


def ensure_model(work: Path, cfg: dict) -> tuple[Path, Path]:
    """A random-init checkpoint and its gpt2viz export, made once and reused."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from gpt2viz.core.export.exporter import export_model

    tag = "l{n_layer}h{n_head}e{n_embd}".format(**cfg)
    ck, out = work / f"ckpt-{tag}", work / f"model-{tag}"
    if not (ck / "config.json").exists():
        torch.manual_seed(0)
        GPT2LMHeadModel(GPT2Config(vocab_size=50257, **cfg)).save_pretrained(ck, safe_serialization=True)
        tok = Path(__file__).resolve().parents[1] / "models" / "atlas" / "tokenizer.json"
        (ck / "tokenizer.json").write_bytes(tok.read_bytes())
    if not (out / "gpt2viz.json").exists():
        t0 = time.perf_counter()
        export_model(str(ck), out, force=True, progress=lambda m: print("  " + m, file=sys.stderr))
        print(f"export took {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return ck, out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tiny", action="store_true", help="a 2-layer model, to check the script quickly")
    p.add_argument("--medium", action="store_true", help="a gpt2-medium-sized model (24 layers x 16 heads x 1024)")
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--work", type=Path, default=Path("build/bench"))
    p.add_argument("--patch-len", type=int, default=8, help="prompt length of the patching table (default 8)")
    p.add_argument("--patch-rounds", type=int, default=3)
    p.add_argument("--long", action="store_true", help="issue 11's long-prompt speed and memory figures")
    p.add_argument("--long-len", type=int, default=1000)
    a = p.parse_args()
    if a.long:
        bench_long(a)
        return

    import torch
    from transformers import DynamicCache

    from gpt2viz.core.export.exporter import load_checkpoint
    from gpt2viz.core.engine.model import Model

    cfg = TINY if a.tiny else MEDIUM if a.medium else SMALL
    ck, folder = ensure_model(a.work, cfg)
    model = Model(folder, verify=False)
    old = ensure_stripped(folder)
    old_model = Model(old, verify=False)
    tm = load_checkpoint(ck)
    torch.set_num_threads(model.session.get_session_options().intra_op_num_threads or torch.get_num_threads())
    ids = list(np.random.default_rng(0).integers(0, 50257, a.prompt_len))
    nxt = [int(ids[-1])]

    def ort_all():
        _, cache = model.run(ids)
        t0 = time.perf_counter()
        model.run(nxt, cache)
        return t0

    def ort_logits():
        _, cache = model.run(ids, hooks=[])
        t0 = time.perf_counter()
        model.run(nxt, cache, hooks=[])
        return t0

    @torch.no_grad()
    def torch_eager():
        x = torch.tensor([ids])
        out = tm(input_ids=x, past_key_values=DynamicCache(), use_cache=True,
                 output_hidden_states=True, output_attentions=True)
        t0 = time.perf_counter()
        tm(input_ids=torch.tensor([nxt]), past_key_values=out.past_key_values, use_cache=True,
           output_hidden_states=True, output_attentions=True)
        return t0

    def old_all():
        _, cache = old_model.run(ids)
        t0 = time.perf_counter()
        old_model.run(nxt, cache)
        return t0

    def old_logits():
        _, cache = old_model.run(ids, hooks=[])
        t0 = time.perf_counter()
        old_model.run(nxt, cache, hooks=[])
        return t0

    # The physical floor of a decode step: every weight matrix read once from memory (each tied matrix once),
    # by a vector-matrix product per matrix on the same threads, memory-bound. Timed like the others (after
    # settle(): torch's threads parked), so "step / floor" is how far a step is from reading its weights.
    seen_ptr, mats = set(), []
    for prm in tm.parameters():
        if prm.dim() == 2 and prm.data_ptr() not in seen_ptr:
            seen_ptr.add(prm.data_ptr())
            mats.append(prm.detach().contiguous())
    floor_bytes = sum(w.numel() * w.element_size() for w in mats)
    vecs = [torch.ones(w.shape[0]) for w in mats]
    # The same products by numpy's BLAS (OpenBLAS), on the same memory: which library reads faster depends on
    # the machine (on a Zen 4 EPYC torch's read 14.7 GB/s, OpenBLAS's 25.3; a cached step read the weights
    # faster than torch's "floor"), so the floor is the faster of the two.
    np_mats, np_vecs = [w.numpy() for w in mats], [v.numpy() for v in vecs]

    @torch.no_grad()
    def floor():
        t0 = time.perf_counter()
        for w, v in zip(mats, vecs):
            torch.matmul(v, w)
        return t0

    def floor_numpy():
        t0 = time.perf_counter()
        for w, v in zip(np_mats, np_vecs):
            v @ w
        return t0

    contenders = {"A gpt2viz all hooks": ort_all, "B gpt2viz logits only": ort_logits,
                  "C transformers eager + hidden + attn": torch_eager,
                  "D no intervention inputs, all hooks": old_all, "E no intervention inputs, logits": old_logits,
                  "F floor: read every weight once (torch)": floor,
                  "G floor: read every weight once (numpy)": floor_numpy}
    pre = {k: [] for k in contenders}
    step = {k: [] for k in contenders}
    for fn in contenders.values():  # warm-up
        fn()
    for _ in range(a.rounds):
        for name, fn in contenders.items():
            settle()
            t_start = time.perf_counter()
            t_step = fn()
            t_end = time.perf_counter()
            pre[name].append((t_step - t_start) * 1000)
            step[name].append((t_end - t_step) * 1000)

    med = {k: (statistics.median(pre[k]), statistics.median(step[k])) for k in contenders}
    shape = "{n_layer} layers x {n_head} heads x {n_embd}".format(**cfg)
    print(f"model: {shape}, vocab 50257, random weights; prompt {a.prompt_len} tokens; "
          f"median of {a.rounds} interleaved rounds")
    print(f"{'':40s} {'prefill ms':>11s} {'step ms':>9s}")
    for k, (pf, st) in med.items():
        print(f"{k:40s} {pf:11.1f} {st:9.1f}")
    A, B, C, D, E, F_torch, F_numpy = (med[k] for k in contenders)
    F = min(F_torch, F_numpy, key=lambda m: m[1])
    print(f"floor: {floor_bytes / 2**20:.0f} MiB of weights in {F[1]:.1f} ms = {floor_bytes / F[1] / 1e6:.1f} GB/s "
          f"(the faster reader: {'torch' if F is F_torch else 'numpy'})")
    print(f"ratio step / floor:  all hooks {A[1] / F[1]:.2f}x   logits only {B[1] / F[1]:.2f}x   transformers eager "
          f"{C[1] / F[1]:.2f}x")
    print(f"ratio all hooks / logits only:        prefill {A[0] / B[0]:.2f}x   step {A[1] / B[1]:.2f}x")
    print(f"ratio all hooks / transformers eager: prefill {A[0] / C[0]:.2f}x   step {A[1] / C[1]:.2f}x"
          "   (below 1 = gpt2viz faster)")
    print(f"ratio with / without intervention inputs (none fed), all hooks: prefill {A[0] / D[0]:.3f}x   "
          f"step {A[1] / D[1]:.3f}x")
    print(f"ratio with / without intervention inputs (none fed), logits only: prefill {B[0] / E[0]:.3f}x   "
          f"step {B[1] / E[1]:.3f}x")
    bench_patching(model, a.patch_len, a.patch_rounds)


def settle() -> None:
    """Let the previous contender's threads go idle before the next one is timed: torch's OpenMP threads
    spin for up to 200 ms after their work (KMP_BLOCKTIME), which on 2 cores took ~0.1 s from the
    onnxruntime prefill timed right after them."""
    time.sleep(0.3)


def ensure_stripped(folder: Path) -> Path:
    """A copy of the export whose graph has the intervention inputs removed (format 1's graph)."""
    import shutil

    import onnx

    from gpt2viz.core.graph.surgery import strip_interventions

    old = folder.with_name(folder.name + "-no-interventions")
    if not (old / "gpt2viz.json").exists():
        old.mkdir(exist_ok=True)
        for f in folder.iterdir():
            if f.name != "model.onnx":
                shutil.copy(f, old / f.name)
        g = onnx.load(str(folder / "model.onnx"), load_external_data=True)
        strip_interventions(g)
        onnx.save_model(g, str(old / "model.onnx"))
    return old


def bench_patching(model, n: int, rounds: int) -> None:
    """The patching table against layers x positions full prefills of the corrupted prompt."""
    from gpt2viz.core.analysis.patching import patching_table

    rng = np.random.default_rng(1)
    clean = [int(t) for t in rng.integers(0, 50257, n)]
    corrupt = list(clean)
    corrupt[n // 2] = (corrupt[n // 2] + 1) % 50257
    L = model.config.n_layer
    table_ms, naive_ms = [], []
    patching_table(model, clean, corrupt, 6342, "resid_pre")  # warm-up
    for _ in range(rounds):
        t0 = time.perf_counter()
        patching_table(model, clean, corrupt, 6342, "resid_pre")
        t1 = time.perf_counter()
        for _ in range(L * n):
            model.run(corrupt, hooks=[])
        t2 = time.perf_counter()
        table_ms.append((t1 - t0) * 1000)
        naive_ms.append((t2 - t1) * 1000)
    t, f = statistics.median(table_ms), statistics.median(naive_ms)
    print(f"patching table resid_pre, {L} layers x {n} positions: {t:.0f} ms; {L * n} full prefills "
          f"(logits only): {f:.0f} ms; ratio {t / f:.2f}x (median of {rounds} interleaved rounds)")


def peak_rss_of(argv: list[str]) -> float:
    """Peak RSS (GB) of a fresh child process, from /usr/bin/time -v (the child's own figure)."""
    import os
    import re
    import subprocess

    r = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True,
                       env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    if r.returncode or not m:
        raise RuntimeError(f"{argv[:4]} failed: {r.stderr[-2000:]}")
    return int(m.group(1)) / 1024**2


def long_prompt(tokenizer, n: int) -> tuple[str, list[int]]:
    """English-like text of exactly ``n`` tokens (a fixed paragraph repeated), and its ids."""
    para = ("The committee met on Tuesday to discuss the budget for the new library, which the city had "
            "promised to open before the end of the year. Several members asked why the costs had risen. ")
    ids = tokenizer.encode(para * (n // 30 + 2))[:n]
    text = tokenizer.decode(ids)
    assert tokenizer.encode(text) == ids
    return text, ids


def _long_contender(conn, library: str, ck: Path, folder: Path) -> None:
    """One side of the long-prompt race in a process of its own: "ours" (gpt2viz's Model) or "torch"
    (transformers eager). Receives (name, ids) and answers (ms, longest gap between progress calls)."""
    if library == "torch":
        import torch
        from transformers import DynamicCache

        from gpt2viz.core.export.exporter import load_checkpoint

        tm = load_checkpoint(ck)

        @torch.no_grad()
        def run(name, ids):
            tm(input_ids=torch.tensor([ids]), past_key_values=DynamicCache(), use_cache=True,
               output_hidden_states=True, output_attentions=True)
    else:
        from gpt2viz.core.engine.model import Model

        model = Model(folder, verify=False)
        gaps = []

        def app_prefill(ids):
            # as the app's worker runs it: in chunks, with progress and a cancel check between them
            marks = [time.perf_counter()]
            model.run(ids, progress=lambda done, total: marks.append(time.perf_counter()), cancel=lambda: False)
            gaps.append(max(b - a for a, b in zip(marks, marks[1:])))

        def run(name, ids):
            {"A": app_prefill, "A1": lambda ids: model.run(ids, chunk=0),
             "B": lambda ids: model.run(ids, hooks=[])}[name](ids)

        def ondemand(ids, layer):
            trace, _ = model.run(ids)
            od = []
            for hook in ("pattern", "post"):
                t0 = time.perf_counter()
                trace[hook, layer]
                od.append((time.perf_counter() - t0) * 1000)
            return trace.nbytes() / 2**20, trace.ondemand is not None, od
    while (msg := conn.recv()) is not None:
        if msg[0] == "ondemand":
            conn.send(ondemand(*msg[1:]))
            continue
        name, ids = msg
        if library != "torch":
            gaps.clear()
        settle()
        t0 = time.perf_counter()
        run(name, ids)
        conn.send(((time.perf_counter() - t0) * 1000, max(gaps) if library != "torch" and gaps else 0.0))


def bench_long(a) -> None:
    """Issue 11's figures: speed at --long-len and 32 tokens, on-demand costs, peak RSS.

    Each library runs in a process of its own, the rounds interleaved between them, as each runs in
    practice (neither the app nor the CLI ever loads torch): one library's threads and allocator state
    cannot slow the other's timed run."""
    import multiprocessing as mp

    from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer

    cfg = TINY if a.tiny else MEDIUM if a.medium else SMALL
    ck, folder = ensure_model(a.work, cfg)
    tokenizer = GPT2Tokenizer.from_file(folder / "tokenizer.json")
    n_long = min(a.long_len, cfg["n_positions"])
    shape = "{n_layer} layers x {n_head} heads x {n_embd}".format(**cfg)
    print(f"model: {shape}, vocab 50257, random weights; median of {a.rounds} interleaved rounds, "
          "onnxruntime and torch each in a process of its own")
    ctx = mp.get_context("spawn")
    sides = {}
    for library in ("ours", "torch"):
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_long_contender, args=(theirs, library, Path(ck), Path(folder)), daemon=True)
        proc.start()
        theirs.close()  # so a contender that dies makes recv() raise instead of waiting for good
        sides[library] = (mine, proc)

    def ask(library, *msg):
        sides[library][0].send(msg)
        return sides[library][0].recv()

    owner = {"A": "ours", "A1": "ours", "B": "ours", "C": "torch"}
    labels = {"A": "A app prefill (everything shown, chunked)", "A1": "A1 the same in one call",
              "B": "B logits only", "C": "C transformers eager + hidden + attn"}
    for n in (32, n_long):
        _, ids = long_prompt(tokenizer, n)
        times = {k: [] for k in owner}
        gaps = []
        for k in owner:  # warm-up
            ask(owner[k], k, ids)
        for _ in range(a.rounds):
            for k in owner:
                ms, gap = ask(owner[k], k, ids)
                times[k].append(ms)
                if k == "A":
                    gaps.append(gap)
        med = {k: statistics.median(v) for k, v in times.items()}
        A, A1, B, C = med.values()
        print(f"-- {n} tokens: " + "   ".join(f"{labels[k]} {v:.0f} ms" for k, v in med.items()))
        print(f"   app prefill / logits only {A / B:.2f}x (target <= 1.3)   transformers / app prefill {C / A:.2f}x "
              f"(target >= 2)   chunked / one call {A / A1:.2f}x   longest chunk (cancel latency) "
              f"{max(gaps) * 1000:.0f} ms")
        mib, lazy, od = ask("ours", "ondemand", ids, cfg["n_layer"] // 2)
        print(f"   trace kept {mib:.0f} MiB; first read of one layer's pattern+scores "
              f"{od[0]:.0f} ms, MLP pre+post {od[1]:.0f} ms (on demand)" if lazy else
              f"   trace {mib:.0f} MiB, every hook kept (short prompt)")
    for mine, proc in sides.values():
        mine.send(None)
        proc.join()
    text, ids = long_prompt(tokenizer, n_long)
    here = Path(__file__).resolve()
    run = peak_rss_of([sys.executable, "-m", "gpt2viz", "run", "--model", str(folder), "--prompt", text,
                       "--steps", "1", "--json"])
    engine = peak_rss_of([sys.executable, str(here.with_name("bench_memory.py")), "engine", str(folder), str(n_long)])
    print(f"-- peak RSS at {n_long} tokens: gpt2viz run {run:.2f} GB (target <= 1.2); Model.run + every view's "
          f"hooks read {engine:.2f} GB")
    try:
        app = peak_rss_of([sys.executable, str(here.with_name("bench_memory.py")), "app", str(folder), str(n_long)])
        print(f"   the app with all views on that prompt {app:.2f} GB (target <= 1.5)")
    except RuntimeError as e:
        print(f"   the app: not measured ({e})")


if __name__ == "__main__":
    main()
