"""An edit measured as the papers measure one (ROME's CounterFact metrics), every number from onnxruntime.

- efficacy: P(new) > P(old) on the edited prompt;
- paraphrase: the share of paraphrases of the prompt where P(new) > P(old) (English; Chinese reported on
  its own, with the targets' Chinese names, when the model has them);
- neighbourhood: the share of other subjects of the same relation where P(true) > P(new) after the edit;
- fluency: ROME's n-gram entropy of texts the edited model generates (bigrams and trigrams weighted 2/3
  and 4/3), beside the same texts generated without the edit.

P of a target of several tokens is the product of its tokens' probabilities, each after the ones before.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np

from gpt2viz.core.generation.sampling import SamplingSettings
from gpt2viz.core.generation.stepper import Generator
from gpt2viz.core.model_folder.locations import resources_dir
from gpt2viz.core.numeric import softmax

FLUENCY_TOKENS = 30
FLUENCY_SAMPLES = 3


def prompt_set(name: str = "atlas-capitals") -> dict:
    """A prompt set the project ships (``resources/editing/NAME.json``): a relation and its facts."""
    return json.loads((resources_dir() / "editing" / f"{name}.json").read_text(encoding="utf-8"))


def stats_text(name: str = "atlas") -> list[str]:
    """A text the project ships for ROME's key statistics (``resources/corpus/NAME.txt``), one line per item."""
    path = resources_dir() / "corpus" / f"{name}.txt"
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()] if path.is_file() else []


def target_prob(model, prompt: str, target: str, interventions=()) -> float:
    """P(``target`` follows ``prompt``): the product of its tokens' probabilities, each after the ones before."""
    tok = model.tokenizer
    p_ids, t_ids = tok.encode(prompt), tok.encode(target)
    logits = model.run_with_hooks(p_ids + t_ids[:-1], interventions)
    logp = 0.0
    for i, t in enumerate(t_ids):
        logp += float(np.log(max(softmax(logits[len(p_ids) - 1 + i])[t], 1e-300)))
    return float(np.exp(logp))


def n_gram_entropy(text: str) -> float:
    """ROME's fluency score of one text: mean of 2/3 x the bigram entropy and 4/3 x the trigram entropy (bits),
    over whitespace-separated words."""
    words = text.split()
    out = []
    for n, w in ((2, 2 / 3), (3, 4 / 3)):
        grams = Counter(tuple(words[i:i + n]) for i in range(max(len(words) - n + 1, 0)))
        if not grams:
            out.append(0.0)
            continue
        f = np.array(list(grams.values()), np.float64)
        f /= f.sum()
        out.append(w * float(-(f * np.log2(f)).sum()))
    return float(np.mean(out))


def fluency(model, prompts, interventions=(), seed: int = 0) -> float:
    """Mean n-gram entropy of ``FLUENCY_SAMPLES`` texts of ``FLUENCY_TOKENS`` tokens generated from each prompt
    (top-k 5, seeded, as ROME samples)."""
    scores = []
    for j, prompt in enumerate(prompts):
        for i in range(FLUENCY_SAMPLES):
            gen = Generator(model, hooks=(), interventions=interventions)
            gen.start(model.tokenizer.encode(prompt))
            settings = SamplingSettings(temperature=1.0, top_k=5, seed=seed + 100 * j + i)
            for _ in range(FLUENCY_TOKENS):
                if not gen.can_step():
                    break
                gen.step(settings)
            scores.append(n_gram_entropy(model.tokenizer.decode(list(gen.tokens))))
    return float(np.mean(scores))


@dataclass(frozen=True)
class EditScores:
    """The metrics of one edit (shares in 0..1; fluency in bits), before and after where both make sense."""

    efficacy: float
    paraphrase: float
    paraphrase_zh: float | None
    neighbourhood: float
    neighbourhood_before: float
    fluency_before: float
    fluency_after: float
    p_new_before: float
    p_new_after: float
    p_old_before: float
    p_old_after: float

    def as_json(self) -> dict:
        """JSON-able, rounded to 4 decimals."""
        return {k: (None if v is None else round(float(v), 4)) for k, v in asdict(self).items()}


