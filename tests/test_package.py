"""Package-level promises: the structures stand alone, the benchmark agrees."""
import subprocess
import sys

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
