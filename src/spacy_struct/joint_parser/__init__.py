"""`joint_parser`: constituency trees, and entities joined with them in one
tree (Finkel & Manning 2009).

- `trees.py`: PTB brackets in and out, and the binarized span chart a tree
  is decoded as (unary chains collapsed into one label).
- `joint.py`: entities put onto a tree as marked constituents or inserted
  nodes, and what cannot be (crossing a bracket) counted.
- `constituents.py`: the trees on a Doc under benepar's extension names.
- `evalb.py`: labeled bracket scores exactly as evalb with COLLINS.prm.
- `component.py`: the span scorer and CKY over labeled binary trees.
- `scoring.py`: evalb brackets and entity spans of a pipeline's output.
- `render.py`: trees drawn as SVG, entities marked (displaCy has no
  constituency style).
"""
from .component import DEFAULT_JOINT_PARSER_MODEL, JointParser, make_joint_parser
from ..annotations.trees import NonConstituentError, set_parse, tree_of
from .evalb import COLLINS, BracketCounts, EvalbParams, score_brackets
from ..annotations.joint import JoinReport, entities_of, join_entities
from .render import render_trees
from .scoring import make_joint_parser_scorer, score_constituents, score_joint
from ..annotations.brackets import Node, ParsedTree, TreeFormatError, parse_brackets, to_brackets

__all__ = [
    "DEFAULT_JOINT_PARSER_MODEL", "JointParser", "make_joint_parser", "make_joint_parser_scorer",
    "score_constituents", "score_joint",
    "COLLINS", "BracketCounts", "EvalbParams", "JoinReport", "Node", "NonConstituentError",
    "ParsedTree", "TreeFormatError", "entities_of", "render_trees", "join_entities", "parse_brackets",
    "score_brackets", "set_parse", "to_brackets", "tree_of",
]
