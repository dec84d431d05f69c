"""The operations every structure offers, under one set of names.

A training loss needs a handful of quantities of the structure it trains
for: the best structure (argmax), the best one under a cost (cost-augmented
argmax), log Z and the part marginals, and the 0/1 indicator of a structure
over the score array. Each structure (dependency trees, span trees, laminar
span sets) is an object with these methods, configured once (projective or
not, one root or several, a width limit), so `spacy_struct.losses` is
written once against this protocol and never names a decoder function.

Conventions, for every method:
- `scores` is a list with one float64 array per sentence, in the layout of
  the structure's module (arcs (n+1, n+1); spans (n, n, L)). The Cython
  kernels decode the whole list in one call.
- A structure `y` is in the structure's own compact form (a heads array, an
  (m, 3) array of span rows), as `argmax` returns it.
- An annotation (gold) may leave parts open (unknown heads) or admit several
  structures (a span with two gold labels). `gold_target` resolves it to
  the best-scoring structure it admits; `gold_score` gives the log of the
  summed exp-scores of the structures it admits, with its gradient. For a
  complete, unambiguous annotation both reduce to the structure itself:
  its score and its indicator.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np


class Structure:
    """Base of the structure objects: the protocol and its shared defaults.

    Subclasses implement `argmax`, `marginals`, `local_marginals`,
    `add_hamming_cost` and `indicator`; the rest follows from those.
    """

    #: short name used in error messages
    name = "structure"

    def argmax(self, scores: Sequence[np.ndarray]) -> List[Any]:
        """The best structure of each sentence.

        scores: one score array per sentence.
        RETURNS: one structure per sentence, in the structure's compact form.
        """
        raise NotImplementedError

    def log_partition(self, scores: Sequence[np.ndarray]) -> List[float]:
        """log Z per sentence: the log of the summed exp-scores of all structures."""
        return [log_z for log_z, _ in self.marginals(scores)]

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """(log Z, part marginals) per sentence; the marginals have the shape
        of the scores and are the gradient of log Z."""
        raise NotImplementedError

    def local_marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """(log Z, marginals) of the factorized relaxation, in which each
        independent decision (a word's head, a span's label or absence) is
        made on its own, with no structural constraint between them. The
        `local` loss is the CRF loss under this relaxation."""
        raise NotImplementedError

    def add_hamming_cost(
        self, scores: Sequence[np.ndarray], golds: Sequence[Any], cost: float
    ) -> List[np.ndarray]:
        """Scores whose argmax is the cost-augmented argmax
        max_y score(y) + cost * Hamming(y, gold), up to a constant per sentence."""
        raise NotImplementedError

    def indicator(self, shape: Tuple[int, ...], y: Any) -> np.ndarray:
        """The 0/1 float64 array of the parts of `y`, of the scores' `shape`."""
        raise NotImplementedError

    def score(self, scores: np.ndarray, y: Any) -> float:
        """Sum of the scores of the parts of `y`."""
        return float(scores[self.indicator(scores.shape, y) > 0].sum())

    def gold_target(self, scores: np.ndarray, gold: Any) -> Any:
        """The best-scoring structure the annotation `gold` admits (the
        annotation itself when it is complete and unambiguous)."""
        return gold

    def gold_score(self, scores: np.ndarray, gold: Any) -> Tuple[float, np.ndarray]:
        """log of the summed exp-scores of the structures `gold` admits, and
        its gradient. By default the annotation admits one structure, its
        `gold_target`: the value is its score, the gradient its indicator."""
        y = self.gold_target(scores, gold)
        return self.score(scores, y), self.indicator(scores.shape, y)

    def same(self, y1: Any, y2: Any) -> bool:
        """Whether two structures are equal."""
        return bool(np.array_equal(np.asarray(y1), np.asarray(y2)))
