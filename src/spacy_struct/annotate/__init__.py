"""`python -m spacy_struct annotate PIPELINE INPUT OUTPUT`: any pipeline over
a corpus, on one machine or on Ray Data, into shards of DocBins and plain
JSON with a manifest (see output.py), resumable, bad records in an errors
file with their ids (records.py), progress in documents per second.
"""
from __future__ import annotations

import json
import sys
import time
from itertools import islice
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from spacy.tokens import Doc

from .engines import LocalEngine, RayEngine
from .output import Manifest, pipeline_info, shard_name, write_shard
from .records import BadRecord, Record, input_files, read_records

__all__ = ["annotate"]


def _shards(items, size: int) -> Iterator[Tuple[int, list]]:
    it = iter(items)
    index = 0
    while True:
        chunk = list(islice(it, size))
        if not chunk:
            return
        yield index, chunk
        index += 1


def annotate(pipeline: str, input_spec: str, output: Path, *, engine: str = "local", n_process: int = 1,
             workers: int = 2, batch_size: int = 64, address: Optional[str] = None, shard_size: int = 1000,
             max_chars: int = 100_000, code: Optional[str] = None, progress: bool = True) -> Dict[str, Any]:
    """Annotate every record of INPUT with the pipeline at PIPELINE into the
    folder OUTPUT; RETURNS the manifest's totals.

    engine: "local" (nlp.pipe on this machine, `n_process` processes) or
        "ray" (Ray Data, `workers` actors, a local Ray unless `address`).
    shard_size: records per shard (the unit of resuming and of writing).
    max_chars: longer texts go to the errors file.
    code: a Python file to import first (a pipeline's custom functions).
    """
    if engine not in ("local", "ray"):
        raise ValueError(f"annotate: --engine must be 'local' or 'ray', got {engine!r}")
    for key, value in (("n_process", n_process), ("workers", workers), ("batch_size", batch_size),
                       ("shard_size", shard_size), ("max_chars", max_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"annotate: --{key.replace('_', '-')} must be a positive integer, got {value!r}")
    files = input_files(input_spec)
    output.mkdir(parents=True, exist_ok=True)
    runner = (LocalEngine(pipeline, code, n_process, batch_size) if engine == "local"
              else RayEngine(pipeline, code, workers, batch_size, address))
    nlp = runner.nlp if engine == "local" else _load_for_writing(pipeline, code)
    settings = {"pipeline": pipeline_info(nlp, pipeline), "input": [str(f) for f in files],
                "shard_size": shard_size, "max_chars": max_chars}
    manifest = Manifest(output, settings)
    planned: Dict[int, List] = {}

    def todo() -> Iterator[Tuple[int, List[str]]]:
        for index, items in _shards(read_records(files, max_chars), shard_size):
            if manifest.done(shard_name(index)):
                continue
            planned[index] = items
            yield index, [item.text for item in items if isinstance(item, Record)]

    meter = _Progress(progress, skipped=sum(s["records"] for s in manifest.shards))
    for index, results in runner.run(todo()):
        items = planned.pop(index)
        rows, docs, errors = [], [], []
        annotated = iter(results)
        for item in items:
            if isinstance(item, BadRecord):
                errors.append({"id": item.id, "reason": item.reason})
                continue
            doc_bytes, text = next(annotated)
            if doc_bytes is None:
                errors.append({"id": item.id, "reason": text})
                continue
            docs.append(Doc(nlp.vocab).from_bytes(doc_bytes))
            rows.append({"id": item.id, **item.fields, "annotations": json.loads(text)})
        manifest.add(write_shard(output, shard_name(index), rows, docs, errors, len(items)))
        meter.update(len(items))
    manifest.save()
    runner.close()
    meter.close()
    return {"records": sum(s["records"] for s in manifest.shards), "docs": sum(s["docs"] for s in manifest.shards),
            "errors": sum(s["errors"] for s in manifest.shards), "shards": len(manifest.shards)}


def _load_for_writing(pipeline: str, code: Optional[str]):
    """The pipeline in the driver of a Ray run: its vocab reads the workers'
    docs back, its config identifies the run."""
    from .engines import load_pipeline

    return load_pipeline(pipeline, code)


class _Progress:
    """Documents done and documents per second on stderr."""

    def __init__(self, enabled: bool, skipped: int) -> None:
        self.enabled, self.done, self.start = enabled, 0, time.perf_counter()
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(unit="doc", desc="annotate", file=sys.stderr, dynamic_ncols=True)
            if skipped:
                self.bar.write(f"annotate: {skipped:,} records in finished shards are skipped")

    def update(self, n: int) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
