"""A pipeline component that does a fixed amount of arithmetic per document
and sets nothing: the perfectly parallel workload `tools.bench scale-ceiling`
runs through each engine to find the engines' own ceiling on a machine.
Imported by annotate's `--code`, so every Ray actor registers it too."""
from __future__ import annotations

import numpy
from spacy.language import Language


def burn(rounds: int) -> float:
    """`rounds` products of two 64 x 64 matrices, each normalized: about
    the same CPU time on every call, no memory traffic beyond the cache."""
    a = numpy.random.default_rng(0).random((64, 64))
    b = a
    for _ in range(rounds):
        b = a @ b
        b /= b.max()
    return float(b[0, 0])


class FixedCost:
    def __init__(self, rounds: int) -> None:
        self.rounds = rounds

    def __call__(self, doc):
        burn(self.rounds)
        return doc


@Language.factory("fixed_cost", default_config={"rounds": 100})
def make_fixed_cost(nlp: Language, name: str, rounds: int) -> FixedCost:
    return FixedCost(rounds)
