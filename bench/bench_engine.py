"""Engine speed, measured side by side in one run, printed as ratios.

A GPT-2-small-sized model (12 layers, 12 heads, 768 wide, 50,257 vocabulary) with random weights is
made with transformers and exported with `gpt2viz export` (cached under --work). Then, interleaved
round by round so machine noise hits all contenders alike:

  prefill of --prompt-len tokens and one cached decode step, each as
    A  gpt2viz, onnxruntime, every hook returned
    B  gpt2viz, onnxruntime, logits (and KV cache) only
    C  transformers PyTorch eager, with hidden states and attentions

Needs the [export] extra.  python bench/bench_engine.py [--tiny] [--rounds 20]
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
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--prompt-len", type=int, default=32)
    p.add_argument("--work", type=Path, default=Path("build/bench"))
    a = p.parse_args()

    import torch
    from transformers import DynamicCache

    from gpt2viz.core.export.exporter import load_checkpoint
    from gpt2viz.core.runtime import Model

    cfg = TINY if a.tiny else SMALL
    ck, folder = ensure_model(a.work, cfg)
    model = Model(folder, verify=False)
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

    contenders = {"A gpt2viz all hooks": ort_all, "B gpt2viz logits only": ort_logits,
                  "C transformers eager + hidden + attn": torch_eager}
    pre = {k: [] for k in contenders}
    step = {k: [] for k in contenders}
    for fn in contenders.values():  # warm-up
        fn()
    for _ in range(a.rounds):
        for name, fn in contenders.items():
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
    A, B, C = (med[k] for k in contenders)
    print(f"ratio all hooks / logits only:        prefill {A[0] / B[0]:.2f}x   step {A[1] / B[1]:.2f}x")
    print(f"ratio all hooks / transformers eager: prefill {A[0] / C[0]:.2f}x   step {A[1] / C[1]:.2f}x"
          "   (below 1 = gpt2viz faster)")


if __name__ == "__main__":
    main()
