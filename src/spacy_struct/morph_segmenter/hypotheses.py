"""The segmentations a word type may take, as arrays for the sampler.

Lee et al. (2011) let a word be prefix* stem suffix* with exactly one stem,
at most two prefixes and two suffixes (so at most five morphs), and a stem
not shorter than any affix; every segmentation meeting these constraints is
a hypothesis of the type (10 for a word of 4 characters, 66 for 8, 553 for
15). Without the last constraint (`short_affixes` false) a short stem
may carry a longer affix, as Mongolian "эс+тэй" does. A type whose
segmentation is known (semi-supervised gold) has that one hypothesis,
whatever its shape; a word with no letter, or with a digit, or longer than
`max_length`, has only itself.

All hypotheses of all types are stored once, in CSR form (`HypothesisTable`):
the morphs of hypothesis h are `morphs[h, :n_morphs[h]]` (ids into the
morph strings, shared across roles, as the master lexicon L* is), its stem
is the one at `stem_pos[h]`, the morphs before are prefixes and after
suffixes; the hypotheses of type i are `type_start[i]:type_start[i + 1]`.

A stem may have lost a final letter in writing before its suffix: English
writes structure+ed as "structured" and make+ing as "making". Read on the
surface, "structured" is structur+ed and "structures" structure+s, two
stems where there is one, and the lexicon fills with stems that lack
their "e" ("structur", "determin") and with "e" and "es" as suffixes, which
then cut new words wrongly ("structur+es", "brid+e"). With
`restored_endings` (e.g. "e"), a hypothesis whose stem ends in a consonant
and is followed by a suffix beginning with a vowel is offered a second
time with the letter restored to the stem's lexicon string (structure +
ed, cut "structur|ed"), so both words use one stem. The cuts, and so the
output, stay those of the written word; only which lexicon string the stem
counts as changes (`stem_tail[h]`: the letter restored, "" for none). Not
offered before the letter alone or the letter + "s" as a suffix: those
would spell the surface form itself ("structure+es" is "structure+s").

An affix is spelled with letters (at least one; besides them, combining
marks, apostrophes and hyphens: English "'s", "in-"): the dots, at signs,
slashes and digits inside a token (an address, a file name,
"Warner@ENRON") are not morphology, so no hypothesis offered for an
unclamped word cuts one off as an affix ("Warner+@ENRON",
"alt.animals+.crab"). A stem may hold them; a gold segmentation keeps
what it says.
"""
from __future__ import annotations

from dataclasses import dataclass
import unicodedata
from typing import Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

Segmentation = Tuple[Tuple[int, ...], int]  # (cut offsets inside the word, stem position)
#: a segmentation with the letter restored to its stem ("" for none)
Analysis = Tuple[Tuple[int, ...], int, str]

#: the characters besides letters and combining marks an affix may hold
AFFIX_PUNCTUATION = frozenset("'’-")

#: the letters after which a restored ending may have been dropped are the
#: others; a suffix must begin with one of these for the restoration
VOWELS = frozenset("aeiouy")


def _splits(start: int, end: int, max_pieces: int) -> Iterator[Tuple[int, ...]]:
    """The ways to cut [start, end) into 1..max_pieces pieces, as their end
    offsets (nothing for an empty range)."""
    if start == end:
        yield ()
        return
    if max_pieces < 1:
        return
    yield (end,)
    if max_pieces >= 2:
        for first in range(start + 1, end):
            for rest in _splits(first, end, max_pieces - 1):
                yield (first, *rest)


def segmentations(length: int, max_prefixes: int = 2, max_suffixes: int = 2,
                  min_stem: int = 1, short_affixes: bool = True) -> List[Segmentation]:
    """Every segmentation of a word of `length` characters under the
    constraints above (and a stem of at least `min_stem` characters; with
    `short_affixes`, no affix longer than the stem): (cuts, stem position),
    the unsegmented word first."""
    out: List[Segmentation] = [((), 0)]
    for a in range(length):
        for b in range(a + 1, length + 1):
            if (a, b) == (0, length):
                continue
            stem = b - a
            if stem < min_stem:
                continue
            longest = stem if short_affixes else length
            for prefix_ends in _splits(0, a, max_prefixes):
                edges = (0, *prefix_ends)
                if any(y - x > longest for x, y in zip(edges, edges[1:])):
                    continue
                for suffix_ends in _splits(b, length, max_suffixes):
                    edges_s = (b, *suffix_ends)
                    if any(y - x > longest for x, y in zip(edges_s, edges_s[1:])):
                        continue
                    cuts = tuple(c for c in (*prefix_ends, b, *suffix_ends) if 0 < c < length)
                    out.append((cuts, len(prefix_ends)))
    return out


def restorable(stem: str, suffix: str, ending: str) -> bool:
    """Whether `stem` (as written) may have dropped `ending` before `suffix`
    (see the module's docstring): the stem ends in a consonant letter, the
    suffix begins with a vowel, and the suffix is not `ending` alone or
    `ending` + "s"."""
    return (len(stem) >= 2 and stem[-1].isalpha() and stem[-1] not in VOWELS and suffix[:1] in VOWELS
            and suffix not in (ending, ending + "s"))


