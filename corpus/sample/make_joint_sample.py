"""Write the joint sample: biomedical-style sentences with constituency trees
and GENIA-style entities, in the joint JSONL form of the GENIA Treebank.

The entities meet the trees in each of the ways the joint model handles:
- a phrase: "peripheral lymphocytes" (cell_type) is an NP;
- a run of children of one node: "IL-2 gene" (DNA) in the NP "the IL-2
  gene", which gets an entity node inserted;
- a single word with no phrase of its own: "IL-2" (protein) inside it;
- coordination: "IL-2 and c-fos" are two protein NPs under one NP.
The trees have unary chains (an NP over a single noun, S -> VP in a
to-infinitive) and punctuation, which evalb deletes.

The sentences come from a few templates over a small vocabulary, so the demo
and the tests train in seconds. Run it to regenerate sample-joint-train.jsonl
and sample-joint-dev.jsonl (fixed seed), read by
`python -m spacy_struct convert joint-jsonl`.
"""
import json
import random
import re
from pathlib import Path

PROTEINS = ["IL-2", "TNF-alpha", "c-fos", "GATA-1", "STAT3", "p53", "NF-AT", "Oct-2"]
DNA_HEADS = ["gene", "promoter", "enhancer"]
VERBS = {"activates": "activate", "induces": "induce", "represses": "repress", "binds": "bind"}
PARTICIPLES = ["detected", "measured", "studied", "observed"]
ADJECTIVES = ["peripheral", "activated", "human", "resting"]
CELL_TYPES = ["lymphocytes", "monocytes", "macrophages", "neutrophils"]
CELL_LINES = ["Jurkat", "HeLa", "U937", "THP-1"]


def _template(rng: random.Random) -> str:
    """One tree, with entities marked as {type: words} around their leaves."""
    p, p2 = rng.sample(PROTEINS, 2)
    head, verb, part = rng.choice(DNA_HEADS), rng.choice(sorted(VERBS)), rng.choice(PARTICIPLES)
    adj, cells, line = rng.choice(ADJECTIVES), rng.choice(CELL_TYPES), rng.choice(CELL_LINES)
    kind = rng.randrange(4)
    if kind == 0:
        return (f"(S (NP (NP (NN Expression)) (PP (IN of) (NP (DT the) <DNA <protein (NN {p})> (NN {head})>)))"
                f" (VP (VBD was) (VP (VBN {part}) (PP (IN in) <cell_type (NP (JJ {adj}) (NNS {cells}))>)))"
                f" (. .))")
    if kind == 1:
        return (f"(S <protein (NP (NN {p}))> (VP (VBZ {verb}) (NP (NP (DT the) <DNA <protein (NN {p2})> "
                f"(NN {head})>) (PP (IN in) <cell_line (NP (NN {line}) (NNS cells))>))) (. .))")
    if kind == 2:
        return (f"(S (NP <protein (NP (NN {p}))> (CC and) <protein (NP (NN {p2}))>) (VP (VBP are) "
                f"(VP (VBN {part}) (PP (IN in) <cell_type (NP (NNS {cells}))>))) (. .))")
    return (f"(S <protein (NP (NN {p}))> (VP (VBZ is) (ADJP (JJ able) (S (VP (TO to) (VP (VB {VERBS[verb]}) "
            f"<DNA (NP (DT the) <protein (NN {p2})> (NN {head}))>))))) (. .))")


def _record(marked: str, number: int) -> dict:
    """Strip the entity marks, keeping their token offsets."""
    tokens, tags, spans, stack = [], [], [], []
    for piece in re.findall(r"<[a-z_A-Z]+|>|\([^()\s]+ [^()\s]+\)|\(|\)|[^\s()<>]+", marked):
        if piece.startswith("<"):
            stack.append((piece[1:], len(tokens)))
        elif piece == ">":
            label, start = stack.pop()
            spans.append({"start": start, "end": len(tokens), "label": label})
        elif piece.startswith("(") and " " in piece:
            tag, word = piece[1:-1].split(" ")
            tokens.append(word)
            tags.append(tag)
    tree = "(TOP " + re.sub(r"\s+", " ", re.sub(r"<[a-z_A-Z]+|>", "", marked)).strip() + ")"
    tree = tree.replace("( ", "(").replace(" )", ")")
    spans.sort(key=lambda s: (s["start"], -s["end"], s["label"]))
    return {"id": f"sample-{number}", "tokens": tokens, "tags": tags, "tree": tree, "spans": spans}


def write(path: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    with path.open("w", encoding="utf8") as f:
        for number in range(n):
            f.write(json.dumps(_record(_template(rng), number)) + "\n")


if __name__ == "__main__":
    here = Path(__file__).parent
    write(here / "sample-joint-train.jsonl", 300, seed=1)
    write(here / "sample-joint-dev.jsonl", 60, seed=2)
