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
