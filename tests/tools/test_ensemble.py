"""The ensemble bench (tools/bench/ensemble.py): a pipeline's row is what
spaCy's evaluation of it gives, and the average of one model's scores with
itself decodes as the model does."""
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import Adam, fix_random_seed

from tools.bench.ensemble import evaluate, format_table

SENTENCES = [
    ("BMP2 and BMP4 genes are expressed", [
        ("PR", [(0, 1)]), ("PR", [(2, 3)]), ("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]),
    ("the limb bud grows", [("SO", [(1, 3)])]),
    ("Shh and Fgf8 genes act", [("PR", [(0, 1)]), ("SO", [(2, 4)])]),
]


def _references(vocab):
    docs = []
    for text, segments in SENTENCES:
        doc = Doc(vocab, words=text.split())
        doc._.segments = segments
        docs.append(doc)
    return docs


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("ensemble")
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": {"context_width": 16, "hidden_width": 8}})
    examples = [Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref) for ref in _references(nlp.vocab)]
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.03)
    for _ in range(20):  # half-trained: some segments right, some wrong
        nlp.update(examples, sgd=optimizer)
    nlp.to_disk(root / "model")
    dev = root / "dev.spacy"
    DocBin(docs=_references(nlp.vocab), store_user_data=True).to_disk(dev)
    return dev, root / "model"


def test_a_model_averaged_with_itself_scores_as_it_does(files):
    dev, model = files
    rows = evaluate(dev, [model, model])
    nlp = spacy.load(model)
    expected = nlp.evaluate([Example(nlp(ref.text), ref) for ref in _references(nlp.vocab)])
    for row in rows:
        assert row["segments_f"] == pytest.approx(expected["segments_f"])
        assert row["segments_discontinuous_f"] == pytest.approx(expected["segments_discontinuous_f"])
    assert "the average of their scores (2 models)" in format_table(rows)
    with pytest.raises(ValueError, match="two or more"):
        evaluate(dev, [model])
