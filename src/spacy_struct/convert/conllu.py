"""CoNLL-U to spaCy Docs, keeping the gold (syntactic word) tokenization.

Each syntactic word becomes one token: multiword tokens such as Spanish "del"
= "de el" give their words, as a parser is trained and scored on words. The
basic tree goes to `token.head`/`token.dep_` (UD "root" becomes spaCy's
"ROOT"), UPOS to `pos_`, XPOS to `tag_` (UPOS when XPOS is "_"), FEATS to
`morph`, LEMMA to `lemma_`; SpaceAfter=No restores the text.

What a Doc cannot hold is counted and reported instead of dropped silently:
empty nodes and enhanced dependencies (DEPS) belong to the enhanced graph,
not the basic tree, and the surface form of a multiword token is replaced by
its words. A sentence whose basic annotation is not a tree (a head outside
the sentence, a cycle, no root) stops the conversion with its sent_id and
line number.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, List, Optional

import numpy as np

from ..structs.dependency import check_heads
from . import open_text


class CoNLLUError(ValueError):
    """The file is not well-formed CoNLL-U, or a sentence is not a tree."""


@dataclass
class Sentence:
    sent_id: str
    line: int
    words: List[str] = field(default_factory=list)
    spaces: List[bool] = field(default_factory=list)
    lemmas: List[str] = field(default_factory=list)
    pos: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)
    morphs: List[str] = field(default_factory=list)
    heads: List[int] = field(default_factory=list)   # 0 = root, else 1-based word index
    deps: List[str] = field(default_factory=list)


@dataclass
class Report:
    """What was read and what could not be kept."""

    sentences: int = 0
    words: int = 0
    multiword_tokens: int = 0
    empty_nodes: int = 0
    enhanced_deps: int = 0

    def lines(self) -> List[str]:
        out = [f"{self.sentences} sentences, {self.words} words"]
        if self.multiword_tokens:
            out.append(
                f"{self.multiword_tokens} multiword tokens split into their words "
                f"(the surface form of the multiword token is not kept)"
            )
        if self.empty_nodes:
            out.append(
                f"{self.empty_nodes} empty nodes not kept (enhanced graph only, "
                f"not part of the basic tree)"
            )
        if self.enhanced_deps:
            out.append(
                f"{self.enhanced_deps} words with enhanced dependencies (DEPS) that "
                f"differ from the basic arc: not kept (a Doc holds one tree)"
            )
        return out


def read_conllu(path: Path | str, report: Optional[Report] = None) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U file (plain or .gz), validated as trees."""
    path = Path(path)
    report = report if report is not None else Report()
    with open_text(path) as f:
        yield from _parse(f, str(path), report)


def _parse(lines: Iterable[str], source: str, report: Report) -> Iterator[Sentence]:
    sent: Optional[Sentence] = None
    sent_id = ""
    mwt_end = 0
    mwt_space = True
    for lineno, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n").rstrip("\r")
        if not line.strip():
            if sent is not None:
                yield _finish(sent, source, report)
            sent, sent_id, mwt_end = None, "", 0
            continue
        if line.startswith("#"):
            if line.startswith("# sent_id"):
                sent_id = line.split("=", 1)[-1].strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise CoNLLUError(
                f"{source}:{lineno}: expected 10 tab-separated columns, got {len(cols)}"
            )
        if sent is None:
            sent = Sentence(sent_id=sent_id or f"line {lineno}", line=lineno)
        wid, form, lemma, upos, xpos, feats, head, deprel, deps, misc = cols
        if "." in wid:
            report.empty_nodes += 1
            continue
        no_space = "SpaceAfter=No" in misc.split("|")
        if "-" in wid:
            try:
                start, end = (int(x) for x in wid.split("-"))
            except ValueError:
                raise CoNLLUError(
                    f"{source}:{lineno} (sentence {sent.sent_id}): multiword token ID "
                    f"{wid!r} must be a range of integers such as 3-4"
                ) from None
            report.multiword_tokens += 1
            mwt_end, mwt_space = end, not no_space
            continue
        try:
            index = int(wid)
            head_index = int(head)
        except ValueError:
            raise CoNLLUError(
                f"{source}:{lineno} (sentence {sent.sent_id}): ID {wid!r} and HEAD "
                f"{head!r} must be integers"
            ) from None
        if index != len(sent.words) + 1:
            raise CoNLLUError(
                f"{source}:{lineno} (sentence {sent.sent_id}): word ID {index} out of "
                f"sequence, expected {len(sent.words) + 1}"
            )
        if index < mwt_end:
            space = False
        elif index == mwt_end:
            space = mwt_space
        else:
            space = not no_space
        if not form:
            raise CoNLLUError(f"{source}:{lineno} (sentence {sent.sent_id}): the FORM column is empty")
        if feats != "_" and not all("=" in feat for feat in feats.split("|")):
            raise CoNLLUError(
                f"{source}:{lineno} (sentence {sent.sent_id}): FEATS {feats!r} must be "
                f"Name=Value pairs joined by '|', or '_'"
            )
        if deprel in ("_", ""):
            raise CoNLLUError(
                f"{source}:{lineno} (sentence {sent.sent_id}): DEPREL is {deprel!r} on a "
                f"word with HEAD {head}; every word needs its relation (a file without "
                f"dependency relations cannot train a labelled parser)"
            )
        if deps not in ("_", f"{head}:{deprel}"):
            report.enhanced_deps += 1
        sent.words.append(form)
        sent.spaces.append(space)
        sent.lemmas.append(lemma if lemma != "_" or form == "_" else "")
        sent.pos.append(upos if upos != "_" else "")
        sent.tags.append(xpos if xpos != "_" else (upos if upos != "_" else ""))
        sent.morphs.append(feats if feats != "_" else "")
        sent.heads.append(head_index)
        sent.deps.append("ROOT" if deprel == "root" else deprel)
    if sent is not None:
        yield _finish(sent, source, report)


