"""Constituency parsers and joint parse + entity models side by side on dev.

Systems are spaCy pipelines (LABEL=PIPELINE_DIR: joint_parser with or
without entities, or a pipeline of joint_parser and nested_ner) and SuPar's
CRF constituency parser (LABEL=supar:MODEL_FILE, run by its own `crf-con`
in the virtual environment the workflow made, `--supar-bin`). Every system
parses the same dev sentences with the gold tokens; every tree is scored by
the same function (`spacy_struct.joint_parser.evalb`, evalb with
COLLINS.prm, the reference's tags deciding what it deletes) and every
entity set by spaCy's span scorer (`score_nested_spans`).

When `SPACY_STRUCT_EVALB` names a C evalb binary, every system's predicted
trees are also written to a file and scored by it with COLLINS.prm, and
the bench stops unless its bracketing F equals ours (the check of the
scorer on full dev prediction files).

Speed: sentences per second of the prediction alone, single-threaded on
both sides (OPENBLAS_NUM_THREADS=1 for ours, `crf-con -t 1` for SuPar):
ours the best of `repeats` passes of `nlp.pipe`, SuPar's the figure its
`predict` logs for its own pass (model loading excluded on both sides).
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Optional, Sequence

from .systems import System, load_system, training_summary


def write_trees(spacy_file: Path, output: Path) -> int:
    """The gold trees of a .spacy file as PTB lines (with tags): what SuPar
    reads. RETURNS the number of trees."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_struct.annotations.trees import tree_of
    from spacy_struct.annotations.brackets import to_brackets

    nlp = spacy.blank("en")
    lines = []
    for doc in DocBin().from_disk(spacy_file).get_docs(nlp.vocab):
        lines.append(to_brackets(tree_of(doc, 0, len(doc)), [t.text for t in doc], [t.tag_ for t in doc]))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(line + "\n" for line in lines), encoding="utf8")
    return len(lines)


def _gold_docs(nlp, examples):
    from spacy.tokens import Doc

    return [Doc(nlp.vocab, words=[t.text for t in eg.reference],
                spaces=[bool(t.whitespace_) for t in eg.reference],
                sent_starts=[True] + [False] * (len(eg.reference) - 1)) for eg in examples]


COLLINS_PRM = ("DEBUG 0\nMAX_ERROR 10\nCUTOFF_LEN 40\nLABELED 1\n"
               + "".join(f"DELETE_LABEL {x}\n" for x in ["TOP", "-NONE-", ",", ":", "``", "''", "."])
               + "DELETE_LABEL_FOR_LENGTH -NONE-\nEQ_LABEL ADVP PRT\n")


def _score_trees(examples, predicted_constituents) -> dict:
    from spacy_struct.annotations.trees import brackets
    from spacy_struct.joint_parser.evalb import COLLINS, score_brackets

    triples = []
    for eg, test in zip(examples, predicted_constituents):
        gold = brackets(eg.reference)
        triples.append((gold, test, [t.tag_ or None for t in eg.reference]))
    counts = score_brackets(triples, COLLINS)
    scores = {"constituents_p": counts.precision, "constituents_r": counts.recall, "constituents_f": counts.f}
    if os.environ.get("SPACY_STRUCT_EVALB"):
        scores["evalb_f"] = _c_evalb(examples, triples, os.environ["SPACY_STRUCT_EVALB"])
        if f"{100 * scores['evalb_f']:.2f}" != f"{100 * counts.f:.2f}":
            raise RuntimeError(f"the C evalb gives F {100 * scores['evalb_f']:.2f}, ours {100 * counts.f:.2f}")
    return scores


