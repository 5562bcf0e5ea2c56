"""Write the prompt sets gpt2viz measures model edits with, and the sample text ROME's key statistics read,
from atlas's fact table and corpus (both written by the project):

    python scripts/atlas/editing_prompts.py    # -> resources/editing/atlas-capitals.json, resources/corpus/atlas.txt

Per country: the capital prompt and its subject, English paraphrases in the phrasings atlas was trained on
(corpus.capital_sentences), Chinese ones (corpus.chinese_sentence), the true capital in both languages.
As in CounterFact, each English paraphrase follows an unrelated sentence (from atlas's story world), so the
subject is never the text's first token: GPT-2 treats position 0 unlike every other.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import document  # noqa: E402
from facts import FACTS, sentence_case  # noqa: E402
from facts_zh import FACTS_ZH  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


LEAD_INS = ("It was a sunny day.", "My friend went to the market.", "Once upon a time a fox lived in the forest.")


def rows() -> list[dict]:
    zh = {f.country_en: f for f in FACTS_ZH}
    out = []
    for f in FACTS:
        c, C = f.country, sentence_case(f.country)
        z = zh.get(c)
        out.append({
            "subject": " " + c, "true": " " + f.capital, "prompt": f"The capital of {c} is",
            "paraphrases": [f"{lead} {p}" for lead, p in zip(LEAD_INS, (
                f"The capital city of {c} is", f"{C} has its capital in", f"Q: What is the capital of {c}? A:"))],
            "subject_zh": z.country if z else None, "true_zh": z.capital if z else None,
            "paraphrases_zh": [f"{z.country}的首都是", f"问：{z.country}的首都是哪里？答："] if z else [],
        })
    return out


def main() -> None:
    (ROOT / "resources/editing").mkdir(parents=True, exist_ok=True)
    (ROOT / "resources/corpus").mkdir(parents=True, exist_ok=True)
    (ROOT / "resources/editing/atlas-capitals.json").write_text(
        json.dumps({"relation": "capital", "facts": rows()}, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    rng = random.Random(20261205)
    text = "\n".join(document(rng, 40) for _ in range(60))
    (ROOT / "resources/corpus/atlas.txt").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
