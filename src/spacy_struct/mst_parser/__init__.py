"""`mst_parser`: graph-based dependency parsing (McDonald et al. 2005/2006).

The component (`component.py`) chains the arc scorer
(`spacy_struct.models.arc_scorer`, or `edge_features`), a spanning-tree
decoder (`spacy_struct.structs.dependency.DependencyTrees`) and the edge
labeler; `scoring.py` adds the CoNLL-2018 and non-projective figures to
spaCy's parser scores.
"""
from .component import DEFAULT_MST_PARSER_MODEL, MSTParser, make_mst_parser
from .scoring import make_mst_parser_scorer, score_mst_parse

__all__ = [
    "MSTParser",
    "make_mst_parser",
    "make_mst_parser_scorer",
    "score_mst_parse",
    "DEFAULT_MST_PARSER_MODEL",
]
