"""Which token ranges a component builds one structure over.

A tree (of arcs, or of nested spans) is built per sentence, so the decoders'
O(n^2) (Chu-Liu-Edmonds) and O(n^3) (Eisner, CKY) costs are paid per
sentence, never per document:

- A Doc with sentence boundaries (gold, a `senter`, a `sentencizer`, or an
  earlier parse) gets one tree per sentence, so `doc.sents` after parsing
  equals the sentences that came in (the parser sets them; nested_ner only reads them).
- A Doc without boundaries of at most `max_unsegmented_length` tokens is one
  sentence (as when a corpus is read with gold_preproc, one Doc per sentence).
- A longer Doc without boundaries is first cut after sentence-final
  punctuation (the sentencizer's characters), and any piece still longer than
  `max_unsegmented_length` is cut into equal pieces below that length.
- A given sentence longer than `max_sentence_length` is cut the same way, the
  only case where the parse changes the boundaries that came in; it bounds the
  memory of the n x n score matrix.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

from spacy.pipeline.sentencizer import Sentencizer

SENTENCE_FINAL = frozenset(Sentencizer.default_punct_chars)

Range = Tuple[int, int]


def _cut_evenly(start: int, end: int, limit: int) -> List[Range]:
    n = end - start
    if n <= limit:
        return [(start, end)]
    pieces = -(-n // limit)
    size = -(-n // pieces)
    return [(s, min(s + size, end)) for s in range(start, end, size)]


def _cut_at_punctuation(doc, start: int, end: int, limit: int) -> List[Range]:
    out: List[Range] = []
    begin = start
    for i in range(start, end):
        if doc[i].text in SENTENCE_FINAL and (i + 1 == end or doc[i + 1].text not in SENTENCE_FINAL):
            out.extend(_cut_evenly(begin, i + 1, limit))
            begin = i + 1
    if begin < end:
        out.extend(_cut_evenly(begin, end, limit))
    return out


def check_sentence_limits(owner: str, max_unsegmented_length: object, max_sentence_length: object) -> None:
    """A clear error from the component `owner` for a limit that is not a
    positive integer (both components take these two settings)."""
    for key, value in (("max_unsegmented_length", max_unsegmented_length),
                       ("max_sentence_length", max_sentence_length)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{owner}: {key} must be a positive integer, got {value!r}")


def sentence_ranges(doc, max_unsegmented_length: int, max_sentence_length: int) -> List[Range]:
    """Token ranges [start, end) to parse, covering the Doc in order."""
    n = len(doc)
    if n == 0:
        return []
    if doc.has_annotation("SENT_START"):
        ranges: List[Range] = []
        for sent in doc.sents:
            if len(sent) > max_sentence_length:
                ranges.extend(_cut_at_punctuation(doc, sent.start, sent.end, max_sentence_length))
            else:
                ranges.append((sent.start, sent.end))
        return ranges
    if n <= max_unsegmented_length:
        return [(0, n)]
    return _cut_at_punctuation(doc, 0, n, max_unsegmented_length)


def ranges_from_starts(sent_starts: Sequence[bool | None]) -> List[Range]:
    """Ranges from a list of sentence-start flags (None counts as not a start)."""
    n = len(sent_starts)
    starts = [0] + [i for i in range(1, n) if sent_starts[i]]
    return [(s, e) for s, e in zip(starts, starts[1:] + [n]) if e > s]
