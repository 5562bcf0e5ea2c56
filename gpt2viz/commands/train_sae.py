"""`gpt2viz train-sae`: train a sparse autoencoder on one hook's values and write it in SAELens' folder format."""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

from gpt2viz.core.features.sae import ARCHITECTURES, SAEError, hook_width

DEFAULTS = {"d_sae": 1024, "k": 32, "tokens": 200_000, "context": 128, "steps": 3000, "batch": 4096}


def add_parser(sub, add_model) -> None:
    """Register the subcommand on ``sub`` (argparse subparsers); ``add_model`` adds --model."""
    p = sub.add_parser("train-sae", help="train a sparse autoencoder (SAE) on one hook's values; writes an SAELens "
                       "folder (needs torch: the [export] extra)")
    add_model(p)
    p.add_argument("--hook", required=True, help="the hook read, e.g. blocks.3.hook_resid_pre")
    p.add_argument("--head", type=int, help="with attn.hook_z: one head (default: all heads, flattened)")
    p.add_argument("--d-sae", type=int, default=DEFAULTS["d_sae"], help=f"features (default {DEFAULTS['d_sae']})")
    p.add_argument("--architecture", choices=ARCHITECTURES, default="topk", help="default topk")
    p.add_argument("--k", type=int, default=DEFAULTS["k"], help=f"topk: active features per position "
                   f"(default {DEFAULTS['k']})")
    p.add_argument("--l1", type=float, help="standard: L1 coefficient (default 1.0, inputs scaled to mean norm "
                   "sqrt(d_in))")
    p.add_argument("--l0", type=float, help="jumprelu: L0 coefficient (default 0.1, same scale)")
    p.add_argument("--text", type=Path, metavar="FILE", help="UTF-8 text, one text per line (default: the text "
                   "gpt2viz ships, resources/corpus/atlas.txt)")
    p.add_argument("--tokens", type=int, default=DEFAULTS["tokens"], help="positions gathered for training "
                   f"(default {DEFAULTS['tokens']:,}; fewer if the text is shorter); a tenth more are held out")
    p.add_argument("--context", type=int, default=DEFAULTS["context"], help="tokens per window, each run from "
                   f"position 0 (default {DEFAULTS['context']})")
    p.add_argument("--steps", type=int, default=DEFAULTS["steps"], help=f"optimisation steps (default "
                   f"{DEFAULTS['steps']})")
    p.add_argument("--batch", type=int, default=DEFAULTS["batch"], help=f"positions per step (default "
                   f"{DEFAULTS['batch']})")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (default 1e-3)")
    p.add_argument("--seed", type=int, default=0, help="seed of the windows drawn, the initialisation and the "
                   "batches (same seed and --threads: same SAE)")
    p.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    p.add_argument("--out", type=Path, required=True, help="the SAE folder to write")
    p.add_argument("--force", action="store_true", help="replace an existing SAE folder")
    p.add_argument("--json", action="store_true", help="one JSON object with the training numbers")
    p.add_argument("--transcoder", action="store_true", help="train a transcoder instead: --hook is its input "
                   "(blocks.L.ln2.hook_normalized, blocks.L.hook_resid_mid or blocks.L.mlp.hook_in), its target "
                   "blocks.L.hook_mlp_out; writes a SAELens transcoder folder")


def run(a, open_model) -> int:
    """Gather the hook's values, train, write the folder, print the numbers; bad input raises ValueError."""
    from gpt2viz.core.features.activations import gather, read_texts, shipped_texts, windows
    from gpt2viz.core.features.saelens_folder import write_sae
    from gpt2viz.core.features.training import TrainSettings, require_torch, train_sae

    require_torch()  # say at once, in one line, when torch is missing
    if getattr(a, "transcoder", False):
        from gpt2viz.commands.train_transcoder import run_transcoder

        return run_transcoder(a, open_model)
    if a.tokens < 2 or a.context < 2:
        raise SAEError(f"--tokens and --context must be at least 2 (got {a.tokens}, {a.context})")
    if a.out.exists() and not a.force:
        raise SAEError(f"{a.out} exists: choose another folder or replace it (--force)")
    model = open_model(a.model)
    hook_width(a.hook, a.head, model.config)  # the hook must exist in this model
    texts = read_texts(a.text) if a.text else shipped_texts()
    runs = windows(model, texts, a.context)
    random.Random(a.seed).shuffle(runs)
    # held-out windows first (a tenth of the training positions), so they come from texts training never reads
    eval_runs, train_runs, n_eval, n_train = [], [], 0, 0
    for r in runs:
        if n_eval < max(1, a.tokens // 10):
            eval_runs.append(r)
            n_eval += len(r)
        elif n_train < a.tokens:
            train_runs.append(r)
            n_train += len(r)
    if not train_runs:
        raise SAEError(f"the text has {sum(len(r) for r in runs)} tokens: too few to train and hold some out")
    say = (lambda m: None) if a.json else (lambda m: print(m, file=sys.stderr, flush=True))
    source = str(a.text) if a.text else "resources/corpus/atlas.txt (shipped)"
    say(f"gathering {a.hook} on {n_train:,} + {n_eval:,} held-out positions of {source}")
    t0 = time.perf_counter()

    every = max(1, len(train_runs) // 10)

    def tick(done, total):
        if done % every == 0 or done == total:
            say(f"  {done}/{total} windows")

    train_x = gather(model, a.hook, a.head, train_runs, progress=tick)
    eval_x = gather(model, a.hook, a.head, eval_runs)
    gather_s = time.perf_counter() - t0
    settings = TrainSettings(d_sae=a.d_sae, architecture=a.architecture, k=a.k, steps=a.steps, batch=a.batch,
                             lr=a.lr, seed=a.seed, threads=a.threads,
                             **({"l1_coefficient": a.l1} if a.l1 is not None else {}),
                             **({"l0_coefficient": a.l0} if a.l0 is not None else {}))
    say(f"training a {a.architecture} SAE, {a.d_sae} features, {a.steps} steps of {a.batch}")
    meta = {"model_name": model.name, "context_size": a.context, "prepend_bos": False, "dataset_path": source,
            "trained_by": "gpt2viz train-sae"}
    result = train_sae(train_x, eval_x, a.hook, settings, head_index=a.head, metadata=meta, log=say)
    folder = write_sae(result.sae, a.out, force=a.force)
    out = {"sae": str(folder.resolve()), "hook": a.hook, "architecture": a.architecture, "d_sae": a.d_sae,
           **result.numbers(), "gather_seconds": round(gather_s, 1)}
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{folder}: variance explained {result.variance_explained:.3f}, mean L0 {result.mean_l0:.1f}, "
          f"dead {result.dead} of {a.d_sae} ({result.dead_fraction:.1%}); held out {len(eval_x):,} positions; "
          f"trained on {len(train_x):,} in {result.seconds:.0f} s (gathering {gather_s:.0f} s)")
    return 0
