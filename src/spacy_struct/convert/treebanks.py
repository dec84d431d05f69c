"""Treebanks to spaCy Docs with gold constituency trees (and entities).

- `ptb`: plain bracketed trees, one per line or spread over several lines
  ("(TOP (S (NP (DT The) ...)))"); the words are the leaves (PTB escapes
  such as -LRB- read back as brackets), the tags their preterminals.
- `joint-jsonl`: one sentence per line, {"tokens", "tags", "tree",
  "spans": [{"start", "end", "label"}], "n_unaligned_spans"?}, as the
  GENIA Treebank joint files (../shared/data/genia_treebank/README.md).

Each tree becomes one Doc (spaCy's `gold_preproc` reader cuts longer Docs
with `Span.as_doc`, which keeps no `user_data`), its tree stored as
`joint_parser` stores its predictions (`annotations/trees.py`),
its tags as `token.tag_`, its entities, all of them, in
`doc.spans[spans_key]`. The report says how many unary chains become one
chart label and what each entity becomes in the joint tree: a constituent,
a node inserted over a run of children, or nothing (it crosses a bracket,
or shares its words with another entity), so what the joint model cannot
learn is counted here, before training.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

import spacy
from spacy.tokens import Doc, DocBin, Span, SpanGroup

from ..annotations.trees import check_words, tree_nodes, write_nodes
from ..annotations.joint import JoinReport, join_entities
from ..annotations.brackets import CHAIN_SEPARATOR, ParsedTree, TreeFormatError, parse_brackets, tree_to_chart
from . import FIELD_ERRORS, open_text, wrong_field


@dataclass
class Report:
    """What was read, and what the joint representation makes of it."""

    trees: int = 0
    tokens: int = 0
    constituents: int = 0
    unary_chains: int = 0
    longest_chain: int = 1
    entities: int = 0
    unaligned_upstream: int = 0
    joined: JoinReport = field(default_factory=JoinReport)

    def lines(self) -> List[str]:
        out = [
            f"{self.trees} trees, {self.tokens} tokens, {self.constituents} constituents",
            f"{self.unary_chains} unary chains collapsed into one chart label each"
            + (f" (longest: {self.longest_chain} labels)" if self.unary_chains else ""),
        ]
        if self.entities or self.unaligned_upstream:
            j = self.joined
            out += [
                f"{self.entities} entities kept in doc.spans: {j.constituents} are phrases, "
                f"{j.words} single words without a phrase of their own and {j.runs} runs of "
                f"children of one node (for these a node is inserted), "
                f"{len(j.crossing)} cross a bracket and {len(j.same_span)} share their words "
                f"with another entity (these {len(j.left_out)} cannot be nodes of the tree; "
                f"the joint model does not learn them, and they count as missed in its "
                f"scores); {j.duplicates} exact duplicates",
            ]
        if self.unaligned_upstream:
            out.append(
                f"{self.unaligned_upstream} entities were left out upstream "
                f"(n_unaligned_spans: a boundary inside a token)"
            )
        return out


class TreebankError(ValueError):
    """A tree or a line that cannot be read."""


def read_ptb(path: Path) -> Iterator[Tuple[int, str]]:
    """(first line number, bracket string) of each tree in a PTB file; a
    tree may span several lines."""
    depth, parts, first = 0, [], 0
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            if depth == 0:
                first = number
            parts.append(line.strip())
            depth += line.count("(") - line.count(")")
            if depth < 0:
                raise TreebankError(f"{path}:{first}: unbalanced brackets (too many ')')")
            if depth == 0:
                yield first, " ".join(parts)
                parts = []
    if parts:
        raise TreebankError(f"{path}:{first}: unbalanced brackets (the file ends inside a tree)")


def tree_doc(nlp, tree: ParsedTree, tags: Optional[Sequence[str]] = None) -> Doc:
    """A Doc of the tree's words with the tree (and tags) stored on it."""
    words = tree.words
    doc = Doc(nlp.vocab, words=words, spaces=[True] * (len(words) - 1) + [False],
              tags=list(tags) if tags is not None else [t or "" for t in tree.tags])
    write_nodes(doc, [(0, len(doc), tree_nodes(tree.root, 0, len(doc)))])
    return doc


