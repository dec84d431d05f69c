"""`token._.morphs`: a token's surface segmentation into morphs.

A segmentation is a tuple of strings that concatenate to the token's text
("un", "help", "ful"), one of them the stem (the morphs before it are
prefixes, after it suffixes), with the latent tag the segmenter gave the
word type (an int, None for gold or when there is none).

Storage is plain ints in `doc.user_data[USER_DATA_KEY]`, one entry per
token: None (no segmentation; `token._.morphs` is None) or [cut offsets
inside the token, stem position, tag or -1] (a word that is one morph has
no cuts). So it survives `DocBin` (store_user_data), `Doc.to_bytes` and
`nlp.pipe(n_process=2)`, and a token's entry is found by its index.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.tokens import Doc, Token

from .text import text_preview

USER_DATA_KEY = "spacy_struct.morphs"
#: user_data key of an item's gold morphs as its corpus gives them, canonical
#: or not (a list of strings, the item's words' morphs in order), written by
#: the converters for the SIGMORPHON metric
CANONICAL_KEY = "spacy_struct.canonical_morphs"
#: user_data key of a SIGMORPHON word's category (inflection, derivation,
#: compounding flags, e.g. "110")
CATEGORY_KEY = "spacy_struct.morph_category"


class Morphs(tuple):
    """The morphs of one word, in order, with the stem's position and the tag.

    morphs: the strings; stem: the index of the stem among them (default:
    the longest morph, the first of the longest on ties); tag: the word
    type's latent tag, or None.
    """

    stem_index: int
    tag: Optional[int]

    def __new__(cls, morphs: Iterable[str], stem: Optional[int] = None, tag: Optional[int] = None) -> "Morphs":
        self = super().__new__(cls, tuple(morphs))
        if not self:
            raise ValueError("a segmentation needs at least one morph")
        if stem is None:
            stem = max(range(len(self)), key=lambda k: (len(self[k]), -k))
        if not 0 <= stem < len(self):
            raise ValueError(f"stem position {stem} is outside the {len(self)} morphs {tuple(self)}")
        self.stem_index = int(stem)
        self.tag = None if tag is None or tag < 0 else int(tag)
        return self

    @property
    def prefixes(self) -> Tuple[str, ...]:
        """The morphs before the stem."""
        return tuple(self[:self.stem_index])

    @property
    def stem(self) -> str:
        """The stem."""
        return self[self.stem_index]

    @property
    def suffixes(self) -> Tuple[str, ...]:
        """The morphs after the stem."""
        return tuple(self[self.stem_index + 1:])

    @property
    def cuts(self) -> Tuple[int, ...]:
        """The character offsets inside the word where a morph ends."""
        out, at = [], 0
        for morph in self[:-1]:
            at += len(morph)
            out.append(at)
        return tuple(out)

    @classmethod
    def from_cuts(cls, word: str, cuts: Sequence[int], stem: Optional[int] = None,
                  tag: Optional[int] = None) -> "Morphs":
        """The morphs of `word` cut at the offsets `cuts` (increasing, inside it)."""
        edges = [0, *cuts, len(word)]
        if any(b <= a for a, b in zip(edges, edges[1:])):
            raise ValueError(f"cuts {list(cuts)} are not increasing offsets inside {word!r}")
        return cls((word[a:b] for a, b in zip(edges, edges[1:])), stem, tag)

    def __repr__(self) -> str:
        tag = "" if self.tag is None else f", tag={self.tag}"
        return f"Morphs({tuple(self)!r}, stem={self.stem_index}{tag})"


class MorphsError(ValueError):
    """Morphs that are not a segmentation of their token."""


def check_morphs(text: str, morphs: Sequence[str], where: str) -> None:
    """Raise MorphsError naming `where` unless `morphs` are non-empty strings
    that concatenate to `text`."""
    if isinstance(morphs, str):
        raise MorphsError(f"{where}: morphs must be a sequence of strings, got the string {morphs!r}")
    if not morphs or not all(isinstance(m, str) and m for m in morphs):
        raise MorphsError(f"{where}: morphs must be non-empty strings, got {tuple(morphs)!r}")
    if "".join(morphs) != text:
        raise MorphsError(
            f"{where}: the morphs {tuple(morphs)!r} do not concatenate to the word {text!r} "
            f"(a surface segmentation cuts the word's own characters)"
        )


def _stored(doc: Doc) -> Sequence[Optional[list]]:
    """The doc's stored rows, read-only (one per token)."""
    rows = doc.user_data.get(USER_DATA_KEY)
    if rows is None:
        return (None,) * len(doc)
    if len(rows) != len(doc):
        raise ValueError(
            f"the doc {text_preview(doc.text)} has {len(doc)} tokens but segmentations stored for "
            f"{len(rows)}: it was retokenized after they were set"
        )
    return rows


def _read(token: Token, row: Optional[list]) -> Optional[Morphs]:
    return None if row is None else Morphs.from_cuts(token.text, row[0], row[1], row[2])


def get_morphs(token: Token) -> Optional[Morphs]:
    """The segmentation stored for `token`, or None."""
    return _read(token, _stored(token.doc)[token.i])


def doc_morphs(doc: Doc) -> List[Optional[Morphs]]:
    """The segmentation of every token of `doc` (None where none is stored)."""
    return [_read(token, row) for token, row in zip(doc, _stored(doc))]


def set_morphs(token: Token, morphs) -> None:
    """Store a segmentation of `token`: a `Morphs`, a sequence of strings
    that concatenate to its text, or None to remove it. Raises MorphsError
    naming the word otherwise."""
    write_morphs(token.doc, {token.i: morphs})


def write_morphs(doc: Doc, segmentations: Dict[int, object]) -> None:
    """Store the segmentations of several tokens of `doc` at once: token
    index to `Morphs`, sequence of strings, or None (removed)."""
    rows = list(_stored(doc))
    for i, morphs in segmentations.items():
        token = doc[i]
        if morphs is None:
            rows[token.i] = None
            continue
        try:
            check_morphs(token.text, morphs, f"token {token.i} {token.text!r}")
        except MorphsError as err:  # the doc is named only here: doc.text costs its length
            raise MorphsError(f"{err} (in the doc {text_preview(doc.text)})") from None
        if not isinstance(morphs, Morphs):
            morphs = Morphs(morphs)
        rows[token.i] = [list(morphs.cuts), morphs.stem_index, -1 if morphs.tag is None else morphs.tag]
    doc.user_data[USER_DATA_KEY] = rows


def has_morphs(doc: Doc) -> bool:
    """Whether any token of `doc` has a stored segmentation."""
    return any(row is not None for row in doc.user_data.get(USER_DATA_KEY, ()))


def register_extension() -> None:
    """Register `Token._.morphs` (idempotent)."""
    if not Token.has_extension("morphs"):
        Token.set_extension("morphs", getter=get_morphs, setter=set_morphs)
