"""Who annotates a shard: this machine (`nlp.pipe`, the default) or Ray
Data's actors (`--engine ray`, an optional extra).

A shard is the unit of work. Whoever annotates it also writes its files
(`output.write_shard`, atomically) and returns its manifest entry, so the
driver only plans shards and records the finished ones: with Ray the
serializing is spread over the workers too, and a worker that dies is
restarted and its shard done again from the start, written once.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple

from ..annotations import doc_to_json
from .output import msgpack_codecs_looked_up_once, shard_name, write_shard
from .records import BadRecord, RawLine, Record, parse_line

#: a shard to annotate: (its index, its input lines, unparsed)
Shard = Tuple[int, List[RawLine]]


def import_code(path: Optional[str]) -> None:
    """Import a Python file that registers a pipeline's custom functions
    (spaCy's `--code`), before the pipeline is loaded."""
    if not path:
        return
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"annotate: cannot import --code {path!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)


def load_pipeline(path: str, code: Optional[str] = None):
    import spacy

    import_code(code)
    return spacy.load(path)


def annotate_docs(nlp, texts: List[str], batch_size: int, n_process: int = 1) -> List[Any]:
    """Every text through the pipeline: its doc, or the error (a string)
    where the pipeline fails on it. A batch that fails is run text by text,
    so only the failing texts are errors."""
    try:
        return list(nlp.pipe(texts, batch_size=batch_size, n_process=n_process))
    except Exception:  # found out below, text by text
        pass
    out: List[Any] = []
    for text in texts:
        try:
            out.append(nlp(text))
        except Exception as err:  # reported per record, the run goes on
            out.append(f"the pipeline failed: {type(err).__name__}: {err}")
    return out


def annotate_shard(nlp, folder: Path, index: int, lines: List[RawLine], batch_size: int, max_chars: int,
                   n_process: int = 1) -> Dict[str, Any]:
    """Parse and annotate one shard's input lines and write its files;
    RETURNS its manifest entry."""
    items = [parse_line(line, max_chars) for line in lines]
    records = [item for item in items if isinstance(item, Record)]
    with msgpack_codecs_looked_up_once():  # n_process > 1 sends each doc between processes packed
        results = iter(annotate_docs(nlp, [r.text for r in records], batch_size, n_process))
    rows, docs, errors = [], [], []
    for item in items:
        if isinstance(item, BadRecord):
            errors.append({"id": item.id, "reason": item.reason})
            continue
        result = next(results)
        if isinstance(result, str):
            errors.append({"id": item.id, "reason": result})
            continue
        docs.append(result)
        rows.append({"id": item.id, **item.fields, "annotations": doc_to_json(result)})
    return write_shard(folder, shard_name(index), rows, docs, errors, len(items))


class LocalEngine:
    """One machine: `nlp.pipe` in this process, or in `n_process` processes."""

    def __init__(self, path: str, code: Optional[str], folder: Path, n_process: int, batch_size: int,
                 max_chars: int) -> None:
        self.nlp = load_pipeline(path, code)
        self.folder, self.n_process, self.batch_size, self.max_chars = folder, n_process, batch_size, max_chars

    def run(self, shards: Iterable[Shard]) -> Iterator[Dict[str, Any]]:
        """Annotate and write each shard in order; yield its manifest entry."""
        for index, lines in shards:
            yield annotate_shard(self.nlp, self.folder, index, lines, self.batch_size, self.max_chars,
                                 self.n_process)

    def close(self) -> None:
        """Nothing to stop: the pipeline goes with the engine."""


#: each actor has one CPU: its BLAS must not start a thread per core
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


@contextmanager
def one_thread_environment() -> Iterator[None]:
    """ONE_THREAD in this process's environment while a local Ray starts, so
    its processes (and the actors' workers) inherit it, then the environment
    as it was. A runtime_env with the same variables would make Ray start
    new workers for the job instead of using the ones it has just started:
    about 1.5 s more before the actors are ready, on this 2-core machine."""
    saved = {name: os.environ.get(name) for name in ONE_THREAD}
    os.environ.update(ONE_THREAD)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _pack(lines: List[RawLine]) -> Dict[str, Any]:
    """A shard's lines as two columns: where each comes from (JSON), and
    their bytes joined by newlines (a line holds none)."""
    return {"where": json.dumps([[name, number, jsonl] for name, number, jsonl, _ in lines]),
            "data": b"\n".join(raw for *_, raw in lines)}


def _unpack(where: str, data: bytes) -> List[RawLine]:
    return [(name, number, jsonl, raw) for (name, number, jsonl), raw in zip(json.loads(where), data.split(b"\n"))]


#: a window (one dataset, one pool of actors) holds at least this many
#: shards per worker and this many bytes of input, unless the input ends ...
WINDOW_SHARDS_PER_WORKER = 16
WINDOW_MIN_BYTES = 16 * 2**20
#: ... and at most this many bytes, the input the driver holds at once
WINDOW_MAX_BYTES = 512 * 2**20


def windows(shards: Iterable[Shard], workers: int, shards_per_worker: int = WINDOW_SHARDS_PER_WORKER,
            min_bytes: int = WINDOW_MIN_BYTES, max_bytes: int = WINDOW_MAX_BYTES) -> Iterator[List[Shard]]:
    """The shards in windows, each run as one Ray dataset by one pool of
    actors. Each window costs the actors' start (loading the pipeline) and
    a tail (actors idle while the last shards finish), so a window is
    large: `shards_per_worker` shards per worker and `min_bytes` of input
    (a small run is one window, whatever the number of workers), but at
    most `max_bytes`, which the driver holds in memory.

    shards: (index, lines) in input order.
    RETURNS: lists of shards, in the same order.
    """
    pending: List[Shard] = []
    size = 0
    for shard in shards:
        pending.append(shard)
        size += sum(len(raw) for *_, raw in shard[1])
        if (len(pending) >= shards_per_worker * workers and size >= min_bytes) or size >= max_bytes:
            yield pending
            pending, size = [], 0
    if pending:
        yield pending


class ShardAnnotator:
    """Ray Data's callable class: each actor loads the pipeline once, from
    its path (a pipeline object is never shipped through the object store),
    and annotates and writes whole shards."""

    def __init__(self, path: str, code: Optional[str], folder: str, batch_size: int, max_chars: int) -> None:
        self.nlp = load_pipeline(path, code)
        self.folder, self.batch_size, self.max_chars = Path(folder), batch_size, max_chars

    def __call__(self, batch: Dict[str, Any]) -> Dict[str, list]:
        entries = []
        for index, where, data in zip(batch["shard"], batch["where"], batch["data"]):
            lines = _unpack(str(where), bytes(data))
            entry = annotate_shard(self.nlp, self.folder, int(index), lines, self.batch_size, self.max_chars)
            entries.append(json.dumps(entry))
        return {"entry": entries}


class RayEngine:
    """Ray Data: windows of shards as datasets of one row per shard,
    `map_batches` of one shard per call over a pool of `workers` actors
    (one CPU each), each given its next shard when it has finished the one
    before. A dead actor is restarted and its shard run again."""

    def __init__(self, path: str, code: Optional[str], folder: Path, workers: int, batch_size: int,
                 max_chars: int, address: Optional[str]) -> None:
        try:
            import ray
        except ImportError:
            raise ValueError('annotate: --engine ray needs Ray: pip install "spacy_struct[ray]"') from None
        self.ray = ray
        #: whether this engine calls ray.init (a local Ray, or joining a cluster by address),
        #: which `close` ends; a Ray the caller had started is left as it is
        self.initialized_here = not ray.is_initialized()
        if self.initialized_here:
            options = dict(include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
            if address:
                # a cluster's workers do not inherit this process's environment
                ray.init(address=address, runtime_env={"env_vars": dict(ONE_THREAD)}, **options)
            else:
                with one_thread_environment():
                    ray.init(num_cpus=workers, **options)
        try:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            if cpus < workers:
                warnings.warn(f"annotate: the Ray cluster has {cpus} CPU{'s' * (cpus != 1)} now, so at most "
                              f"{cpus} of the {workers} workers (one CPU each) run at a time; give the cluster "
                              f"more CPUs or ask for fewer workers", stacklevel=3)
            logging.getLogger("ray.data").setLevel(logging.WARNING)  # its per-dataset INFO lines
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False
        except BaseException:
            self.close()
            raise
        self.path, self.code, self.folder = path, code, folder
        self.workers, self.batch_size, self.max_chars = workers, batch_size, max_chars

    def run(self, shards: Iterable[Shard]) -> Iterator[Dict[str, Any]]:
        for window in windows(shards, self.workers):
            yield from self._run_window(window)

    def close(self) -> None:
        """End what this engine's ray.init began: stop the local Ray it
        started, so that a later run in the same process starts one with
        its own number of CPUs, or disconnect from the cluster it joined
        (which keeps running). A Ray the caller started is left running."""
        if self.initialized_here and self.ray.is_initialized():
            self.ray.shutdown()

    def _run_window(self, shards: List[Shard]) -> Iterator[Dict[str, Any]]:
        rows = [{"shard": index, **_pack(lines)} for index, lines in shards]
        dataset = self.ray.data.from_items(rows, override_num_blocks=len(rows))
        annotated = dataset.map_batches(
            ShardAnnotator,
            fn_constructor_kwargs={"path": self.path, "code": self.code, "folder": str(self.folder),
                                   "batch_size": self.batch_size, "max_chars": self.max_chars},
            # one shard in flight per actor: only an idle actor is given a shard, so no
            # shard waits in a busy actor's queue while another actor is idle
            batch_size=1, compute=self.ray.data.ActorPoolStrategy(size=min(self.workers, len(rows)),
                                                                  max_tasks_in_flight_per_actor=1),
            num_cpus=1, max_restarts=-1, max_task_retries=-1,  # a dead actor is restarted, its shard redone
        )
        for row in annotated.iter_rows():
            yield json.loads(row["entry"])
