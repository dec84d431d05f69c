"""The annotation layer: every structure exported as plain JSON, explicit
and idempotent registration, and another package's extension names left
alone with a warning."""
import json
import warnings

import pytest
import spacy
from spacy.tokens import Doc, Span, SpanGroup

from spacy_struct.annotations import doc_to_json, register_extensions, set_parse
from spacy_struct.annotations import trees
from spacy_struct.annotations.segments import crossing_keys


@pytest.fixture
def vocab():
    return spacy.blank("en").vocab


def test_doc_to_json_writes_every_annotation_the_doc_holds(vocab):
    words = ["BMP2", "and", "BMP4", "genes", "act"]
    doc = Doc(vocab, words=words, heads=[3, 0, 0, 4, 4], deps=["compound", "cc", "conj", "nsubj", "ROOT"])
    doc.spans["sc"] = SpanGroup(doc, spans=[Span(doc, 2, 4, label="SO")])
    doc._.segments = [("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]
    set_parse(doc, "(S (NP (NN BMP2) (CC and) (NN BMP4) (NNS genes)) (VP (VBP act)))")
    doc[3]._.morphs = ["gene", "s"]
    out = json.loads(json.dumps(doc_to_json(doc)))  # plain JSON through and through
    assert out["text"] == doc.text and out["tokens"][3] == [14, 19]
    assert out["heads"] == [3, 0, 0, 4, 4] and out["deps"][4] == "ROOT"
    assert out["sents"] == [[0, 5]]
    assert out["spans"] == {"sc": [[2, 4, "SO"]]}
    assert out["segments"] == [["SO", [[0, 1], [3, 4]]], ["SO", [[2, 4]]]]
    assert out["trees"] == [{"start": 0, "end": 5,
                             "brackets": "(S (NP (NN BMP2) (CC and) (NN BMP4) (NNS genes)) (VP (VBP act)))"}]
    assert out["morphs"] == [None, None, None, ["gene", "s"], None]


def test_doc_to_json_leaves_out_what_the_doc_lacks(vocab):
    out = doc_to_json(Doc(vocab, words=["plain", "words"]))
    assert sorted(out) == ["text", "tokens"]


def test_registration_is_idempotent():
    register_extensions()
    register_extensions()
    assert Doc.has_extension("segments") and Span.has_extension("parse_string")


def test_tree_names_another_package_registered_are_left_to_it_with_a_warning(monkeypatch):
    kept = Span.get_extension("labels")
    Span.remove_extension("labels")
    Span.set_extension("labels", getter=lambda span: "someone else's")
    monkeypatch.setattr(trees, "_warned_taken", [])
    try:
        with pytest.warns(UserWarning, match=r"Span\._\.labels are registered by another package"):
            trees.register_extensions()
        assert Span.get_extension("labels")[2](None) == "someone else's"
    finally:
        Span.remove_extension("labels")
        Span.set_extension("labels", getter=kept[2])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trees.register_extensions()  # our own getters again: nothing to say


def test_crossing_keys_against_their_definition():
    """Two segments cross when they share words and neither holds the
    other's; checked against the definition over every pair."""
    import itertools

    keys = {("A", ((0, 1), (3, 4))), ("A", ((2, 4),)), ("B", ((0, 1),)), ("B", ((1, 3),)), ("C", ((0, 5),))}

    def words(key):
        return {i for s, e in key[1] for i in range(s, e)}

    expected = set()
    for a, b in itertools.combinations(keys, 2):
        wa, wb = words(a), words(b)
        if wa & wb and not (wa <= wb or wb <= wa):
            expected |= {a, b}
    assert crossing_keys(keys) == expected and expected
