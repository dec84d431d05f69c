"""The structures on a Doc: storage, extensions, validation, plain JSON.

Every structure a component writes is stored as plain ints and strings in
`doc.user_data` (so it survives `DocBin`, `to_bytes` and
`nlp.pipe(n_process=2)`), checked against the doc when read, and exposed
through extensions:

- `segments.py`: `Doc._.segments`, typed segments with fragments
  (overlap_segmenter; the CRAFT converter);
- `trees.py`: constituency trees under benepar's extension names
  (`Span._.labels`, `._.parse_string`, ...; joint_parser, the treebank
  converters), over `brackets.py` (PTB brackets in and out, and the span
  chart a tree is decoded as) and `joint.py` (entities put onto a tree);
- `morphs.py`: `Token._.morphs` (both morph segmenters, the morphology
  converters);
- `export.py`: every annotation of a doc as plain JSON.

Extensions are registered by `register_extensions()` (idempotent), which
runs when this package is imported: every component and converter that
writes them imports from it, so a pipeline unpickled in a new process
(spawn, Ray and Spark workers), which runs no factory, reads them too. A
script that reads saved docs without importing a component imports
`spacy_struct` (or this package) first.
"""
from .export import doc_to_json
from .morphs import Morphs, MorphsError, doc_morphs, set_morphs, write_morphs
from .segments import Segment, get_segments, segments_view, set_segments
from .trees import NonConstituentError, set_parse, tree_of
from . import morphs as _morphs, segments as _segments, trees as _trees


def register_extensions() -> None:
    """Register `Doc._.segments`, `Token._.morphs` and the tree extensions
    (idempotent)."""
    _segments.register_extension()
    _morphs.register_extension()
    _trees.register_extensions()


register_extensions()

__all__ = [
    "Morphs", "MorphsError", "NonConstituentError", "Segment", "doc_morphs", "doc_to_json", "get_segments",
    "register_extensions", "segments_view", "set_morphs", "set_parse", "set_segments", "tree_of",
    "write_morphs",
]
