"""`senter_if_needed` sets what spaCy's `senter` sets, token for token, and
does not run its model on a doc whose sentences are all given."""
import pytest
import spacy
from spacy.attrs import SENT_START
from spacy.tokens import Doc

from helpers.toy_sentences import toy_sentence_examples
from spacy_struct.pipeline.senter import SenterIfNeeded, sentences_given


@pytest.fixture(scope="module")
def pair():
    """spaCy's senter and senter_if_needed with the same trained weights
    (a fixed seed, and enough updates that it finds the starts after '.')."""
    spacy.util.fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("senter")
    examples = toy_sentence_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(30):
        nlp.update(examples, sgd=optimizer)
    other = spacy.blank("en")
    other.add_pipe("senter_if_needed", name="senter")
    other.initialize(lambda: examples)
    other.get_pipe("senter").from_bytes(nlp.get_pipe("senter").to_bytes())
    return nlp, other


def _starts(doc):
    """The stored sentence starts (1, -1 or 0 unset), token 0 included."""
    return doc.to_array([SENT_START]).astype("int64").tolist()


def _given(nlp, words):
    starts = [True] + [w == "." for w in words[:-1]]  # a start after each '.'
    return Doc(nlp.vocab, words=words, sent_starts=starts)


class _CountingModel:
    """Stands in for the senter's model: counts the docs it is given."""

    def __init__(self, model):
        self.model, self.docs = model, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def predict(self, docs):
        self.docs += len(docs)
        return self.model.predict(docs)


def test_same_sentences_as_spacys_senter_on_raw_and_given_docs(pair):
    nlp, other = pair
    texts = ["the cat sat . a dog ran away . it rained", "birds sing loudly today", "a dog ran . the cat sat"]
    # the trained senter finds starts after '.', so guesses of all zeros could not pass
    assert 1 in _starts(nlp(texts[0]))[1:]
    for text in texts:
        assert _starts(other(text)) == _starts(nlp(text))
        given = text.split()
        assert _starts(other(_given(other, given))) == _starts(nlp(_given(nlp, given)))
    mixed = [nlp.make_doc(texts[0]), _given(nlp, texts[1].split()), nlp.make_doc(texts[2])]
    mixed_other = [other.make_doc(texts[0]), _given(other, texts[1].split()), other.make_doc(texts[2])]
    expected = [_starts(d) for d in nlp.pipe(mixed, batch_size=3)]
    assert [_starts(d) for d in other.pipe(mixed_other, batch_size=3)] == expected


def test_a_doc_with_every_start_given_skips_the_model(pair):
    _, other = pair
    senter = other.get_pipe("senter")
    counting = _CountingModel(senter.model)
    senter.model = counting
    try:
        given = _given(other, "the cat sat . it rained".split())
        before = _starts(given)
        list(senter.pipe([given, other.make_doc("a dog ran away")], batch_size=2))
        assert counting.docs == 1  # only the raw doc
        assert _starts(given) == before
        # one token left unset: the model runs, and fills that token only
        partial = _given(other, "the cat sat . it rained".split())
        partial[2].is_sent_start = None
        assert not sentences_given(partial)
        senter(partial)
        assert counting.docs == 2
        assert partial[2].is_sent_start is not None
        assert [t.is_sent_start for i, t in enumerate(partial) if i != 2] == [
            t.is_sent_start for i, t in enumerate(given) if i != 2]
    finally:
        senter.model = counting.model


def test_a_partly_given_doc_gets_what_spacys_senter_gives_it(pair):
    nlp, other = pair
    words = "the cat sat . a dog ran away . it rained".split()
    docs = []
    for model in (nlp, other):
        doc = Doc(model.vocab, words=words, sent_starts=[True] + [None] * (len(words) - 1))
        doc[2].is_sent_start = False
        docs.append(model.get_pipe("senter")(doc))
    assert _starts(docs[1]) == _starts(docs[0])
    assert 1 in _starts(docs[1])[1:]  # the model set starts where none were given


def test_overwrite_runs_the_model_on_given_docs_as_spacys_does(pair):
    nlp, other = pair
    words = "the cat sat . a dog ran away".split()
    wrong = [True] * len(words)  # every word a sentence: the model will overrule
    a, b = nlp.get_pipe("senter"), other.get_pipe("senter")
    counting = _CountingModel(b.model)
    b.model = counting
    a.cfg["overwrite"] = b.cfg["overwrite"] = True
    try:
        doc_a = Doc(nlp.vocab, words=words, sent_starts=wrong)
        doc_b = Doc(other.vocab, words=words, sent_starts=wrong)
        assert _starts(b(doc_b)) == _starts(a(doc_a))
        assert counting.docs == 1
        assert -1 in _starts(doc_b)  # the model overruled a given start
    finally:
        a.cfg["overwrite"] = b.cfg["overwrite"] = False
        b.model = counting.model


def test_empty_and_one_word_docs(pair):
    nlp, other = pair
    assert not sentences_given(other.make_doc(""))
    for text in ("", "cat"):
        assert _starts(other(text)) == _starts(nlp(text))


def test_a_pipeline_saved_with_senter_loads_as_senter_if_needed(pair, tmp_path):
    nlp, _ = pair
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p", config={"components": {"senter": {"factory": "senter_if_needed"}}})
    assert isinstance(loaded.get_pipe("senter"), SenterIfNeeded)
    text = "the cat sat . a dog ran away . it rained"
    assert _starts(loaded(text)) == _starts(nlp(text))
    assert loaded.get_pipe("senter").model.to_bytes() == nlp.get_pipe("senter").model.to_bytes()


def test_overwrite_given_at_load_time_is_kept(pair, tmp_path):
    _, other = pair
    other.to_disk(tmp_path / "p")
    words = "the cat sat . a dog ran away".split()
    for overwrite in (True, False):
        loaded = spacy.load(tmp_path / "p", config={"components": {"senter": {"overwrite": overwrite}}})
        senter = loaded.get_pipe("senter")
        assert senter.cfg["overwrite"] is overwrite
        # the same through from_bytes, as a pipeline sent to another process loads
        senter.from_bytes(other.get_pipe("senter").to_bytes())
        assert senter.cfg["overwrite"] is overwrite
        doc = senter(Doc(loaded.vocab, words=words, sent_starts=[True] * len(words)))
        # with overwrite the model overrules the given starts; without, they stay
        assert (-1 in _starts(doc)) is overwrite
    assert spacy.load(tmp_path / "p").get_pipe("senter").cfg["overwrite"] is False
