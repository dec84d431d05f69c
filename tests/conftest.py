"""Shared fixtures: the sample corpus (corpus/sample) as spaCy examples."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "corpus" / "sample"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def sample_sentences():
    from spacy_struct.convert.conllu import read_conllu

    return list(read_conllu(SAMPLE / "sample-train.conllu"))
