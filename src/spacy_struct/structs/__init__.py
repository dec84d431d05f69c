"""Structure decoders: numpy arrays in, numpy arrays out, no spaCy import.

- `dependency`: trees over a root plus n words from arc scores
  (Chu-Liu-Edmonds, Eisner, Matrix-Tree).
- `spans`: labeled binary trees (CKY) and laminar span sets over n words.
- `segments`: k-best gapped segments per type.

Every function takes one array or a list of arrays (a batch, decoded in one
call with the GIL released). Cost augmentation for margin losses is per
structure: `dependency.add_hamming_cost`, `spans.add_hamming_cost`.
"""
from . import dependency, segments, spans
from ._arrays import NoLegalStructureError
from .dependency import (
    check_heads,
    chu_liu_edmonds,
    eisner,
    eisner_log_partition,
    eisner_marginals,
    matrix_tree_log_partition,
    matrix_tree_marginals,
    tree_score,
)
from .segments import Segments, kbest_segments, select_segments
from .spans import (
    cky_argmax,
    cky_log_partition,
    cky_marginals,
    laminar_argmax,
    laminar_log_partition,
    laminar_marginals,
)

__all__ = [
    "NoLegalStructureError",
    "dependency", "spans", "segments",
    "chu_liu_edmonds", "eisner", "eisner_log_partition", "eisner_marginals",
    "matrix_tree_log_partition", "matrix_tree_marginals",
    "check_heads", "tree_score",
    "cky_argmax", "cky_log_partition", "cky_marginals",
    "laminar_argmax", "laminar_log_partition", "laminar_marginals",
    "Segments", "kbest_segments", "select_segments",
]
