"""How records become annotated docs: on this machine (`nlp.pipe`, the
default) or on Ray Data (`--engine ray`, an optional extra).

Both return, per record, the doc's bytes and its plain-JSON annotations, or
an error (the pipeline failed on that record: it goes to the errors file
and the run goes on).
"""
from __future__ import annotations

import importlib.util
import json
import logging
import sys
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..annotations import doc_to_json, register_extensions

#: (doc bytes, its annotations as JSON text) or (None, the error)
Result = Tuple[Optional[bytes], str]


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
    register_extensions()
    return spacy.load(path)


def _result(doc) -> Result:
    return doc.to_bytes(), json.dumps(doc_to_json(doc), ensure_ascii=False)


def annotate_texts(nlp, texts: Sequence[str], batch_size: int, n_process: int = 1) -> List[Result]:
    """Every text through the pipeline; where the pipeline fails on a batch,
    its texts are run one by one, so only the failing ones are errors."""
    try:
        return [_result(doc) for doc in nlp.pipe(texts, batch_size=batch_size, n_process=n_process)]
    except Exception:  # found out below, text by text
        pass
    out: List[Result] = []
    for text in texts:
        try:
            out.append(_result(nlp(text)))
        except Exception as err:  # reported per record, the run goes on
            out.append((None, f"the pipeline failed: {type(err).__name__}: {err}"))
    return out


class LocalEngine:
    """One machine: `nlp.pipe` in this process, or in `n_process` processes."""

    name = "local"

    def __init__(self, path: str, code: Optional[str], n_process: int, batch_size: int) -> None:
        self.nlp = load_pipeline(path, code)
        self.n_process, self.batch_size = n_process, batch_size

    def run(self, shards: Iterable[Tuple[int, List[str]]]) -> Iterator[Tuple[int, List[Result]]]:
        """Per shard (index, texts) in order: (index, results in order)."""
        for index, texts in shards:
            yield index, annotate_texts(self.nlp, texts, self.batch_size, self.n_process)

    def close(self) -> None:
        pass


class Annotator:
    """Ray Data's callable class: each actor loads the pipeline once, from
    its path (a pipeline object is never shipped through the object store),
    and annotates batches of records."""

    def __init__(self, path: str, code: Optional[str], batch_size: int) -> None:
        self.nlp = load_pipeline(path, code)
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, "object"]) -> Dict[str, list]:
        texts = [str(t) for t in batch["text"]]
        results = annotate_texts(self.nlp, texts, self.batch_size)
        return {"shard": list(batch["shard"]), "position": list(batch["position"]),
                "doc": [doc if doc is not None else b"" for doc, _ in results],
                "result": [text for _, text in results],
                "ok": [doc is not None for doc, _ in results]}


class RayEngine:
    """Ray Data: the records of a window of shards as a dataset,
    `map_batches` over a pool of `workers` actors, results in input order.
    A worker that dies is restarted and its batch run again (Ray's task
    retries), and shards are written by this process only once whole, so
    nothing is lost or written twice."""

    name = "ray"

    def __init__(self, path: str, code: Optional[str], workers: int, batch_size: int,
                 address: Optional[str], window: int = 8) -> None:
        try:
            import ray
        except ImportError:
            raise ValueError('annotate: --engine ray needs Ray: pip install "spacy_struct[ray]"') from None
        self.ray = ray
        if not ray.is_initialized():
            ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                     log_to_driver=False, ignore_reinit_error=True,
                     runtime_env={"env_vars": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}})
        logging.getLogger("ray.data").setLevel(logging.WARNING)  # its per-dataset INFO lines
        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True
        context.enable_progress_bars = False
        self.path, self.code, self.workers, self.batch_size, self.window = path, code, workers, batch_size, window

    def run(self, shards: Iterable[Tuple[int, List[str]]]) -> Iterator[Tuple[int, List[Result]]]:
        pending: List[Tuple[int, List[str]]] = []
        for shard in shards:
            pending.append(shard)
            if len(pending) == self.window:
                yield from self._run_window(pending)
                pending = []
        if pending:
            yield from self._run_window(pending)

    def _run_window(self, shards: List[Tuple[int, List[str]]]) -> Iterator[Tuple[int, List[Result]]]:
        items = [{"shard": index, "position": k, "text": text} for index, texts in shards for k, text in enumerate(texts)]
        dataset = self.ray.data.from_items(items, override_num_blocks=max(1, len(items) // self.batch_size))
        annotated = dataset.map_batches(
            Annotator, fn_constructor_kwargs={"path": self.path, "code": self.code, "batch_size": self.batch_size},
            batch_size=self.batch_size, concurrency=self.workers, num_cpus=1,
            max_restarts=-1, max_task_retries=-1,  # a dead actor is restarted and its batch run again
        )
        results: Dict[int, Dict[int, Result]] = {index: {} for index, _ in shards}
        sizes = {index: len(texts) for index, texts in shards}
        done = set()
        for row in annotated.iter_rows():
            shard, position = int(row["shard"]), int(row["position"])
            results[shard][position] = (bytes(row["doc"]), row["result"]) if row["ok"] else (None, row["result"])
            if len(results[shard]) == sizes[shard] and shard not in done:
                done.add(shard)
                yield shard, [results[shard][k] for k in range(sizes[shard])]
                del results[shard]
        for index, _ in shards:  # shards without records
            if index not in done:
                yield index, [results[index][k] for k in range(sizes[index])]

    def close(self) -> None:
        pass
