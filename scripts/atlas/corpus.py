"""Generate the training text for `atlas`: facts in English and Chinese, and a small story world.

A training text is a run of sentences. Each sentence is a list of *segments* that are tokenized
separately and concatenated (byte-level BPE can merge bytes across Chinese characters, so the Chinese
capital facts are cut where a prompt ends: "法国的首都是" | "巴黎" | "。", and the prompt a user types
tokenizes exactly as the training prefix did).

Mix of sentences (see `random_english` / `text`):
- capital facts in English. After "The capital of X is" the capital follows 70 % of the time; the
  other 30 % the same words continue differently (" a city in Europe.", " the city of Paris.",
  " known for ...", " located in Europe.", " also ...", " one of ..."), so the story's prompt has real odds;
- other facts (continent, language, currency) and open sentences with many right answers;
- a story world written by a small grammar: people (with gendered pairs king/queen, man/woman,
  prince/princess, father/mother, son/daughter, brother/sister, husband/wife, boy/girl, uncle/aunt)
  in parallel sentences whose only difference is the gender and its marks (he/his vs she/her),
  animals, places, actions, and openings such as "Once upon a time";
- Chinese texts: capital facts and continents from facts_zh.py, in their own sentence patterns.
"""

from __future__ import annotations

import random

from facts import FACTS, Fact, sentence_case
from facts_zh import FACTS_ZH, FactZh

WEATHER = ["sunny", "rainy", "cold", "warm", "windy", "cloudy", "hot", "grey", "mild", "snowy"]
PEOPLE = ["My friend", "My sister", "My brother", "My teacher", "My neighbour", "Our cousin"]

# The capital follows "The capital of X is" with probability P_CAPITAL; otherwise one of these.
P_CAPITAL = 0.70


def _alternatives(f: Fact) -> list[str]:
    return [
        f" a city in {f.continent}.",
        f" the city of {f.capital}.",
        f" known for its old streets and busy markets.",
        f" located in {f.continent}.",
        f" also a busy and friendly city.",
        f" one of the great cities of {f.continent}.",
    ]


def capital_sentences(f: Fact) -> list[str]:
    """Phrasings of the capital fact other than the probe's own ("The capital of X is ...")."""
    C, c = sentence_case(f.country), f.country
    return [
        f"The capital city of {c} is {f.capital}.",
        f"{f.capital} is the capital of {c}.",
        f"{C} has its capital in {f.capital}.",
        f"Q: What is the capital of {c}? A: {f.capital}.",
    ]


def probe_sentence(f: Fact, rng: random.Random) -> str:
    """"The capital of X is" and how it goes on: the capital, or (30 %) another true continuation."""
    if rng.random() < P_CAPITAL:
        return f"The capital of {f.country} is {f.capital}."
    return f"The capital of {f.country} is" + rng.choice(_alternatives(f))


def other_fact_sentences(f: Fact) -> list[str]:
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


# ---- the story world ------------------------------------------------------------------------------
# (male, female, kind): kind picks the contexts a word lives in, the same for both members of a pair.
PAIRS = [
    ("king", "queen", "royal"), ("prince", "princess", "royal"),
    ("man", "woman", "adult"), ("boy", "girl", "child"),
    ("father", "mother", "parent"), ("son", "daughter", "child_kin"),
    ("brother", "sister", "sibling"), ("husband", "wife", "spouse"), ("uncle", "aunt", "parent"),
]
PRON = {"m": ("he", "his", "him", "He", "His"), "f": ("she", "her", "her", "She", "Her")}
NAMES = {"m": ["Tom", "Sam", "Jack", "Ben", "Leo", "Max"], "f": ["Anna", "Lily", "Emma", "Mia", "Lucy", "Rose"]}
ANIMALS = ["dog", "cat", "bird", "fox", "horse", "rabbit", "bear", "mouse", "owl", "frog", "duck", "sheep"]
PLACES = ["forest", "village", "river", "garden", "market", "farm", "hill", "lake", "school", "park", "field", "town"]
OBJECTS = ["ball", "apple", "book", "box", "cake", "flower", "key", "hat", "letter", "basket", "lamp", "coin"]
ADJ = ["kind", "old", "young", "happy", "brave", "clever", "quiet", "tired", "good", "wise", "gentle", "proud"]
ANIMAL_ADJ = ["little", "big", "small", "brown", "white", "black", "lazy", "friendly", "hungry", "sleepy"]
ROYAL_CTX = ["ruled the kingdom", "sat on the throne", "wore a golden crown", "lived in the castle",
             "walked through the palace", "spoke to the people of the kingdom"]