def _count_tree(report: Report, tree: ParsedTree) -> None:
    report.trees += 1
    report.tokens += len(tree.words)
    if tree.root is None:
        return
    report.constituents += sum(1 for n in tree.root.nodes() if n.label)
    for _, _, (chain, _) in tree_to_chart(tree.root, len(tree.words)):
        if CHAIN_SEPARATOR in chain:
            report.unary_chains += 1
            report.longest_chain = max(report.longest_chain, chain.count(CHAIN_SEPARATOR) + 1)


def convert_ptb(path: Path, output: Path, lang: str = "en") -> Report:
    """Convert a PTB bracket file to a .spacy file; RETURNS the report."""
    nlp = spacy.blank(lang)
    db, report = DocBin(store_user_data=True), Report()
    for number, text in read_ptb(path):
        where = f"{path}:{number}"
        try:
            tree = parse_brackets(text, where)
            doc = tree_doc(nlp, tree)
            _count_tree(report, tree)
        except TreeFormatError as err:
            message = str(err)
            raise TreebankError(message if message.startswith(where) else f"{where}: {message}") from None
        db.add(doc)
    _write(db, report, path, output)
    return report


def _write(db: DocBin, report: Report, path: Path, output: Path) -> None:
    if not report.trees:
        raise TreebankError(f"{path}: no trees in the file")
    output.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(output)


def convert_joint_jsonl(path: Path, output: Path, spans_key: str = "sc", lang: str = "en") -> Report:
    """Convert a joint trees + entities JSONL file to .spacy; RETURNS the report."""
    nlp = spacy.blank(lang)
    db, report = DocBin(store_user_data=True), Report()
    with open_text(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            try:
                doc = _joint_record(nlp, line, where, spans_key, report)
            except TreebankError:
                raise
            except TreeFormatError as err:
                raise TreebankError(f"{where}: {err}") from None
            except FIELD_ERRORS as err:
                raise TreebankError(wrong_field(where, err)) from None
            db.add(doc)
    _write(db, report, path, output)
    return report


def _joint_record(nlp, line: str, where: str, spans_key: str, report: Report):
    """One line of a joint JSONL file as a Doc, counted in `report`."""
    try:
        record = json.loads(line)
        tokens, tree_text = record["tokens"], record["tree"]
        spans = record.get("spans", [])
    except (json.JSONDecodeError, KeyError, TypeError) as err:
        raise TreebankError(f"{where}: not a sentence with tokens and a tree ({err})") from None
    try:
        tree = parse_brackets(tree_text, where)
        check_words(tree.words, tokens, where)
    except TreeFormatError as err:
        raise TreebankError(str(err)) from None
    tree.words = list(tokens)
    tags = record.get("tags")
    if tags is not None and len(tags) != len(tokens):
        raise TreebankError(f"{where}: {len(tags)} tags for {len(tokens)} tokens")
    if tags is not None:
        k = next((k for k, (a, b) in enumerate(zip(tags, tree.tags)) if b is not None and a != b), None)
        if k is not None:
            raise TreebankError(
                f"{where}: tag {k} is {tags[k]!r} in 'tags' and {tree.tags[k]!r} in the tree"
            )
    _count_tree(report, tree)
    doc = tree_doc(nlp, tree, tags)
    entities = []
    for k, span in enumerate(spans):
        try:
            start, end, label = span["start"], span["end"], span["label"]
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (start, end)):
                raise TypeError("offsets must be integers")
            if not isinstance(label, str) or not label:
                raise TypeError("the label must be a non-empty string")
        except (KeyError, TypeError, ValueError):
            raise TreebankError(f"{where}: entity {k} is not {{start, end, label}}: {span!r}") from None
        if not 0 <= start < end <= len(doc):
            raise TreebankError(f"{where}: entity {k} ({start}, {end}) is outside the {len(doc)} tokens")
        entities.append((start, end, label))
    _, joined = join_entities(tree.root, len(doc), entities)  # the stored tree is a copy
    report.joined.add(joined)
    unique = sorted(set(entities), key=lambda e: (e[0], -e[1], e[2]))
    report.entities += len(unique)
    report.unaligned_upstream += int(record.get("n_unaligned_spans", 0) or 0)
    doc.spans[spans_key] = SpanGroup(
        doc, name=spans_key, spans=[Span(doc, s, e, label=t) for s, e, t in unique]
    )
    return doc

