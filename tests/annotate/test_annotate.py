"""`python -m spacy_struct annotate`: the same annotations as nlp.pipe for
every component, on one machine and on Ray Data (a local Ray, 2 workers);
resuming; a worker killed mid-run; bad records in the errors file."""
import importlib
import json
import os
import subprocess
import sys

import pytest
import spacy

from helpers import robust_pipelines
from spacy_struct.annotate import annotate
from spacy_struct.annotate import output as output_module
from spacy_struct.annotate.output import read_errors, read_rows
from spacy_struct.annotations import doc_to_json

TEXTS = robust_pipelines.TEXTS[:4] + [
    "STAT3 binds the c-fos promoter in Jurkat cells and IL-2 and IL-4 genes are expressed.",
    "The unhappiness of walkers was unbelievable.",
] * 3


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    return robust_pipelines.build_all(tmp_path_factory.mktemp("pipelines"))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A JSONL corpus with an extra field and three bad records."""
    path = tmp_path_factory.mktemp("corpus") / "docs.jsonl"
    with open(path, "wb") as f:
        for k, text in enumerate(TEXTS):
            if text.strip():
                f.write((json.dumps({"id": f"doc{k}", "text": text, "source": "test"}) + "\n").encode("utf8"))
        f.write(b'{"id": "empty", "text": ""}\n')
        f.write(b'{"id": "latin", "text": "caf\xe9"}\n')
        f.write(b"[1, 2]\n")
    return path


def _expected(path, corpus):
    nlp = spacy.load(path)
    records = [json.loads(line) for line in corpus.read_bytes().splitlines()[:-3]]
    return [{"id": r["id"], "source": "test", "annotations": doc_to_json(doc)}
            for r, doc in zip(records, nlp.pipe(r["text"] for r in records))]


N_GOOD = sum(1 for text in TEXTS if text.strip())
EXPECTED_ERRORS = [  # a record whose id cannot be read is named by its file and line
    {"id": "empty", "reason": "no text (a non-empty string under 'text')"},
    {"id": f"docs.jsonl:{N_GOOD + 2}", "reason": "not UTF-8 (byte 28 of the line is b'\\xe9')"},
    {"id": f"docs.jsonl:{N_GOOD + 3}", "reason": "not a JSON object"},
]


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("engine", ["local", "ray"])
def test_every_component_annotates_as_nlp_pipe(engine, pipelines, corpus, tmp_path, request):
    if engine == "ray":
        request.getfixturevalue("ray_session")
    for name, path in pipelines.items():
        out = tmp_path / name
        totals = annotate(str(path), str(corpus), out, engine=engine, workers=2, batch_size=3, shard_size=5,
                          progress=False)
        assert totals["errors"] == 3 and totals["docs"] == totals["records"] - 3, name
        assert read_rows(out) == _expected(path, corpus), name
        assert read_errors(out) == EXPECTED_ERRORS, name
        docs = list(spacy.tokens.DocBin().from_disk(out / "shard-00000.spacy").get_docs(spacy.load(path).vocab))
        assert [doc_to_json(d) for d in docs] == [r["annotations"] for r in read_rows(out)[:len(docs)]], name


def test_a_resumed_run_writes_what_an_uninterrupted_one_does(pipelines, corpus, tmp_path, monkeypatch):
    path = str(pipelines["nested_ner"])
    whole = tmp_path / "whole"
    annotate(path, str(corpus), whole, shard_size=4, progress=False)
    resumed = tmp_path / "resumed"
    write_shard = output_module.write_shard
    written = []

    def stop_after_two(folder, name, *args, **kwargs):
        if len(written) == 2:
            raise KeyboardInterrupt
        written.append(name)
        return write_shard(folder, name, *args, **kwargs)

    monkeypatch.setattr("spacy_struct.annotate.engines.write_shard", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        annotate(path, str(corpus), resumed, shard_size=4, progress=False)
    assert sorted(p.name for p in resumed.glob("*.jsonl") if "errors" not in p.name) == [
        "shard-00000.jsonl", "shard-00001.jsonl"]
    monkeypatch.undo()
    before = (resumed / "shard-00000.jsonl").stat().st_mtime_ns
    annotate(path, str(corpus), resumed, shard_size=4, progress=False)
    assert (resumed / "shard-00000.jsonl").stat().st_mtime_ns == before  # skipped, not redone
    assert read_rows(resumed) == read_rows(whole) and read_errors(resumed) == read_errors(whole)
    manifests = [json.loads((d / "manifest.json").read_text()) for d in (whole, resumed)]
    assert manifests[0] == manifests[1]
    with pytest.raises(ValueError, match="was written by a run with other settings \\(shard_size\\)"):
        annotate(path, str(corpus), resumed, shard_size=5, progress=False)


KILLER = '''
import os
from pathlib import Path
from spacy.language import Language

MARKER = Path(os.environ["ANNOTATE_TEST_MARKER"])


@Language.component("die_once")
def die_once(doc):
    """Kills its process the first time it meets a doc that mentions STAT3."""
    if "STAT3" in doc.text and not MARKER.exists():
        MARKER.write_text("died")
        os._exit(1)
    return doc
'''


def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(pipelines, corpus, tmp_path, ray_session,
                                                               monkeypatch):
    code = tmp_path / "killer.py"
    code.write_text(KILLER)
    marker = tmp_path / "died"
    monkeypatch.setenv("ANNOTATE_TEST_MARKER", str(marker))
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.import_module("killer")  # registers die_once here, to save the pipeline
    finally:
        sys.path.remove(str(tmp_path))
    nlp = spacy.load(pipelines["nested_ner"])
    nlp.add_pipe("die_once")
    path = tmp_path / "mortal"
    nlp.to_disk(path)
    ray_session.shutdown()  # a fresh local Ray whose workers see the marker's variable
    ray_session.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"ANNOTATE_TEST_MARKER": str(marker)}})
    out = tmp_path / "out"
    annotate(str(path), str(corpus), out, engine="ray", workers=2, batch_size=2, shard_size=5, code=str(code),
             progress=False)
    assert marker.exists(), "a worker died"
    assert read_rows(out) == _expected(pipelines["nested_ner"], corpus)
    assert read_errors(out) == EXPECTED_ERRORS


def test_the_command_line_and_its_errors(pipelines, corpus, tmp_path):
    run = subprocess.run([sys.executable, "-m", "spacy_struct", "annotate", str(pipelines["nested_ner"]),
                          str(corpus), str(tmp_path / "out"), "--no-progress"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "annotated, 3 in the errors files" in run.stdout
    run = subprocess.run([sys.executable, "-m", "spacy_struct", "annotate", str(pipelines["nested_ner"]),
                          str(tmp_path / "nothing*.jsonl"), str(tmp_path / "out2")], capture_output=True, text=True)
    assert run.returncode == 1 and "names no file" in run.stderr


def test_one_thread_environment_is_set_inside_and_restored_after(monkeypatch):
    from spacy_struct.annotate.engines import ONE_THREAD, one_thread_environment

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    with one_thread_environment():
        assert {name: os.environ.get(name) for name in ONE_THREAD} == ONE_THREAD
    assert os.environ["OMP_NUM_THREADS"] == "7" and "OPENBLAS_NUM_THREADS" not in os.environ


_LOCAL_RAY_THREADS = """
import os, ray
from spacy_struct.annotate.engines import RayEngine
RayEngine("unused", None, None, workers=1, batch_size=1, max_chars=1, address=None)
@ray.remote(num_cpus=1)
def threads():
    return os.environ.get("OMP_NUM_THREADS"), os.environ.get("OPENBLAS_NUM_THREADS")
