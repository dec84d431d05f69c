"""`doc._.segments`: typed segments that may overlap, nest, cross and have gaps.

spaCy's `Span` is contiguous, so a discontinuous mention ("BMP2 ... gene"
in "BMP2 and BMP4 genes") needs its own representation. A segment is a
label and its fragments, each a token range [start, end); fragments are in
order and do not overlap (touching fragments are one fragment: the words,
not the cut, are what a segment is).

Storage is plain ints and strings in `doc.user_data[USER_DATA_KEY]`, as
[[label, [[start, end], ...]], ...], so it survives `DocBin`
(store_user_data, as the converters write), `Doc.to_bytes` and
`nlp.pipe(n_process=2)`. Reading `doc._.segments` gives `Segment` objects
over that storage; assigning to it takes `Segment`s or
`(label, [(start, end), ...])` pairs and checks them.
"""
from __future__ import annotations

from typing import FrozenSet, Iterable, List, Sequence, Set, Tuple, Union

import numpy as np
from spacy.tokens import Doc, Span, SpanGroup

from .text import DocWhere

USER_DATA_KEY = "spacy_struct.segments"

Fragments = Tuple[Tuple[int, int], ...]
#: a segment as plain data: (label, fragments)
Key = Tuple[str, Fragments]


class Segment:
    """One typed segment of a Doc: a label and its fragments (Spans in order)."""

    __slots__ = ("doc", "label_", "offsets")

    def __init__(self, doc: Doc, label: str, offsets: Fragments) -> None:
        self.doc = doc
        self.label_ = label
        self.offsets = offsets

    @property
    def fragments(self) -> Tuple[Span, ...]:
        """The fragments as Spans of the doc, in order, labeled with the segment's label."""
        return tuple(Span(self.doc, s, e, label=self.label_) for s, e in self.offsets)

    @property
    def start(self) -> int:
        """Index of the first token."""
        return self.offsets[0][0]

    @property
    def end(self) -> int:
        """Index after the last token."""
        return self.offsets[-1][1]

    @property
    def is_discontinuous(self) -> bool:
        """Whether the segment has a gap (more than one fragment)."""
        return len(self.offsets) > 1

    @property
    def token_indices(self) -> Tuple[int, ...]:
        """The indices of the segment's tokens, increasing."""
        return tuple(i for s, e in self.offsets for i in range(s, e))

    @property
    def text(self) -> str:
        """The fragments' texts joined with " ... " where a gap is."""
        return " ... ".join(self.doc[s:e].text for s, e in self.offsets)

    def __len__(self) -> int:
        return sum(e - s for s, e in self.offsets)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Segment):
            return NotImplemented
        return (self.label_, self.offsets) == (other.label_, other.offsets)

    def __hash__(self) -> int:
        return hash((self.label_, self.offsets))

    def __repr__(self) -> str:
        return f"Segment({self.label_!r}, {self.text!r}, {list(self.offsets)})"


SegmentLike = Union[Segment, Tuple[str, Sequence[Tuple[int, int]]]]


def normalize_fragments(doc: Doc, fragments: Iterable, where: object) -> Fragments:
    """Fragments as a tuple of (start, end) ints, touching ones merged.

    Raises a ValueError naming `where` when a fragment is empty, out of the
    doc, out of order or overlapping the one before.
    """
    out: List[List[int]] = []
    items = list(fragments)
    if not items:
        raise ValueError(f"{where}: a segment needs at least one fragment")
    for frag in items:
        try:
            start, end = frag
            if not all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in (start, end)):
                raise TypeError
            start, end = int(start), int(end)
        except (TypeError, ValueError):
            raise ValueError(
                f"{where}: a fragment must be a (start, end) pair of integer token "
                f"offsets, got {frag!r}"
            ) from None
        if not 0 <= start < end <= len(doc):
            raise ValueError(
                f"{where}: fragment ({start}, {end}) is empty or outside the doc's "
                f"{len(doc)} tokens (offsets are token indices, end exclusive)"
            )
        if out and start < out[-1][1]:
            raise ValueError(
                f"{where}: fragment ({start}, {end}) starts before the previous one "
                f"({out[-1][0]}, {out[-1][1]}) ends; fragments must be in order and "
                f"must not overlap"
            )
        if out and start == out[-1][1]:
            out[-1][1] = end
        else:
            out.append([start, end])
    return tuple((s, e) for s, e in out)


