"""Span scores of nested_ner and joint_parser's entities: spaCy's, and
recall split by nesting.

- `spans_<key>_p/r/f` and `spans_<key>_per_type`: spaCy's
  `Scorer.score_spans` with `allow_overlap=True`, exactly what spancat
  reports, so the figures compare with it.
- `spans_<key>_outer_r`: recall of the gold spans that no other gold span
  contains; `spans_<key>_inner_r`: recall of those inside another gold span
  (a span sharing its range with a differently labeled one counts as outer).
  These need no model of nesting, so they score spancat's output too.
"""
from __future__ import annotations

from typing import Dict, Iterable

from spacy.scorer import Scorer
from spacy.training import Example


def nesting_recall(examples: Iterable[Example], spans_key: str) -> Dict[str, float | None]:
    """Recall of outermost gold spans and of gold spans inside another one."""
    found = {"outer": 0, "inner": 0}
    total = {"outer": 0, "inner": 0}
    for eg in examples:
        if spans_key not in eg.reference.spans:
            continue
        predicted = {
            (span.start, span.end, span.label_)
            for span in eg.get_aligned_spans_x2y(eg.predicted.spans.get(spans_key, []), allow_overlap=True)
        }
        gold = {(s.start, s.end, s.label_) for s in eg.reference.spans[spans_key]}
        ranges = {(s, e) for s, e, _ in gold}
        for s, e, label in gold:
            inner = any(s2 <= s and e <= e2 and (s2, e2) != (s, e) for s2, e2 in ranges)
            kind = "inner" if inner else "outer"
            total[kind] += 1
            found[kind] += (s, e, label) in predicted
    return {
        f"spans_{spans_key}_{kind}_r": (found[kind] / total[kind] if total[kind] else None)
        for kind in ("outer", "inner")
    }


def score_nested_spans(examples: Iterable[Example], spans_key: str = "sc", **kwargs) -> Dict[str, object]:
    """spaCy's span scores of `doc.spans[spans_key]` (overlaps allowed) and
    the recall of outer and inner gold spans (`nesting_recall`)."""
    examples = list(examples)
    attr = f"spans_{spans_key}"
    scores = Scorer.score_spans(
        examples,
        attr,
        getter=lambda doc, _attr: doc.spans.get(spans_key, []),
        has_annotation=lambda doc: spans_key in doc.spans,
        allow_overlap=True,
    )
    scores.update(nesting_recall(examples, spans_key))
    return scores
