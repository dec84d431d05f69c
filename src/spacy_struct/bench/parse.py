"""Dependency parsers side by side: accuracy on dev and speed, in one run.

Every pipeline parses the same dev docs (gold tokenization, one sentence per
doc, as `gold_preproc` reads them) and is scored by the same function
(`score_mst_parse`: spaCy's parser scores plus the CoNLL-2018 and
non-projective figures), so the numbers of spaCy's `parser` and of
`mst_parser` are computed identically. Speed: each pipeline parses the docs
`repeats` times, pipelines taking turns, and the best time counts, so a
background hiccup hurts no one system. Training time comes from the
`training_time.json` that `python -m spacy_struct.bench train` writes.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence



@dataclass
class System:
    label: str
    path: Path
    decoder: Optional[str] = None
    gold_tags: bool = False
    nlp: object = None
    scores: Dict[str, object] = field(default_factory=dict)
    best_time: float = float("inf")
    nonproj_sents: float = 0.0


def parse_spec(spec: str) -> System:
    """LABEL=PATH[,decoder=cle|eisner][,gold_tags]"""
    label, _, rest = spec.partition("=")
    if not rest:
        raise ValueError(f"expected LABEL=PATH[,decoder=...][,gold_tags], got {spec!r}")
    path, *options = rest.split(",")
    if not Path(path).is_dir():
        raise ValueError(f"no pipeline directory {path!r} in {spec!r} (a label cannot contain '=')")
    system = System(label, Path(path))
    for option in options:
        key, _, value = option.partition("=")
        if key == "decoder":
            system.decoder = value
        elif key == "gold_tags":
            system.gold_tags = True
        else:
            raise ValueError(f"unknown option {option!r} in {spec!r}")
    return system


def timed_train(config: Path, output: Path, overrides: Dict[str, object]) -> Dict[str, float]:
    """`spacy train` with its wall-clock time saved next to the pipelines."""
    from spacy.cli.train import train

    start = time.perf_counter()
    train(config, output, overrides=overrides)
    seconds = time.perf_counter() - start
    meta = json.loads((output / "model-last" / "meta.json").read_text())
    from spacy.util import load_config

    cfg = load_config(config, overrides=overrides)
    info = {"seconds": seconds, "max_epochs": cfg["training"]["max_epochs"],
            "max_steps": cfg["training"]["max_steps"], "pipeline": meta.get("pipeline", [])}
    (output / "training_time.json").write_text(json.dumps(info, indent=2))
    return info


def _dev_examples(nlp, dev: Path):
    from spacy.training import Corpus

    return list(Corpus(dev, gold_preproc=True)(nlp))


def _fresh_docs(system: System, examples):
    """The examples' words as docs of this system's own vocab (its string store
    must know every label its parser writes)."""
    from spacy.tokens import Doc

    vocab = system.nlp.vocab
    docs = [Doc(vocab, words=[t.text for t in eg.predicted],
                spaces=[bool(t.whitespace_) for t in eg.predicted]) for eg in examples]
    if system.gold_tags:
        for doc, eg in zip(docs, examples):
            for token, tag, pos in zip(doc, eg.get_aligned("TAG", as_string=True),
                                       eg.get_aligned("POS", as_string=True)):
                token.tag_ = tag or ""
                if pos:
                    token.pos_ = pos
    return docs


def evaluate(systems: Sequence[System], dev: Path, repeats: int = 3, batch_size: int = 256):
    import spacy
    from spacy.training import Example

    from ..mst_parser.scoring import crossing_arcs, score_mst_parse, sentence_heads

    for system in systems:
        system.nlp = spacy.load(system.path)
        if system.decoder:
            system.nlp.get_pipe("mst_parser").cfg["decoder"] = system.decoder
    examples = _dev_examples(systems[0].nlp, dev)
    n_words = sum(len(eg.predicted) for eg in examples)
    for _ in range(repeats):
        for system in systems:
            docs = _fresh_docs(system, examples)
            start = time.perf_counter()
            parsed = list(system.nlp.pipe(docs, batch_size=batch_size))
            system.best_time = min(system.best_time, time.perf_counter() - start)
            if not system.scores:
                # rebuild the examples against this system's vocab
                pairs = [Example(p, eg.reference) for p, eg in zip(parsed, examples)]
                system.scores = score_mst_parse(pairs)
                nonproj = sum(bool(crossing_arcs(heads).any())
                              for doc in parsed for _, heads in sentence_heads(doc))
                system.nonproj_sents = nonproj / len(parsed)
    for system in systems:
        system.scores["words_per_second"] = n_words / system.best_time
    return n_words, len(examples)


def _training(system: System) -> str:
    info_path = system.path.parent / "training_time.json"
    if system.decoder and system.decoder != "cle" and "decoder" not in str(system.path):
        return "(decoding only)"
    if not info_path.exists():
        return "-"
    info = json.loads(info_path.read_text())
    epochs = info.get("max_epochs") or 0
    total = info["seconds"] / 60
    if epochs:
        return f"{epochs} epochs, {total:.1f} min ({info['seconds'] / epochs:.0f} s/epoch)"
    return f"{info.get('max_steps')} steps, {total:.1f} min"


def format_table(systems: Sequence[System]) -> str:
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}"
    base = systems[0].scores["words_per_second"]
    lines = [
        "| system | UAS | LAS | CoNLL UAS | CoNLL LAS | non-proj. arcs P | R | sents with non-proj. arc | words/s | speed vs first | training |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        sc = s.scores
        lines.append(
            f"| {s.label} | {pct(sc['dep_uas'])} | {pct(sc['dep_las'])} | {pct(sc['dep_conll_uas'])} "
            f"| {pct(sc['dep_conll_las'])} | {pct(sc['dep_nonproj_p'])} | {pct(sc['dep_nonproj_r'])} "
            f"| {pct(s.nonproj_sents)}% | {sc['words_per_second']:,.0f} "
            f"| {sc['words_per_second'] / base:.2f}x | {_training(s)} |"
        )
    return "\n".join(lines)
