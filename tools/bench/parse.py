"""Dependency parsers side by side: accuracy on dev and speed, in one run.

Two conditions:
- gold (default): every pipeline parses the same dev docs with the gold
  tokenization and the gold sentence boundaries (one sentence per doc, as
  `gold_preproc` reads them, marked as one sentence), which isolates the
  parsing itself;
- raw (`--raw`): every pipeline gets the dev documents' raw text, tokenizes
  it and finds the sentences itself, and is scored through spaCy's
  alignment of its tokens to the gold words (as `spacy evaluate` does):
  what a user gets from `nlp(text)`, sentence P/R/F included.

Each pipeline is scored by the same function
(`score_mst_parse`: spaCy's parser scores plus the CoNLL-2018 and
non-projective figures), so the numbers of spaCy's `parser` and of
`mst_parser` are computed identically. Speed: each pipeline parses the docs
`repeats` times, pipelines taking turns, and the best time counts, so a
background hiccup hurts no one system. Training time comes from the
`training_time.json` that `python -m tools.bench train` writes.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from .systems import System, load_system, training_summary


def _dev_examples(nlp, dev: Path, raw: bool):
    from spacy.training import Corpus

    return list(Corpus(dev, gold_preproc=not raw)(nlp))


def _fresh_docs(system: System, examples, raw: bool):
    """The docs this system parses, made with its own vocab (its string store
    must know every label its parser writes): raw text through its own
    tokenizer, or the gold words with the gold sentence marked."""
    from spacy.tokens import Doc

    vocab = system.nlp.vocab
    if raw:
        return [system.nlp.make_doc(eg.reference.text) for eg in examples]
    docs = [Doc(vocab, words=[t.text for t in eg.predicted],
                spaces=[bool(t.whitespace_) for t in eg.predicted],
                sent_starts=[True] + [False] * (len(eg.predicted) - 1)) for eg in examples]
    if system.gold_tags:
        for doc, eg in zip(docs, examples):
            for token, tag, pos in zip(doc, eg.get_aligned("TAG", as_string=True),
                                       eg.get_aligned("POS", as_string=True)):
                token.tag_ = tag or ""
                if pos:
                    token.pos_ = pos
    return docs


def evaluate(systems: Sequence[System], dev: Path, repeats: int = 3, batch_size: int = 256,
             raw: bool = False):
    from spacy.training import Example

    from spacy_struct.mst_parser.scoring import score_mst_parse, sentence_heads
    from spacy_struct.structs import crossing_arcs

    for system in systems:
        components = {name: dict(v) for name, v in system.config.get("components", {}).items()}
        if system.decoder:
            components.setdefault("mst_parser", {})["decoder"] = system.decoder
        load_system(system, {"components": components} if components else {})
    examples = _dev_examples(systems[0].nlp, dev, raw)
    n_words = sum(len(eg.reference) for eg in examples)
    for _ in range(repeats):
        for system in systems:
            docs = _fresh_docs(system, examples, raw)
            start = time.perf_counter()
            parsed = list(system.nlp.pipe(docs, batch_size=batch_size))
            system.best_time = min(system.best_time, time.perf_counter() - start)
            if not system.scores:
                # rebuild the examples against this system's vocab
                pairs = [Example(p, eg.reference) for p, eg in zip(parsed, examples)]
                system.scores = score_mst_parse(pairs)
                flags = [bool(crossing_arcs(heads).any())
                         for doc in parsed for _, heads in sentence_heads(doc)]
                system.nonproj_sents = sum(flags) / max(1, len(flags))
                if not raw:
                    system.arcs = [([t.head.i for t in doc], [t.dep_.lower() for t in doc]) for doc in parsed]
    for system in systems:
        system.scores["words_per_second"] = n_words / system.best_time
    if not raw:
        shared_head_label_accuracy(systems, examples)
    return n_words, len(examples)


def shared_head_label_accuracy(systems: Sequence[System], examples) -> None:
    """Each system's label accuracy on the words whose head every system got
    right (gold words: token i is word i): the labelers compared on the same
    words, which LAS mixes with attachment. Sets scores["shared_label_acc"]
    and scores["shared_heads"] (how many words that is)."""
    total = 0
    correct = [0] * len(systems)
    for d, eg in enumerate(examples):
        for i, gold in enumerate(eg.reference):
            if not all(s.arcs[d][0][i] == gold.head.i for s in systems):
                continue
            total += 1
            for k, s in enumerate(systems):
                correct[k] += s.arcs[d][1][i] == gold.dep_.lower()
    for k, s in enumerate(systems):
        s.scores["shared_label_acc"] = correct[k] / total if total else None
        s.scores["shared_heads"] = total


def format_table(systems: Sequence[System], raw: bool = False) -> str:
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}"
    base = systems[0].scores["words_per_second"]
    sents = "sents P | R | F | " if raw else ""
    shared = "" if raw else "labels right where every system has the head | "
    lines = [
        f"| system | {sents}UAS | LAS | {shared}CoNLL UAS | CoNLL LAS | non-proj. arcs P | R | sents with non-proj. arc | words/s | speed vs first | training |",
        "|---|" + "---|" * (13 if raw else 11),
    ]
    for s in systems:
        sc = s.scores
        found = (f"{pct(sc['sents_p'])} | {pct(sc['sents_r'])} | {pct(sc['sents_f'])} | "
                 if raw else "")
        label_acc = "" if raw else f"{pct(sc.get('shared_label_acc'))} | "
        lines.append(
            f"| {s.label} | {found}{pct(sc['dep_uas'])} | {pct(sc['dep_las'])} | {label_acc}{pct(sc['dep_conll_uas'])} "
            f"| {pct(sc['dep_conll_las'])} | {pct(sc['dep_nonproj_p'])} | {pct(sc['dep_nonproj_r'])} "
            f"| {pct(s.nonproj_sents)}% | {sc['words_per_second']:,.0f} "
            f"| {sc['words_per_second'] / base:.2f}x | {training_summary(s)} |"
        )
    summary = seed_summary(systems)
    return "\n".join(lines) + (f"\n\n{summary}" if summary else "")


SEED_MARK = ", seed "


def seed_summary(systems: Sequence[System]) -> str:
    """Systems labelled "NAME, seed K" grouped by NAME: the mean of their
    UAS and LAS with the range over the seeds, so a margin can be read
    against the seed noise. Empty when no system has a seed in its label."""
    groups: dict = {}
    for s in systems:
        name, mark, _ = s.label.rpartition(SEED_MARK)
        if mark:
            groups.setdefault(name, []).append(s.scores)
    if not groups:
        return ""

    def spread(values) -> str:
        values = [100 * v for v in values]
        return f"{sum(values) / len(values):.2f} ({min(values):.1f} to {max(values):.1f})"

    lines = ["| system | seeds | UAS: mean (range) | LAS: mean (range) |", "|---|---|---|---|"]
    for name, scores in groups.items():
        lines.append(f"| {name} | {len(scores)} | {spread([sc['dep_uas'] for sc in scores])} "
                     f"| {spread([sc['dep_las'] for sc in scores])} |")
    return "\n".join(lines)
