"""Token-and-span JSONL (the GENIA nested NER files) to spaCy Docs.

One JSON object per line, one sentence each:
    {"tokens": ["IL-2", "gene", ...],
     "spans": [{"start": 0, "end": 2, "label": "DNA"}, ...],   # token offsets, end exclusive
     "doc_id": "MEDLINE:93061407", "text": "IL-2 gene ..."}    # both optional
The given tokens are kept as they are and each sentence becomes one Doc, its
spans in `doc.spans[spans_key]`. Sentence and document ids are not stored:
`doc.user_data` in a DocBin is unpacked through spaCy's registry once per
Doc, which made reading GENIA's 15,000 Docs take minutes per epoch. One Doc
per sentence, because spaCy's `gold_preproc` corpus reader splits a
longer Doc into sentences with `Span.as_doc`, which does not carry
`doc.spans` over. When a `text` is given, the spaces between tokens are read
from it.

Nothing is dropped silently. Spans that cross (overlap without one containing
the other) cannot be one tree, so `crossing="drop"` (the default) keeps the
largest subset of a sentence's spans in which none cross and drops the rest,
and `"keep"` keeps them all (spancat can train on them, nested_ner cannot);
either way the report counts them. A span that carries two labels is kept with both, and counted.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

import numpy as np

from ..structs.spans import crosses, laminar_argmax
from . import open_text

CROSSING_POLICIES = ("drop", "keep")

SpanRow = Tuple[int, int, str]  # start, end (exclusive), label


class SpansJSONLError(ValueError):
    """A line is not a sentence with tokens and well-formed spans."""


@dataclass
class Sentence:
    line: int
    id: Optional[str]
    doc_id: Optional[str]
    tokens: List[str]
    spaces: List[bool]
    spans: List[SpanRow]


@dataclass
class Report:
    """What was read, and what was changed or could not be kept."""

    sentences: int = 0
    tokens: int = 0
    spans: int = 0
    nested: int = 0
    duplicates: int = 0
    multi_label: int = 0
    crossing: int = 0
    crossing_dropped: int = 0
    unaligned_text: int = 0
    labels: dict = field(default_factory=dict)

    def lines(self) -> List[str]:
        out = [
            f"{self.sentences} sentences, {self.tokens} tokens, {self.spans} spans "
            f"({self.nested} inside another span)",
            "labels: " + ", ".join(f"{k} {v}" for k, v in sorted(self.labels.items())),
        ]
        if self.duplicates:
            out.append(f"{self.duplicates} repeated (start, end, label) spans kept once")
        if self.multi_label:
            out.append(
                f"{self.multi_label} spans carry more than one label: all labels kept "
                f"(nested_ner predicts one label per span)"
            )
        if self.crossing:
            what = (f"{self.crossing_dropped} dropped (the fewest that leave no crossing)"
                    if self.crossing_dropped else "all kept (nested_ner cannot train on them)")
            out.append(f"{self.crossing} spans cross another span: {what}")
        if self.unaligned_text:
            out.append(
                f"{self.unaligned_text} sentences whose tokens do not match their text: "
                f"a space is put after every token"
            )
        return out


def read_spans_jsonl(
    path: Path | str, report: Optional[Report] = None, crossing: str = "drop"
) -> Iterator[Sentence]:
    """Yield the validated sentences of a JSONL file (plain or .gz)."""
    if crossing not in CROSSING_POLICIES:
        raise ValueError(f"crossing must be one of {CROSSING_POLICIES}, got {crossing!r}")
    path = Path(path)
    report = report if report is not None else Report()
    with open_text(path) as f:
        for lineno, raw in enumerate(f, start=1):
            if not raw.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                record = json.loads(raw)
            except json.JSONDecodeError as err:
                raise SpansJSONLError(f"{where}: not valid JSON: {err}") from None
            yield _sentence(record, where, lineno, report, crossing)


def _sentence(record, where: str, lineno: int, report: Report, crossing: str) -> Sentence:
    if not isinstance(record, dict):
        raise SpansJSONLError(f"{where}: expected a JSON object, got {type(record).__name__}")
    tokens = record.get("tokens")
    if not isinstance(tokens, list) or not tokens or not all(
        isinstance(t, str) and t for t in tokens
    ):
        raise SpansJSONLError(f"{where}: 'tokens' must be a non-empty list of non-empty strings")
    n = len(tokens)
    rows = []
    spans = record.get("spans", [])
    if not isinstance(spans, list):
        raise SpansJSONLError(f"{where}: 'spans' must be a list of {{start, end, label}} objects")
    for k, span in enumerate(spans):
        try:
            start, end, label = span["start"], span["end"], span["label"]
        except (TypeError, KeyError):
            raise SpansJSONLError(
                f"{where}: span {k} must be an object with 'start', 'end' and 'label'"
            ) from None
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start < end <= n):
            raise SpansJSONLError(
                f"{where}: span {k} ({start!r}, {end!r}) is not a token range of a "
                f"{n}-token sentence (need 0 <= start < end <= {n}, end exclusive)"
            )
        if not isinstance(label, str) or not label:
            raise SpansJSONLError(f"{where}: span {k} needs a non-empty string label")
        rows.append((start, end, label))
    unique = sorted(set(rows), key=lambda r: (r[0], -r[1], r[2]))
    report.duplicates += len(rows) - len(unique)
    unique = _resolve_crossing(unique, n, report, crossing)
    ranges = {}
    for start, end, label in unique:
        ranges.setdefault((start, end), []).append(label)
        report.labels[label] = report.labels.get(label, 0) + 1
    report.multi_label += sum(1 for labels in ranges.values() if len(labels) > 1)
    report.nested += sum(
        1 for s, e, _ in unique
        if any(s2 <= s and e <= e2 and (s2, e2) != (s, e) for (s2, e2) in ranges)
    )
    text = record.get("text")
    if text is not None and not isinstance(text, str):
        raise SpansJSONLError(f"{where}: 'text' must be a string (or left out), got {text!r}")
    spaces = _spaces(tokens, text)
    if spaces is None:
        report.unaligned_text += 1
        spaces = [True] * n
    report.sentences += 1
    report.tokens += n
    report.spans += len(unique)
    ids = [record.get(key) for key in ("id", "doc_id")]
    ids = [str(v) if v is not None else None for v in ids]
    return Sentence(lineno, *ids, tokens, spaces, unique)


def _resolve_crossing(rows: List[SpanRow], n: int, report: Report, policy: str) -> List[SpanRow]:
    ranges = sorted({(s, e) for s, e, _ in rows})
    crossing = {a for a in ranges for b in ranges if crosses(a, b)}
    if not crossing:
        return rows
    report.crossing += sum(1 for s, e, _ in rows if (s, e) in crossing)
    if policy == "keep":
        return rows
    # keep the most spans that do not cross: the best laminar subset, found by
    # the same CKY that decodes nested_ner (longer spans win ties)
    scores = np.full((n, n, 1), -np.inf)
    for s, e, _ in rows:
        if scores[s, e - 1, 0] == -np.inf:
            scores[s, e - 1, 0] = (e - s) / ((n + 1.0) * (2 * n + 1))  # ties only
        scores[s, e - 1, 0] += 1.0
    best, _ = laminar_argmax(scores)
    keep = {(int(s), int(e) + 1) for s, e, _ in best}
    out = [row for row in rows if (row[0], row[1]) in keep]
    report.crossing_dropped += len(rows) - len(out)
    return out


def _spaces(tokens: List[str], text) -> Optional[List[bool]]:
    """Whether each token is followed by whitespace in `text`; None if they do not match."""
    if not isinstance(text, str):
        return [True] * len(tokens)
    pos = 0
    ends = []
    for token in tokens:
        found = text.find(token, pos)
        if found < 0 or text[pos:found].strip():
            return None
        pos = found + len(token)
        ends.append(pos)
    if text[pos:].strip():
        return None
    return [end < len(text) and text[end].isspace() for end in ends]


def sentence_to_doc(sent: Sentence, vocab, spans_key: str = "sc"):
    """One Doc for one sentence, its spans in `doc.spans[spans_key]`."""
    from spacy.tokens import Doc, Span

    spaces = list(sent.spaces)
    spaces[-1] = False
    doc = Doc(vocab, words=sent.tokens, spaces=spaces)
    doc.spans[spans_key] = [Span(doc, s, e, label=label) for s, e, label in sent.spans]
    return doc


def convert_file(
    input_path: Path | str,
    output_path: Path | str,
    *,
    spans_key: str = "sc",
    crossing: str = "drop",
    lang: str = "xx",
) -> Report:
    """Convert one JSONL file to a `.spacy` file and return the report."""
    import spacy
    from spacy.tokens import DocBin

    report = Report()
    vocab = spacy.blank(lang).vocab
    db = DocBin(attrs=["ORTH", "SPACY"], store_user_data=False)
    sentences = read_spans_jsonl(input_path, report, crossing)
    for sent in sentences:
        db.add(sentence_to_doc(sent, vocab, spans_key))
    output_path = Path(output_path)
    output_path.parent.mkdir(parents=True, exist_ok=True)
    db.to_disk(output_path)
    return report
