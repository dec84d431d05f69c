"""`sentence_ranges` reads a doc's sentences from its arrays: the same as
spaCy's `doc.sents`, with whitespace-only sentences joined to a neighbour."""
import numpy as np
import spacy
from spacy.tokens import Doc

from spacy_struct.pipeline.sentences import sentence_ranges


def _reference(doc):
    out, pending = [], None
    for sent in doc.sents:
        if all(t.is_space for t in sent):
            if out:
                out[-1] = (out[-1][0], sent.end)
            elif pending is None:
                pending = sent.start
            continue
        start = sent.start if pending is None else pending
        pending = None
        out.append((start, sent.end))
    if pending is not None:
        out.append((pending, len(doc)))
    return out


def test_ranges_are_spacys_sentences_with_whitespace_joined():
    nlp = spacy.blank("en")
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        n = int(rng.integers(1, 12))
        words = [str(w) if w else "\n" for w in rng.integers(0, 3, size=n)]
        # True, False and None (unknown) flags; the first token always starts
        starts = [bool(x) if x < 2 else None for x in rng.integers(0, 3, size=n)]
        starts[0] = True
        doc = Doc(nlp.vocab, words=words, sent_starts=starts)
        if not doc.has_annotation("SENT_START"):  # no boundary known: sentences by rule
            continue
        assert sentence_ranges(doc, 100, 100) == _reference(doc)
        checked += 1
    assert checked > 150


def test_a_sentence_hook_defines_the_sentences():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["a", "b", "c", "d"], sent_starts=[True, False, True, False])
    doc.user_hooks["sents"] = lambda d: iter([d[0:4]])
    assert sentence_ranges(doc, 100, 100) == [(0, 4)]
