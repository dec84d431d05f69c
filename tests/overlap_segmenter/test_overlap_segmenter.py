"""overlap_segmenter as a spaCy component: training on a small fixture,
output in doc._.segments and doc.spans, serialization, settings at load
time, multiprocessing, and clear errors for bad gold."""
import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Adam, fix_random_seed


SMALL_MODEL = {"context_width": 32, "hidden_width": 16, "dropout": 0.0}

SENTENCES = [
    ("BMP2 and BMP4 genes are expressed", [
        ("PR", [(0, 1)]), ("PR", [(2, 3)]), ("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]),
    ("the limb bud grows", [("UBERON", [(1, 3)]), ("UBERON", [(1, 2)])]),
    ("Shh and Fgf8 genes act", [
        ("PR", [(0, 1)]), ("PR", [(2, 3)]), ("SO", [(0, 1), (3, 4)]), ("SO", [(2, 4)])]),
    ("mice lack the limb", [("NCBITaxon", [(0, 1)]), ("UBERON", [(3, 4)])]),
]


def make_examples(nlp, sentences=SENTENCES):
    examples = []
    for text, segments in sentences:
        ref = Doc(nlp.vocab, words=text.split())
        ref._.segments = segments
        examples.append(Example(nlp.make_doc(text), ref))
    return examples


@pytest.fixture(scope="module")
def trained():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.03)
    for _ in range(200):
        nlp.update(examples, sgd=optimizer)
    return nlp


def _found(doc):
    return {(s.label_, s.offsets) for s in doc._.segments}


def test_learns_overlapping_and_discontinuous_segments(trained):
    for text, segments in SENTENCES:
        doc = trained(text)
        assert _found(doc) == {(label, tuple(frags)) for label, frags in segments}, text


def test_contiguous_segments_go_to_doc_spans_and_fragments_to_their_own_key(trained):
    doc = trained("BMP2 and BMP4 genes are expressed")
    assert sorted((s.text, s.label_) for s in doc.spans["sc"]) == [
        ("BMP2", "PR"), ("BMP4", "PR"), ("BMP4 genes", "SO")]
    fragments = doc.spans["sc_fragments"]
    assert [(s.text, s.label_) for s in fragments] == [("BMP2", "SO"), ("genes", "SO")]
    assert len({s.id_ for s in fragments}) == 1
    html = spacy.displacy.render(doc, style="span", options={"spans_key": "sc_fragments"})
    assert "genes" in html


def test_segments_view_draws_a_discontinuous_segment_as_one_numbered_mention(trained):
    from spacy_struct.overlap_segmenter import segments_view

    doc = trained("BMP2 and BMP4 genes are expressed")
    group = segments_view(doc, "view")
    assert doc.spans["view"] is not None and len(group) == len(doc.spans["view"])
    numbered = [(s.text, s.label_) for s in group if "#" in s.label_]
    assert len(numbered) == 2 and numbered[0][1] == numbered[1][1]
    assert [text for text, _ in numbered] == ["BMP2", "genes"]
    html = spacy.displacy.render(doc, style="span", options={"spans_key": "view"})
    assert numbered[0][1] in html


def test_evaluate_reports_segment_scores(trained):
    scores = trained.evaluate(make_examples(trained))
    assert scores["segments_f"] == 1.0
    assert scores["segments_discontinuous_f"] == 1.0
    assert scores["segments_crossing_f"] == 1.0
    # references without doc._.segments (a reader that dropped user_data):
    # nothing to score, reported as None, as spaCy's scorers do, not as 0
    plain = [Example(trained.make_doc(eg.reference.text), trained.make_doc(eg.reference.text))
             for eg in make_examples(trained)]
    missing = trained.evaluate(plain)
    assert missing["segments_f"] is None and missing["segments_crossing_f"] is None


def test_round_trips_through_disk_and_bytes(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    text = SENTENCES[0][0]
    assert _found(loaded(text)) == _found(trained(text))
    again = spacy.blank("en")
    again.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL})
    again.from_bytes(trained.to_bytes())
    assert _found(again(text)) == _found(trained(text))


def test_settings_given_at_load_time_are_used(trained, tmp_path):
    trained.to_disk(tmp_path / "model")
    strict = spacy.load(tmp_path / "model", config={"components": {"overlap_segmenter": {"threshold": 1e6}}})
    assert strict.get_pipe("overlap_segmenter").cfg["threshold"] == 1e6
    assert strict(SENTENCES[0][0])._.segments == ()
    contiguous = spacy.load(tmp_path / "model", config={"components": {"overlap_segmenter": {"contiguous": True}}})
    assert not any(s.is_discontinuous for s in contiguous(SENTENCES[0][0])._.segments)
    found = trained(SENTENCES[0][0])._.segments
    assert any(s.is_discontinuous for s in found) and any(not s.is_discontinuous for s in found)
    no_gaps = spacy.load(tmp_path / "model", config={"components": {"overlap_segmenter": {"gapped_threshold": 1e6}}})
    assert no_gaps.get_pipe("overlap_segmenter").cfg["gapped_threshold"] == 1e6
    assert no_gaps(SENTENCES[0][0])._.segments == tuple(s for s in found if not s.is_discontinuous)


def test_segments_survive_multiprocessing(trained):
    texts = [text for text, _ in SENTENCES]
    single = [_found(doc) for doc in trained.pipe(texts)]
    multi = [_found(doc) for doc in trained.pipe(texts, n_process=2, batch_size=2)]
    assert single == multi


def test_bad_gold_gets_an_error_naming_the_example():
    nlp = spacy.blank("en")
    seg = nlp.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    missing = Example(nlp.make_doc("no segments here"), nlp.make_doc("no segments here"))
    with pytest.raises(ValueError, match=r"example 0 \('no segments here'\).*no doc._.segments"):
        nlp.update([missing])
    unknown = make_examples(nlp, [("a b c", [("GENE", [(0, 1)])])])
    with pytest.raises(ValueError, match="label 'GENE'"):
        nlp.update(unknown)
    ref = Doc(nlp.vocab, words="BMP2 binds . genes act".split(),
              sent_starts=[True, False, False, True, False])
    ref._.segments = [("SO", [(0, 1), (3, 4)])]
    with pytest.raises(ValueError, match="crosses a sentence boundary"):
        nlp.update([Example(nlp.make_doc(ref.text), ref)])
    assert seg.misaligned_gold == {}
    stale = Doc(nlp.vocab, words="BMP2 and BMP4 genes".split())
    stale._.segments = [("SO", [(2, 4)])]
    with stale.retokenize() as retokenizer:                  # the stored offsets go stale
        retokenizer.merge(stale[0:2])
    with pytest.raises(ValueError, match=r"segment 0 stored on the doc .*outside the doc's 3 tokens"):
        nlp.update([Example(Doc(nlp.vocab, words=[t.text for t in stale]), stale)])
    with pytest.raises(ValueError, match="integer token offsets"):
        stale._.segments = [("SO", [(0, 1.5)])]


def test_losses_made_for_one_structure_are_refused():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="multilabel_margin"):
        nlp.add_pipe("overlap_segmenter", config={"loss": "margin"})
    with pytest.raises(ValueError, match="max_gap"):
        nlp.add_pipe("overlap_segmenter", name="x", config={"contiguous": True, "max_gap": 3})


