"""CRAFT concept mentions (JSONL) to spaCy Docs with `doc._.segments`.

One JSON object per line, one sentence each (see ../shared/data/craft/README.md):
    {"id", "doc_id", "tokens": [...], "tags": [...], "char_offsets": [[s, e], ...],
     "spans": [{"fragments": [[start, end], ...], "label": "GO_BP", "concept_id": ...}]}
Fragments are token offsets, end exclusive; a mention with two or more
fragments is discontinuous.

Each sentence becomes one Doc (spaCy's `gold_preproc` reader cuts longer
Docs with `Span.as_doc`, which keeps neither `doc.spans` nor `user_data`),
with the corpus's tokens, the spaces between them read from the character
offsets (one space between tokens when a line has none), and the POS tags. Its mentions go to:
- `doc._.segments`: every mention exactly, fragments and all (what
  `overlap_segmenter` trains on and is scored against);
- `doc.spans[spans_key]`: every mention as a contiguous span, a
  discontinuous one as its covering span (the closest a span classifier
  such as spancat can get), for spancat's training; or, with
  `discontinuous = "leave_out"`, the contiguous mentions alone (what a
  tagger of contiguous spans is trained on when the discontinuous mentions
  are to come from elsewhere), the ones left out counted.

Nothing is dropped silently: exact duplicates (same label and fragments,
another concept id) are kept once and counted, touching fragments are
merged into one and counted, and the report gives the counts of
discontinuous, crossing, nested and same-words-different-label mentions.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Tuple

import spacy
from spacy.tokens import Doc, DocBin, Span, SpanGroup

from ..annotations.segments import crossing_keys, normalize_fragments, set_segments
from . import FIELD_ERRORS, open_text, wrong_field


class CRAFTError(ValueError):
    """A line is not a sentence with tokens and well-formed mentions."""


@dataclass
class Report:
    """What was read, and what was merged or kept once."""

    sentences: int = 0
    tokens: int = 0
    mentions: int = 0
    kept: int = 0
    duplicates: int = 0
    touching_fragments: int = 0
    discontinuous: int = 0
    crossing: int = 0
    crossing_pairs: int = 0
    nested: int = 0
    in_nested_pair: int = 0
    nested_pairs: int = 0
    same_words: int = 0
    covering_spans_merged: int = 0
    left_out_of_spans: int = 0
    without_spans: int = 0
    other_fields: Dict[str, int] = field(default_factory=Counter)
    labels: Dict[str, int] = field(default_factory=Counter)

    def share(self, count: int) -> str:
        return f"{100 * count / self.kept:.1f}%" if self.kept else "0%"

    def lines(self) -> List[str]:
        out = [
            f"{self.sentences} sentences, {self.tokens} tokens, {self.mentions} mentions read, "
            f"{self.kept} kept",
            f"discontinuous: {self.discontinuous} ({self.share(self.discontinuous)})",
            f"in a crossing pair: {self.crossing} ({self.share(self.crossing)}; "
            f"{self.crossing_pairs} pairs)",
            f"nested in another mention: {self.nested} ({self.share(self.nested)}); in a "
            f"nested pair, inner or outer: {self.in_nested_pair} "
            f"({self.share(self.in_nested_pair)}; {self.nested_pairs} pairs)",
            f"same words as a mention with another label: {self.same_words}",
            "labels: " + ", ".join(f"{k} {v}" for k, v in sorted(self.labels.items())),
        ]
        if self.duplicates:
            out.append(
                f"{self.duplicates} exact duplicates (same label and fragments, another "
                f"concept id) kept once"
            )
        if self.touching_fragments:
            out.append(f"{self.touching_fragments} touching fragments merged into one")
        if self.without_spans:
            fields = ", ".join(f"{k} ({v})" for k, v in sorted(self.other_fields.items())) or "none"
            out.append(
                f"{self.without_spans} lines have no 'spans' field and were read as sentences "
                f"without mentions (their other fields: {fields}); mentions go in 'spans'"
            )
        if self.left_out_of_spans:
            out.append(
                f"{self.left_out_of_spans} discontinuous mentions left out of doc.spans "
                f"(discontinuous = 'leave_out'; doc._.segments keeps them)"
            )
        if self.covering_spans_merged:
            out.append(
                f"{self.covering_spans_merged} covering spans of discontinuous mentions "
                f"coincide with another mention's span in doc.spans (kept once there; "
                f"doc._.segments keeps both)"
            )
        return out


Key = Tuple[str, Tuple[Tuple[int, int], ...]]


def read_sentence(record: object, line: int, nlp_vocab, report: Report,
                  discontinuous: str = "covering") -> Doc:
    """One JSON record to a Doc with segments and, in doc.spans["sc"], the
    mentions as spans: a discontinuous one as its covering span, or left
    out (`discontinuous = "leave_out"`)."""
    where = f"line {line}"
    if not isinstance(record, dict) or not isinstance(record.get("tokens"), list):
        raise CRAFTError(f"{where}: expected an object with a 'tokens' list")
    tokens = record["tokens"]
    if not tokens or not all(isinstance(t, str) and t for t in tokens):
        raise CRAFTError(f"{where}: 'tokens' must be a non-empty list of non-empty strings")
    offsets = record.get("char_offsets")
    if offsets is None:
        spaces = [True] * (len(tokens) - 1) + [False]
    elif len(offsets) != len(tokens) or not all(
        isinstance(o, list) and len(o) == 2 and all(isinstance(x, int) for x in o) for o in offsets
    ):
        raise CRAFTError(
            f"{where}: 'char_offsets' must be one [start, end] pair per token "
            f"({len(tokens)} tokens)"
        )
    else:
        spaces = [offsets[i + 1][0] > offsets[i][1] for i in range(len(tokens) - 1)] + [False]
    tags = record.get("tags")
    if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
        raise CRAFTError(f"{where}: 'tags' must be a list of strings, one per token")
    if tags is not None and len(tags) != len(tokens):
        raise CRAFTError(f"{where}: {len(tags)} tags for {len(tokens)} tokens")
    doc = Doc(nlp_vocab, words=tokens, spaces=spaces, tags=tags)
    if "spans" not in record:
        report.without_spans += 1
        report.other_fields.update(k for k in record if k not in ("id", "doc_id", "tokens", "tags", "char_offsets"))
    mentions = record.get("spans", [])
    if not isinstance(mentions, list):
        raise CRAFTError(f"{where}: 'spans' must be a list")
    seen: Dict[Key, None] = {}
    for m, mention in enumerate(mentions):
        if not isinstance(mention, dict):
            raise CRAFTError(f"{where}, mention {m}: expected an object with 'fragments' and 'label'")
        label = mention.get("label")
        if not isinstance(label, str) or not label:
            raise CRAFTError(f"{where}, mention {m}: 'label' must be a non-empty string")
        frags = mention.get("fragments")
        if not isinstance(frags, list):
            raise CRAFTError(f"{where}, mention {m}: 'fragments' must be a list of [start, end]")
        try:
            key = (label, normalize_fragments(doc, frags, f"{where}, mention {m}"))
        except ValueError as err:
            raise CRAFTError(str(err)) from None
        report.mentions += 1
        report.touching_fragments += len(frags) - len(key[1])
        if key in seen:
            report.duplicates += 1
            continue
        seen[key] = None
    keys = list(seen)
    set_segments(doc, keys)
    covering: Dict[Tuple[int, int, str], None] = {}
    for label, frags in keys:
        if len(frags) > 1 and discontinuous == "leave_out":
            report.left_out_of_spans += 1
            continue
        covering.setdefault((frags[0][0], frags[-1][1], label), None)
    if discontinuous == "covering":
        report.covering_spans_merged += len(keys) - len(covering)
    doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, s, e, label=l) for s, e, l in covering])
    _count(keys, report)
    report.sentences += 1
    report.tokens += len(tokens)
    return doc


def _count(keys: List[Key], report: Report) -> None:
    """Add the sentence's kept mentions to the counts: discontinuous ones,
    those in a crossing pair, those inside another mention (a proper subset
    of its words), those with the same words as another mention."""
    report.kept += len(keys)
    report.discontinuous += sum(len(frags) > 1 for _, frags in keys)
    for label, _ in keys:
        report.labels[label] += 1
    report.crossing += len(crossing_keys(set(keys)))
    words = [frozenset(i for s, e in frags for i in range(s, e)) for _, frags in keys]
    report.same_words += sum(c for c in Counter(words).values() if c > 1)
    nested, paired = set(), set()
    for a in range(len(keys)):
        for b in range(a + 1, len(keys)):
            wa, wb = words[a], words[b]
            if wa == wb or not wa & wb:
                continue
            if wa < wb or wb < wa:
                report.nested_pairs += 1
                nested.add(a if wa < wb else b)
                paired.update((a, b))
            else:
                report.crossing_pairs += 1
    report.nested += len(nested)
    report.in_nested_pair += len(paired)


#: what doc.spans holds of a discontinuous mention
DISCONTINUOUS_SPANS = ("covering", "leave_out")


def convert_file(path: Path, output: Path, spans_key: str = "sc", lang: str = "en",
                 discontinuous: str = "covering") -> Report:
    """Convert a CRAFT JSONL(.gz) file to a .spacy file; RETURNS the report.

    discontinuous: what `doc.spans[spans_key]` holds of a discontinuous
        mention: its covering span ("covering") or nothing ("leave_out").
    """
    if discontinuous not in DISCONTINUOUS_SPANS:
        raise ValueError(f"discontinuous must be one of {list(DISCONTINUOUS_SPANS)}, got {discontinuous!r}")
    nlp = spacy.blank(lang)
    report = Report()
    docs = DocBin(store_user_data=True)
    with open_text(Path(path)) as f:
        for line, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as err:
                raise CRAFTError(f"line {line}: not JSON ({err})") from None
            try:
                doc = read_sentence(record, line, nlp.vocab, report, discontinuous)
            except CRAFTError:
                raise
            except FIELD_ERRORS as err:
                raise CRAFTError(wrong_field(f"line {line}", err)) from None
            if spans_key != "sc":
                doc.spans[spans_key] = doc.spans.pop("sc")
            docs.add(doc)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    docs.to_disk(output)
    return report
