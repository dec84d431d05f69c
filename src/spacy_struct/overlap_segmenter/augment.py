"""`spacy_struct.coordination_augmenter.v1`: more coordinations to learn from.

A discontinuous mention is almost always a coordination ellipsis: "IL-2
and IL-4 genes" holds DNA [IL-2] + [genes] beside DNA [IL-4 genes]. They
are rare (GENIA: 1,015 of 47,939 training mentions), so the skip scores
that find them see few examples, and what they learn first is "never skip".
The pattern itself is regular: wherever a mention "B N" of type t is
annotated, "A and B N" with A a word that also starts "· N"-like mentions
of type t is a coordination whose left conjunct is [A] + [N]. This
augmenter writes such sentences beside the real ones during training.

For each training example, with probability `level`, one contiguous gold
segment of two or more words, [b, e) of type t, whose first word B is not
already the right conjunct of a coordination, gets a left conjunct: a word
A seen earlier in the stream as the first word of a type-t segment whose
second word is the same as this one's (so "IL-2" for "IL-4 gene", never a
word of another kind). The example yields unchanged, and then a copy whose
words read "... A and B N ..." (with probability `list_rate`, a second
conjunct too: "A , A' and B N"), whose segments are the original ones
shifted, plus (t, [A] + [b+1, e)) for each new conjunct. The inserted words
hold no other segment, as in the corpus (the left conjunct is a mention of
its own in 18 of GENIA's 1,006 gapped training mentions).

The stream-built table means the first examples of the first epoch see few
substitutes; the augmenter needs no pass over the corpus of its own.
"""
from __future__ import annotations

import random
from collections import defaultdict
from typing import Callable, Dict, Iterator, List, Tuple

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..annotations.segments import USER_DATA_KEY, get_segments, has_segments, register_extension

#: words that join conjuncts; a segment right after one is already a conjunct
COORDINATORS = frozenset({"and", "or", ",", "/", "nor", "but"})
#: substitutes kept per (type, second word): enough variety, bounded memory
MAX_SUBSTITUTES = 64


class CoordinationAugmenter:
    """Callable(nlp, example) -> examples: the example, then with probability
    `level` a copy with one coordination ellipsis written in (module doc)."""

    def __init__(self, level: float, list_rate: float, or_rate: float) -> None:
        for name, value in (("level", level), ("list_rate", list_rate), ("or_rate", or_rate)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ValueError(f"spacy_struct.coordination_augmenter.v1: {name} must be in [0, 1], not {value!r}")
        self.level, self.list_rate, self.or_rate = float(level), float(list_rate), float(or_rate)
        self.substitutes: Dict[Tuple[str, str], List[str]] = defaultdict(list)

    def __call__(self, nlp: Language, example: Example) -> Iterator[Example]:
        yield example
        reference = example.reference
        if not has_segments(reference):
            return
        words = [token.text for token in reference]
        candidates = self._learn(words, get_segments(reference))
        if not candidates or random.random() >= self.level:
            return
        label, start, end = random.choice(candidates)
        options = [w for w in self.substitutes[(label, words[start + 1].lower())] if w.lower() != words[start].lower()]
        if not options:
            return
        n_left = 2 if len(options) > 1 and random.random() < self.list_rate else 1
        lefts = random.sample(options, n_left)
        yield self._coordinated(nlp, example, lefts, label, start, end)

    def _learn(self, words: List[str], segments) -> List[Tuple[str, int, int]]:
        """Add this sentence's (type, second word) -> first word pairs to the
        table; return the segments a conjunct may be written before."""
        # a conjunct written before word b would split any fragment over b
        covered = {b for seg in segments for s, e in seg.offsets for b in range(s + 1, e)}
        candidates = []
        for seg in segments:
            if seg.is_discontinuous or seg.end - seg.start < 2:
                continue
            label, start = seg.label_, seg.start
            key = (label, words[start + 1].lower())
            known = self.substitutes[key]
            if words[start] not in known and len(known) < MAX_SUBSTITUTES:
                known.append(words[start])
            if start not in covered and (start == 0 or words[start - 1].lower() not in COORDINATORS):
                candidates.append((label, start, seg.end))
        return candidates

    def _coordinated(self, nlp: Language, example: Example, lefts: List[str], label: str, start: int, end: int) -> Example:
        """The example with "L1 [, L2] and" written before word `start`, and a
        gapped segment [L] + [start+1, end) of `label` for each conjunct L."""
        reference = example.reference
        coordinator = "or" if random.random() < self.or_rate else "and"
        inserted = [lefts[0]] if len(lefts) == 1 else [lefts[0], ",", lefts[1]]
        inserted.append(coordinator)
        shift = len(inserted)
        words = [t.text for t in reference[:start]] + inserted + [t.text for t in reference[start:]]
        spaces = [bool(t.whitespace_) for t in reference[:start]] + [True] * shift + [bool(t.whitespace_) for t in reference[start:]]
        if len(lefts) == 2:
            spaces[start] = False                      # "A , B": no space before the comma
        sent_starts = [bool(t.is_sent_start) for t in reference[:start]] + [False] * shift + [
            bool(t.is_sent_start) for t in reference[start:]
        ]
        if start == 0:                                 # the sentence now starts with the conjunct
            sent_starts[shift] = False
        sent_starts[0] = True

        def moved(i: int) -> int:
            return i + shift if i >= start else i

        segments = [[seg.label_, [[moved(s), moved(e - 1) + 1] for s, e in seg.offsets]] for seg in get_segments(reference)]
        for k, left in enumerate(lefts):
            position = start + 2 * k
            segments.append([label, [[position, position + 1], [start + shift + 1, end + shift]]])
        new_reference = Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=sent_starts)
        new_reference.user_data[USER_DATA_KEY] = segments
        predicted = Doc(nlp.vocab, words=words, spaces=spaces, sent_starts=sent_starts)
        return Example(predicted, new_reference)


@registry.augmenters("spacy_struct.coordination_augmenter.v1")
def create_coordination_augmenter(
    level: float = 0.3, list_rate: float = 0.2, or_rate: float = 0.1
) -> Callable[[Language, Example], Iterator[Example]]:
    """An augmenter for `[corpora.train]` that writes coordination ellipses
    into training sentences (module doc).

    level: share of examples that get an augmented copy beside them.
    list_rate: share of those with two left conjuncts ("A , A' and B N").
    or_rate: share joined by "or" instead of "and".
    RETURNS: the augmenter.
    """
    register_extension()
    return CoordinationAugmenter(level, list_rate, or_rate)
