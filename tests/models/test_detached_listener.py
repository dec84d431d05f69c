"""`spacy_struct.DetachedListener.v1`: a senter reading the shared tok2vec
learns from its vectors but leaves its weights to the components that train
it, finds sentences, and saves and loads like any listener."""
import numpy as np
import pytest
import spacy

from helpers.toy_sentences import toy_sentence_examples


def _senter_pipeline(listener: str, projection: int = 0):
    """tok2vec + a senter that reads it through `listener` ("detached" or
    spaCy's own), with a window layer of its own."""
    nlp = spacy.blank("en")
    tok2vec = nlp.add_pipe("tok2vec")
    width = tok2vec.model.get_dim("nO")
    if listener == "detached":
        embed = {"@architectures": "spacy_struct.DetachedListener.v1", "width": width, "upstream": "tok2vec",
                 "projection": projection}
    else:
        embed = {"@architectures": "spacy.Tok2VecListener.v1", "width": width, "upstream": "tok2vec"}
    inner = projection or width
    model = {"@architectures": "spacy.Tagger.v2",
             "tok2vec": {"@architectures": "spacy.Tok2Vec.v2", "embed": embed,
                         "encode": {"@architectures": "spacy.MaxoutWindowEncoder.v2", "width": inner, "depth": 1,
                                    "window_size": 1, "maxout_pieces": 2}}}
    nlp.add_pipe("senter", config={"model": model})
    return nlp


def _tok2vec_weights(nlp):
    return {f"{node.id}.{name}": node.get_param(name).copy()
            for node in nlp.get_pipe("tok2vec").model.walk() for name in node.param_names
            if node.has_param(name)}


def _softmax_weights(nlp):
    return nlp.get_pipe("senter").model.layers[-1].layers[0].get_param("W").copy()


def _train(nlp, examples, steps):
    spacy.util.fix_random_seed(0)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    optimizer.L2 = 0.0  # weight decay would move the tok2vec's weights without any gradient
    before = _tok2vec_weights(nlp)
    senter_before = _softmax_weights(nlp).copy()
    for _ in range(steps):
        nlp.update(examples, sgd=optimizer)
    return before, senter_before


@pytest.mark.parametrize("projection", [0, 8])
def test_the_tok2vec_is_left_alone_and_the_senter_learns(projection):
    nlp = _senter_pipeline("detached", projection)
    examples = toy_sentence_examples(nlp)
    before, senter_before = _train(nlp, examples, 3)
    assert nlp.get_pipe("tok2vec").listeners  # spaCy found the listener inside
    after = _tok2vec_weights(nlp)
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert not np.array_equal(senter_before, _softmax_weights(nlp))


def test_spacys_listener_moves_the_tok2vec_where_the_detached_one_does_not():
    """The control: the same pipeline with spaCy's listener changes the
    tok2vec's weights, so the test above can fail."""
    nlp = _senter_pipeline("spacy")
    examples = toy_sentence_examples(nlp)
    before, _ = _train(nlp, examples, 3)
    after = _tok2vec_weights(nlp)
    assert any(not np.array_equal(before[k], after[k]) for k in before)


def test_a_detached_senter_finds_sentences_and_round_trips(tmp_path):
    nlp = _senter_pipeline("detached", 8)
    examples = toy_sentence_examples(nlp)
    _train(nlp, examples, 40)
    text = "the cat sat . a dog ran away . birds sing loudly today ."
    starts = [t.is_sent_start for t in nlp(text)]
    assert starts[4] and starts[9]  # after each '.'
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert [t.is_sent_start for t in loaded(text)] == starts
    assert loaded.get_pipe("tok2vec").listeners


def test_the_tok2vec_still_trains_when_the_detached_listener_reports_last():
    """A tagger on spaCy's listener first, the detached senter last: the
    tok2vec updates when its last listener reports, so the layer must
    still report (with zeros)."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("tagger", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": {
        "@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "tok2vec"}}})
    nlp.add_pipe("senter", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": {
        "@architectures": "spacy_struct.DetachedListener.v1", "width": 96, "upstream": "tok2vec"}}})
    examples = toy_sentence_examples(nlp)
    for example in examples:
        for token in example.reference:
            token.tag_ = "P" if token.text == "." else "W"
    before, _ = _train(nlp, examples, 3)
    assert nlp.get_pipe("tok2vec").listeners[-1].name == "tok2vec-listener"  # the senter's, inside the layer
    after = _tok2vec_weights(nlp)
    assert any(not np.array_equal(before[k], after[k]) for k in before)


def test_a_width_other_than_the_tok2vecs_is_a_clear_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("senter", config={"model": {"@architectures": "spacy.Tagger.v2", "tok2vec": {
        "@architectures": "spacy_struct.DetachedListener.v1", "width": 64, "upstream": "tok2vec"}}})
    examples = toy_sentence_examples(nlp, n=4)
    nlp.initialize(lambda: examples)
    with pytest.raises(ValueError, match="96 columns, but the layer's width is 64"):
        nlp.update(examples)


def test_replaced_listeners_are_refused_with_a_clear_error():
    nlp = _senter_pipeline("detached")
    examples = toy_sentence_examples(nlp, n=4)
    nlp.initialize(lambda: examples)
    nlp.replace_listeners("tok2vec", "senter", ["model.tok2vec.embed"])
    with pytest.raises(ValueError, match="replace_listeners"):
        nlp("the cat sat . a dog ran away .")
