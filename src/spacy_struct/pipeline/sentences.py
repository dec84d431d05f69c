"""Which token ranges a component builds one structure over.

A tree (of arcs, or of nested spans) is built per sentence, so the decoders'
O(n^2) (Chu-Liu-Edmonds) and O(n^3) (Eisner, CKY) costs are paid per
sentence, never per document:

- A Doc with sentence boundaries (gold, a `senter`, a `sentencizer`, or an
  earlier parse) gets one tree per sentence, so `doc.sents` after parsing
  equals the sentences that came in (the parser sets them; nested_ner only reads them).
- A Doc without boundaries (raw text with no `senter` or `sentencizer`
  before the component) is cut by rule, never parsed as one giant tree: a
  sentence ends after sentence-final punctuation (the sentencizer's
  characters, with any closing punctuation after them) and after a blank
  line. Any piece still longer than `max_unsegmented_length` (or
  `max_sentence_length`, if smaller) is cut into equal pieces below that
  length. The components warn once when this rule cuts a doc: a trained
  `senter` finds sentences far better. A gold-token evaluation (one
  sentence per Doc, no boundaries) is cut too where a sentence holds
  sentence-final punctuation inside it.
- In training, the gold sentences are used (`training_ranges`); a reference
  Doc without any boundaries (a corpus of one Doc per sentence) is one
  sentence up to `max_unsegmented_length` tokens.
- A given sentence longer than `max_sentence_length` is cut after
  punctuation and then evenly, the only case where the parse changes the
  boundaries that came in; it bounds the memory of the n x n score matrix.
- Whitespace tokens stay with the sentence before them (after them, at the
  start of a doc): whitespace alone is never a structure of its own unless
  the doc holds nothing else.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import IS_SPACE, SENT_START
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


def rule_starts(doc, start: int = 0, end: Optional[int] = None) -> List[int]:
    """Sentence starts in doc[start:end] by rule, as spaCy's sentencizer finds
    them and paragraph breaks besides: after sentence-final punctuation (and
    any punctuation or space that follows it), or after a whitespace token
    that holds a blank line (two newlines), the next word starts a sentence.
    A single newline does not end a sentence: hard-wrapped text has one at
    the end of every line."""
    end = len(doc) if end is None else end
    starts = [start] if end > start else []
    ended = False
    for i in range(start, end):
        token = doc[i]
        if ended and not token.is_punct and not token.is_space and token.text not in SENTENCE_FINAL:
            starts.append(i)
            ended = False
        elif token.text in SENTENCE_FINAL or (token.is_space and token.text.count("\n") > 1):
            ended = True
    return starts


def rule_ranges(doc, limit: int, start: int = 0, end: Optional[int] = None) -> List[Range]:
    """doc[start:end] cut into sentences by `rule_starts`, whitespace that
    would be a sentence of its own joined to a neighbour
    (`join_whitespace_ranges`), pieces over `limit` cut evenly."""
    end = len(doc) if end is None else end
    starts = rule_starts(doc, start, end)
    out: List[Range] = []
    for s, e in join_whitespace_ranges(doc, list(zip(starts, starts[1:] + [end]))):
        out.extend(_cut_evenly(s, e, limit))
    return out


def check_sentence_limits(owner: str, max_unsegmented_length: object, max_sentence_length: object) -> None:
    """A clear error from the component `owner` for a limit that is not a
    positive integer (both components take these two settings)."""
    for key, value in (("max_unsegmented_length", max_unsegmented_length),
                       ("max_sentence_length", max_sentence_length)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{owner}: {key} must be a positive integer, got {value!r}")


def sentence_ranges(
    doc, max_unsegmented_length: int, max_sentence_length: int, by_rule: bool = True
) -> List[Range]:
    """Token ranges [start, end) to decode, covering the Doc in order: its own
    sentences when it has boundaries, else sentences by rule (`rule_ranges`).
    With `by_rule` False, a Doc without boundaries up to
    `max_unsegmented_length` tokens is one range, and only a longer one is
    cut by rule."""
    if len(doc) == 0:
        return []
    if not doc.has_annotation("SENT_START"):
        if not by_rule and len(doc) <= min(max_unsegmented_length, max_sentence_length):
            return [(0, len(doc))]
        return rule_ranges(doc, min(max_unsegmented_length, max_sentence_length))
    flags = doc.to_array([SENT_START, IS_SPACE])
    if "sents" in doc.user_hooks:  # sentences a user's hook defines
        ranges = [(sent.start, sent.end) for sent in doc.sents]
    else:
        # the doc's sentences from its arrays (what doc.sents gives, without
        # a Span per sentence): a sentence starts at token 0 and at each flag
        starts = np.flatnonzero(flags[:, 0] == 1)
        starts = np.concatenate([[0], starts[starts > 0]]).tolist()
        ranges = list(zip(starts, starts[1:] + [len(doc)]))
    ranges = join_whitespace_ranges(doc, ranges, flags[:, 1].astype(bool))
    return cap_ranges(doc, ranges, max_sentence_length)


def join_whitespace_ranges(doc, ranges: Sequence[Range], is_space: Optional[np.ndarray] = None) -> List[Range]:
    """`ranges` with every range of whitespace tokens alone (a senter can
    make a blank line a sentence) joined to the range before it, or after
    it when it comes first, so whitespace never makes a structure of its own.
    is_space: the doc's IS_SPACE flags, when the caller has them."""
    if is_space is None:
        is_space = doc.to_array(IS_SPACE).astype(bool)
    out: List[Range] = []
    pending_start = None
    for start, end in ranges:
        if is_space[start:end].all():
            if out:
                out[-1] = (out[-1][0], end)
            elif pending_start is None:
                pending_start = start
            continue
        if pending_start is not None:
            start, pending_start = pending_start, None
        out.append((start, end))
    if pending_start is not None:                          # whitespace alone
        out.append((pending_start, ranges[-1][1]))
    return out


