"""Documents per second of annotating a corpus: plain `nlp.pipe` in one
process, `annotate --engine local --n-process 2`, and `annotate --engine ray
--workers 1|2`, on the same sentences, in one run.

python -m tools.bench scale LABEL=PIPELINE ... --texts CORPUS.spacy [CORPUS.spacy ...] [--n 20000]

The texts are the first N sentences of the corpora given (their raw text;
each pipeline tokenizes it). The Ray figures include starting the local Ray
and the actors loading the pipeline; the start-up is also timed alone, on
64 documents.
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Dict, List


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


def measure(pipeline: str, texts: List[str], batch_size: int = 64) -> Dict[str, float]:
    """Seconds of each way over the texts, each on a fresh output folder."""
    import spacy

    from spacy_struct.annotate import annotate

    seconds: Dict[str, float] = {}
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
                ("annotate --engine ray --workers 1", dict(engine="ray", workers=1)),
                ("annotate --engine ray --workers 2", dict(engine="ray", workers=2)),
                ("ray start-up (64 documents, 2 workers)", dict(engine="ray", workers=2))]
        for label, options in runs:
            import ray

            if ray.is_initialized():
                ray.shutdown()  # each Ray run starts its own local Ray, as a user's would
            out = folder / label.replace(" ", "_")
            start = time.perf_counter()
            annotate(pipeline, str(small if "start-up" in label else corpus), out, batch_size=batch_size,
                     shard_size=2000, progress=False, **options)
            seconds[label] = time.perf_counter() - start
            shutil.rmtree(out)
        import ray

        ray.shutdown()
    return seconds


def format_table(results: Dict[str, Dict[str, float]], n: int) -> str:
    rows = ["| pipeline | way | seconds | documents/s | vs nlp.pipe |", "|---|---|---|---|---|"]
    for label, seconds in results.items():
        base = n / seconds["nlp.pipe, 1 process"]
        for way, s in seconds.items():
            docs = 64 if "start-up" in way else n
            rate = docs / s
            ratio = "-" if "start-up" in way else f"{rate / base:.2f}x"
            rows.append(f"| {label} | {way} | {s:,.1f} | {rate:,.0f} | {ratio} |")
        ray1, ray2 = seconds["annotate --engine ray --workers 1"], seconds["annotate --engine ray --workers 2"]
        rows.append(f"| {label} | ray 2 workers vs 1 | | | {ray1 / ray2:.2f}x |")
    return "\n".join(rows)
