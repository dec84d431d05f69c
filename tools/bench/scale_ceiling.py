"""The ceiling of each way of using two cores, on this machine: how much
faster 2 workers run than 1 when the work is perfectly parallel.

python -m tools.bench scale-ceiling [--n 20000] [--ms-per-doc 5.6] [--runs 3] [--output FILE [--section NAME]]

The pipeline is a blank one with `fixed_cost_component` (the same
arithmetic for every document, nothing set), so nothing of a real
pipeline (its loading, its memory traffic, documents of unequal cost)
is in the figures: what is left is the way's own cost. Three ways, each
with 1 worker and with 2, taking turns `--runs` times:
- plain processes: N texts through `nlp.pipe` in one spawned process,
  and half of them in each of two (the machine's own bound);
- `annotate --engine ray` (Ray Data, the command as a user runs it,
  start-up and shard writing included);
- Ray Core actors that take the same shards one at a time from the
  driver and annotate and write them with the command's own
  `annotate_shard` (the same work without Ray Data).
Both Ray ways start their own local Ray, as a user's run would.
"""
from __future__ import annotations

import json
import multiprocessing
import tempfile
import time
from itertools import islice
from pathlib import Path
from statistics import median
from typing import Callable, Dict, List, Tuple

from .scale import median_pair, no_ray_running

COMPONENT = str(Path(__file__).with_name("fixed_cost_component.py"))
#: the same settings for every way (annotate's defaults)
BATCH_SIZE, SHARD_SIZE, MAX_CHARS = 64, 1000, 100_000
WAYS = ("plain processes, nlp.pipe", "annotate --engine ray (Ray Data)", "Ray Core actors, the same shards")


def _component():
    """The component's module, imported from its file as every worker
    imports it (by annotate's `--code`), so its factory is registered once."""
    import sys

    from spacy_struct.annotate.engines import import_code

    if "fixed_cost_component" not in sys.modules:
        import_code(COMPONENT)
    return sys.modules["fixed_cost_component"]


def rounds_for(ms_per_doc: float) -> int:
    """How many rounds of `burn` take about `ms_per_doc` on this machine."""
    burn = _component().burn
    burn(200)
    timings = []
    for _ in range(5):  # the median of five: the machine's speed moves with its neighbours
        start = time.perf_counter()
        burn(1000)
        timings.append((time.perf_counter() - start) / 1000)
    return max(1, round(ms_per_doc / 1000 / median(timings)))


def save_pipeline(folder: Path, rounds: int) -> Path:
    import spacy

    _component()
    nlp = spacy.blank("en")
    nlp.add_pipe("fixed_cost", config={"rounds": rounds})
    nlp.to_disk(folder / "pipeline")
    return folder / "pipeline"


def _pipe_part(args: Tuple[str, List[str]]) -> int:
    """One process's part: RETURNS how many documents it piped."""
    import os

    os.environ.update({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})  # before numpy is loaded
    import spacy

    _component()
    nlp = spacy.load(args[0])
    return sum(1 for _ in nlp.pipe(args[1], batch_size=BATCH_SIZE))


def plain_processes(pipeline: Path, texts: List[str], corpus: Path, out: Path, workers: int) -> float:
    """`workers` spawned processes, each piping its share of the texts
    (no input to read, no shards to write: the machine's own bound)."""
    parts = [texts[k::workers] for k in range(workers)]
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        done = pool.map(_pipe_part, [(str(pipeline), part) for part in parts], chunksize=1)
    seconds = time.perf_counter() - start
    if sum(done) != len(texts):
        raise RuntimeError(f"plain processes piped {sum(done)} of {len(texts)} documents")
    return seconds


def ray_data_engine(pipeline: Path, texts: List[str], corpus: Path, out: Path, workers: int) -> float:
    from spacy_struct.annotate import annotate

    start = time.perf_counter()  # annotate starts its local Ray and stops it before it returns
    annotate(str(pipeline), str(corpus), out, engine="ray", workers=workers, code=COMPONENT, progress=False,
             batch_size=BATCH_SIZE, shard_size=SHARD_SIZE, max_chars=MAX_CHARS)
    return time.perf_counter() - start


