"""`mst_parser`: graph-based dependency parsing (McDonald et al. 2005/2006).

Layers: an arc scorer (`arc_scorer.py`, `edge_features.py`) gives arc score
matrices, a spanning-tree decoder from `spacy_struct.structs.dependency`
picks the tree, and a second-stage labeler (`edge_labeler.py`) labels it.
"""
from .arc_scorer import build_biaffine_arc_scorer
from .edge_features import build_edge_features
from .component import DEFAULT_MST_PARSER_MODEL, MSTParser, make_mst_parser
from .scoring import make_mst_parser_scorer, score_mst_parse

__all__ = [
    "MSTParser",
    "make_mst_parser",
    "build_biaffine_arc_scorer",
    "build_edge_features",
    "make_mst_parser_scorer",
    "score_mst_parse",
    "DEFAULT_MST_PARSER_MODEL",
]
