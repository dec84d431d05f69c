"""Peak memory of a large `nlp.pipe`, each case in a fresh subprocess.

python -m tools.bench memory [--docs 400] [--output FILE [--section NAME]]
(this module's own command line is the child side of one case)

Cases (each a pipeline of the component's default architecture, initialized
on the embedded sample: memory does not depend on the weights' values):
- mst_parser, first and second order: `--docs` docs of 10 sentences of 35
  words, given sentence boundaries, `nlp.pipe(batch_size=1000)` (the
  configs' batch size);
- supervised_morph_segmenter: one 50,000-character token.
Each figure is the child's peak resident memory (ru_maxrss) and its rise
over the same process after loading the pipeline and warming it on one doc.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "corpus" / "sample"

CASES = ("mst_parser order 1", "mst_parser order 2", "supervised_morph_segmenter, 50,000-character token")
#: second order on one long sentence: kept parts (the default) against every part
LONG_SENTENCE_CASES = tuple(f"mst_parser order 2, {parts}, one sentence of {n} words"
                            for parts in ("kept parts", "every part") for n in (100, 200, 400)
                            if not (parts == "every part" and n > 200))


def peak_mb() -> float:
    """This process's peak resident memory in MB: VmHWM, which starts
    afresh at exec (ru_maxrss would keep the peak of the process that
    started this one, e.g. a test runner's)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _mst_pipeline(order: int, kept_heads: int = 8):
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    from spacy_struct.convert.conllu import read_conllu, sentences_to_docs

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": {"order": order}, "kept_heads": kept_heads})
    docs = sentences_to_docs(list(read_conllu(SAMPLE / "sample-train.conllu"))[:50], nlp.vocab, n_sents=1)
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in docs]
    nlp.initialize(lambda: examples)
    return nlp


def _parse_docs(vocab, n_docs: int) -> list:
    from spacy.tokens import Doc

    words = ("The results of the study show that the protein binds to the promoter of the gene in "
             "human cells and that this binding is needed for the expression of the gene in T cells .").split()
    words = (words * 2)[:34] + ["."]
    starts = ([True] + [False] * 34) * 10
    return [Doc(vocab, words=words * 10, sent_starts=starts) for _ in range(n_docs)]


def measure(case: str, n_docs: int) -> Dict[str, float]:
    """Run one case in this process; RETURNS its peaks in MB."""
    import warnings

    warnings.simplefilter("ignore")
    if case in LONG_SENTENCE_CASES:
        from spacy.tokens import Doc

        n_words = int(case.split(" of ")[1].split()[0])
        nlp = _mst_pipeline(2, 0 if "every part" in case else 8)
        words = (_parse_docs(nlp.vocab, 1)[0].text.split() * 12)[:n_words]
        list(nlp.pipe([Doc(nlp.vocab, words=words[:20])]))
        loaded = peak_mb()
        doc = nlp(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (n_words - 1)))
        assert len(doc) == n_words
    elif case.startswith("mst_parser"):
        nlp = _mst_pipeline(int(case[-1]))
        docs = _parse_docs(nlp.vocab, n_docs)
        list(nlp.pipe(docs[:1]))
        loaded = peak_mb()
        n = sum(1 for _ in nlp.pipe(docs, batch_size=1000))
        assert n == n_docs
    else:
        import spacy
        from spacy.tokens import Doc
        from spacy.training import Example

        nlp = spacy.blank("en")
        nlp.add_pipe("supervised_morph_segmenter")
        from spacy.tokens import DocBin

        ref = list(DocBin().from_disk(SAMPLE / "morph_train.spacy").get_docs(nlp.vocab))[:50]
        nlp.initialize(lambda: [Example(Doc(nlp.vocab, words=[t.text for t in d]), d) for d in ref])
        nlp("warm up")
        loaded = peak_mb()
        doc = nlp(Doc(nlp.vocab, words=["acgt" * 12_500]))
        assert doc[0]._.morphs is not None
    peak = peak_mb()
    return {"peak_mb": peak, "rise_mb": peak - loaded}


def run_case(case: str, n_docs: int) -> Dict[str, float]:
    """`measure` in a fresh Python process (a peak is per process)."""
    out = subprocess.run([sys.executable, "-m", "tools.bench.memory", "--child", case, "--docs", str(n_docs)],
                         capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        raise RuntimeError(f"{case}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def format_table(results: Dict[str, Dict[str, float]], n_docs: int) -> str:
    first = results["mst_parser order 1"]
    rows = ["| case | peak RSS (MB) | rise over the loaded pipeline (MB) | peak vs mst_parser order 1 |",
            "|---|---|---|---|"]
    for case, r in results.items():
        ratio = f"{r['peak_mb'] / first['peak_mb']:.2f}x" if case in ("mst_parser order 1", "mst_parser order 2") else "-"
        rows.append(f"| {case} | {r['peak_mb']:,.0f} | {r['rise_mb']:,.0f} | {ratio} |")
    return "\n".join(rows)


def evaluate(n_docs: int) -> Dict[str, Dict[str, float]]:
    """Every case, each in its own process."""
    return {case: run_case(case, n_docs) for case in CASES + LONG_SENTENCE_CASES}


def about(n_docs: int) -> str:
    return (f"Workload: {n_docs} docs x 10 sentences x 35 words, given sentence boundaries, "
            f"nlp.pipe(batch_size=1000); one 50,000-character token; one sentence of 100, 200 or 400 "
            f"words (every part: at most 200, the longest it decodes whole). Each case in a fresh process; "
            f"default architectures, initialized on the embedded sample.")


def main(argv: List[str]) -> None:
    """The child side: `--child CASE --docs N` prints the case's peaks as JSON."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.bench.memory")
    parser.add_argument("--child", required=True)
    parser.add_argument("--docs", type=int, default=400)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.child, args.docs)))


if __name__ == "__main__":
    main(sys.argv[1:])