def test_gold_the_restrictions_exclude_is_counted_and_announced():
    nlp = spacy.blank("en")
    seg = nlp.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL, "contiguous": True})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    with pytest.warns(UserWarning, match="left out of training"):
        nlp.update(examples)
    assert seg.unrepresentable_gold == 2


def test_multilabel_margin_trains_too():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": SMALL_MODEL, "loss": "multilabel_margin"})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    optimizer = Adam(0.01)
    first = nlp.update(examples, sgd=optimizer)["overlap_segmenter"]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer, losses={})["overlap_segmenter"]
    assert last < first / 4


@pytest.mark.parametrize("settings", [{"loss": "multilabel_margin"}, {"contiguous": True}, {"max_gap": 0}])
def test_a_gapped_weight_that_would_do_nothing_is_refused(settings):
    with pytest.raises(ValueError, match="gapped_weight = 5.0 weights gapped gold segments"):
        spacy.blank("en").add_pipe("overlap_segmenter", config={"gapped_weight": 5.0, **settings})
    spacy.blank("en").add_pipe("overlap_segmenter", config={"gapped_weight": 5.0})


@pytest.mark.parametrize("settings,expected", [
    ({}, (np.log(0.5), -1.0)),                                  # crf: its own two decision points
    ({"threshold": -2.0}, (-2.0, -2.0)),                        # a threshold set is both
    ({"gapped_threshold": -3.0}, (np.log(0.5), -3.0)),
    ({"threshold": 0.5, "gapped_threshold": 1.5}, (0.5, 1.5)),
    ({"loss": "multilabel_margin"}, (0.0, 0.0)),
])
def test_the_thresholds_of_contiguous_and_gapped_segments(settings, expected):
    structure = spacy.blank("en").add_pipe("overlap_segmenter", config=settings).structure
    assert (structure.threshold, structure.gapped_threshold) == pytest.approx(expected)


