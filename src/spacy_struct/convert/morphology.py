"""Morphological segmentation corpora to `.spacy`, gold in `token._.morphs`.

- SIGMORPHON 2022 segmentation (`convert sigmorphon`): word level
  ("word TAB morphs joined by ' @@' [TAB category]", one Doc of one token
  per word) and sentence level ("sentence TAB segmented sentence", one Doc
  per sentence, tokens split on spaces, a token of the segmented side that
  starts with "@@" continuing the word before).
- UD treebanks' multiword tokens (`convert ud-morphs`, made for UD
  Hebrew-HTB): one Doc per sentence of surface tokens; a multiword token's
  syntactic words are its morphs, any other token is one morph.

Surface and canonical gold. The shared task's gold is canonical in part
("causing" = "cause @@ing", most of Mongolian's), which no cut of the word
gives. `token._.morphs` holds a surface segmentation, so only the words
whose gold morphs concatenate to the word get one; the others are counted
("not surface-recoverable") and keep no `token._.morphs`, so scores on the
surface-recoverable subset leave them out. Every item's gold as the corpus
gives it (its morphs in order, canonical or not) is kept in
`doc.user_data[CANONICAL_KEY]`, for the shared task's own metric on all
words (`morph_segmenter.scoring.sigmorphon_scores`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from spacy.tokens import Doc, DocBin
from spacy.vocab import Vocab

from ..annotations.morphs import CANONICAL_KEY, CATEGORY_KEY, write_morphs
from . import open_text

__all__ = ["CANONICAL_KEY", "CATEGORY_KEY", "convert_sigmorphon", "convert_ud_morphs", "read_sigmorphon"]


class MorphologyFormatError(ValueError):
    """A line of a segmentation corpus that cannot be read."""


@dataclass
class MorphReport:
    """What a converter read and what it could carry over as surface gold."""

    items: int = 0
    tokens: int = 0
    segmented: int = 0
    recoverable: int = 0
    not_recoverable: int = 0
    misaligned_items: int = 0
    misaligned_tokens: int = 0

    def lines(self) -> List[str]:
        share = 100 * self.recoverable / self.tokens if self.tokens else 0.0
        out = [
            f"{self.items} items, {self.tokens} tokens; {self.recoverable} tokens ({share:.1f}%) have "
            f"a surface-recoverable gold segmentation (token._.morphs), {self.segmented} of them "
            f"in more than one morph",
        ]
        if self.not_recoverable:
            out.append(
                f"{self.not_recoverable} tokens have gold morphs that do not concatenate to the word "
                f"(canonical forms): set aside, no token._.morphs; the item's gold is kept for the "
                f"shared task's metric"
            )
        if self.misaligned_items:
            out.append(
                f"{self.misaligned_items} items whose segmented side has another number of words than "
                f"the text: their {self.misaligned_tokens} tokens get no token._.morphs; the item's "
                f"gold is kept for the shared task's metric"
            )
        return out


def _split_segmented(text: str) -> List[List[str]]:
    """The words of a segmented sentence, each a list of morphs."""
    words: List[List[str]] = []
    for piece in text.split(" "):
        if piece.startswith("@@") and words:
            words[-1].append(piece[2:])
        elif piece:
            words.append([piece])
    return words


Item = Tuple[str, List[str], List[Optional[List[str]]], List[str], Optional[str]]


def sigmorphon_level(path: Path) -> str:
    """"word" or "sentence", from the shared task's file names
    (ces.word.train.tsv, eng.sentence.dev.tsv)."""
    for level in ("word", "sentence"):
        if f".{level}." in Path(path).name:
            return level
    raise MorphologyFormatError(
        f"{path}: cannot tell word from sentence level by the name (the shared task's files are "
        f"LANG.word.SPLIT.tsv and LANG.sentence.SPLIT.tsv); give the level"
    )


def read_sigmorphon(path: Path, level: Optional[str] = None) -> Iterator[Item]:
    """The items of a SIGMORPHON 2022 file: at word level a word (spaces
    and all: "státi (se)" is one word), its morphs joined by " @@"; at
    sentence level a sentence of space-separated words.

    level: "word" or "sentence"; from the file name when None.
    RETURNS: per line (where, the item's words, each word's gold morphs or
    None when the two sides do not align, all the item's gold morphs in
    order, the category or None).
    """
    level = level or sigmorphon_level(path)
    if level not in ("word", "sentence"):
        raise ValueError(f"level must be 'word' or 'sentence', got {level!r}")
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            where = f"{path}:{number}"
            fields = line.split("\t")
            if len(fields) < 2 or not fields[0] or not fields[1]:
                raise MorphologyFormatError(
                    f"{where}: expected 'text TAB segmentation [TAB category]', got {line[:80]!r}"
                )
            text, segmented = fields[0], fields[1]
            category = fields[2] if len(fields) > 2 else None
            if level == "word":
                words, gold = [text], [segmented.split(" @@")]
            else:
                # words split on runs of spaces, as the gold side is
                words, gold = [w for w in text.split(" ") if w], list(_split_segmented(segmented))
            flat = [m for morphs in gold for m in morphs]
            if len(gold) != len(words):
                gold = [None] * len(words)
            yield where, words, gold, flat, category


def convert_sigmorphon(path: Path, output: Path, level: Optional[str] = None) -> MorphReport:
    """Convert a SIGMORPHON 2022 segmentation file to .spacy (level as in
    `read_sigmorphon`); RETURNS the report."""
    vocab = Vocab()
    db, report = DocBin(store_user_data=True), MorphReport()
    for _, words, gold, flat, category in read_sigmorphon(path, level):
        doc = Doc(vocab, words=words, spaces=[True] * (len(words) - 1) + [False])
        if any(morphs is None for morphs in gold):
            report.misaligned_items += 1
            report.misaligned_tokens += len(words)
        doc.user_data[CANONICAL_KEY] = flat
        if category is not None:
            doc.user_data[CATEGORY_KEY] = category
        _keep_surface(doc, gold, report)
        db.add(doc)
    output.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(output)
    return report


def _keep_surface(doc: Doc, gold: List[Optional[List[str]]], report: MorphReport) -> None:
    """Store each token's gold morphs that concatenate to it; count the rest."""
    report.items += 1
    report.tokens += len(doc)
    surface = {}
    for token, morphs in zip(doc, gold):
        if morphs is None:
            continue
        if "".join(morphs) == token.text and all(morphs):
            surface[token.i] = morphs
            report.recoverable += 1
            report.segmented += len(morphs) > 1
        else:
            report.not_recoverable += 1
    if surface:
        write_morphs(doc, surface)