def training_ranges(eg, max_unsegmented_length: int, max_sentence_length: int) -> List[Range]:
    """Token ranges of `eg.predicted` to train over: the reference's sentences
    aligned to the predicted tokens; the predicted doc's own when only it has
    boundaries; without boundaries on either side, the whole Doc up to
    `max_unsegmented_length` tokens (a corpus of one Doc per sentence, as
    spaCy's gold_preproc reader gives) and longer Docs cut by rule."""
    predicted = eg.predicted
    if len(predicted) == 0:
        return []
    if eg.reference.has_annotation("SENT_START"):
        ranges = ranges_from_starts(eg.get_aligned_sent_starts())
    elif predicted.has_annotation("SENT_START"):
        ranges = [(sent.start, sent.end) for sent in predicted.sents]
    elif len(predicted) <= max_unsegmented_length:
        ranges = [(0, len(predicted))]
    else:
        ranges = rule_ranges(predicted, max_unsegmented_length)
    return cap_ranges(predicted, ranges, max_sentence_length)


def cap_ranges(doc, ranges: Sequence[Range], limit: int) -> List[Range]:
    """`ranges` with any range over `limit` tokens cut by rule, then evenly."""
    out: List[Range] = []
    for start, end in ranges:
        if end - start > limit:
            out.extend(rule_ranges(doc, limit, start, end))
        else:
            out.append((start, end))
    return out


def ranges_from_starts(sent_starts: Sequence[bool | None]) -> List[Range]:
    """Ranges from a list of sentence-start flags (None counts as not a start)."""
    n = len(sent_starts)
    starts = [0] + [i for i in range(1, n) if sent_starts[i]]
    return [(s, e) for s, e in zip(starts, starts[1:] + [n]) if e > s]


def gold_token_doc(reference, vocab):
    """The doc a component reads for `reference` with gold tokens (what
    `SentenceDocs.v1` trains on): its words and spaces, and its sentence
    starts (the whole doc as one sentence when it has none)."""
    from spacy.tokens import Doc

    words = [token.text for token in reference]
    spaces = [bool(token.whitespace_) for token in reference]
    if reference.has_annotation("SENT_START"):
        starts = [bool(token.is_sent_start) for token in reference]
    else:
        starts = [True] + [False] * (len(reference) - 1)
    return Doc(vocab, words=words, spaces=spaces, sent_starts=starts)
