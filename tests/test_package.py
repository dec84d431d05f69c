"""Package-level promises: the structures stand alone, the benchmark agrees."""
import gzip
import json
import subprocess
import sys

import pytest

from tools.bench import structs as bench


def test_structures_do_not_import_spacy():
    # spaCy upgrades must not be able to break the decoders
    code = "import sys, spacy_struct.structs; print('spacy' in sys.modules or 'thinc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_benchmark_checks_every_decoder_against_its_reference():
    rows = bench.run(sizes=(6,), batch=3, min_time=0.001)
    assert {r["decoder"] for r in rows} == {c.name for c in bench.CASES}
    assert all(r["agree"] for r in rows)
    table = bench.format_table(rows)
    assert sum(line.startswith("| ") for line in table.splitlines()) == len(rows) + 1


def test_results_page_keeps_its_prose_when_a_bench_rewrites_its_table(tmp_path):
    from tools.bench.__main__ import write_results

    page = tmp_path / "docs" / "results" / "task.md"
    write_results(page, "dev", "| old |\n")
    page.write_text("# Task\n\nIntro.\n\n" + page.read_text() + "\nWhy it is so.\n")
    write_results(page, "dev", "| new |\n")
    write_results(page, "other", "| second |\n")
    text = page.read_text()
    assert "| old |" not in text
    assert text.index("Intro.") < text.index("| new |") < text.index("Why it is so.")
    assert text.count("<!-- dev:start -->") == 1 and text.index("Why it is so.") < text.index("| second |")


def test_held_out_documents_are_every_kth_whole_document(tmp_path):
    from tools.bench.split import split_docs

    # documents a..g, some spread over several lines, one line interleaved
    docs = ["a", "a", "b", "c", "c", "c", "d", "e", "b", "f", "g"]
    source = tmp_path / "in.jsonl.gz"
    with gzip.open(source, "wt") as f:
        for i, d in enumerate(docs):
            f.write(json.dumps({"doc_id": d, "n": i}) + "\n")
    # output folders that do not exist yet are made
    n_docs, held, kept = split_docs(source, tmp_path / "rest.jsonl", tmp_path / "out" / "held.jsonl", every=3)

    def read(name):
        return [json.loads(line) for line in (tmp_path / name).read_text().splitlines()]

    # the 3rd and 6th documents in order of appearance: c and f, every line of each
    assert [r["n"] for r in read("out/held.jsonl")] == [3, 4, 5, 9]
    assert [r["n"] for r in read("rest.jsonl")] == [0, 1, 2, 6, 7, 8, 10]
    assert (n_docs, held, kept) == (2, 4, 7)
    # the folds 0 .. every-1 hold out each document exactly once
    held_lines = []
    for fold in range(3):
        n_docs, held, kept = split_docs(source, tmp_path / f"rest{fold}.jsonl", tmp_path / f"held{fold}.jsonl",
                                        every=3, fold=fold)
        lines = [r["n"] for r in read(f"held{fold}.jsonl")]
        assert held == len(lines) and kept == len(docs) - held
        assert n_docs == len({docs[n] for n in lines})
        assert not set(lines) & {r["n"] for r in read(f"rest{fold}.jsonl")}
        held_lines += lines
    assert sorted(held_lines) == list(range(len(docs)))
    assert [r["n"] for r in read("held0.jsonl")] == [0, 1, 6, 10]      # a, d, g
    with pytest.raises(ValueError, match="--fold must be in 0 .. 2"):
        split_docs(source, tmp_path / "r.jsonl", tmp_path / "h.jsonl", every=3, fold=3)
    with open(tmp_path / "bad.jsonl", "w") as f:
        f.write(json.dumps({"id": 1}) + "\n")
    with pytest.raises(ValueError, match="line 1: no 'doc_id'"):
        split_docs(tmp_path / "bad.jsonl", tmp_path / "r.jsonl", tmp_path / "h.jsonl", every=2)
