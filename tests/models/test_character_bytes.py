"""`cached_character_embed` against spaCy's own "charembed" layer: the same
bytes, output and gradient, and models that load into each other."""
import numpy as np
import pytest
import spacy
from spacy.ml import _character_embed
from spacy.ml.models.tok2vec import CharacterEmbed
from spacy.tokens import Doc

from spacy_struct.models import character_bytes
from spacy_struct.models.character_bytes import byte_rows, cached_character_embed, utf8_row, with_cached_bytes

WORDS = ["a", "an", "the", "naïve", "Ωμέγα", "日本語", "🙂x", "x" * 30, "ab", "a", "the"]


@pytest.fixture
def docs():
    nlp = spacy.blank("en")
    return [Doc(nlp.vocab, words=WORDS[:6]), Doc(nlp.vocab, words=WORDS[6:]), Doc(nlp.vocab, words=[])]


@pytest.mark.parametrize("n_bytes", [1, 4, 8, 13])
def test_the_byte_rows_are_spacys(docs, n_bytes):
    expected = np.concatenate([doc.to_utf8_array(nr_char=n_bytes) for doc in docs if len(doc)])
    assert np.array_equal(byte_rows(docs, n_bytes), expected)
    for word, row in zip(WORDS, expected):
        assert utf8_row(word, n_bytes) == bytes(row)


def test_output_and_gradient_are_spacys(docs):
    rng = np.random.default_rng(0)
    ours, theirs = cached_character_embed(nM=3, nC=8), _character_embed.CharacterEmbed(nM=3, nC=8)
    ours.initialize()
    theirs.initialize()
    E = rng.normal(size=ours.get_param("E").shape).astype(np.float32)
    ours.set_param("E", E)
    theirs.set_param("E", E.copy())
    Y, backprop = ours(docs, is_train=True)
    Z, backprop_theirs = theirs(docs, is_train=True)
    assert [y.shape for y in Y] == [z.shape for z in Z]
    for y, z in zip(Y, Z):
        assert np.array_equal(y, z)
    dY = [rng.normal(size=y.shape).astype(np.float32) for y in Y]
    backprop(dY)
    backprop_theirs([d.copy() for d in dY])
    np.testing.assert_allclose(ours.get_grad("E"), theirs.get_grad("E"), rtol=1e-6, atol=1e-6)


def test_a_model_built_with_spacys_layer_loads_into_ours_and_back(docs):
    theirs = CharacterEmbed(width=8, rows=50, nM=4, nC=8, include_static_vectors=False)
    theirs.initialize(X=docs)
    rng = np.random.default_rng(1)
    for node in theirs.walk():
        for name in node.param_names:
            node.set_param(name, rng.normal(size=node.get_param(name).shape).astype(np.float32))
    ours = with_cached_bytes(CharacterEmbed(width=8, rows=50, nM=4, nC=8, include_static_vectors=False))
    assert any(node._func is character_bytes._forward for node in ours.walk())
    ours.from_bytes(theirs.to_bytes())
    for y, z in zip(ours.predict(docs), theirs.predict(docs)):
        np.testing.assert_allclose(y, z, rtol=1e-6)
    back = CharacterEmbed(width=8, rows=50, nM=4, nC=8, include_static_vectors=False).from_bytes(ours.to_bytes())
    for y, z in zip(back.predict(docs), theirs.predict(docs)):
        np.testing.assert_allclose(y, z, rtol=1e-6)


def test_the_byte_table_stays_bounded(monkeypatch):
    monkeypatch.setattr(character_bytes, "MAX_CACHED_WORDS", 4)
    monkeypatch.setattr(character_bytes, "_BYTE_ROWS", {})
    nlp = spacy.blank("en")
    first, second = Doc(nlp.vocab, words=["one", "two", "three"]), Doc(nlp.vocab, words=["four", "five", "six"])
    rows = byte_rows([first], 8)
    assert set(character_bytes._BYTE_ROWS[8]) == {t.orth for t in first}
    # three more words would make six: the table is cleared and holds the new ones
    byte_rows([second], 8)
    assert set(character_bytes._BYTE_ROWS[8]) == {t.orth for t in second}
    assert np.array_equal(byte_rows([first], 8), rows)


def test_docs_of_other_vocabularies_and_no_docs():
    docs = [Doc(spacy.blank("en").vocab, words=["alpha", "beta"]), Doc(spacy.blank("en").vocab, words=["gamma"])]
    expected = np.concatenate([doc.to_utf8_array(nr_char=8) for doc in docs])
    assert np.array_equal(byte_rows(docs, 8), expected)
    layer = cached_character_embed(nM=3, nC=8)
    layer.initialize()
    assert layer([], is_train=False)[0] == []
