"""Write the morphology sample: English-like sentences whose words are built
from stems and affixes, in the SIGMORPHON 2022 sentence-level form
("sentence TAB segmented sentence", a word's morphs joined by " @@").

Nouns take a plural -s; verbs -s, -ed or -ing and sometimes the prefix re-;
adjectives un- and -ly; the function words stay whole. Subjects agree with
their verbs ("the walker-s walk", "a walker walk-s"), so the context of a
word tells something of its segmentation, as Lee et al. (2011) model it.
The words are made-up, so nothing here is third-party text.

Run it to regenerate sample-morph-train.tsv and sample-morph-dev.tsv (fixed
seed), read by `python -m spacy_struct convert sigmorphon --level sentence`.
"""
import random
from pathlib import Path

NOUNS = ["walker", "tabel", "morok", "brisk", "calden", "fimor", "gorund", "holbin", "jaster", "kolp",
         "lumber", "marden", "nistor", "pelmat", "quorin", "ralter", "sumbel", "tarven", "volder", "wintel"]
VERBS = ["walk", "jump", "klim", "plass", "trend", "morv", "glent", "brask", "fland", "wisp",
         "crant", "dolm", "frest", "grisk", "hult", "jeld", "korp", "lunt", "mosk", "narv"]
ADJECTIVES = ["quick", "soft", "bright", "calm", "dark", "firm", "glad", "harsh", "kind", "loud"]


def _noun(rng: random.Random, plural: bool):
    stem = rng.choice(NOUNS)
    return [stem, "s"] if plural else [stem]


def _verb(rng: random.Random, plural_subject: bool):
    stem = rng.choice(VERBS)
    prefix = ["re"] if rng.random() < 0.2 else []
    tense = rng.randrange(3)
    if tense == 0:
        suffix = [] if plural_subject else ["s"]
    elif tense == 1:
        suffix = ["ed"]
    else:
        return ["is" if not plural_subject else "are"], prefix + [stem, "ing"]
    return None, prefix + [stem] + suffix


def _sentence(rng: random.Random):
    plural = rng.random() < 0.5
    words = [["the"] if plural or rng.random() < 0.5 else ["a"]]
    if rng.random() < 0.4:
        words.append((["un"] if rng.random() < 0.3 else []) + [rng.choice(ADJECTIVES)])
    words.append(_noun(rng, plural))
    auxiliary, verb = _verb(rng, plural)
    if auxiliary:
        words.append(auxiliary)
    words.append(verb)
    if rng.random() < 0.5:
        words += [["the"], _noun(rng, rng.random() < 0.5)]
    if rng.random() < 0.3:
        words.append([rng.choice(ADJECTIVES), "ly"])
    words.append(["."])
    return words


def write(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf8") as f:
        for _ in range(n):
            words = _sentence(rng)
            text = " ".join("".join(w) for w in words)
            segmented = " ".join(" @@".join(w) for w in words)
            f.write(f"{text}\t{segmented}\n")


if __name__ == "__main__":
    here = Path(__file__).parent
    write(here / "sample-morph-train.tsv", 300, seed=1)
    write(here / "sample-morph-dev.tsv", 60, seed=2)
