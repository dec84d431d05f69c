"""Morphological segmentation: `token._.morphs` (morphs.py), its scores
(scoring.py)."""
from .morphs import Morphs, MorphsError, doc_morphs, set_morphs, write_morphs
from .scoring import score_morphs, sigmorphon_pairs, sigmorphon_scores

__all__ = [
    "Morphs", "MorphsError", "doc_morphs", "set_morphs", "write_morphs",
    "score_morphs", "sigmorphon_pairs", "sigmorphon_scores",
]