print(ray.get(threads.remote()), os.environ.get("OMP_NUM_THREADS"), os.environ.get("OPENBLAS_NUM_THREADS"))
ray.shutdown()
"""


def test_a_local_ray_started_by_annotate_gives_its_workers_one_thread():
    """Its workers inherit one BLAS thread from the environment; the
    driver's own environment is left as it was (here: unset)."""
    pytest.importorskip("ray")
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")}
    run = subprocess.run([sys.executable, "-c", _LOCAL_RAY_THREADS], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "('1', '1') None None"


def test_msgpack_codecs_looked_up_once_packs_the_same_bytes_and_restores_the_registries(pipelines, monkeypatch):
    """A shard's DocBin is the same within the block as without it, the
    registries are asked once in the block instead of once per object, and
    both are as they were after it (also after an inner, re-entered block)."""
    import srsly.msgpack

    from spacy_struct.annotate.output import msgpack_codecs_looked_up_once

    nlp = spacy.load(pipelines["nested_ner"])
    docs = list(nlp.pipe(TEXTS[:6]))

    def packed():
        docbin = spacy.tokens.DocBin(store_user_data=True)
        for doc in docs:
            docbin.add(doc)
        return docbin.to_bytes()

    registries = (srsly.msgpack.msgpack_encoders, srsly.msgpack.msgpack_decoders)
    calls = []
    get_all = type(registries[0]).get_all  # both are catalogue Registries
    monkeypatch.setattr(type(registries[0]), "get_all", lambda self: calls.append(self) or get_all(self))
    plain = packed()
    per_object = len(calls)
    calls.clear()
    with msgpack_codecs_looked_up_once():
        with msgpack_codecs_looked_up_once():
            inner = packed()
        cached = packed()
        again = list(spacy.tokens.DocBin().from_bytes(cached).get_docs(nlp.vocab))
    assert [doc_to_json(d) for d in again] == [doc_to_json(d) for d in docs]
    assert cached == inner == plain
    assert per_object >= 3 * len(docs) and len(calls) == 2  # one lookup per registry
    assert all("get_all" not in vars(registry) for registry in registries)


_RAY_OWNERSHIP = """
import json, sys, warnings
import ray
from spacy_struct.annotate import annotate
path, corpus, out = sys.argv[1:4]
annotate(path, corpus, out + "/one", engine="ray", workers=1, progress=False)
after_own = ray.is_initialized()
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    annotate(path, corpus, out + "/two", engine="ray", workers=2, progress=False)
print(json.dumps([after_own, ray.is_initialized(), [str(w.message) for w in caught if "CPUs" in str(w.message)]]))
ray.shutdown()
"""


def test_annotate_stops_the_local_ray_it_started_and_leaves_the_callers(pipelines, corpus, tmp_path):
    """A later run in the same process must not inherit a Ray started with
    another run's number of CPUs; a Ray the caller started keeps running,
    and one with fewer CPUs than workers is named in a warning."""
    pytest.importorskip("ray")
    run = subprocess.run([sys.executable, "-c", _RAY_OWNERSHIP, str(pipelines["nested_ner"]), str(corpus),
                          str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    after_own, after_callers, warned = json.loads(run.stdout.strip().splitlines()[-1])
    assert after_own is False and after_callers is True
    assert warned == ["annotate: the Ray cluster has 1 CPU now, so at most 1 of the 2 workers (one CPU each) "
                      "run at a time; give the cluster more CPUs or ask for fewer workers"]


class _FailingEngine:
    """Annotates one shard, then fails: what a run stopped between shards sees."""
    closed = []

    def __init__(self, *args) -> None:
        self.folder = args[2]

    def run(self, shards):
        from spacy_struct.annotate.output import shard_name, write_shard

        index, lines = next(iter(shards))
        yield write_shard(self.folder, shard_name(index), [], [], [], len(lines))
        raise RuntimeError("the run stops here")

    def close(self) -> None:
        self.closed.append(True)


def test_a_run_that_fails_closes_its_engine_and_keeps_the_finished_shards(pipelines, corpus, tmp_path,
                                                                          monkeypatch):
    import spacy_struct.annotate as annotate_module

    monkeypatch.setattr(annotate_module, "LocalEngine", _FailingEngine)
    _FailingEngine.closed.clear()
    with pytest.raises(RuntimeError, match="the run stops here"):
        annotate(str(pipelines["nested_ner"]), str(corpus), tmp_path / "out", shard_size=5, progress=False)
    assert _FailingEngine.closed == [True]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert [shard["name"] for shard in manifest["shards"]] == ["shard-00000"]
