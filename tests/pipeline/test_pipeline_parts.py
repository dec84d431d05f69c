"""The shared component skeleton, tested on its own: word-bounded pieces,
score weights, building a component from its factory's arguments, the gold
lookups and their errors, and scattering results back to docs."""
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example

from spacy_struct.models.batch import SentenceBatch
from spacy_struct.pipeline import StructuredComponent, prf_weights, word_bounded


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_word_bounded_keeps_order_and_the_bound(nlp):
    docs = [Doc(nlp.vocab, words=["w"] * n) for n in (3, 4, 10, 1, 1, 2)]
    groups = list(word_bounded(docs, 5))
    assert [d for g in groups for d in g] == docs
    assert [[len(d) for d in g] for g in groups] == [[3], [4], [10], [1, 1, 2]]
    assert list(word_bounded([], 5)) == []


def test_prf_weights():
    assert prf_weights("segments", 1.0, segments_crossing_f=None) == {
        "segments_f": 1.0, "segments_p": 0.0, "segments_r": 0.0, "segments_crossing_f": None}


def test_from_factory_passes_every_setting(nlp):
    pipe = nlp.add_pipe("nested_ner", config={"max_width": 3, "set_ents": True})
    assert isinstance(pipe, StructuredComponent)
    assert pipe.cfg["max_width"] == 3 and pipe.cfg["set_ents"] is True and pipe.name == "nested_ner"


def test_label_id_and_sentence_of_name_the_example(nlp):
    pipe = spacy.blank("en").add_pipe("nested_ner")
    pipe.add_label("DNA")
    pipe.add_label("protein")
    doc = Doc(nlp.vocab, words="IL-2 binds DNA .".split())
    eg = Example(doc, doc)
    assert pipe.label_id("protein", 0, eg) == 1
    with pytest.raises(ValueError, match=r"nested_ner: example 4 \('IL-2 binds DNA \. '\): label 'RNA' of span "
                                         r"'x' is not one of the component's labels \['DNA', 'protein'\]"):
        pipe.label_id("RNA", 4, eg, of=" of span 'x'")
    ranges = [(0, 2), (2, 4)]
    assert pipe.sentence_of(ranges, 2, 3, 0, eg, "span") == 1
    with pytest.raises(ValueError, match="example 0 .*: span 'binds DNA' crosses a sentence boundary"):
        pipe.sentence_of(ranges, 1, 2, 0, eg, "span 'binds DNA'")


def test_per_doc_scatters_sentence_results_in_order(nlp):
    docs = [Doc(nlp.vocab, words=["a"] * 4), Doc(nlp.vocab, words=["b"] * 2)]
    batch = SentenceBatch(docs, [(0, 0, 2), (0, 2, 4), (1, 0, 2)])
    assert StructuredComponent.per_doc(batch, ["x", "y", "z"], 2) == [[(0, "x"), (2, "y")], [(0, "z")]]
