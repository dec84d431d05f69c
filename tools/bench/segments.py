"""Segmenters side by side (overlap_segmenter, nested_ner, spancat, the
coordination rule): accuracy on dev and speed.

Every pipeline tags the same dev docs with the corpus's own tokens (one
sentence per doc, read whole by `spacy_struct.SentenceDocs.v1`) and each is
scored by the same function, `score_segments`: exact match of (label,
fragments) overall, per type, on the discontinuous and crossing subsets and
on the contiguous part, plus spaCy's span scores of `doc.spans[key]`. A
system without `doc._.segments` (spancat, nested_ner) is read from the
spans its component writes (its own `spans_key`), each a one-fragment
segment: the most it can represent; with `coordination_rule` the rule's
discontinuous mentions over those spans are added (and timed). Speed: each pipeline tags
the docs `repeats` times, pipelines taking turns, and the best time counts.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from .systems import System, gold_token_docs, load_system, training_summary

#: where a span tagger's segments with the coordination rule's are kept on a tagged doc
RULE_KEY = "bench_rule_segments"

#: a gap holding one of these words is a coordination's ("human and mouse CD19 genes")
GAP_COORDINATORS = frozenset({"and", "or", "and/or", "nor", "but", ",", "/", "versus", "vs", "vs."})
#: the kinds of gap the discontinuous figures are broken down by
GAP_KINDS = ("coordination, gap 1-2", "coordination, gap 3+", "other gap")


def gap_kind(words, fragments) -> str:
    """A discontinuous segment's kind of gap: whether the words it skips hold
    a coordinator, and how many they are."""
    skipped = [words[i].lower() for (_, e), (s, _) in zip(fragments, fragments[1:]) for i in range(e, s)]
    if not GAP_COORDINATORS & set(skipped):
        return "other gap"
    return "coordination, gap 1-2" if len(skipped) <= 2 else "coordination, gap 3+"


def gap_kind_counts(pairs, reader):
    """{kind: [found, predicted, gold]} of the discontinuous segments, each
    predicted one by its own gap, each gold one by its own."""
    from spacy_struct.overlap_segmenter import get_segments

    counts = {kind: [0, 0, 0] for kind in GAP_KINDS}
    for eg in pairs:
        words = [t.text for t in eg.reference]
        gold = {(s.label_, tuple(s.offsets)) for s in get_segments(eg.reference) if s.is_discontinuous}
        # the bench tags the gold words, so predicted offsets are reference offsets
        predicted = {(s.label_, tuple(s.offsets)) for s in reader(eg.predicted) if len(s.offsets) > 1}
        for key in predicted:
            kind = counts[gap_kind(words, key[1])]
            kind[1] += 1
            kind[0] += key in gold
        for key in gold:
            counts[gap_kind(words, key[1])][2] += 1
    return counts


def segment_reader(system: System, default_key: str):
    """How the system's segments are read from a tagged doc: doc._.segments
    for overlap_segmenter; otherwise the spans its component writes (under
    its own spans_key), each a one-fragment segment, with the coordination
    rule's mentions added when the system asks for them.

    RETURNS: (reader: doc -> segments, prepare: called on each tagged doc
        before reading, inside the timed run).
    """
    from spacy_struct.overlap_segmenter import Segment, get_segments

    from .coordination import coordinated

    nlp = system.nlp
    if "overlap_segmenter" in nlp.pipe_names:
        if system.coordination_rule:
            raise ValueError(f"{system.label}: coordination_rule adds to a span tagger's spans; "
                             f"this pipeline has an overlap_segmenter")
        return get_segments, lambda doc: None
    key = next((pipe.cfg["spans_key"] for _, pipe in nlp.pipeline
                if isinstance(getattr(pipe, "cfg", None), dict) and "spans_key" in pipe.cfg), default_key)

    def from_spans(doc):
        return [Segment(doc, s.label_, ((s.start, s.end),)) for s in doc.spans.get(key, [])]

    if not system.coordination_rule:
        return from_spans, lambda doc: None

    def add_rule(doc):
        found = from_spans(doc)
        spans = [(seg.start, seg.end, seg.label_) for seg in found]
        words = [t.text for t in doc]
        doc.user_data[RULE_KEY] = found + [Segment(doc, label, frags) for label, frags in coordinated(words, spans)]

    return (lambda doc: doc.user_data[RULE_KEY]), add_rule


def evaluate(systems: Sequence[System], dev: Path, spans_key: str = "sc", repeats: int = 3,
             batch_size: int = 256):
    from spacy.training import Example

    from spacy_struct.corpus import SentenceDocs
    from spacy_struct.overlap_segmenter import score_segments

    readers = []
    for system in systems:
        load_system(system, system.config)
        readers.append(segment_reader(system, spans_key))
    examples = list(SentenceDocs(dev, gold_preproc=True)(systems[0].nlp))
    n_words = sum(len(eg.reference) for eg in examples)
    for _ in range(repeats):
        for system, (reader, prepare) in zip(systems, readers):
            docs = gold_token_docs(system, examples)
            start = time.perf_counter()
            tagged = list(system.nlp.pipe(docs, batch_size=batch_size))
            for doc in tagged:
                prepare(doc)
            system.best_time = min(system.best_time, time.perf_counter() - start)
            if not system.scores:
                pairs = [Example(d, eg.reference) for d, eg in zip(tagged, examples)]
                system.scores = score_segments(pairs, spans_key=spans_key, predicted_segments=reader)
                system.scores["gap_kinds"] = gap_kind_counts(pairs, reader)
    for system in systems:
        system.scores["words_per_second"] = n_words / system.best_time
    return n_words, len(examples)


def format_table(systems: Sequence[System], spans_key: str = "sc") -> str:
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}"
    base = systems[0].scores["words_per_second"]
    lines = [
        "| system | P | R | F1 | discontinuous P / R / F1 | crossing F1 | contiguous F1 "
        f"| spaCy spans_{spans_key}_f | words/s | speed vs first | training |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        sc = s.scores
        lines.append(
            f"| {s.label} | {pct(sc['segments_p'])} | {pct(sc['segments_r'])} | {pct(sc['segments_f'])} "
            f"| {pct(sc['segments_discontinuous_p'])} / {pct(sc['segments_discontinuous_r'])} / "
            f"{pct(sc['segments_discontinuous_f'])} | {pct(sc['segments_crossing_f'])} "
            f"| {pct(sc['segments_contiguous_f'])} | {pct(sc.get(f'spans_{spans_key}_f'))} "
            f"| {sc['words_per_second']:,.0f} | {sc['words_per_second'] / base:.2f}x "
            f"| {training_summary(s)} |"
        )
    labels = sorted({label for s in systems for label in (s.scores.get("segments_per_type") or {})})
    if labels:
        lines += ["", "F1 per type:", "",
                  "| system | " + " | ".join(labels) + " |",
                  "|---|" + "---|" * len(labels)]
        for s in systems:
            per = s.scores.get("segments_per_type") or {}
            lines.append(f"| {s.label} | " + " | ".join(
                pct(per[label]["f"]) if label in per else "-" for label in labels) + " |")
    gold_counts = systems[0].scores["gap_kinds"]
    lines += ["", "Discontinuous P / R / F1 by kind of gap (a coordinator among the skipped words or not; "
              "how many are skipped), each predicted segment by its own gap:", "",
              "| system | " + " | ".join(f"{kind} ({gold_counts[kind][2]} gold)" for kind in GAP_KINDS) + " |",
              "|---|" + "---|" * len(GAP_KINDS)]
    for s in systems:
        cells = []
        for kind in GAP_KINDS:
            found, predicted, gold = s.scores["gap_kinds"][kind]
            p = found / predicted if predicted else None
            r = found / gold if gold else None
            f = 2 * found / (predicted + gold) if predicted + gold else None
            cells.append(f"{pct(p)} / {pct(r)} / {pct(f)}")
        lines.append(f"| {s.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