def _finish(sent: Sentence, source: str, report: Report) -> Sentence:
    n = len(sent.words)
    if n == 0:
        raise CoNLLUError(f"{source}:{sent.line}: sentence {sent.sent_id} has no words")
    heads = np.array([-1] + sent.heads, dtype=np.int64)
    try:
        check_heads(heads, n)
    except ValueError as err:
        raise CoNLLUError(
            f"{source}:{sent.line}: sentence {sent.sent_id} is not a tree: {err}"
        ) from None
    roots = [i + 1 for i, h in enumerate(sent.heads) if h == 0]
    if len(roots) != 1:
        raise CoNLLUError(
            f"{source}:{sent.line}: sentence {sent.sent_id} has {len(roots)} roots (words "
            f"{roots}); a UD tree has one"
        )
    report.sentences += 1
    report.words += n
    return sent


def sentences_to_docs(sentences: Iterable[Sentence], vocab, n_sents: int = 10):
    """Group sentences into Docs of `n_sents` sentences each (one tree per sentence)."""
    from spacy.tokens import Doc

    batch: List[Sentence] = []

    def make(group: List[Sentence]):
        words, spaces, lemmas, pos, tags, morphs, heads, deps = ([] for _ in range(8))
        sent_starts = []
        for s in group:
            offset = len(words)
            words += s.words
            spaces += s.spaces
            lemmas += s.lemmas
            pos += s.pos
            tags += s.tags
            morphs += s.morphs
            deps += s.deps
            heads += [offset + i if h == 0 else offset + h - 1 for i, h in enumerate(s.heads)]
            sent_starts += [True] + [False] * (len(s.words) - 1)
        spaces[-1] = False       # no space after the last word of a Doc
        try:
            return Doc(
                vocab, words=words, spaces=spaces, lemmas=lemmas, pos=pos or None,
                tags=tags, morphs=morphs, heads=heads, deps=deps,
            )
        except ValueError as err:
            where = ", ".join(f"line {s.line}" for s in group)
            raise CoNLLUError(
                f"one of the sentences at {where} has a value spaCy refuses: {err}"
            ) from None

    for sent in sentences:
        batch.append(sent)
        if len(batch) >= max(1, n_sents):
            yield make(batch)
            batch = []
    if batch:
        yield make(batch)


def convert_file(
    input_path: Path | str, output_path: Path | str, n_sents: int = 10, lang: str = "xx"
) -> Report:
    """Convert one CoNLL-U file to a `.spacy` file and return the report."""
    import spacy
    from spacy.tokens import DocBin

    report = Report()
    vocab = spacy.blank(lang).vocab
    db = DocBin(store_user_data=True)
    try:
        for doc in sentences_to_docs(read_conllu(input_path, report), vocab, n_sents):
            db.add(doc)
    except CoNLLUError as err:
        if str(err).startswith(str(input_path)):
            raise
        raise CoNLLUError(f"{input_path}: {err}") from None
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(output_path)
    return report