def get_segments(doc: Doc) -> Tuple[Segment, ...]:
    """The segments stored on `doc` (empty when none are), checked against
    the doc: offsets stored before the doc was retokenized, or written to
    `user_data` by hand, raise a ValueError naming the doc."""
    out = []
    for number, item in enumerate(doc.user_data.get(USER_DATA_KEY, ())):
        where = DocWhere(doc, f"segment {number} stored on the doc")
        try:
            label, frags = item
        except (TypeError, ValueError):
            raise ValueError(f"{where}: expected (label, [(start, end), ...]), got {item!r}") from None
        out.append(Segment(doc, label, normalize_fragments(doc, frags, where)))
    return tuple(out)


def set_segments(doc: Doc, segments: Iterable[SegmentLike]) -> None:
    """Store `segments` on `doc`, checked; raises a ValueError naming the
    segment and the doc for a bad label or bad fragments."""
    stored = []
    for i, seg in enumerate(segments):
        where = DocWhere(doc, f"segment {i} of the doc")
        if isinstance(seg, Segment):
            label, frags = seg.label_, seg.offsets
        else:
            try:
                label, frags = seg
            except (TypeError, ValueError):
                raise ValueError(f"{where}: expected (label, [(start, end), ...]), got {seg!r}") from None
        if not isinstance(label, str) or not label:
            raise ValueError(f"{where}: the label must be a non-empty string, got {label!r}")
        offsets = normalize_fragments(doc, frags, where)
        stored.append([label, [[s, e] for s, e in offsets]])
    doc.user_data[USER_DATA_KEY] = stored


def segments_view(doc: Doc, key: str = "segments") -> SpanGroup:
    """Every segment of `doc` as spans for displaCy's span style, in
    `doc.spans[key]`: a contiguous segment as one span with its label, a
    discontinuous one as one span per fragment labeled "LABEL #k" (k its
    number in `doc._.segments`), so the fragments read as one mention.

    RETURNS: the SpanGroup written; render it with
        `displacy.render(doc, style="span", options={"spans_key": key})`.
    """
    spans = []
    for number, segment in enumerate(get_segments(doc)):
        label = f"{segment.label_} #{number}" if segment.is_discontinuous else segment.label_
        spans.extend(Span(doc, s, e, label=label) for s, e in segment.offsets)
    doc.spans[key] = SpanGroup(doc, name=key, spans=spans)
    return doc.spans[key]


def _words(key: Key) -> FrozenSet[int]:
    return frozenset(i for s, e in key[1] for i in range(s, e))


def crossing_keys(keys: Set[Key]) -> Set[Key]:
    """The segments that share words with another one of `keys` while
    neither holds all of the other's words."""
    words = {key: _words(key) for key in keys}
    items = sorted(keys, key=lambda k: k[1][0][0])
    found: Set[Key] = set()
    for i, a in enumerate(items):
        wa = words[a]
        last_a = a[1][-1][1]
        for b in items[i + 1:]:
            if b[1][0][0] >= last_a:
                break
            wb = words[b]
            if wa & wb and not (wa <= wb or wb <= wa):
                found.add(a)
                found.add(b)
    return found


def has_segments(doc: Doc) -> bool:
    """Whether segments (possibly none) were stored on `doc`."""
    return USER_DATA_KEY in doc.user_data


def register_extension() -> None:
    """Register `Doc._.segments` (idempotent)."""
    if not Doc.has_extension("segments"):
        Doc.set_extension("segments", getter=get_segments, setter=set_segments)