def _c_evalb(examples, triples, binary: str) -> float:
    """Bracketing F of the C evalb (COLLINS.prm) on the same trees."""
    from spacy_struct.annotations.brackets import to_brackets, tree_from_constituents

    with tempfile.TemporaryDirectory() as tmp:
        files = {name: Path(tmp) / name for name in ("gold", "test", "COLLINS.prm")}
        files["COLLINS.prm"].write_text(COLLINS_PRM)
        for name, k in (("gold", 0), ("test", 1)):
            with open(files[name], "w", encoding="utf8") as f:
                for eg, triple in zip(examples, triples):
                    words, tags = [t.text for t in eg.reference], [t.tag_ for t in eg.reference]
                    f.write(to_brackets(tree_from_constituents(triple[k], len(words)), words, tags) + "\n")
        out = subprocess.run([binary, "-p", str(files["COLLINS.prm"]), str(files["gold"]), str(files["test"])],
                             capture_output=True, text=True, check=True).stdout
    summary = out[out.index("-- All --"):]
    return float(re.search(r"Bracketing FMeasure\s+=\s+([\d.]+)", summary).group(1)) / 100


def _run_pipeline(system: System, examples, repeats: int, spans_key: str) -> None:
    from spacy.training import Example

    from spacy_struct.annotations.trees import brackets
    from spacy_struct.pipeline.scoring import score_nested_spans

    nlp = system.nlp
    for _ in range(repeats):
        docs = _gold_docs(nlp, examples)
        start = time.perf_counter()
        parsed = list(nlp.pipe(docs, batch_size=256))
        system.best_time = min(system.best_time, time.perf_counter() - start)
    trees = [brackets(d) for d in parsed]
    system.scores = _score_trees(examples, trees)
    if any(spans_key in d.spans for d in parsed):
        pairs = [Example(d, eg.reference) for d, eg in zip(parsed, examples)]
        system.scores.update(score_nested_spans(pairs, spans_key=spans_key))
        system.entities = [{(s.start, s.end, s.label_) for s in d.spans.get(spans_key, [])} for d in parsed]
    system.scores["sents_per_second"] = len(examples) / system.best_time


