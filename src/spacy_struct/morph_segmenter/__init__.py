"""`morph_segmenter`: morphological segmentation with syntactic context
(Lee, Haghighi & Barzilay 2011).

- `morphs.py`: `token._.morphs`, stored in `doc.user_data`.
- `hypotheses.py`, `context.py`: the segmentations a word type may take and
  the token context of each type, as arrays.
- `_sampler.pyx`: the collapsed, type-blocked Gibbs sampler (Cython).
- `model.py`: settings, staged learning, segmenting with the lexicon.
- `component.py`: the spaCy component.
- `supervised.py`: `supervised_morph_segmenter`, the sibling component
  trained on gold morphs (scores: `models/morph_scorer.py`; structure:
  `structs/partitions.py`).
- `scoring.py`: boundary P/R/F and the SIGMORPHON 2022 metric.
"""
from .component import MorphSegmenter, make_morph_segmenter, make_morph_segmenter_scorer, score_morph_segmentation
from .model import STAGES, MorphModel, MorphSettings
from ..annotations.morphs import Morphs, MorphsError, doc_morphs, set_morphs, write_morphs
from .scoring import score_morphs, sigmorphon_pairs, sigmorphon_scores
from .supervised import SupervisedMorphSegmenter, make_supervised_morph_segmenter

__all__ = [
    "STAGES", "MorphModel", "MorphSegmenter", "MorphSettings", "Morphs", "MorphsError", "doc_morphs",
    "make_morph_segmenter", "make_morph_segmenter_scorer", "score_morph_segmentation", "score_morphs",
    "set_morphs", "sigmorphon_pairs", "sigmorphon_scores", "write_morphs",
    "SupervisedMorphSegmenter", "make_supervised_morph_segmenter",
]