@pytest.mark.parametrize("key", ["threshold", "gapped_threshold"])
@pytest.mark.parametrize("value", ["low", True, [0.5]])
def test_a_threshold_that_is_not_a_finite_number_is_refused(key, value):
    """Refused with an error that names the setting (spaCy's config check
    or the component's own, whichever sees it first)."""
    with pytest.raises(ValueError, match=f"overlap_segmenter(:| ->) {key}"):
        spacy.blank("en").add_pipe("overlap_segmenter", config={key: value})


# ------------------------------------------------------- coordination, unseen words
COORDINATED_HEADS = {"genes": "DNA", "cells": "CELL"}


def _coordination_examples(nlp, rng, modifiers, n, kinds):
    """Sentences of a toy language: "both X and Y N ..." (X ... N and Y N),
    "X , Z and Y N ..." (X ... N, Z ... N and Y N) and "the Y N ..." (Y N),
    the type given by the head N."""
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        head = rng.choice(sorted(COORDINATED_HEADS))
        label = COORDINATED_HEADS[head]
        verb = rng.choice([["were", "found"], ["were", "seen"], ["grew"]])
        x, y, z = rng.sample(modifiers, 3)
        if kind == "pair":
            words = ["both", x, "and", y, head] + verb
            segments = [(label, [(1, 2), (4, 5)]), (label, [(3, 5)])]
        elif kind == "list":
            words = [x, ",", z, "and", y, head] + verb
            segments = [(label, [(0, 1), (5, 6)]), (label, [(2, 3), (5, 6)]), (label, [(4, 6)])]
        else:
            words = ["the", y, head] + verb
            segments = [(label, [(1, 3)])]
        ref = Doc(nlp.vocab, words=words)
        ref._.segments = segments
        out.append(Example(Doc(nlp.vocab, words=words), ref))
    return out


def _train_on_coordinations(model):
    """A pipeline with `model` trained on the toy language's coordinations
    of 12 modifiers (40 epochs: at 20 the skip scores of seed 0 were on the
    edge of learning the construction, and the rounding of one machine's
    BLAS tipped them; 4 of 24 found, seeds 1 and 2, and every seed at 40,
    find all 24)."""
    import random

    fix_random_seed(0)
    rng = random.Random(0)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": model})
    train = _coordination_examples(nlp, rng, SEEN_MODIFIERS, 60, ("pair", "list", "plain", "plain"))
    nlp.initialize(lambda: train)
    optimizer = Adam(0.01)
    for _ in range(40):
        rng.shuffle(train)
        for b in range(0, len(train), 10):
            nlp.update(train[b:b + 10], sgd=optimizer)
    return nlp


SEEN_MODIFIERS = "rat cow dog pig hen fox owl bat eel yak elk ape".split()


def _unseen_coordinations(nlp):
    """(found, wrong, missed) discontinuous mentions of 24 sentences whose
    modifiers training never saw, and the sentences."""
    import random

    unseen = _coordination_examples(nlp, random.Random(1), "emu gnu koi asp".split(), 24,
                                    ("pair", "list", "plain"))
    found = wrong = missed = 0
    for eg in unseen:
        assert not set(t.text for t in eg.reference) & set(SEEN_MODIFIERS)
        doc = nlp(Doc(nlp.vocab, words=[t.text for t in eg.reference]))
        predicted = {(s.label_, s.offsets) for s in doc._.segments if s.is_discontinuous}
        gold = {(s.label_, s.offsets) for s in eg.reference._.segments if s.is_discontinuous}
        found += len(predicted & gold)
        wrong += len(predicted - gold)
        missed += len(gold - predicted)
    return found, wrong, missed, unseen


def test_coordinations_of_words_never_seen_in_training_come_out_discontinuous():
    """Trained on coordinations of 12 modifiers, the default model finds the
    discontinuous mentions of coordinations of 4 others: what licenses the
    gap is the construction, not the words."""
    found, wrong, missed, _ = _unseen_coordinations(_train_on_coordinations(SMALL_MODEL))
    assert found + missed == 24
    assert found >= 22 and wrong <= 2, (found, wrong, missed)


