"""Documents per second of annotating a corpus: plain `nlp.pipe` in one
process, `annotate --engine local --n-process 2`, and `annotate --engine ray
--workers 1|2`, on the same sentences, in one run.

python -m tools.bench scale LABEL=PIPELINE ... --texts CORPUS.spacy [CORPUS.spacy ...] [--n 20000] [--ray-runs 3]

The texts are the first N sentences of the corpora given (their raw text;
each pipeline tokenizes it). The Ray figures include starting the local Ray
and the actors loading the pipeline; the start-up is also timed alone, on
64 documents. The 1- and 2-worker Ray runs are repeated (`--ray-runs`,
taking turns), so their ratio comes with its spread over runs of the same
process: the table gives the median run's seconds and every run's ratio.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple


def sentence_texts(corpora: List[Path], n: int) -> List[str]:
    """The text of the first n sentences (a doc without boundaries is one)."""
    import spacy
    from spacy.tokens import DocBin

    vocab = spacy.blank("xx").vocab
    out: List[str] = []
    for path in corpora:
        for doc in DocBin().from_disk(path).get_docs(vocab):
            spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
            out.extend(s.text.strip() for s in spans if s.text.strip())
            if len(out) >= n:
                return out[:n]
    return out


def _write_input(texts: List[str], folder: Path) -> Path:
    path = folder / "input.jsonl"
    with open(path, "w", encoding="utf8") as f:
        for k, text in enumerate(texts):
            f.write(json.dumps({"id": str(k), "text": text}) + "\n")
    return path


def default_shard_size() -> int:
    """annotate's own default shard size, which the runs use and the page names."""
    import inspect

    from spacy_struct.annotate import annotate

    return inspect.signature(annotate).parameters["shard_size"].default


RAY_1, RAY_2 = "annotate --engine ray --workers 1", "annotate --engine ray --workers 2"
START_UP = "ray start-up (64 documents, 2 workers)"


def measure(pipeline: str, texts: List[str], batch_size: int = 64, ray_runs: int = 1) -> Dict[str, object]:
    """Seconds of each way over the texts, each on a fresh output folder;
    under "ray runs", the (1 worker, 2 workers) seconds of every repetition
    of the Ray pair (the first is the one in the table's order)."""
    import spacy

    from spacy_struct.annotate import annotate

    seconds: Dict[str, object] = {}
    nlp = spacy.load(pipeline)
    start = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=batch_size):
        pass
    seconds["nlp.pipe, 1 process"] = time.perf_counter() - start
    del nlp
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        corpus = _write_input(texts, folder)
        (folder / "small").mkdir()
        small = _write_input(texts[:64], folder / "small")
        runs = [("annotate --engine local --n-process 2", dict(engine="local", n_process=2)),
                (RAY_1, dict(engine="ray", workers=1)),
                (RAY_2, dict(engine="ray", workers=2)),
                (START_UP, dict(engine="ray", workers=2))]
        runs += [(f"{label} #{k}", options) for k in range(2, ray_runs + 1) for label, options in runs[1:3]]
        for label, options in runs:
            no_ray_running()  # each Ray run starts its own local Ray, as a user's would
            out = folder / label.replace(" ", "_")
            start = time.perf_counter()
            annotate(pipeline, str(small if "start-up" in label else corpus), out, batch_size=batch_size,
                     progress=False, **options)  # the command's default shard size
            seconds[label] = time.perf_counter() - start
            shutil.rmtree(out)
    pairs = [(seconds[RAY_1], seconds[RAY_2])] + [
        (seconds.pop(f"{RAY_1} #{k}"), seconds.pop(f"{RAY_2} #{k}")) for k in range(2, ray_runs + 1)]
    seconds["ray runs"] = pairs
    return seconds


def no_ray_running() -> None:
    """Stop a Ray left running (by a run that failed half-way), so that the
    next run starts its own with its own number of CPUs: a Ray started with
    one CPU would run a 2-worker pool one actor at a time."""
    import ray

    if ray.is_initialized():
        ray.shutdown()


def median_pair(pairs: List[Tuple[float, float]]) -> Tuple[Tuple[float, float], float, List[float]]:
    """Of (1-worker, 2-worker) seconds over an odd number of runs: the run
    with the median ratio, that ratio, and every ratio, lowest first."""
    ratios = sorted(one / two for one, two in pairs)
    middle = ratios[len(ratios) // 2]
    return next(pair for pair in pairs if pair[0] / pair[1] == middle), middle, ratios


def format_table(results: Dict[str, Dict[str, object]], n: int) -> str:
    """One row per way and pipeline; the Ray rows give the median run of the
    pair, and the ratio row every run's ratio, lowest to highest."""
    rows = ["| pipeline | way | seconds | documents/s | vs nlp.pipe |", "|---|---|---|---|---|"]
    for label, seconds in results.items():
        seconds = dict(seconds)
        pairs = seconds.pop("ray runs")
        (seconds[RAY_1], seconds[RAY_2]), median, ratios = median_pair(pairs)
        base = n / seconds["nlp.pipe, 1 process"]
        for way, s in seconds.items():
            docs = 64 if way == START_UP else n
            rate = docs / s
            ratio = "-" if way == START_UP else f"{rate / base:.2f}x"
            rows.append(f"| {label} | {way} | {s:,.1f} | {rate:,.0f} | {ratio} |")
        spread = "" if len(ratios) == 1 else f" (runs: {', '.join(f'{r:.2f}x' for r in ratios)})"
        rows.append(f"| {label} | ray 2 workers vs 1{spread} | | | {median:.2f}x |")
    return "\n".join(rows)
