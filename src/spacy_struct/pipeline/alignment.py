"""Token ranges of one side of an Example on the other side's tokens.

Gold read from the reference and predictions scored against it must land on
the same words even when the two docs were tokenized, or spaced,
differently. Character offsets cannot do that: a predicted doc rebuilt from
the reference's words (`Doc(vocab, words=[t.text for t in ref])`) has the
same tokens at other offsets. spaCy's alignment matches the tokens by their
characters without whitespace, and a range maps when the tokens it covers
on the other side spell exactly the same characters.
"""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np
from spacy.tokens import Doc
from spacy.training import Example


def _spelling(doc: Doc, start: int, end: int) -> str:
    """The characters of tokens [start, end) without whitespace, lowercase
    (spaCy's alignment ignores case too)."""
    return "".join(doc[start:end].text.split()).lower()


class TokenMap:
    """Maps token ranges [start, end) between `eg.predicted` and
    `eg.reference`; the identity when both have the same token texts."""

    def __init__(self, eg: Example) -> None:
        self.eg = eg
        pred, ref = eg.predicted, eg.reference
        self.same_tokens = len(pred) == len(ref) and all(
            p.text == r.text for p, r in zip(pred, ref))

    def to_reference(self, start: int, end: int) -> Optional[Tuple[int, int]]:
        """The reference tokens that spell predicted tokens [start, end)
        exactly, or None when a boundary falls inside a reference token."""
        if self.same_tokens:
            return start, end
        return self._map(self.eg.alignment.x2y, self.eg.predicted, self.eg.reference, start, end)

    def to_predicted(self, start: int, end: int) -> Optional[Tuple[int, int]]:
        """The predicted tokens that spell reference tokens [start, end)
        exactly, or None when a boundary falls inside a predicted token."""
        if self.same_tokens:
            return start, end
        return self._map(self.eg.alignment.y2x, self.eg.reference, self.eg.predicted, start, end)

    @staticmethod
    def _map(align, source: Doc, target: Doc, start: int, end: int) -> Optional[Tuple[int, int]]:
        if not 0 <= start < end <= len(source):
            return None
        indices = np.asarray(align[start:end]).ravel()
        if not len(indices):
            return None
        lo, hi = int(indices.min()), int(indices.max()) + 1
        if _spelling(target, lo, hi) != _spelling(source, start, end):
            return None
        return lo, hi
