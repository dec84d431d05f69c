"""Write the segment sample: biomedical-style sentences whose concept
mentions overlap, nest, cross and have gaps, as in CRAFT.

- Coordinated heads make discontinuous mentions: in "BMP2 and BMP4 genes",
  "BMP2 ... genes" and "BMP4 genes" are genes (SO), and "BMP2", "BMP4" are
  proteins (PR) inside them; "BMP2 ... genes" and "BMP4 genes" share
  "genes" without one holding the other, so they cross.
- Body parts nest: "limb bud" (UBERON) holds "limb" (UBERON).
- Plain one-word mentions (cell types CL, taxa NCBITaxon, processes GO_BP,
  chemicals CHEBI) are the most common, as in CRAFT.

The sentences come from a few templates over a small vocabulary, so the demo
and the tests train in seconds. Run it to regenerate sample-segments-train.jsonl
and sample-segments-dev.jsonl (fixed seed) in the CRAFT JSONL form read by
`python -m spacy_struct convert craft`.
"""
import json
import random
from pathlib import Path

GENES = ["BMP2", "BMP4", "BMP7", "Shh", "Fgf8", "Wnt3", "Sox9", "Pax6"]
HEADS = [["genes"], ["mRNAs"], ["transcripts"]]
PARTS = [(["limb", "bud"], ["limb"]), (["neural", "tube"], ["tube"]), (["optic", "cup"], ["cup"])]
CELLS = ["chondrocytes", "osteoblasts", "fibroblasts", "neurons"]
TAXA = ["mice", "embryos", "zebrafish"]
PROCESSES = ["expression", "apoptosis", "proliferation", "differentiation"]
CHEMICALS = ["retinoic acid", "calcium", "glucose"]
VERBS = ["regulate", "control", "affect", "promote"]


class Sentence:
    def __init__(self):
        self.tokens, self.spans = [], []

    def add(self, words):
        start = len(self.tokens)
        self.tokens.extend(words)
        return start, len(self.tokens)

    def mention(self, label, *fragments):
        self.spans.append({"fragments": [list(f) for f in fragments], "label": label})

    def coordinated_genes(self, rng):
        a, b = rng.sample(GENES, 2)
        head = rng.choice(HEADS)
        ra = self.add([a])
        self.add(["and"])
        rb = self.add([b])
        rh = self.add(head)
        self.mention("PR", ra)
        self.mention("PR", rb)
        self.mention("SO", ra, rh)             # discontinuous
        self.mention("SO", (rb[0], rh[1]))     # contiguous, crosses the one above

    def single_gene(self, rng):
        r = self.add([rng.choice(GENES)])
        self.mention("PR", r)

    def body_part(self, rng):
        whole, inner = rng.choice(PARTS)
        self.add(["the"])
        r = self.add(whole)
        self.mention("UBERON", r)
        if inner == whole[:1]:
            self.mention("UBERON", (r[0], r[0] + 1))
        else:
            self.mention("UBERON", (r[1] - 1, r[1]))

    def one_word(self, rng, label, words):
        r = self.add(rng.choice(words).split())
        self.mention(label, r)


def sentence(rng):
    s = Sentence()
    kind = rng.random()
    if kind < 0.5:
        s.coordinated_genes(rng)
        s.add([rng.choice(VERBS)])
        s.one_word(rng, "GO_BP", PROCESSES)
        s.add(["in"])
        s.one_word(rng, "CL", CELLS)
    elif kind < 0.75:
        s.single_gene(rng)
        s.add(["is", "expressed", "in"])
        s.body_part(rng)
        s.add(["of"])
        s.one_word(rng, "NCBITaxon", TAXA)
    else:
        s.one_word(rng, "CHEBI", CHEMICALS)
        s.add(["induces"])
        s.one_word(rng, "GO_BP", PROCESSES)
        s.add(["of"])
        s.one_word(rng, "CL", CELLS)
    s.add(["."])
    return s


def write(path: Path, n: int, rng: random.Random, prefix: str) -> None:
    with path.open("w", encoding="utf8") as f:
        for i in range(n):
            s = sentence(rng)
            offsets, pos = [], 0
            for j, token in enumerate(s.tokens):
                if j and token != ".":
                    pos += 1
                offsets.append([pos, pos + len(token)])
                pos += len(token)
            record = {"id": f"{prefix}-{i}", "doc_id": prefix, "tokens": s.tokens,
                      "char_offsets": offsets, "spans": s.spans}
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    here = Path(__file__).parent
    rng = random.Random(7)
    write(here / "sample-segments-train.jsonl", 300, rng, "train")
    write(here / "sample-segments-dev.jsonl", 60, rng, "dev")
