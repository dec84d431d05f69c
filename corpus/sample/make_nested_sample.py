"""Write the nested-entity sample: short biomedical-style sentences with nested spans.

Entities nest as in GENIA: a protein inside a DNA ("IL-2 gene"), a protein
inside an RNA ("IL-2 mRNA"), a protein inside a protein ("NF-kappa B p50
subunit"), and a cell type inside a cell line description is left flat. Some
entities are long ("the HIV-1 long terminal repeat enhancer region"), so a
tagger limited to short n-grams misses them. The sentences come from a few
templates over a small vocabulary, so the demo and the tests can train in
seconds. Run it to regenerate sample-nested-train.jsonl and
sample-nested-dev.jsonl (fixed seed), in the format of
`python -m spacy_struct convert spans-jsonl`.
"""
import json
import random
from pathlib import Path

PROTEINS = [["IL-2"], ["TNF-alpha"], ["c-Fos"], ["STAT3"], ["GATA-1"], ["NF-kappa", "B"], ["Oct-2"], ["AP-1"]]
CELL_TYPES = [["T", "cells"], ["human", "monocytes"], ["B", "lymphocytes"], ["activated", "T", "cells"],
              ["peripheral", "blood", "neutrophils"]]
CELL_LINES = [["Jurkat", "cells"], ["HeLa", "cells"], ["U937", "cells"], ["the", "THP-1", "line"]]
DNA_HEADS = [["gene"], ["promoter"], ["enhancer"], ["locus"]]
LONG_DNA = [["HIV-1", "long", "terminal", "repeat"], ["HIV-1", "long", "terminal", "repeat", "enhancer", "region"],
            ["kappa", "B", "binding", "site"]]
VERBS = [["activates"], ["represses"], ["binds", "to"], ["regulates"]]


class Sentence:
    def __init__(self):
        self.tokens, self.spans = [], []

    def add(self, words, label=None):
        start = len(self.tokens)
        self.tokens.extend(words)
        if label:
            self.spans.append({"start": start, "end": len(self.tokens), "label": label})
        return start

    def protein(self, rng):
        p = rng.choice(PROTEINS)
        if rng.random() < 0.25:   # "NF-kappa B p50 subunit": protein inside protein
            start = self.add(p, "protein")
            self.add(["p50", "subunit"])
            self.spans.append({"start": start, "end": len(self.tokens), "label": "protein"})
        else:
            self.add(p, "protein")

    def dna(self, rng):
        if rng.random() < 0.3:
            self.add(rng.choice(LONG_DNA), "DNA")
            return
        start = len(self.tokens)
        self.protein(rng)          # "IL-2 gene": protein inside DNA
        self.add(rng.choice(DNA_HEADS))
        self.spans.append({"start": start, "end": len(self.tokens), "label": "DNA"})

    def rna(self, rng):
        start = len(self.tokens)
        self.protein(rng)
        self.add(["mRNA"])
        self.spans.append({"start": start, "end": len(self.tokens), "label": "RNA"})

    def cells(self, rng):
        if rng.random() < 0.5:
            self.add(rng.choice(CELL_TYPES), "cell_type")
        else:
            self.add(rng.choice(CELL_LINES), "cell_line")


def sentence(rng) -> Sentence:
    s = Sentence()
    kind = rng.randrange(4)
    if kind == 0:
        s.protein(rng)
        s.add(rng.choice(VERBS))
        s.add(["the"])
        s.dna(rng)
        s.add(["in"])
        s.cells(rng)
    elif kind == 1:
        s.add(["We", "detected"])
        s.rna(rng)
        s.add(["in"])
        s.cells(rng)
        s.add(["after", "stimulation"])
    elif kind == 2:
        s.add(["Expression", "of", "the"])
        s.dna(rng)
        s.add(["requires"])
        s.protein(rng)
        s.add(["and"])
        s.protein(rng)
    else:
        s.cells(rng)
        s.add(["secrete"])
        s.protein(rng)
        s.add(["when"])
        s.protein(rng)
        s.add(["binds", "the"])
        s.dna(rng)
    s.add(["."])
    return s


def write(path: Path, n: int, rng: random.Random, prefix: str) -> None:
    with open(path, "w", encoding="utf8") as f:
        for i in range(n):
            s = sentence(rng)
            spans = sorted(s.spans, key=lambda r: (r["start"], -r["end"], r["label"]))
            record = {"id": f"{prefix}-{i}", "tokens": s.tokens, "text": " ".join(s.tokens[:-1]) + ".",
                      "spans": spans}
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    here = Path(__file__).parent
    rng = random.Random(7)
    write(here / "sample-nested-train.jsonl", 300, rng, "train")
    write(here / "sample-nested-dev.jsonl", 60, rng, "dev")
