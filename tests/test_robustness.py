"""Robustness: the cases of a fault battery kept as tests, by kind (pipeline
operations under fork and spawn, pickling after use, deep trees, long
tokens, stale annotations, bad gold, settings at load time, peak memory).
Each case gives the right output or a clear error naming the problem."""
import subprocess
import sys
from pathlib import Path

import pytest

import robust_pipelines

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    """One small trained pipeline per factory, saved to disk."""
    return robust_pipelines.build_all(tmp_path_factory.mktemp("pipelines"))


# ------------------------------------------------------ pipeline operations
def test_every_pipeline_annotates_alike_under_spawn_and_pickles_after_use(pipelines):
    """nlp.pipe(n_process=2) under the spawn start method (macOS, Windows,
    Ray and Spark workers) pickles the pipeline into each worker: it must
    give the serial annotations, and the pipeline must pickle after use
    (morph_segmenter caches Cython state when it meets an unseen word)."""
    run = subprocess.run([sys.executable, str(HERE / "robust_pipelines.py"), *map(str, pipelines.values())],
                         capture_output=True, text=True, timeout=600)
    lines = [line for line in run.stdout.splitlines() if line]
    assert len(lines) == len(pipelines), run.stdout + run.stderr[-3000:]
    assert run.returncode == 0, run.stdout


def test_every_pipeline_annotates_alike_under_fork(pipelines):
    import multiprocessing

    import spacy

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    for name, path in pipelines.items():
        nlp = spacy.load(path)
        serial = [robust_pipelines.annotations(d) for d in nlp.pipe(robust_pipelines.TEXTS)]
        forked = [robust_pipelines.annotations(d) for d in nlp.pipe(robust_pipelines.TEXTS, n_process=2, batch_size=2)]
        assert forked == serial, name
