"""Every annotation of a Doc as plain JSON: what annotating a corpus writes
per record, and what a user reads without spaCy.

Token offsets are token indices, ends exclusive; character offsets are given
per token. Only what the doc holds is written (no key for an annotation it
lacks), so a record says which components ran.
"""
from __future__ import annotations

from typing import Any, Dict

from spacy.tokens import Doc

from .morphs import doc_morphs, has_morphs
from .segments import get_segments, has_segments
from .trees import get_parse_string, has_trees, tree_ranges


def doc_to_json(doc: Doc) -> Dict[str, Any]:
    """The doc's text, tokens and annotations as JSON-ready data.

    RETURNS: a dict with "text" and "tokens" ([start char, end char] per
        token), and, where the doc holds them: "sents" ([start, end] token
        ranges), "heads" and "deps" (per token: the head's index, the label),
        "ents" and "spans" ({key: [[start, end, label], ...]}), "segments"
        ([[label, [[start, end], ...]], ...]), "trees" ([{"start", "end",
        "brackets"}] per stored tree, PTB brackets), "morphs" (per token the
        morph strings, or None).
    """
    out: Dict[str, Any] = {
        "text": doc.text,
        "tokens": [[t.idx, t.idx + len(t.text)] for t in doc],
    }
    if doc.has_annotation("SENT_START"):
        out["sents"] = [[s.start, s.end] for s in doc.sents]
    if doc.has_annotation("DEP"):
        out["heads"] = [t.head.i for t in doc]
        out["deps"] = [t.dep_ for t in doc]
    if doc.ents:
        out["ents"] = [[e.start, e.end, e.label_] for e in doc.ents]
    if doc.spans:
        out["spans"] = {key: [[s.start, s.end, s.label_] for s in group] for key, group in doc.spans.items()}
    if has_segments(doc):
        out["segments"] = [[seg.label_, [list(f) for f in seg.offsets]] for seg in get_segments(doc)]
    if has_trees(doc):
        out["trees"] = [{"start": s, "end": e, "brackets": get_parse_string(doc[s:e])} for s, e in tree_ranges(doc)]
    if has_morphs(doc):
        out["morphs"] = [None if m is None else list(m) for m in doc_morphs(doc)]
    return out
