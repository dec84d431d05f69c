"""`python -m spacy_struct annotate PIPELINE INPUT OUTPUT`: any pipeline over
a corpus, on one machine or on Ray Data, into shards of DocBins and plain
JSON with a manifest (see output.py), resumable, bad records in an errors
file with their ids (records.py), progress in documents per second.
"""
from __future__ import annotations

import sys
from itertools import islice
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Tuple, Union

from .engines import LocalEngine, RayEngine
from .output import Manifest, pipeline_info, shard_name
from .records import input_files, raw_lines

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


def annotate(pipeline: str, input_spec: str, output: Union[str, Path], *, engine: str = "local", n_process: int = 1,
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
    output = Path(output)
    files = input_files(input_spec)
    settings = {"pipeline": pipeline_info(pipeline), "input": [str(f) for f in files],
                "shard_size": shard_size, "max_chars": max_chars}
    output.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(output, settings)
    runner = (LocalEngine(pipeline, code, output, n_process, batch_size, max_chars) if engine == "local"
              else RayEngine(pipeline, code, output, workers, batch_size, max_chars, address))

    def todo() -> Iterator[Tuple[int, list]]:
        for index, lines in _shards(raw_lines(files), shard_size):
            if not manifest.done(shard_name(index)):
                yield index, lines

    try:
        meter = _Progress(progress, skipped=sum(s["records"] for s in manifest.shards))
        entries = runner.run(todo())
        try:
            for entry in entries:
                manifest.add(entry)  # saved at once: a run stopped later keeps this shard
                meter.update(entry["records"])
        finally:
            entries.close()  # the engine's iteration ends before the engine does
            meter.close()
    finally:
        runner.close()
    manifest.save()
    return manifest.totals()


class _Progress:
    """Documents done and documents per second on stderr."""

    def __init__(self, enabled: bool, skipped: int) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(unit="doc", desc="annotate", file=sys.stderr, dynamic_ncols=True)
            if skipped:
                self.bar.write(f"annotate: {skipped:,} records in finished shards are skipped")

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