def is_affix_spelling(piece: str) -> bool:
    """Whether `piece` may be an affix: a letter, and besides letters only
    combining marks, apostrophes and hyphens (see the module's docstring)."""
    return (any(c.isalpha() for c in piece)
            and all(c.isalpha() or c in AFFIX_PUNCTUATION or unicodedata.category(c).startswith("M") for c in piece))


def is_segmentable(word: str, max_length: int) -> bool:
    """Whether a word gets hypotheses beyond itself: it has a letter, no
    digit, and at most `max_length` characters."""
    return (0 < len(word) <= max_length and any(c.isalpha() for c in word)
            and not any(c.isdigit() for c in word))


@dataclass
class HypothesisTable:
    """All hypotheses of all word types (see the module's docstring)."""

    morph_strings: List[str]
    morph_length: np.ndarray       # (n_morph_strings,) int32
    morphs: np.ndarray             # (n_hyps, max_morphs) int32, -1 padded
    n_morphs: np.ndarray           # (n_hyps,) int32
    stem_pos: np.ndarray           # (n_hyps,) int32
    type_start: np.ndarray         # (n_types + 1,) int64
    cuts: List[Tuple[int, ...]]    # per hypothesis, its cut offsets
    stem_tail: List[str]           # per hypothesis, the letter restored to its stem ("" for none)

    @property
    def n_types(self) -> int:
        return len(self.type_start) - 1

    def hypotheses_of(self, i: int) -> range:
        """The hypothesis ids of type i."""
        return range(int(self.type_start[i]), int(self.type_start[i + 1]))


def build_hypotheses(
    words: Sequence[str],
    clamped: Optional[Dict[int, Union[Segmentation, Analysis]]] = None,
    max_prefixes: int = 2,
    max_suffixes: int = 2,
    max_length: int = 30,
    morph_ids: Optional[Dict[str, int]] = None,
    min_stem: int = 1,
    short_affixes: bool = True,
    restored_endings: str = "",
) -> HypothesisTable:
    """The hypotheses of every type of `words` (a type per entry).

    clamped: type index to its known segmentation: (cuts, stem position),
        its only cuts (with its restored twins, if any), or (cuts, stem
        position, restored letter or ""), its only hypothesis.
    min_stem: the shortest stem a hypothesis may have.
    short_affixes: no affix longer than the stem.
    restored_endings: the letters a stem may have dropped before a suffix,
        each offered restored (see the module's docstring); "" for none.
    morph_ids: morph strings already interned (a saved model's), extended
        in place; new strings get the next ids.
    """
    clamped = clamped or {}
    ids: Dict[str, int] = morph_ids if morph_ids is not None else {}
    cache: Dict[int, List[Segmentation]] = {}
    rows: List[List[int]] = []
    stems: List[int] = []
    all_cuts: List[Tuple[int, ...]] = []
    tails: List[str] = []
    starts = [0]

    def add(pieces: List[str], cuts: Tuple[int, ...], stem: int, tail: str) -> None:
        # the written stem is not interned for a restored twin: a string no
        # hypothesis uses would be priced as a known one for new words
        row = [ids.setdefault(p + tail if k == stem else p, len(ids)) for k, p in enumerate(pieces)]
        rows.append(row)
        stems.append(stem)
        all_cuts.append(tuple(cuts))
        tails.append(tail)

    def add_with_twins(pieces: List[str], cuts: Tuple[int, ...], stem: int) -> None:
        add(pieces, cuts, stem, "")
        if stem + 1 < len(pieces):
            for ending in restored_endings:
                if restorable(pieces[stem], pieces[stem + 1], ending):
                    add(pieces, cuts, stem, ending)

    for i, word in enumerate(words):
        if i in clamped:
            cuts, stem, *given = clamped[i]
            edges = (0, *cuts, len(word))
            pieces = [word[x:y] for x, y in zip(edges, edges[1:])]
            if given:  # a learned state: its own stem string
                add(pieces, cuts, stem, given[0])
            else:  # a gold segmentation fixes the cuts, not which string its stem is
                add_with_twins(pieces, cuts, stem)
            starts.append(len(rows))
            continue
        if is_segmentable(word, max_length):
            n = len(word)
            if n not in cache:
                cache[n] = segmentations(n, max_prefixes, max_suffixes, min_stem, short_affixes)
            options = cache[n]
        else:
            options = [((), 0)]
        plain = word.isalpha()
        for cuts, stem in options:
            edges = (0, *cuts, len(word))
            pieces = [word[x:y] for x, y in zip(edges, edges[1:])]
            if not plain and not all(is_affix_spelling(p) for k, p in enumerate(pieces) if k != stem):
                continue
            add_with_twins(pieces, cuts, stem)
        starts.append(len(rows))
    width = max((len(r) for r in rows), default=1)
    morphs = np.full((len(rows), width), -1, dtype=np.int32)
    for h, row in enumerate(rows):
        morphs[h, :len(row)] = row
    strings = [""] * len(ids)
    for s, k in ids.items():
        strings[k] = s
    return HypothesisTable(
        morph_strings=strings,
        morph_length=np.array([len(s) for s in strings], dtype=np.int32),
        morphs=morphs,
        n_morphs=np.array([len(r) for r in rows], dtype=np.int32),
        stem_pos=np.array(stems, dtype=np.int32),
        type_start=np.array(starts, dtype=np.int64),
        cuts=all_cuts,
        stem_tail=tails,
    )