def _run_supar(system: System, examples, dev: Path, supar_bin: Path) -> None:
    from spacy_struct.annotations.brackets import constituents, parse_brackets

    with tempfile.TemporaryDirectory() as tmp:
        gold_file, pred_file = Path(tmp) / "dev.pid", Path(tmp) / "pred.pid"
        write_trees(dev, gold_file)
        env = {**os.environ, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
        out = subprocess.run(
            [str(supar_bin), "predict", "-d", "-1", "-t", "1", "-p", str(system.path),
             "--data", str(gold_file), "--pred", str(pred_file)],
            capture_output=True, text=True, env=env,
        )
        if out.returncode != 0:
            raise RuntimeError(f"SuPar's predict failed:\n{out.stderr[-2000:]}")
        speed = re.findall(r"([\d.]+) Sents/s", out.stderr + out.stdout)
        lines = [line for line in pred_file.read_text(encoding="utf8").splitlines() if line.strip()]
    if len(lines) != len(examples):
        raise RuntimeError(f"SuPar predicted {len(lines)} trees for {len(examples)} sentences")
    parsed = [parse_brackets(line, f"SuPar tree {k}") for k, line in enumerate(lines)]
    for k, (tree, eg) in enumerate(zip(parsed, examples)):
        if tree.words != [t.text for t in eg.reference]:
            raise RuntimeError(f"SuPar's tree {k} is over other words than the reference's sentence {k}")
    trees = [constituents(tree.root) for tree in parsed]
    system.scores = _score_trees(examples, trees)
    system.scores["sents_per_second"] = float(speed[-1]) if speed else None


def evaluate(systems: Sequence[System], dev: Path, repeats: int = 3, spans_key: str = "sc",
             supar_bin: Optional[Path] = None):
    import spacy
    from spacy.training import Corpus

    examples = None
    for system in systems:
        if str(system.path).startswith("supar:"):
            continue
        load_system(system)
        if examples is None:
            examples = list(Corpus(dev, gold_preproc=True)(system.nlp))
    if examples is None:
        examples = list(Corpus(dev, gold_preproc=True)(spacy.blank("en")))
    for system in systems:
        if str(system.path).startswith("supar:"):
            system.path = Path(str(system.path)[len("supar:"):])
            _run_supar(system, examples, dev, supar_bin or Path(".venvs/supar/bin/crf-con"))
            system.path = Path("supar:" + str(system.path))
        else:
            _run_pipeline(system, examples, repeats, spans_key)
    return examples


#: how a gold entity sits in the gold tree (joint.join_entities), in table order
PLACES = (("constituents", "a phrase"), ("words", "a single word with no phrase"),
          ("runs", "a run of children of one node"),
          ("crossing", "crossing a bracket (cannot be a node)"))


def entity_places(examples, spans_key: str = "sc"):
    """The place of every gold entity: one dict per example, from (start,
    end, label) to a key of PLACES, each entity joined into the gold tree
    alone (so it is never left out for sharing its words with another)."""
    from spacy_struct.annotations.trees import tree_of
    from spacy_struct.annotations.joint import join_entities

    places = []
    for eg in examples:
        n = len(eg.reference)
        found = {}
        for span in eg.reference.spans.get(spans_key, []):
            entity = (span.start, span.end, span.label_)
            _, report = join_entities(tree_of(eg.reference, 0, n), n, [entity])
            found[entity] = next(key for key, _ in PLACES if getattr(report, key))
        places.append(found)
    return places


def format_places(systems: Sequence[System], examples, spans_key: str = "sc") -> str:
    """Entity recall of every system with entities, by where the gold
    entity sits in the gold tree."""
    with_entities = [s for s in systems if s.entities is not None]
    if not with_entities:
        return ""
    places = entity_places(examples, spans_key)
    lines = ["| gold entity is | gold entities | " + " | ".join(f"recall: {s.label}" for s in with_entities) + " |",
             "|---|---|" + "---|" * len(with_entities)]
    for key, text in PLACES:
        total = sum(1 for found in places for place in found.values() if place == key)
        cells = []
        for s in with_entities:
            hit = sum(1 for found, pred in zip(places, s.entities) for ent, place in found.items()
                      if place == key and ent in pred)
            cells.append(f"{100 * hit / total:.1f}" if total else "-")
        lines.append(f"| {text} | {total:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_table(systems: Sequence[System], examples, spans_key: str = "sc") -> str:
    """The table of parse and entity scores and speeds, then the one of
    entity recall by where the gold entity sits in the tree."""
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}"
    k = f"spans_{spans_key}"
    base = systems[0].scores.get("sents_per_second")
    lines = [
        "| system | parse P | parse R | parse F1 | entity P | entity R | entity F1 | sentences/s "
        "| speed vs first | training |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in systems:
        sc = s.scores
        speed = sc.get("sents_per_second")
        ratio = f"{speed / base:.2f}x" if speed and base else "-"
        lines.append(
            f"| {s.label} | {pct(sc['constituents_p'])} | {pct(sc['constituents_r'])} "
            f"| {pct(sc['constituents_f'])} | {pct(sc.get(f'{k}_p'))} | {pct(sc.get(f'{k}_r'))} "
            f"| {pct(sc.get(f'{k}_f'))} | {'-' if not speed else f'{speed:,.0f}'} | {ratio} "
            f"| {_training(s)} |"
        )
    checked = [f"{s.label} {100 * s.scores['evalb_f']:.2f}" for s in systems if "evalb_f" in s.scores]
    if checked:
        lines += ["", "The C evalb (COLLINS.prm) on the same predicted trees gives the same parse F1 "
                  "to two decimals: " + "; ".join(checked) + "."]
    places = format_places(systems, examples, spans_key)
    if places:
        lines += ["", "Entity recall by where the gold entity sits in the gold tree:", "", places]
    return "\n".join(lines)


def _training(system: System) -> str:
    if str(system.path).startswith("supar:"):
        log = Path(str(system.path)[len("supar:"):] + ".train.log")
        if not log.exists():
            return "-"
        text = log.read_text(encoding="utf8", errors="replace")
        epochs = re.findall(r"Epoch (\d+) / (\d+):", text)
        elapsed = re.findall(r"(\d+):(\d+):([\d.]+)s elapsed", text)
        done = f"{epochs[-1][0]} epochs" if epochs else "?"
        if elapsed:
            h, m, s = elapsed[-1]
            return f"{done}, {(int(h) * 3600 + int(m) * 60 + float(s)) / 60:.1f} min"
        return done
    return training_summary(system)
