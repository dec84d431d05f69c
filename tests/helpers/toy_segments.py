"""Four toy sentences with coordinations ("BMP2 and BMP4 genes": a gapped
segment and a contiguous one), what the tests of trained overlap_segmenter
pipelines learn from, and a small model that learns them in a few updates."""
from spacy.tokens import Doc

SMALL_MODEL = {"context_width": 32, "hidden_width": 16, "dropout": 0.0}

SENTENCES = [
    ("BMP2 and BMP4 genes are expressed", [
        ("PR", [(0, 1)]), ("PR", [(2, 3)]), ("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]),
    ("the limb bud grows", [("SO", [(1, 3)]), ("PR", [(1, 2)])]),
    ("Shh and Fgf8 genes act", [
        ("PR", [(0, 1)]), ("PR", [(2, 3)]), ("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]),
    ("mice lack the limb", [("PR", [(0, 1)]), ("SO", [(3, 4)])]),
]


def segment_references(vocab, relabel=None):
    """The sentences as gold Docs with their segments, each label replaced
    by `relabel[label]` where given."""
    docs = []
    for text, segments in SENTENCES:
        doc = Doc(vocab, words=text.split())
        doc._.segments = [((relabel or {}).get(label, label), frags) for label, frags in segments]
        docs.append(doc)
    return docs
