"""`overlap_segmenter`: overlapping, nested, crossing and discontinuous
segments (McDonald, Crammer & Pereira 2005).

- `segments.py`: `doc._.segments`, the representation (spaCy's spans are
  contiguous), stored in `doc.user_data`; `segments_view`, every segment
  as spans for displaCy (a discontinuous one's fragments share a numbered
  label).
- `component.py`: the segment pair scorer
  (`spacy_struct.models.segment_scorer`) and the k-best gapped-segment
  decoder (`spacy_struct.structs.segments.GappedSegments`).
- `scoring.py`: exact-match scores overall, per type, on the discontinuous
  and crossing subsets, and spaCy's span scores.
"""
from .component import DEFAULT_SEGMENTER_MODEL, OverlapSegmenter, make_overlap_segmenter
from ..annotations.segments import Segment, crossing_keys, get_segments, segments_view, set_segments
from .scoring import make_overlap_segmenter_scorer, score_segments

__all__ = [
    "DEFAULT_SEGMENTER_MODEL",
    "OverlapSegmenter",
    "Segment",
    "crossing_keys",
    "get_segments",
    "make_overlap_segmenter",
    "make_overlap_segmenter_scorer",
    "score_segments",
    "segments_view",
    "set_segments",
]
