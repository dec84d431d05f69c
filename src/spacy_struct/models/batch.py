"""What flows from a component into its scorer: docs and their sentences."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import numpy as np


@dataclass
class SentenceBatch:
    """Docs and the sentences to build one structure over each:
    (doc index, start, end) token ranges, end exclusive."""

    docs: list
    sents: List[Tuple[int, int, int]]

    def lengths(self) -> List[int]:
        """Number of words of each sentence."""
        return [end - start for _, start, end in self.sents]

    def subset(self, first: int, last: int) -> "SentenceBatch":
        """Sentences first..last - 1 (the same docs, so doc indices hold)."""
        return SentenceBatch(self.docs, self.sents[first:last])


def with_root(sent_vecs: List[np.ndarray], root: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Stack [root; the sentence's vectors] for every sentence.

    Returns the (sum of n+1) x width matrix and the row offsets of the
    sentences in it, so node j of sentence i is row offsets[i] + j.
    """
    parts = []
    for vecs in sent_vecs:
        parts.append(root[None, :])
        parts.append(vecs)
    X = np.concatenate(parts) if parts else np.zeros((0, root.shape[0]), dtype=np.float32)
    offsets = np.cumsum([0] + [len(vecs) + 1 for vecs in sent_vecs])
    return X, offsets


def without_root(dX: np.ndarray, offsets: np.ndarray) -> Tuple[List[np.ndarray], np.ndarray]:
    """The reverse of `with_root`: gradients per sentence and for the root."""
    d_root = dX[offsets[:-1]].sum(axis=0)
    d_sents = [dX[offsets[i] + 1:offsets[i + 1]] for i in range(len(offsets) - 1)]
    return d_sents, d_root
