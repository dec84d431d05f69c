"""Split a JSONL corpus by document: every k-th document held out.

Used to test a claim about an annotation batch: a held-out slice of train
is of train's batch, so two systems trained on the rest and scored on it
compare as they would on data annotated like train (the GENIA Treebank's
dev is another batch; its README)."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import IO, Tuple

from spacy_struct.convert import open_text


def open_for_writing(path: Path) -> IO[str]:
    """UTF-8 text, gzipped when the name ends in .gz (as `open_text` reads it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return gzip.open(path, "wt", encoding="utf8") if path.suffix == ".gz" else open(path, "w", encoding="utf8")


def split_docs(source: Path, rest: Path, held_out: Path, every: int, key: str = "doc_id",
               fold: int = -1) -> Tuple[int, int, int]:
    """Write the lines of the every-th, 2*every-th, ... document (counting
    documents in order of first appearance from 1, so the split does not
    depend on a seed) to `held_out` and the others to `rest`; a line
    without `key` is an error.

    fold: which of the `every` folds to hold out, 0 .. every-1: the
        documents numbered fold+1, fold+1+every, ... (-1, the default: the
        last, every-1). Folds 0 .. every-1 hold out each document once, for
        cross-fold training (each fold scored by a model trained on the
        others).
    RETURNS: (documents held out, lines held out, lines kept).
    """
    if every < 2:
        raise ValueError(f"--every must be at least 2, got {every}")
    fold = every - 1 if fold == -1 else fold
    if not 0 <= fold < every:
        raise ValueError(f"--fold must be in 0 .. {every - 1} (or -1 for the last), got {fold}")
    order: dict = {}
    lines = [0, 0]  # kept, held out
    with open_text(source) as f, open_for_writing(rest) as out_rest, open_for_writing(held_out) as out_held:
        outputs = (out_rest, out_held)
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            doc = json.loads(line).get(key)
            if doc is None:
                raise ValueError(f"{source}, line {number}: no {key!r} to split by")
            is_held = order.setdefault(doc, len(order)) % every == fold
            outputs[is_held].write(line.rstrip("\n") + "\n")
            lines[is_held] += 1
    return (len(order) - fold + every - 1) // every, lines[1], lines[0]
