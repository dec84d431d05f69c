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


def _open(path: Path, mode: str) -> IO[str]:
    return gzip.open(path, mode + "t", encoding="utf8") if path.suffix == ".gz" else open(path, mode, encoding="utf8")


def split_docs(source: Path, rest: Path, held_out: Path, every: int, key: str = "doc_id") -> Tuple[int, int, int]:
    """Write the lines of the every-th, 2*every-th, ... document (counting
    documents in order of first appearance from 1, so the split does not
    depend on a seed) to `held_out` and the others to `rest`; a line
    without `key` is an error.

    RETURNS: (documents held out, lines held out, lines kept).
    """
    if every < 2:
        raise ValueError(f"--every must be at least 2, got {every}")
    for path in (rest, held_out):
        path.parent.mkdir(parents=True, exist_ok=True)
    order: dict = {}
    held = kept = 0
    with _open(source, "r") as f, _open(rest, "w") as out_rest, _open(held_out, "w") as out_held:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            doc = json.loads(line).get(key)
            if doc is None:
                raise ValueError(f"{source}, line {number}: no {key!r} to split by")
            index = order.setdefault(doc, len(order))
            if index % every == every - 1:
                out_held.write(line if line.endswith("\n") else line + "\n")
                held += 1
            else:
                out_rest.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    return len(order) // every, held, kept
