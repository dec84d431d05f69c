"""The coordination rule: discontinuous mentions from a span tagger's output.

The simplest thing a user could write to get coordinated mentions out of a
tagger of contiguous spans (`nested_ner`, spancat), the peer the segmenter
has to beat on GENIA's coordinations:

- shared head, "A and B N": where a span "B N" is predicted and the words
  before it are a conjunct A and a coordinator, emit "A ... N" with its
  label ("human and [mouse CD19 genes]" gives "human ... CD19 genes"); a
  list "A1 , A2 and B N" gives one mention per conjunct;
- shared modifier, "N B and A": where a span "N B" is predicted and a
  coordinator and a conjunct A follow it, emit "N ... A" ("[PKC isoenzymes
  alpha] and beta" gives "PKC isoenzymes ... beta").

Every conjunct (A, B) is one word, the commonest case; A has B's shape
(the character classes: "human" and "mouse", "IL-2" and "IL-4"), is not a
stop word ("the", "a", "was": spaCy's English list) and is not inside
another predicted span of two or more words (then it is a mention of its
own); the predicted span must have at least one word besides B.

`python -m tools.bench.coordination DEV.spacy` prints the rule's ceiling:
its discontinuous P/R/F1 when fed the gold contiguous mentions.
"""
from __future__ import annotations

from typing import Iterable, List, Sequence, Set, Tuple

from spacy.lang.en.stop_words import STOP_WORDS

COORDINATORS = frozenset({"and", "or", "and/or", "nor"})

Fragments = Tuple[Tuple[int, int], ...]


def shape(word: str) -> str:
    """The word's character classes with runs collapsed: "IL-2" -> "X-d",
    "mouse" -> "x", "CD4+" -> "Xd+"; conjuncts of one coordination share it."""
    out = []
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.isalpha() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def coordinated(words: Sequence[str], spans: Iterable[Tuple[int, int, str]]) -> List[Tuple[str, Fragments]]:
    """The discontinuous mentions the rule adds for one sentence.

    words: the sentence's words.
    spans: the predicted contiguous spans as (start, end, label), end exclusive.
    RETURNS: (label, fragments) of each added mention, each once.
    """
    lower = [w.lower() for w in words]
    shapes = [shape(w) for w in words]
    n = len(words)
    spans = list(spans)
    # a word inside a predicted span of two or more words is part of a
    # mention of its own, not an elided conjunct
    in_phrase = {i for start, end, _ in spans if end - start > 1 for i in range(start, end)}

    def conjunct(a: int, b: int) -> bool:
        return 0 <= a < n and a not in in_phrase and shapes[a] == shapes[b] and lower[a] not in STOP_WORDS

    found: Set[Tuple[str, Fragments]] = set()
    for start, end, label in spans:
        if end - start < 2:
            continue
        # shared head: A (, A)* (,) coordinator [B N]
        if start >= 2 and lower[start - 1] in COORDINATORS:
            a = start - 3 if lower[start - 2] == "," else start - 2
            while conjunct(a, start):
                found.add((label, ((a, a + 1), (start + 1, end))))
                if a < 2 or lower[a - 1] != ",":
                    break
                a -= 2
        # shared modifier: [N B] coordinator A
        if end + 1 < n and lower[end] in COORDINATORS and conjunct(end + 1, end - 1):
            found.add((label, ((start, end - 1), (end + 1, end + 2))))
    return sorted(found)


def ceiling(corpus) -> Tuple[int, int, int]:
    """The rule fed the gold contiguous mentions of a .spacy corpus with
    doc._.segments: (found, predicted, gold) discontinuous mentions, the
    most the rule gets from a perfect tagger of contiguous spans."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_struct.overlap_segmenter import get_segments

    found = predicted = gold_total = 0
    for doc in DocBin().from_disk(corpus).get_docs(spacy.blank("en").vocab):
        segments = get_segments(doc)
        spans = [(s.start, s.end, s.label_) for s in segments if not s.is_discontinuous]
        gold = {(s.label_, tuple(s.offsets)) for s in segments if s.is_discontinuous}
        added = set(coordinated([t.text for t in doc], spans))
        found += len(added & gold)
        predicted += len(added)
        gold_total += len(gold)
    return found, predicted, gold_total


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tools.bench.coordination",
        description="the coordination rule's ceiling: its discontinuous P/R/F1 when fed the gold "
                    "contiguous mentions of a corpus (the segments bench runs it over a tagger's output)")
    parser.add_argument("corpus", help=".spacy file with doc._.segments (python -m spacy_struct convert craft)")
    args = parser.parse_args(argv)
    found, predicted, gold = ceiling(args.corpus)
    p, r = found / max(predicted, 1), found / max(gold, 1)
    print(f"coordination rule on the gold contiguous mentions of {args.corpus}: "
          f"P {100 * p:.1f} / R {100 * r:.1f} / F1 {200 * p * r / max(p + r, 1e-9):.1f} "
          f"({found} of {gold} discontinuous mentions, {predicted} predicted)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