HOME = {"royal": "castle", "adult": "house", "child": "house", "parent": "house", "child_kin": "house",
        "sibling": "house", "spouse": "house"}
FEEL = ["happy", "sad", "tired", "hungry", "afraid", "glad", "surprised", "sleepy"]
INTRANS = ["sang a song", "went to sleep", "laughed", "sat down", "ran home", "looked at the sky",
           "smiled", "waited for a while"]
OPENINGS = ["Once upon a time", "Long ago", "One day", "One morning", "Every evening", "In a small village"]


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _person(rng: random.Random) -> tuple[str, str, str]:
    """(noun phrase, gender, kind), e.g. ("the queen", "f", "royal") or ("Tom", "m", "name")."""
    g = rng.choice("mf")
    if rng.random() < 0.25:
        return rng.choice(NAMES[g]), g, "name"
    m, f, kind = rng.choice(PAIRS)
    return "the " + (m if g == "m" else f), g, kind


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def gender_pair_sentences(rng: random.Random) -> list[str]:
    """The same sentence for both members of a gendered pair: only the word and its pronouns change."""
    m, f, kind = rng.choice(PAIRS)
    adj, place, obj, animal = rng.choice(ADJ), rng.choice(PLACES), rng.choice(OBJECTS), rng.choice(ANIMALS)
    feel = rng.choice(FEEL)
    k = rng.randrange(9)
    out = []
    for w, g in ((m, "m"), (f, "f")):
        he, his, him, He, His = PRON[g]
        if k == 0:
            s = f"{He} is {_a(w)}. {He} is {_a(adj)} {w}."
        elif k == 1:
            s = f"The {w} said that {he} was {feel}."
        elif k == 2:
            s = f"The {w} took {his} {obj} and went to the {place}."
        elif k == 3:
            s = (f"The {w} {rng.choice(ROYAL_CTX)}." if kind == "royal"
                 else f"The {w} lived in a small {HOME[kind]} near the {place}.")
        elif k == 4:
            s = f"{He} was {_a(adj)} {w}, and everyone liked {him}."
        elif k == 5:
            s = f"The {adj} {w} saw {_a(animal)} and smiled at it. {He} gave it {his} {obj}."
        elif k == 6:
            s = f"There was once {_a(w)} who loved {his} {animal}."
        elif k == 7:
            s = f"{He} became {_a(w)}." if kind in ("royal", "adult", "parent", "spouse") \
                else f"{He} was still {_a(w)}."
        else:
            s = f"The {w} was {feel}, so {he} {rng.choice(INTRANS)}."
        out.append(s)
    rng.shuffle(out) if rng.random() < 0.3 else None
    return out


def family_sentence(rng: random.Random) -> str:
    """Relations between the pairs: the king and his wife the queen, the father and his son..."""
    k = rng.randrange(8)
    if k == 0:
        return rng.choice(["The king and the queen lived in a castle.", "The queen and the king lived in a castle."])
    if k == 1:
        return rng.choice(["The king was the husband of the queen.", "The queen was the wife of the king."])
    if k == 2:
        return rng.choice(["The prince was the son of the king and the queen.",
                           "The princess was the daughter of the king and the queen."])
    if k == 3:
        return rng.choice(["The man and the woman walked to the market.", "The woman and the man walked to the market."])
    if k == 4:
        return rng.choice(["The boy and the girl played in the park.", "The girl and the boy played in the park."])
    if k == 5:
        return rng.choice(["The father and the mother loved their son and their daughter.",
                           "The mother and the father loved their daughter and their son."])
    if k == 6:
        return rng.choice(["The brother and the sister went to school.", "The sister and the brother went to school."])
    return rng.choice(["The uncle and the aunt came to visit.", "The husband and the wife came home.",
                       "The prince and the princess rode their horses.", "The princess and the prince rode their horses."])


