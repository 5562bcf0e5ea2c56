"""`gpt2viz train-sae --transcoder`: train one block's transcoder (MLP input -> hook_mlp_out), SAELens folder out."""

from __future__ import annotations

import json
import random
import re
import sys

from gpt2viz.core.features.sae import SAEError
from gpt2viz.core.features.transcoder import INPUT_KINDS


def run_transcoder(a, open_model) -> int:
    """Gather (input, MLP output) pairs, train, write the folder, print the numbers."""
    from gpt2viz.core.features.activations import read_texts, shipped_texts, windows
    from gpt2viz.core.features.training import TrainSettings
    from gpt2viz.core.features.transcoder import write_saelens_transcoder
    from gpt2viz.core.features.transcoder_training import gather_pairs, train_transcoder

    m = re.match(r"^blocks\.(\d+)\.(.+)$", a.hook)
    if not m or m.group(2) not in INPUT_KINDS:
        raise SAEError(f"a transcoder reads blocks.L.{' | blocks.L.'.join(INPUT_KINDS)}, not {a.hook!r}")
    layer, kind = int(m.group(1)), m.group(2)
    if a.head is not None:
        raise SAEError("--head is for attn.hook_z SAEs, not transcoders")
    if a.tokens < 2 or a.context < 2:
        raise SAEError(f"--tokens and --context must be at least 2 (got {a.tokens}, {a.context})")
    if a.out.exists() and not a.force:
        raise SAEError(f"{a.out} exists: choose another folder or replace it (--force)")
    model = open_model(a.model)
    if layer >= model.config.n_layer:
        raise SAEError(f"the model has blocks 0..{model.config.n_layer - 1}, not {layer}")
    texts = read_texts(a.text) if a.text else shipped_texts()
    runs = windows(model, texts, a.context)
    random.Random(a.seed).shuffle(runs)
    eval_runs, train_runs, n_eval, n_train = [], [], 0, 0
    for r in runs:  # held-out windows first, as train-sae does
        if n_eval < max(1, a.tokens // 10):
            eval_runs.append(r)
            n_eval += len(r)
        elif n_train < a.tokens:
            train_runs.append(r)
            n_train += len(r)
    if not train_runs:
        raise SAEError(f"the text has {sum(len(r) for r in runs)} tokens: too few to train and hold some out")
    say = (lambda s: None) if a.json else (lambda s: print(s, file=sys.stderr, flush=True))
    source = str(a.text) if a.text else "resources/corpus/atlas.txt (shipped)"
    say(f"gathering {a.hook} -> blocks.{layer}.hook_mlp_out on {n_train:,} + {n_eval:,} held-out positions")
    tx, ty = gather_pairs(model, layer, train_runs, kind)
    ex, ey = gather_pairs(model, layer, eval_runs, kind)
    settings = TrainSettings(d_sae=a.d_sae, architecture=a.architecture, k=a.k, steps=a.steps, batch=a.batch,
                             lr=a.lr, seed=a.seed, threads=a.threads,
                             **({"l1_coefficient": a.l1} if a.l1 is not None else {}),
                             **({"l0_coefficient": a.l0} if a.l0 is not None else {}))
    meta = {"model_name": model.name, "context_size": a.context, "prepend_bos": False, "dataset_path": source,
            "trained_by": "gpt2viz train-sae --transcoder"}
    result = train_transcoder(tx, ty, ex, ey, layer, settings, input_kind=kind, metadata=meta, log=say)
    if a.out.exists():
        import shutil

        shutil.rmtree(a.out)
    folder = write_saelens_transcoder(result.transcoder, a.out)
    out = {"transcoder": str(folder.resolve()), "hook": a.hook, "hook_out": f"blocks.{layer}.hook_mlp_out",
           "architecture": a.architecture, "d_sae": a.d_sae, **result.numbers()}
    if a.json:
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(f"{folder}: MLP output variance explained {result.variance_explained:.3f}, mean L0 {result.mean_l0:.1f}, "
          f"dead {result.dead} of {a.d_sae}; held out {result.eval_tokens:,} positions; trained on "
          f"{result.train_tokens:,} in {result.seconds:.0f} s")
    return 0
