"""onnxruntime's transformer optimizer (``onnxruntime.transformers.optimizer``, model_type gpt2) on the
GPT-2-small-sized export: which fusions apply, whether every hook is still a graph output and still matches
transformers (the export's tolerance, 1e-4 of each hook's scale), and the speed, side by side.

The export is made by bench_engine.ensure_model (cached under --work). The optimizer runs twice: with gpt2's
default fusion options, then with the layer-norm fusions off, because the default fails on gpt2viz's graph (see
docs/performance.md, "What is left"). Timings interleave the unfused and the fused graph round by round.

    python bench/bench_fusions.py [--rounds 10]          (needs the [export] extra: the reference is transformers)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np


def feed(ids: np.ndarray, past) -> dict[str, np.ndarray]:
    """The raw graph's inputs (the intervention inputs keep their no-op defaults)."""
    n_past = past[0][0].shape[2]
    total = n_past + ids.shape[1]
    f = {"input_ids": ids.astype(np.int64), "attention_mask": np.ones((1, total), np.int64),
         "position_ids": np.arange(n_past, total, dtype=np.int64)[None]}
    for L, (k, v) in enumerate(past):
        f[f"past_key_values.{L}.key"], f[f"past_key_values.{L}.value"] = k, v
    return f


def optimize(src: Path, out: Path, layernorm: bool):
    """The optimizer's fused model written to ``out`` (None, and why, when it fails)."""
    from onnxruntime.transformers import optimizer
    from onnxruntime.transformers.fusion_options import FusionOptions

    fo = FusionOptions("gpt2")
    fo.enable_skip_layer_norm = fo.enable_layer_norm = layernorm
    try:
        m = optimizer.optimize_model(str(src), model_type="gpt2", num_heads=12, hidden_size=768, use_gpu=False,
                                     optimization_options=fo)
    except Exception as e:  # noqa: BLE001 - the failure is the measurement
        return None, f"{type(e).__name__}: {str(e).splitlines()[0]}"
    out.parent.mkdir(parents=True, exist_ok=True)
    m.save_model_to_file(str(out), use_external_data_format=True, all_tensors_to_one_file=True)
    return {k: v for k, v in m.get_fused_operator_statistics().items() if v}, ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--work", type=Path, default=Path("build/bench"))
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import onnx
    import onnxruntime as ort
    from bench_engine import SMALL, ensure_model
    from transformers import GPT2LMHeadModel

    from gpt2viz.core.export.exporter import TOLERANCE
    from gpt2viz.core.export.reference import reference_hooks
    from gpt2viz.core.hooks import hook_names

    ck, folder = ensure_model(a.work, SMALL)
    src = folder / "model.onnx"
    names = hook_names(SMALL["n_layer"])
    pres = [f"present.{L}.{x}" for L in range(SMALL["n_layer"]) for x in ("key", "value")]
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    plain = ort.InferenceSession(str(src), so, providers=["CPUExecutionProvider"])
    tm = GPT2LMHeadModel.from_pretrained(ck, attn_implementation="eager").eval()
    ids = np.random.default_rng(0).integers(0, 50257, size=(1, 32))
    empty = [(np.zeros((1, 12, 0, 64), np.float32),) * 2] * SMALL["n_layer"]
    ref, _ = reference_hooks(tm, ids)
    for layernorm in (True, False):
        out = a.work / ("fused" if layernorm else "fused-no-layernorm") / "model.onnx"
        fused, why = optimize(src, out, layernorm)
        print(f"gpt2 fusions{'' if layernorm else ', layer-norm fusions off'}:", fused if fused is not None else why)
        if fused is None:
            continue
        outs = {o.name for o in onnx.load(str(out), load_external_data=False).graph.output}
        missing = [n for n in names if n not in outs]
        print(f"  hooks still graph outputs: {len(names) - len(missing)} of {len(names)}")
        sess = ort.InferenceSession(str(out), so, providers=["CPUExecutionProvider"])
        kept = [n for n in names if n in outs]
        got = dict(zip(kept + pres, sess.run(kept + pres, feed(ids, empty))))
        base = dict(zip(kept, plain.run(kept, feed(ids, empty))))
        worst = max(float(np.abs(got[n].astype(np.float64) - ref[n]).max()) / max(float(np.abs(ref[n]).max()), 1e-12)
                    for n in kept)
        same = max(float(np.abs(got[n] - base[n]).max()) for n in kept)
        print(f"  worst hook vs transformers: {worst:.2e} of its scale (tolerance {TOLERANCE}); "
              f"largest difference from the unfused graph: {same:.2e}")
        past = [(got[f"present.{L}.key"], got[f"present.{L}.value"]) for L in range(SMALL["n_layer"])]
        nxt = np.asarray([[int(np.argmax(got["logits"][0, -1]))]])

        def ms(s, f):
            t = time.perf_counter()
            s.run(["logits", *pres], f)
            return (time.perf_counter() - t) * 1000

        rows = {"prefill 32": feed(ids, empty), "cached step": feed(nxt, past)}
        for what, f in rows.items():
            pairs = [(ms(plain, f), ms(sess, f)) for _ in range(a.rounds)]  # interleaved: noise hits both
            p, q = statistics.median(x for x, _ in pairs), statistics.median(y for _, y in pairs)
            print(f"  {what} (logits + cache): unfused {p:.1f} ms, fused {q:.1f} ms ({q / p:.2f}x)")


if __name__ == "__main__":
    main()