def score_edit(model, edit, fact: dict, new: str, neighbours: list[dict], *, new_zh: str | None = None,
               fluency_seed: int = 0) -> EditScores:
    """Measure ``edit`` (an intervention) of ``fact`` (a prompt-set row) to the new target ``new``.

    ``neighbours``: other rows of the same relation (their prompts and true targets); ``new_zh``: the new
    target's Chinese name for the Chinese paraphrases (None: not measured).
    """
    ivs = (edit,)
    prompt, old = fact["prompt"], fact["true"]
    p_new_b, p_old_b = target_prob(model, prompt, new), target_prob(model, prompt, old)
    p_new_a, p_old_a = target_prob(model, prompt, new, ivs), target_prob(model, prompt, old, ivs)
    para = [target_prob(model, q, new, ivs) > target_prob(model, q, old, ivs) for q in fact["paraphrases"]]
    zh = None
    if new_zh and fact.get("true_zh") and fact.get("paraphrases_zh"):
        zh = float(np.mean([target_prob(model, q, new_zh, ivs) > target_prob(model, q, fact["true_zh"], ivs)
                            for q in fact["paraphrases_zh"]]))
    near_a = [target_prob(model, n["prompt"], n["true"], ivs) > target_prob(model, n["prompt"], new, ivs)
              for n in neighbours]
    near_b = [target_prob(model, n["prompt"], n["true"]) > target_prob(model, n["prompt"], new) for n in neighbours]
    gen_prompts = [f"{fact['subject'].strip()} is", prompt]
    return EditScores(efficacy=float(p_new_a > p_old_a), paraphrase=float(np.mean(para)), paraphrase_zh=zh,
                      neighbourhood=float(np.mean(near_a)), neighbourhood_before=float(np.mean(near_b)),
                      fluency_before=fluency(model, gen_prompts, seed=fluency_seed),
                      fluency_after=fluency(model, gen_prompts, ivs, seed=fluency_seed),
                      p_new_before=p_new_b, p_new_after=p_new_a, p_old_before=p_old_b, p_old_after=p_old_a)


def find_fact(facts: list[dict], prompt: str, subject: str) -> dict | None:
    """The prompt-set row of ``subject`` (matched without surrounding spaces), or None."""
    key = subject.strip()
    return next((f for f in facts if f["subject"].strip() == key), None)


NEIGHBOURS = 10  # other subjects of the relation an edit must leave alone


def measure_edit(model, edit, prompt: str, subject: str, target: str, seed: int = 0) -> tuple[EditScores, dict, int]:
    """Score ``edit`` of ``prompt``'s ``subject`` to ``target`` as ``gpt2viz edit`` and the app do.

    The fact is the shipped prompt set's row for this prompt (its paraphrases); a prompt outside the set keeps
    the model's own top token as the old answer and has no paraphrases. Neighbours: ``NEIGHBOURS`` other
    subjects drawn with ``seed``. Returns (scores, the fact row used, the number of neighbours).
    """
    import random

    facts = prompt_set()["facts"]
    fact = find_fact(facts, prompt, subject)
    if fact is None or fact["prompt"] != prompt.strip():
        top = int(np.argmax(model.run(model.tokenizer.encode(prompt), hooks=[])[0].last_logits))
        fact = {"prompt": prompt, "subject": subject, "true": model.tokenizer.token_text(top), "paraphrases": [],
                "paraphrases_zh": []}
    rng = random.Random(seed)
    others = [f for f in facts if f["subject"].strip() != subject.strip()]
    neighbours = rng.sample(others, min(NEIGHBOURS, len(others)))
    new_zh = next((f["true_zh"] for f in facts if f["true"].strip() == target.strip()), None)
    scores = score_edit(model, edit, fact, target, neighbours, new_zh=new_zh, fluency_seed=seed)
    return scores, fact, len(neighbours)
