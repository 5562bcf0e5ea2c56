"""Write a text for training atlas's SAEs, drawn from atlas's own corpus generator (corpus.py, seeded):

    python scripts/atlas/sae_corpus.py --texts 6000 --seed 7 --out /tmp/atlas-sae.txt
    gpt2viz train-sae --hook blocks.0.hook_resid_pre --text /tmp/atlas-sae.txt --out ...

One text per line, each a run of sentences of one training text (English, or Chinese 18 % of the time, as atlas
was trained). The seed differs from atlas's own training seed (1234), so the SAEs see fresh draws of the same
distribution. ``resources/corpus/atlas.txt`` (60 texts, ~42,000 tokens) is the smaller sample the package ships.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import document

SENTENCES = 12  # ~100-150 tokens per text: about one 128-token window each


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--texts", type=int, default=6000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    rng = random.Random(a.seed)
    lines = [document(rng, SENTENCES).replace("\n", " ") for _ in range(a.texts)]
    a.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(a.out)


if __name__ == "__main__":
    main()
