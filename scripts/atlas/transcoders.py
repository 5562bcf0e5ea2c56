"""Measure a trained atlas transcoder set and ship it in the model folder (models/atlas/transcoders/).

The set is trained block by block with the SAE command (TopK, 1024 features, k 32, seed 0, on resources/corpus/
atlas.txt with a tenth of its windows held out):

    for L in 0 1 2 3 4 5; do gpt2viz train-sae --transcoder --hook blocks.$L.ln2.hook_normalized --d-sae 1024 \\
        --k 32 --tokens 100000 --context 64 --steps 2000 --batch 2048 --threads 1 --out SET/blocks.$L.ln2.hook_normalized; done
    python scripts/atlas/transcoders.py SET

This script re-draws the same held-out windows (same seed, same split as train-sae), measures each MLP output's
variance explained and the next-token KL with every MLP replaced on them, writes the numbers into each folder's
metadata (``replacement_quality``) and copies the folders to models/atlas/transcoders/.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TOKENS, CONTEXT, SEED = 100_000, 64, 0


def held_out(model):
    """train-sae's held-out windows for these settings (the first tenth of the shuffled windows)."""
    from gpt2viz.core.features.activations import shipped_texts, windows

    runs = windows(model, shipped_texts(), CONTEXT)
    random.Random(SEED).shuffle(runs)
    out, n = [], 0
    for r in runs:
        if n >= max(1, TOKENS // 10):
            break
        out.append(r)
        n += len(r)
    return out


def main() -> None:
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.features.transcoder import read_transcoders, write_saelens_transcoder
    from gpt2viz.core.features.transcoder_training import replacement_quality

    src = Path(sys.argv[1])
    model = Model(ROOT / "models" / "atlas")
    tcs = read_transcoders(src)
    q = replacement_quality(model, tcs, held_out(model))
    print(json.dumps(q))
    dest = ROOT / "models" / "atlas" / "transcoders"
    if dest.exists():
        shutil.rmtree(dest)
    for tc in tcs:
        tc.cfg.metadata["replacement_quality"] = {**q, "held_out": "train-sae's held-out windows of "
                                                  "resources/corpus/atlas.txt (seed 0, context 64)"}
        write_saelens_transcoder(tc, dest / tc.cfg.hook_name)
    print(f"wrote {dest}")


if __name__ == "__main__":
    main()