@pytest.mark.parametrize("width", [-1, "64", 2.5, True])
def test_a_bad_skip_width_is_refused_naming_the_model(width):
    with pytest.raises(Exception, match="skip_width"):
        spacy.blank("en").add_pipe("overlap_segmenter", config={"model": {"skip_width": width}})


def test_a_v1_model_block_keeps_the_papers_transitions(tmp_path):
    """SegmentPairScorer.v2 turns the skip layer on by default; a config
    naming v1 (as pipelines saved before v2 do) fills its missing settings
    from v1, not from the factory's v2 block, so it keeps the model it was
    trained with."""
    from spacy_struct.models.dropout import SCORER_DROPOUT

    nlp = spacy.blank("en")
    default = nlp.add_pipe("overlap_segmenter", name="default").model.get_ref("head")
    assert default.get_dim("skip_width") == 64 and default.attrs[SCORER_DROPOUT] == 0.1
    v1 = nlp.add_pipe("overlap_segmenter", name="v1", config={"model": {
        "@architectures": "spacy_struct.SegmentPairScorer.v1",
        "tok2vec": {"@architectures": "spacy.Tok2VecListener.v1", "width": 96, "upstream": "*"},
    }}).model.get_ref("head")
    assert v1.get_dim("skip_width") == 0 and v1.attrs[SCORER_DROPOUT] == 0.33
    assert "skip_W" not in v1.param_names
    # a pipeline saved before v2 existed: its config names v1 without the new settings
    old = spacy.blank("en")
    own_tok2vec = {"@architectures": "spacy.HashEmbedCNN.v2", "pretrained_vectors": None, "width": 16,
                   "depth": 1, "embed_size": 100, "window_size": 1, "maxout_pieces": 2,
                   "subword_features": False}
    old.add_pipe("overlap_segmenter", config={"model": {
        **SMALL_MODEL, "@architectures": "spacy_struct.SegmentPairScorer.v1", "tok2vec": own_tok2vec}})
    examples = make_examples(old)
    old.initialize(lambda: examples)
    old.to_disk(tmp_path / "old")
    cfg = (tmp_path / "old" / "config.cfg").read_text()
    cfg = "\n".join(line for line in cfg.splitlines() if not line.startswith(("skip_width", "skip_parallel")))
    (tmp_path / "old" / "config.cfg").write_text(cfg)
    loaded = spacy.load(tmp_path / "old").get_pipe("overlap_segmenter").model.get_ref("head")
    assert loaded.get_dim("skip_width") == 0 and "skip_W" not in loaded.param_names


def test_the_coordination_factor_trains_finds_unseen_coordinations_and_round_trips():
    """With `coordination_width` the toy language's coordinations of unseen
    modifiers still come out discontinuous, and the pipeline predicts the
    same after bytes and pickle."""
    import pickle

    model = {**SMALL_MODEL, "coordination_width": 8}
    nlp = _train_on_coordinations(model)
    found, wrong, missed, unseen = _unseen_coordinations(nlp)
    assert found >= 22 and wrong <= 2, (found, wrong, missed)
    head = nlp.get_pipe("overlap_segmenter").model.get_ref("head")
    assert np.abs(head.get_param("coord_out")).max() > 0.01  # the factor learned something
    texts = [" ".join(t.text for t in eg.reference) for eg in unseen[:6]]
    before = [_found(doc) for doc in nlp.pipe(texts)]
    again = spacy.blank("en")
    again.add_pipe("overlap_segmenter", config={"model": model})
    again.from_bytes(nlp.to_bytes())
    for copy in (again, pickle.loads(pickle.dumps(nlp))):
        copied = copy.get_pipe("overlap_segmenter").model.get_ref("head")
        for name in ("coord_W", "coord_b", "coord_table", "coord_paths", "coord_out"):
            np.testing.assert_array_equal(copied.get_param(name), head.get_param(name))
        assert [_found(doc) for doc in copy.pipe(texts)] == before


def test_the_coordination_factor_needs_the_crf_loss():
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"loss": "multilabel_margin",
                                              "model": {**SMALL_MODEL, "coordination_width": 4}})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    with pytest.raises(ValueError, match="coordination factor.*'crf' loss"):
        nlp.update(examples)
