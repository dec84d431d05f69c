"""What flows between the parser component and its scoring models."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Tuple

import numpy as np


@dataclass
class ParseBatch:
    """Docs and the sentences to build trees over: (doc index, start, end)."""

    docs: list
    sents: List[Tuple[int, int, int]]

    def lengths(self) -> List[int]:
        return [end - start for _, start, end in self.sents]


@dataclass
class ParseScores:
    """Output of an arc scorer, one entry per sentence.

    `arcs[i]` is the (n+1) x (n+1) arc score matrix of sentence i, row/column
    0 the root. `label_dep[i]` and `label_head[i]` are (n+1) x k
    representations of each node as a dependent and as a head, which the
    edge labeler combines for the arcs of a tree.
    """

    arcs: List[np.ndarray]
    label_dep: List[np.ndarray]
    label_head: List[np.ndarray]


def gather_nodes(tokvecs: List[np.ndarray], root: np.ndarray, sents) -> Tuple[np.ndarray, np.ndarray]:
    """Stack [root; the sentence's token vectors] for every sentence.

    Returns the (sum of n+1) x width matrix and the row offsets of the
    sentences in it, so node j of sentence i is row offsets[i] + j.
    """
    parts = []
    for doc_i, start, end in sents:
        parts.append(root[None, :])
        parts.append(tokvecs[doc_i][start:end])
    X = np.concatenate(parts) if parts else np.zeros((0, root.shape[0]), dtype=np.float32)
    offsets = np.cumsum([0] + [end - start + 1 for _, start, end in sents])
    return X, offsets


def scatter_nodes(dX: np.ndarray, offsets: np.ndarray, tokvecs: List[np.ndarray], sents):
    """The reverse of `gather_nodes`: gradients per doc token and for the root."""
    d_tokvecs = [np.zeros_like(t) for t in tokvecs]
    d_root = np.zeros(dX.shape[1], dtype=dX.dtype)
    for i, (doc_i, start, end) in enumerate(sents):
        d_root += dX[offsets[i]]
        d_tokvecs[doc_i][start:end] += dX[offsets[i] + 1:offsets[i + 1]]
    return d_tokvecs, d_root
