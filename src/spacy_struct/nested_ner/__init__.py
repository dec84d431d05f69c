"""`nested_ner`: nested named entities as a tree (Finkel & Manning 2009).

Layers: a span scorer (`span_scorer.py`) gives a score to every span and
label of a sentence, CKY over laminar span sets from
`spacy_struct.structs.spans` picks the best set of non-crossing spans, and
the tree-CRF or margin loss (`losses.py`) trains the scorer for that set.
"""
from .component import DEFAULT_NESTED_NER_MODEL, NestedNER, make_nested_ner
from .scoring import make_nested_ner_scorer, nesting_recall, score_nested_spans
from .span_scorer import build_span_scorer

__all__ = [
    "NestedNER",
    "make_nested_ner",
    "build_span_scorer",
    "make_nested_ner_scorer",
    "score_nested_spans",
    "nesting_recall",
    "DEFAULT_NESTED_NER_MODEL",
]
