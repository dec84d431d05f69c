"""The scorer nested_ner registers: span scores and recall by nesting
(`pipeline.scoring.score_nested_spans`, shared with joint_parser's entities)."""
from spacy.util import registry

from ..pipeline.scoring import score_nested_spans


@registry.scorers("spacy_struct.nested_ner_scorer.v1")
def make_nested_ner_scorer():
    return score_nested_spans
