"""Span taggers side by side (nested_ner, spancat): accuracy on dev and speed.

Every pipeline tags the same dev docs, either with the corpus's own tokens
(one sentence per doc; the default) or, with `--raw`, from each sentence's
raw text through the pipeline's own tokenizer (what `nlp(text)` gives),
scored through spaCy's alignment of its tokens to the gold tokens: a
predicted entity counts only where its boundaries fall on gold token
boundaries. Each system is scored by the same function (`score_nested_spans`: spaCy's
`Scorer.score_spans` with overlaps allowed, as spancat reports, plus recall
of outermost and of nested gold spans), so the figures of the two components
are computed identically. Speed: each pipeline tags the docs `repeats` times,
pipelines taking turns, and the best time counts.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from .systems import System, gold_token_docs, load_system, training_summary


def evaluate(systems: Sequence[System], dev: Path, spans_key: str = "sc", repeats: int = 3,
             batch_size: int = 256, raw: bool = False):
    from spacy.training import Corpus, Example

    from spacy_struct.pipeline.scoring import score_nested_spans

    for system in systems:
        load_system(system)
    examples = list(Corpus(dev, gold_preproc=True)(systems[0].nlp))
    n_words = sum(len(eg.reference) for eg in examples)
    for _ in range(repeats):
        for system in systems:
            if raw:
                docs = [system.nlp.make_doc(eg.reference.text) for eg in examples]
            else:
                docs = gold_token_docs(system, examples)
            start = time.perf_counter()
            tagged = list(system.nlp.pipe(docs, batch_size=batch_size))
            system.best_time = min(system.best_time, time.perf_counter() - start)
            if not system.scores:
                pairs = [Example(d, eg.reference) for d, eg in zip(tagged, examples)]
                system.scores = score_nested_spans(pairs, spans_key=spans_key)
    for system in systems:
        system.scores["words_per_second"] = n_words / system.best_time
    return n_words, len(examples)


def format_table(systems: Sequence[System], spans_key: str = "sc") -> str:
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}"
    k = f"spans_{spans_key}"
    base = systems[0].scores["words_per_second"]
    lines = [
        "| system | P | R | F1 | R outermost | R nested | words/s | speed vs first | training |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        sc = s.scores
        lines.append(
            f"| {s.label} | {pct(sc[f'{k}_p'])} | {pct(sc[f'{k}_r'])} | {pct(sc[f'{k}_f'])} "
            f"| {pct(sc[f'{k}_outer_r'])} | {pct(sc[f'{k}_inner_r'])} "
            f"| {sc['words_per_second']:,.0f} | {sc['words_per_second'] / base:.2f}x "
            f"| {training_summary(s)} |"
        )
    labels = sorted({label for s in systems for label in (s.scores.get(f"{k}_per_type") or {})})
    if labels:
        lines += ["", "F1 per type:", "",
                  "| system | " + " | ".join(labels) + " |",
                  "|---|" + "---|" * len(labels)]
        for s in systems:
            per = s.scores.get(f"{k}_per_type") or {}
            lines.append(f"| {s.label} | " + " | ".join(
                pct(per[label]["f"]) if label in per else "-" for label in labels) + " |")
    return "\n".join(lines)
