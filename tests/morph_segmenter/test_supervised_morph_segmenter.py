"""supervised_morph_segmenter: the morph scorer's gradients, learning the
sample's gold segmentations with `spacy train`'s loop, serialization and
errors. The partition structure itself is checked in test_partitions.py."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from thinc.api import fix_random_seed

from conftest import SAMPLE
from helpers.grad_check import check_param_gradient, linear_objective
from spacy_struct.models.batch import SentenceBatch
from spacy_struct.models.morph_scorer import build_morph_scorer
from spacy_struct.morph_segmenter import set_morphs


def _small_tok2vec():
    from spacy.ml.models.tok2vec import build_hash_embed_cnn_tok2vec

    return build_hash_embed_cnn_tok2vec(
        pretrained_vectors=None, width=16, depth=1, embed_size=100, window_size=1,
        maxout_pieces=2, subword_features=False)


@pytest.mark.parametrize("lexicon_rows,context_width", [(0, 0), (50, 6)])
def test_morph_scorer_gradients_match_finite_differences(lexicon_rows, context_width):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    model = build_morph_scorer(_small_tok2vec(), char_width=5, char_rows=40, word_width=4,
                               char_context_width=6, hidden_width=3, lexicon_rows=lexicon_rows,
                               context_width=context_width, dropout=0.0)
    model.get_ref("output").set_dim("nO", 1)
    docs = [Doc(nlp.vocab, words=["Unkind", "walkers", "a"]), Doc(nlp.vocab, words=["runs", "Walkers"])]
    batch = SentenceBatch(docs, [(0, 0, 3), (1, 0, 2)])
    model.initialize(X=batch)
    rng = np.random.default_rng(0)
    for name in ("U", "length", "b") + (("lexicon",) if lexicon_rows else ()):  # zero-initialised
        model.set_param(name, rng.normal(size=model.get_param(name).shape).astype(np.float32))
    out, backprop = model(batch, is_train=True)
    assert [o.shape for o in out] == [(7, 7), (8, 8), (2, 2), (5, 5), (8, 8)]
    assert all(not np.tril(o).any() for o in out)  # no piece at j <= i
    R = [np.triu(rng.normal(size=o.shape), 1) for o in out]
    f = linear_objective(model, batch, backprop, R)

    names = [(model, n) for n in model.param_names]
    names += [(node, n) for node in model.walk() if node.name == "bilstm" for n in node.param_names]
    for node, name in names:
        check_param_gradient(node, name, f, rng, rel=5e-2)


def _examples(nlp, name):
    docs = list(DocBin().from_disk(SAMPLE / name).get_docs(nlp.vocab))
    return [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
            for d in docs]


def _train(epochs=12, **config):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("supervised_morph_segmenter", config=config)
    train = _examples(nlp, "morph_train.spacy")
    optimizer = nlp.initialize(lambda: train)
    losses = []
    for _ in range(epochs):
        epoch = {}
        for start in range(0, len(train), 20):
            nlp.update(train[start:start + 20], sgd=optimizer, losses=epoch)
        losses.append(epoch["supervised_morph_segmenter"])
    return nlp, losses


@pytest.fixture(scope="module")
def trained():
    return _train()


def test_learns_the_sample_and_segments_held_out_words(trained):
    nlp, losses = trained
    assert losses[-1] < 0.2 * losses[0]
    dev = _examples(nlp, "morph_dev.spacy")
    scores = nlp.evaluate(dev)
    # trivial segmentations: no split has recall 0; every character, precision < 0.2
    assert scores["morph_boundary_f"] > 0.9, scores
    doc = nlp("The walkers were unkindly .")
    assert all("".join(t._.morphs) == t.text for t in doc)
    assert doc[1]._.morphs == ("walker", "s")
    assert doc[0]._.morphs == ("The",)
    assert nlp("a  b")[1]._.morphs == ("  "[:len(nlp("a  b")[1].text)],)


def test_margin_loss_trains_too():
    nlp, losses = _train(loss="margin")
    assert losses[-1] < 0.5 * losses[0]
    assert nlp.evaluate(_examples(nlp, "morph_dev.spacy"))["morph_boundary_f"] > 0.9


def test_round_trips_and_load_time_settings(trained, tmp_path):
    nlp, _ = trained
    text = "the walkers unbrightly flanding ."
    before = [tuple(t._.morphs) for t in nlp(text)]
    nlp.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    assert [tuple(t._.morphs) for t in loaded(text)] == before
    again = spacy.blank("en")
    again.add_pipe("supervised_morph_segmenter")
    again.from_bytes(nlp.to_bytes())
    assert [tuple(t._.morphs) for t in again(text)] == before
    docs = list(loaded.pipe([text] * 4, n_process=2))
    assert all([tuple(t._.morphs) for t in d] == before for d in docs)
    # how to decode comes from the config given at load time
    short = spacy.load(tmp_path / "model", config={"components": {"supervised_morph_segmenter": {"max_morph_length": 2}}})
    assert short.get_pipe("supervised_morph_segmenter").cfg["max_morph_length"] == 2
    assert all(len(m) <= 2 for t in short(text) for m in t._.morphs)


def test_misaligned_gold_is_counted_not_trained_on(trained):
    nlp, _ = trained
    pipe = nlp.get_pipe("supervised_morph_segmenter")
    reference = Doc(nlp.vocab, words=["un", "kindly", "walkers"])
    set_morphs(reference[1], ["kind", "ly"])
    set_morphs(reference[2], ["walker", "s"])
    predicted = Doc(nlp.vocab, words=["unkindly", "walkers"])
    with pytest.warns(UserWarning, match="left out of training"):
        ranges, golds = pipe.gold(Example(predicted, reference), 0)
    assert [None if g is None else g.tolist() for g in golds[0]] == [None, [6]]
    assert pipe.misaligned_gold == {"morphs": 1}


def test_clear_errors():
    nlp = spacy.blank("en")
    nlp.add_pipe("supervised_morph_segmenter")
    plain = [Example(Doc(nlp.vocab, words=["walkers"]), Doc(nlp.vocab, words=["walkers"]))]
    with pytest.raises(ValueError, match="no gold morphs"):
        nlp.initialize(lambda: plain)
    with pytest.raises(ValueError, match="not defined for segmentations"):
        spacy.blank("en").add_pipe("supervised_morph_segmenter", config={"loss": "local"})
    with pytest.raises(ValueError, match="max_morph_length"):
        spacy.blank("en").add_pipe("supervised_morph_segmenter", config={"max_morph_length": -1})
    with pytest.raises(ValueError, match="initialize it first"):
        fresh = spacy.blank("en")
        fresh.add_pipe("supervised_morph_segmenter")
        fresh("walkers")
    gold = Doc(nlp.vocab, words=["walkers"])
    set_morphs(gold[0], ["walker", "s"])
    with pytest.raises(ValueError, match="initialize it first"):
        fresh.update([Example(Doc(nlp.vocab, words=["walkers"]), gold)])


def test_gold_morphs_longer_than_the_limit_are_counted_not_trained_on(trained):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("supervised_morph_segmenter", config={"max_morph_length": 3})
    reference = Doc(nlp.vocab, words=["walkers", "unkind"])
    set_morphs(reference[0], ["walker", "s"])
    set_morphs(reference[1], ["un", "kin", "d"])
    with pytest.warns(UserWarning, match="longer than max_morph_length = 3"):
        ranges, golds = pipe.gold(Example(Doc(nlp.vocab, words=["walkers", "unkind"]), reference), 0)
    assert [None if g is None else g.tolist() for g in golds[0]] == [None, [2, 5]]
    assert pipe.unrepresentable_gold == 1


def test_a_shared_tok2vec_trains_on_batches_with_docs_without_gold():
    """Docs without gold morphs stay in the batch (the tok2vec listener must
    see the docs the tok2vec component saw) and add nothing to the loss."""
    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.add_pipe("supervised_morph_segmenter", config={"model": {
        "@architectures": "spacy_struct.MorphScorer.v1",
        "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "*"}}})
    train = _examples(nlp, "morph_train.spacy")[:20]
    bare = Doc(nlp.vocab, words=["causing", "it"])
    batch = train[:5] + [Example(bare.copy(), bare)]
    optimizer = nlp.initialize(lambda: train)
    losses = nlp.update(batch, sgd=optimizer)
    assert losses["supervised_morph_segmenter"] > 0
    ranges, golds = nlp.get_pipe("supervised_morph_segmenter").gold(batch[5], 5)
    assert ranges == [(0, 2)] and golds == [[None, None]]
    only_bare = nlp.update(batch[5:], sgd=optimizer)
    assert only_bare["supervised_morph_segmenter"] == 0.0


@pytest.mark.parametrize("text", ["Walkers", "ÄÖü-straße", "İstanbul", "x" * 40])
def test_piece_rows_are_the_fnv_hash_of_each_piece(text):
    """The rows saved models index: 64-bit FNV-1a of each lowercase piece's
    UTF-8 bytes, found incrementally (a long token costs O(m^2), not O(m^3))."""
    from spacy_struct.models.morph_scorer import _piece_rows

    def fnv(piece):
        h = 1469598103934665603
        for byte in piece.encode("utf8"):
            h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        return h

    low = text.lower() if len(text.lower()) == len(text) else text
    rows = _piece_rows(text, 5000)
    for i in range(len(text)):
        for j in range(i + 1, len(text) + 1):
            assert rows[i, j] == fnv(low[i:j]) % 5000
