"""Shared fixtures: the sample corpus (corpus/sample) as spaCy examples."""
import random
from pathlib import Path

import pytest

from spacy_struct.annotations import register_extensions

# the tests read and write doc._.segments, token._.morphs and the tree
# extensions on docs built by hand, without a pipeline to register them
register_extensions()

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "corpus" / "sample"
SHARED_DATA = ROOT.parent / "shared" / "data"

#: a span scorer small enough to train in seconds (nested_ner, joint_parser)
SMALL_SPAN_SCORER = {
    "@architectures": "spacy_struct.SpanScorer.v1",
    "hidden_width": 32,
    "dropout": 0.1,
    "context_width": 32,
    "context_depth": 1,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 48,
        "depth": 2,
        "embed_size": 1000,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
    },
}


@pytest.fixture(scope="session")
def sample_sentences():
    from spacy_struct.convert.conllu import read_conllu

    return list(read_conllu(SAMPLE / "sample-train.conllu"))


def train_in_batches(nlp, examples, epochs: int, seed: int = 0):
    """Initialize `nlp` on the examples and train it for `epochs` passes in
    shuffled batches of 16 (the component tests' small training loop)."""
    random.seed(seed)
    optimizer = nlp.initialize(lambda: examples)
    for _ in range(epochs):
        random.shuffle(examples)
        for i in range(0, len(examples), 16):
            nlp.update(examples[i:i + 16], sgd=optimizer)
    return nlp