def ray_core_actors(pipeline: Path, texts: List[str], corpus: Path, out: Path, workers: int) -> float:
    """The same shards and the same `annotate_shard` as the command, on a
    pool of Ray Core actors each given its next shard when it is done;
    timed from starting the local Ray to stopping it, as annotate is."""
    import ray

    from spacy_struct.annotate import _shards
    from spacy_struct.annotate.engines import one_thread_environment
    from spacy_struct.annotate.records import input_files, raw_lines

    start = time.perf_counter()
    with one_thread_environment():
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)

    class ShardWorker:  # defined here so that Ray ships it by value
        def __init__(self, path: str, code: str) -> None:
            from spacy_struct.annotate.engines import load_pipeline

            self.nlp = load_pipeline(path, code)

        def run(self, folder: str, index: int, lines: list) -> dict:
            from spacy_struct.annotate.engines import annotate_shard

            return annotate_shard(self.nlp, Path(folder), index, lines, BATCH_SIZE, MAX_CHARS)

    actor = ray.remote(num_cpus=1)(ShardWorker)
    out.mkdir(parents=True)
    todo = iter(_shards(raw_lines(input_files(str(corpus))), SHARD_SIZE))
    running = {}

    def give_next_shard(worker) -> None:
        for index, lines in islice(todo, 1):
            running[worker.run.remote(str(out), index, lines)] = worker

    for worker in [actor.remote(str(pipeline), COMPONENT) for _ in range(workers)]:
        give_next_shard(worker)
    while running:
        (done,), _ = ray.wait(list(running))
        ray.get(done)  # a failed shard raises here
        give_next_shard(running.pop(done))
    ray.shutdown()
    return time.perf_counter() - start


def measure(n: int, ms_per_doc: float, runs: int) -> Dict[str, object]:
    """Seconds of every way with 1 and 2 workers, `runs` times in turns;
    RETURNS {"rounds": ..., "ms per doc": ..., way: [(one, two), ...]}."""
    import shutil

    ways: Dict[str, Callable[..., float]] = dict(zip(WAYS, (plain_processes, ray_data_engine, ray_core_actors)))
    rounds = rounds_for(ms_per_doc)
    texts = [f"document {k}" for k in range(n)]
    results: Dict[str, object] = {"rounds": rounds, "ms per doc": ms_per_doc}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        pipeline = save_pipeline(folder, rounds)
        corpus = folder / "input.jsonl"
        corpus.write_text("".join(json.dumps({"id": str(k), "text": t}) + "\n" for k, t in enumerate(texts)),
                          encoding="utf8")
        for run in range(runs):
            for name, way in ways.items():
                pair = []
                for workers in (1, 2):
                    no_ray_running()  # each Ray run starts its own local Ray with `workers` CPUs
                    out = folder / f"out_{run}_{workers}"
                    pair.append(way(pipeline, texts, corpus, out, workers))
                    shutil.rmtree(out, ignore_errors=True)
                results.setdefault(name, []).append(tuple(pair))
                print(name, f"1 worker {pair[0]:.1f} s, 2 workers {pair[1]:.1f} s, {pair[0] / pair[1]:.2f}x", flush=True)
    return results


def format_table(results: Dict[str, object], n: int) -> str:
    """One row per way: the median run's seconds and every run's ratio."""
    rows = ["| way | 1 worker (s) | 2 workers (s) | 2 workers vs 1: median | runs |", "|---|---|---|---|---|"]
    for name in WAYS:
        (one, two), middle, ratios = median_pair(results[name])
        rows.append(f"| {name} | {one:,.1f} | {two:,.1f} | {middle:.2f}x | {', '.join(f'{r:.2f}x' for r in ratios)} |")
    plain = min(one for one, _ in results[WAYS[0]])
    return "\n".join(rows) + (
        f"\n\n{n:,} documents of fixed cost ({results['rounds']} rounds of 64 x 64 products, calibrated "
        f"to {results['ms per doc']} ms when the bench starts; the fastest plain 1-process run took "
        f"{1000 * plain / n:.1f} ms a document, its start included), a blank pipeline "
        f"(tools/bench/fixed_cost_component.py). Plain processes only pipe the texts; the Ray ways also read "
        f"the input and write shards of {SHARD_SIZE:,} (DocBin and JSONL), and are timed from starting a "
        f"local Ray to stopping it. Each run takes every way in turn, each way 1 worker then 2.")