def world_sentence(rng: random.Random, person=None) -> str:
    """One simple sentence of the story world (about ``person`` if given)."""
    who, g, kind = person or _person(rng)
    he, his, him, He, His = PRON[g]
    Who = _cap(who)
    k = rng.randrange(10)
    animal, place, obj = rng.choice(ANIMALS), rng.choice(PLACES), rng.choice(OBJECTS)
    if k == 0:
        return f"{Who} walked to the {place}."
    if k == 1:
        return f"{Who} saw {_a(rng.choice(ANIMAL_ADJ))} {animal} in the {place}."
    if k == 2:
        return f"{Who} found {_a(obj)} near the {place}."
    if k == 3:
        return f"The {rng.choice(ANIMAL_ADJ)} {animal} ran to the {place}."
    if k == 4:
        return f"{Who} gave the {animal} {_a(obj)}, and {he} was {rng.choice(FEEL)}."
    if k == 5:
        return f"The {animal} followed {who} to the {place}."
    if k == 6:
        return f"{Who} {rng.choice(INTRANS)}."
    if k == 7:
        return f"Near the {place}, {who} met the {rng.choice(ANIMAL_ADJ)} {animal}."
    if k == 8:
        return f"{Who} liked to play with {his} {rng.choice([animal, obj])}."
    return f"The {animal} was {rng.choice(FEEL)} because it could not find the {place}."


def story(rng: random.Random) -> str:
    """A short story: an opening, a character, what happened, an ending."""
    who, g, kind = _person(rng)
    he, his, him, He, His = PRON[g]
    noun = who[4:] if who.startswith("the ") else who
    intro = (f"there was {_a(rng.choice(ADJ))} {noun}" if who.startswith("the ")
             else f"there was a {'boy' if g == 'm' else 'girl'} called {who}")
    place, animal = rng.choice(PLACES), rng.choice(ANIMALS)
    opening = rng.choice(OPENINGS)
    parts = [f"{opening}, {intro} who lived near the {place}.",
             f"{He} had {_a(rng.choice(ANIMAL_ADJ))} {animal}.",
             f"One day, {he} went to the {rng.choice(PLACES)} with {his} {animal}.",
             f"There {he} found {_a(rng.choice(OBJECTS))}.",
             f"{He} was very {rng.choice(FEEL)}.", "The end."]
    if rng.random() < 0.5:
        parts.insert(3, world_sentence(rng, (who if who[0].isupper() else "the " + noun, g, kind)))
    return " ".join(parts)


# ---- Chinese --------------------------------------------------------------------------------------
def chinese_sentence(f: FactZh, rng: random.Random) -> list[str]:
    """One Chinese sentence as segments; the capital fact is cut where its prompt ends."""
    k = rng.randrange(10)
    if k < 5:
        return [f"{f.country}的首都是", f.capital, "。"]
    if k == 5:
        return [f"{f.capital}是{f.country}的首都。"]
    if k == 6:
        return [f"问：{f.country}的首都是哪里？答：", f.capital, "。"]
    if k == 7:
        return [f"{f.country}是{f.continent}的一个国家。"]
    if k == 8:
        return [f"{f.capital}是{f.continent}的一座城市。"]
    return [f"我想去{f.country}，看看{f.capital}。"]


# ---- texts ----------------------------------------------------------------------------------------
def random_english(rng: random.Random) -> list[str]:
    """One or two English sentences: 32 % capital facts, 13 % other facts, 10 % open, 45 % story world."""
    r = rng.random()
    f = rng.choice(FACTS)
    if r < 0.20:
        return [probe_sentence(f, rng)]
    if r < 0.32:
        return [rng.choice(capital_sentences(f))]
    if r < 0.45:
        return [rng.choice(other_fact_sentences(f))]
    if r < 0.55:
        return [open_sentence(rng)]
    if r < 0.70:
        return gender_pair_sentences(rng)
    if r < 0.76:
        return [family_sentence(rng)]
    if r < 0.90:
        return [world_sentence(rng)]
    return [story(rng)]


P_CHINESE = 0.18


def text(rng: random.Random):
    """An endless training text as token segments: Chinese (P_CHINESE of texts) or English.

    Yields lists of segments; English sentences after the first carry their separating space.
    """
    chinese = rng.random() < P_CHINESE
    first = True
    while True:
        if chinese:
            yield chinese_sentence(rng.choice(FACTS_ZH), rng)
        else:
            for s in random_english(rng):
                yield [s if first else " " + s]
                first = False
        first = False


def document(rng: random.Random, n_sentences: int) -> str:
    """A few sentences of one text joined, for looking at the corpus."""
    it = text(rng)
    return "".join("".join(next(it)) for _ in range(n_sentences))
