"""Every component against its peer: words/s and peak memory, in one run.

python -m tools.bench speed DEV SYSTEM... [--raw] [--repeats 3] [--rounds 2]
    [--title T] [--output docs/results/speed.md --section NAME]

Each SYSTEM (LABEL=PIPELINE[,matmul=numpy][,COMPONENT.SETTING=VALUE], as
the other benches take them: matmul=numpy has the thinc layers multiply
with numpy's BLAS instead of blis; or LABEL=morfessor:MODEL_FILE, Morfessor Baseline's
segment call in the Morfessor virtual environment) runs in a fresh child
process: it loads the pipeline, makes the docs (the gold words and
sentences of DEV, or with --raw its documents' text through the pipeline's
own tokenizer), runs `nlp.pipe` over them `--repeats` times and reports the
best time and its peak resident memory (ru_maxrss, the loaded pipeline
included). The systems take turns, `--rounds` times over, and each keeps
its best: a background hiccup hurts no one system. Words are the gold
words of DEV either way, so the figures compare. Single-threaded unless
--threads says otherwise (the child inherits the thread variables).
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Sequence

from .memory import peak_mb

ROOT = Path(__file__).resolve().parents[2]
MORFESSOR_CHILD = Path(__file__).with_name("morfessor_speed.py")


def _docs(nlp, dev: Path, raw: bool):
    """The docs to process and the gold word count."""
    from spacy.tokens import Doc, DocBin

    references = list(DocBin().from_disk(dev).get_docs(nlp.vocab))
    n_words = sum(len(d) for d in references)
    if raw:
        return [nlp.make_doc(ref.text) for ref in references], n_words
    docs = []
    for ref in references:
        starts = ([bool(t.is_sent_start) for t in ref] if ref.has_annotation("SENT_START")
                  else [True] + [False] * (len(ref) - 1))
        if starts:
            starts[0] = True
        docs.append(Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref],
                        sent_starts=starts))
    return docs, n_words


def measure(spec: str, dev: Path, raw: bool, repeats: int) -> Dict[str, float]:
    """One system in this process: best seconds over `repeats` passes, words, peak MB."""
    import warnings

    from .systems import load_system, parse_spec

    warnings.simplefilter("ignore")
    system = parse_spec(spec)
    components = {name: dict(v) for name, v in system.config.get("components", {}).items()}
    nlp = load_system(system, {"components": components} if components else {})
    best = float("inf")
    for _ in range(repeats):
        docs, n_words = _docs(nlp, dev, raw)   # fresh docs: a pass never sees another's annotations
        start = time.perf_counter()
        for _doc in nlp.pipe(docs, batch_size=256):
            pass
        best = min(best, time.perf_counter() - start)
    return {"seconds": best, "words": n_words, "peak_mb": peak_mb()}


def run_child(spec: str, dev: Path, raw: bool, repeats: int, morfessor_python: Path) -> Dict[str, float]:
    """`measure` (or Morfessor's) in a fresh process."""
    label, _, path = spec.partition("=")
    if path.startswith("morfessor:"):
        command = [str(morfessor_python), str(MORFESSOR_CHILD), path[len("morfessor:"):], str(dev.with_suffix(".tokens")),
                   str(repeats)]
    else:
        command = [sys.executable, "-m", "tools.bench.speed", "--child", spec, str(dev), str(repeats)] + (
            ["--raw"] if raw else [])
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{label}: {out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def evaluate(specs: Sequence[str], dev: Path, raw: bool, repeats: int, rounds: int,
             morfessor_python: Path) -> Dict[str, Dict[str, float]]:
    """Every system, taking turns `rounds` times; each keeps its best time and highest peak."""
    results: Dict[str, Dict[str, float]] = {}
    for _ in range(rounds):
        for spec in specs:
            label = spec.partition("=")[0]
            r = run_child(spec, dev, raw, repeats, morfessor_python)
            kept = results.setdefault(label, r)
            kept["seconds"] = min(kept["seconds"], r["seconds"])
            kept["peak_mb"] = max(kept["peak_mb"], r["peak_mb"])
    return results


def format_table(results: Dict[str, Dict[str, float]], unit: str = "words") -> str:
    """words/s, the ratio to the first system, peak memory."""
    rows = [f"| system | {unit}/s | speed vs first | peak RSS (MB) |", "|---|---|---|---|"]
    first = None
    for label, r in results.items():
        rate = r["words"] / r["seconds"]
        first = first or rate
        rows.append(f"| {label} | {rate:,.0f} | {rate / first:.2f}x | {r['peak_mb']:,.0f} |")
    return "\n".join(rows)


def write_tokens(dev: Path) -> Path:
    """The gold words of DEV, one per line, beside it (what Morfessor's child segments)."""
    import spacy
    from spacy.tokens import DocBin

    path = dev.with_suffix(".tokens")
    vocab = spacy.blank("xx").vocab
    words = [t.text for d in DocBin().from_disk(dev).get_docs(vocab) for t in d]
    path.write_text("\n".join(words) + "\n", encoding="utf8")
    return path


def train_morfessor(corpus: Path, model_file: Path, bin_dir: Path) -> None:
    """Morfessor Baseline learned from the running text of `corpus` (every
    token a line, so each counts as often as it occurs), saved to `model_file`."""
    tokens = write_tokens(corpus)
    model_file.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(bin_dir / "morfessor-train"), "--traindata-list", "-r", "0", "-s", str(model_file),
                    str(tokens)], check=True, cwd=ROOT, capture_output=True)


def main(argv: List[str]) -> None:
    """The child side: `--child SPEC DEV REPEATS [--raw]` prints its figures as JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bench.speed")
    parser.add_argument("--child", required=True)
    parser.add_argument("dev", type=Path)
    parser.add_argument("repeats", type=int)
    parser.add_argument("--raw", action="store_true")
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.child, args.dev, args.raw, args.repeats)))


if __name__ == "__main__":
    main(sys.argv[1:])
