"""Structures: numpy arrays in, numpy arrays out, no spaCy import.

- `dependency`: trees over a root plus n words from arc scores
  (Chu-Liu-Edmonds, Eisner, Matrix-Tree); the structure object
  `DependencyTrees`.
- `siblings`: second-order trees, each arc scored with its previous
  sibling (McDonald & Pereira 2006's Eisner extension, its inside/outside,
  the approximate non-projective search); the structure object
  `SiblingTrees`.
- `spans`: labeled binary trees (CKY) and laminar span sets over n words;
  the structure objects `SpanTrees` and `LaminarSpans`, and span-set
  helpers (`crosses`, `first_crossing`, `outermost`).
- `segments`: k-best gapped segments per type; `coordination`, a factor
  that scores two-fragment segments as wholes on top of their paths.
- `partitions`: cuts of a sequence into contiguous pieces (semi-Markov);
  the structure object `Partitions`.

A structure object (`base.Structure`) offers argmax, log_partition,
marginals, local_marginals, add_hamming_cost, indicator and the gold
resolution under one set of names, so `spacy_struct.losses` is written once.
The functions underneath take one array or a list of arrays (a batch,
decoded in one call with the GIL released).
"""
from . import dependency, partitions, segments, siblings, spans
from .arrays import NoLegalStructureError
from .base import Structure
from .dependency import (
    DependencyTrees,
    check_heads,
    chu_liu_edmonds,
    crossing_arcs,
    eisner,
    eisner_log_partition,
    eisner_marginals,
    lift_to_projective,
    matrix_tree_log_partition,
    matrix_tree_marginals,
    tree_score,
)
from .partitions import Partitions, partition_argmax, partition_marginals
from .segments import Segments, kbest_segments, select_segments
from .siblings import SiblingTrees, hill_climb, sibling_eisner, sibling_log_partition, sibling_marginals
from .spans import (
    LaminarSpans,
    SpanTrees,
    cky_argmax,
    cky_log_partition,
    cky_marginals,
    crosses,
    first_crossing,
    laminar_argmax,
    laminar_log_partition,
    laminar_marginals,
    outermost,
)

__all__ = [
    "NoLegalStructureError", "Structure",
    "dependency", "siblings", "spans", "segments", "partitions",
    "DependencyTrees", "SiblingTrees",
    "sibling_eisner", "sibling_log_partition", "sibling_marginals", "hill_climb", "LaminarSpans", "SpanTrees", "Partitions",
    "partition_argmax", "partition_marginals",
    "chu_liu_edmonds", "eisner", "eisner_log_partition", "eisner_marginals",
    "matrix_tree_log_partition", "matrix_tree_marginals",
    "check_heads", "crossing_arcs", "lift_to_projective", "tree_score",
    "cky_argmax", "cky_log_partition", "cky_marginals",
    "laminar_argmax", "laminar_log_partition", "laminar_marginals",
    "crosses", "first_crossing", "outermost",
    "Segments", "kbest_segments", "select_segments",
]
