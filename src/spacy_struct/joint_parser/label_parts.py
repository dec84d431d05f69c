"""Chart labels scored as sums of shared parts.

A joint chart label such as "NP|protein" is a phrase label and an entity
type at once. Scored as one column of its own, it learns only from its own
examples: "S+VP|protein" or "PP|DNA" have a handful in all of GENIA, and
nothing a "protein" node teaches carries over to them. Finkel & Manning
(2009) meet the same sparsity in the grammar of the joint model and
smooth each joint rule towards the rules of its parts.

Here the scorer gives a column per *part* and a label's score is the sum of
its parts' columns:

- "NP"         = chain NP
- "NP|protein" = chain NP + entity protein + joint NP|protein
- "|protein"   = chain "" (an inserted node) + entity protein + joint |protein

so every entity node of a type, phrase or inserted, trains the same
"protein" column (as a separate entity model would), every NP trains the
NP column whether or not it is an entity, and the joint column keeps what
is particular to the pair. Labels without an entity are their own part, so
a parse-only model is unchanged.

The sum is a fixed 0/1 matrix C (parts x labels): label scores are
`parts @ C`, and the gradient of the parts is `d_labels @ C.T`. Decoding
takes the sum as three gathers of columns (a label has at most three
parts; a zero column stands in for the missing ones), which costs
O(n^2 L) where the product costs O(n^2 L P).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..annotations.brackets import ENTITY_SEPARATOR

Part = Tuple[str, str]  # ("chain", "NP"), ("entity", "protein"), ("joint", "NP|protein")


def parts_of(label: str) -> List[Part]:
    """The parts whose columns sum to the score of chart label `label`."""
    chain, sep, entity = label.partition(ENTITY_SEPARATOR)
    if not sep:
        return [("chain", chain)]
    return [("chain", chain), ("entity", entity), ("joint", label)]


class LabelParts:
    """The map from part columns to chart-label columns.

    labels: the chart labels, in the order of the label columns.
    factored: sum shared parts (above); False gives each label a column of
        its own (C is the identity).
    """

    def __init__(self, labels: Sequence[str], factored: bool) -> None:
        self.labels = tuple(labels)
        self.factored = bool(factored) and any(ENTITY_SEPARATOR in label for label in self.labels)
        if not self.factored:
            self.parts: Tuple[Part, ...] = tuple(("label", label) for label in self.labels)
            self.matrix = np.eye(len(self.labels), dtype=np.float32)
            return
        index: Dict[Part, int] = {}
        for label in self.labels:
            for part in parts_of(label):
                index.setdefault(part, len(index))
        self.parts = tuple(index)
        self.matrix = np.zeros((len(index), len(self.labels)), dtype=np.float32)
        # the columns each label sums, the zero column (len(index)) for none
        self.gathers = np.full((3, len(self.labels)), len(index), dtype=np.int64)
        for column, label in enumerate(self.labels):
            for k, part in enumerate(parts_of(label)):
                self.matrix[index[part], column] = 1.0
                self.gathers[k, column] = index[part]

    @property
    def n_parts(self) -> int:
        """The number of columns the scorer gives (its nO)."""
        return len(self.parts)

    def label_scores(self, part_scores: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """(n, n, parts) scores to (n, n, labels) scores, float64, written
        into `out` when given (e.g. a view of a larger chart)."""
        n = part_scores.shape[0]
        if out is None:
            out = np.empty((n, n, len(self.labels)), dtype=np.float64)
        if not self.factored:
            out[...] = part_scores
            return out
        # parts-major, so each gather copies whole contiguous rows (about
        # twice as fast as gathering along the last axis of an (n, n, P) array)
        columns = np.zeros((self.n_parts + 1, n * n), dtype=np.float64)
        columns[:-1] = part_scores.reshape(n * n, self.n_parts).T
        first, second, third = self.gathers
        total = columns[first]
        total += columns[second]
        total += columns[third]
        out[...] = total.T.reshape(n, n, len(self.labels))
        return out

    def part_gradient(self, d_labels: np.ndarray) -> np.ndarray:
        """(n, n, labels) gradient to the (n, n, parts) gradient, float32."""
        if not self.factored:
            return d_labels.astype(np.float32)
        return (d_labels @ self.matrix.T.astype(d_labels.dtype)).astype(np.float32)
