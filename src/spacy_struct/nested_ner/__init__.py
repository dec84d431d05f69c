"""`nested_ner`: nested named entities as a tree (Finkel & Manning 2009).

The component (`component.py`) chains the span scorer
(`spacy_struct.models.span_scorer`) and CKY over laminar span sets
(`spacy_struct.structs.spans.LaminarSpans`); `scoring.py` adds recall by
nesting to spaCy's span scores.
"""
from .component import DEFAULT_NESTED_NER_MODEL, NestedNER, make_nested_ner
from ..pipeline.scoring import nesting_recall, score_nested_spans
from .scoring import make_nested_ner_scorer

__all__ = [
    "NestedNER",
    "make_nested_ner",
    "make_nested_ner_scorer",
    "score_nested_spans",
    "nesting_recall",
    "DEFAULT_NESTED_NER_MODEL",
]