def convert_ud_morphs(path: Path, output: Path) -> MorphReport:
    """Convert a CoNLL-U file's surface tokens to .spacy, a multiword token's
    syntactic words as its gold morphs; RETURNS the report."""
    vocab = Vocab()
    db, report = DocBin(store_user_data=True), MorphReport()
    for where, tokens in _read_conllu_tokens(path):
        words = [surface for surface, _, _ in tokens]
        doc = Doc(vocab, words=words, spaces=[space for _, _, space in tokens])
        gold = [morphs for _, morphs, _ in tokens]
        doc.user_data[CANONICAL_KEY] = [m for morphs in gold for m in morphs]
        _keep_surface(doc, gold, report)
        db.add(doc)
    output.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(output)
    return report


def _read_conllu_tokens(path: Path) -> Iterator[Tuple[str, List[Tuple[str, List[str], bool]]]]:
    """Per sentence: (where, [(surface form, its syntactic words, space after)])."""
    tokens: List[Tuple[str, List[str], bool]] = []
    covered_to = 0
    start_line = 0
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                if tokens:
                    yield f"{path}:{start_line}", tokens
                tokens, covered_to = [], 0
                continue
            if line.startswith("#"):
                continue
            if not tokens:
                start_line = number
            cols = line.split("\t")
            if len(cols) != 10:
                raise MorphologyFormatError(f"{path}:{number}: a CoNLL-U line has 10 columns, this one {len(cols)}")
            wid, form, misc = cols[0], cols[1], cols[9]
            space = "SpaceAfter=No" not in misc.split("|")
            if "." in wid:  # empty nodes are no surface tokens
                continue
            if "-" in wid:  # a multiword token: its words follow
                tokens.append((form, [], space))
                covered_to = int(wid.split("-")[1])
                continue
            if int(wid) <= covered_to:
                tokens[-1][1].append(form)
                continue
            tokens.append((form, [form], space))
        if tokens:
            yield f"{path}:{start_line}", tokens
