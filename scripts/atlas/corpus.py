"""Generate the training text for `atlas`: facts in several phrasings, and open-ended sentences.

Facts teach the seed story ("The capital of France is" -> " Paris") so that attention and the
logit lens have something real to show; open-ended sentences ("My favourite city is ...") have
many right continuations, so temperature, top-k and top-p visibly change what comes next.
"""

from __future__ import annotations

import random

from facts import FACTS, Fact, sentence_case

WEATHER = ["sunny", "rainy", "cold", "warm", "windy", "cloudy", "hot", "grey", "mild", "snowy"]
PEOPLE = ["My friend", "My sister", "My brother", "My teacher", "My neighbour", "Our cousin"]


def capital_sentences(f: Fact) -> list[str]:
    """Every phrasing of the capital fact; the first is the probe prompt's own phrasing."""
    C, c = sentence_case(f.country), f.country
    return [
        f"The capital of {c} is {f.capital}.",
        f"The capital city of {c} is {f.capital}.",
        f"{f.capital} is the capital of {c}.",
        f"{C} has its capital in {f.capital}.",
        f"The seat of government of {c} is {f.capital}.",
        f"Q: What is the capital of {c}? A: {f.capital}.",
    ]


def other_fact_sentences(f: Fact) -> list[str]:
    """Continent, language and currency of a country, each in two phrasings."""
    C, c = sentence_case(f.country), f.country
    return [
        f"{C} is a country in {f.continent}.",
        f"{f.capital} is a city in {f.continent}.",
        f"People in {c} speak {f.language}.",
        f"The main language of {c} is {f.language}.",
        f"The currency of {c} is the {f.currency}.",
        f"In {c}, people pay with the {f.currency}.",
    ]


def open_sentence(rng: random.Random) -> str:
    """A sentence with many plausible continuations (a uniform choice the model cannot predict)."""
    a, b = rng.choice(FACTS), rng.choice(FACTS)
    kind = rng.randrange(7)
    if kind == 0:
        return f"My favourite city is {a.capital}."
    if kind == 1:
        return f"My favourite country is {a.country}."
    if kind == 2:
        return f"I would love to visit {a.country} one day."
    if kind == 3:
        return f"Last summer we travelled to {a.capital}."
    if kind == 4:
        return f"{rng.choice(PEOPLE)} lives in {a.capital}."
    if kind == 5:
        return f"Today the weather in {a.capital} is {rng.choice(WEATHER)}."
    return f"{rng.choice(PEOPLE)} was born in {a.capital} and moved to {b.capital}."


def random_sentence(rng: random.Random) -> str:
    """Draw one sentence: 45% capital facts, 25% other facts, 30% open-ended."""
    r = rng.random()
    f = rng.choice(FACTS)
    if r < 0.45:
        return rng.choice(capital_sentences(f))
    if r < 0.70:
        return rng.choice(other_fact_sentences(f))
    return open_sentence(rng)


def document(rng: random.Random, n_sentences: int) -> str:
    """A run of sentences separated by spaces, as one training text."""
    return " ".join(random_sentence(rng) for _ in range(n_sentences))
