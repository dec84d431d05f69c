"""Write the sample corpus: small English sentences with hand-built UD trees.

The sentences come from a handful of templates over a small vocabulary, so
the demo and the tests can train a parser in seconds. Two templates are
non-projective (an extraposed relative clause and an extraposed prepositional
phrase), so the sample exercises both decoders. Run it to regenerate
sample-train.conllu and sample-dev.conllu (fixed seed).
"""
import random
from pathlib import Path

DET = [("the", "DT"), ("a", "DT"), ("this", "DT")]
NOUN = ["dog", "cat", "teacher", "farmer", "child", "doctor", "bird", "student", "neighbour", "pilot"]
OBJ = ["ball", "letter", "book", "car", "apple", "song", "house", "picture", "ticket", "bag"]
VERB = ["saw", "found", "liked", "bought", "wrote", "painted", "sold", "took", "kept", "lost"]
INTR = ["arrived", "left", "slept", "smiled", "waited", "laughed"]
ADJ = ["old", "small", "red", "happy", "new", "quiet"]
ADV = ["yesterday", "today", "later", "again"]
PREP = ["in", "near", "behind", "under"]
PLACE = ["garden", "station", "kitchen", "park", "village"]


def word(form, upos, xpos, head, dep, space=True):
    return [form, upos, xpos, head, dep, space]


def np_(det, noun, adj=None):
    out = [word(det[0], "DET", det[1], None, "det")]
    if adj:
        out.append(word(adj, "ADJ", "JJ", None, "amod"))
    out.append(word(noun, "NOUN", "NN", None, None))
    return out


def attach(phrase, head_pos_in_phrase, offset):
    """Give every word of a phrase its head inside the phrase."""
    for w in phrase:
        if w[3] is None and w[4] is not None:
            w[3] = offset + head_pos_in_phrase


def transitive(rng):
    subj = np_(rng.choice(DET), rng.choice(NOUN), rng.choice(ADJ + [None]))
    obj = np_(rng.choice(DET), rng.choice(OBJ), rng.choice(ADJ + [None]))
    words = subj + [word(rng.choice(VERB), "VERB", "VBD", 0, "root")] + obj
    verb = len(subj) + 1
    attach(subj, len(subj), 0)
    subj[-1][3], subj[-1][4] = verb, "nsubj"
    attach(obj, len(obj), verb)
    obj[-1][3], obj[-1][4] = verb, "obj"
    if rng.random() < 0.5:
        pp = [word(rng.choice(PREP), "ADP", "IN", None, "case"),
              word("the", "DET", "DT", None, "det"), word(rng.choice(PLACE), "NOUN", "NN", verb, "obl")]
        base = len(words)
        pp[0][3] = pp[1][3] = base + 3
        words += pp
    if rng.random() < 0.3:
        words.append(word(rng.choice(ADV), "ADV", "RB", verb, "advmod"))
    return words


def extraposed_relative(rng):
    """The dog arrived yesterday that found the ball ."  (acl:relcl crosses the root arc)"""
    subj = np_(rng.choice(DET), rng.choice(NOUN))
    attach(subj, len(subj), 0)
    verb = len(subj) + 1
    subj[-1][3], subj[-1][4] = verb, "nsubj"
    words = subj + [word(rng.choice(INTR), "VERB", "VBD", 0, "root"),
                    word(rng.choice(ADV), "ADV", "RB", verb, "advmod")]
    rel = len(words) + 2
    words += [word("that", "PRON", "WDT", rel, "nsubj"),
              word(rng.choice(VERB), "VERB", "VBD", len(subj), "acl:relcl")]
    obj = np_(rng.choice(DET), rng.choice(OBJ))
    attach(obj, len(obj), len(words))
    obj[-1][3], obj[-1][4] = rel, "obj"
    return words + obj


def extraposed_pp(rng):
    """A picture arrived today of the village ."  (nmod crosses the root arc)"""
    subj = np_(("a", "DT"), rng.choice(OBJ))
    attach(subj, len(subj), 0)
    verb = len(subj) + 1
    noun = len(subj)
    subj[-1][3], subj[-1][4] = verb, "nsubj"
    words = subj + [word(rng.choice(INTR), "VERB", "VBD", 0, "root"),
                    word(rng.choice(ADV), "ADV", "RB", verb, "advmod")]
    base = len(words)
    words += [word("of", "ADP", "IN", base + 3, "case"), word("the", "DET", "DT", base + 3, "det"),
              word(rng.choice(PLACE), "NOUN", "NN", noun, "nmod")]
    return words


def coordination(rng):
    a = transitive(rng)
    verb = next(i for i, w in enumerate(a, 1) if w[4] == "root")
    b = transitive(rng)
    off = len(a) + 1
    for w in b:
        w[3] = verb if w[4] == "root" else w[3] + off
        if w[4] == "root":
            w[4] = "conj"
    return a + [word("and", "CCONJ", "CC", off + next(i for i, w in enumerate(b, 1) if w[4] == "conj"), "cc")] + b


def sentence(rng):
    kind = rng.random()
    if kind < 0.5:
        words = transitive(rng)
    elif kind < 0.65:
        words = coordination(rng)
    elif kind < 0.85:
        words = extraposed_relative(rng)
    else:
        words = extraposed_pp(rng)
    words[0][0] = words[0][0].capitalize()
    words[-1][5] = False
    root = next(i for i, w in enumerate(words, 1) if w[4] == "root")
    words.append(word(".", "PUNCT", ".", root, "punct", True))
    return words


def to_conllu(sent_id, words):
    text = "".join(w[0] + (" " if w[5] else "") for w in words).strip()
    lines = [f"# sent_id = {sent_id}", f"# text = {text}"]
    for i, (form, upos, xpos, head, dep, space) in enumerate(words, 1):
        misc = "_" if space or i == len(words) else "SpaceAfter=No"
        lines.append(f"{i}\t{form}\t{form.lower()}\t{upos}\t{xpos}\t_\t{head}\t{dep}\t_\t{misc}")
    return "\n".join(lines) + "\n\n"


def main():
    rng = random.Random(7)
    here = Path(__file__).parent
    for split, n in (("train", 300), ("dev", 60)):
        text = "".join(to_conllu(f"sample-{split}-{i + 1}", sentence(rng)) for i in range(n))
        (here / f"sample-{split}.conllu").write_text(text, encoding="utf8")


if __name__ == "__main__":
    main()
