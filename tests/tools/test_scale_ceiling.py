"""The ceiling bench's workload: a fixed cost per document that the
engines load by annotate's `--code`, and its table."""
import json

import spacy

from spacy_struct.annotate import annotate
from tools.bench import scale_ceiling


def test_fixed_cost_pipeline_loads_from_its_code_file_and_leaves_docs_as_they_are(tmp_path):
    pipeline = scale_ceiling.save_pipeline(tmp_path, rounds=3)
    scale_ceiling._component()
    nlp = spacy.load(pipeline)
    assert nlp.pipe_names == ["fixed_cost"]
    assert nlp.get_pipe("fixed_cost").rounds == 3
    corpus = tmp_path / "input.jsonl"
    corpus.write_text("".join(json.dumps({"id": str(k), "text": f"doc {k}"}) + "\n" for k in range(5)))
    totals = annotate(str(pipeline), str(corpus), tmp_path / "out", code=scale_ceiling.COMPONENT, progress=False)
    assert totals["records"] == 5 and totals["errors"] == 0


def test_more_time_per_document_needs_more_rounds():
    assert scale_ceiling.rounds_for(4.0) > scale_ceiling.rounds_for(0.5) >= 1


def test_plain_processes_pipe_every_document_once(tmp_path):
    pipeline = scale_ceiling.save_pipeline(tmp_path, rounds=1)
    texts = [f"doc {k}" for k in range(11)]
    assert scale_ceiling._pipe_part((str(pipeline), texts[:4])) == 4
    assert scale_ceiling.plain_processes(pipeline, texts, tmp_path, tmp_path, 2) > 0


def test_table_gives_the_median_run_and_every_ratio():
    results = {"rounds": 7, "ms per doc": 6.4,
               scale_ceiling.WAYS[0]: [(10.0, 5.0)],
               scale_ceiling.WAYS[1]: [(12.0, 8.0), (12.0, 6.0), (12.0, 7.0)],
               scale_ceiling.WAYS[2]: [(11.0, 6.0), (11.0, 5.5), (11.0, 6.5)]}
    table = scale_ceiling.format_table(results, 100)
    ray_data = next(line for line in table.splitlines() if line.startswith(f"| {scale_ceiling.WAYS[1]}"))
    assert "| 12.0 | 7.0 | 1.71x | 1.50x, 1.71x, 2.00x |" in ray_data
    assert "| 10.0 | 5.0 | 2.00x | 2.00x |" in table
