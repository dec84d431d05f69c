"""The mst_parser component: training, decoding, sentences, errors, I/O."""
import random
import subprocess
import sys

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_struct.convert.conllu import sentences_to_docs
from spacy_struct.structs import crossing_arcs
from spacy_struct.pipeline.sentences import ranges_from_starts, sentence_ranges

SMALL_MODEL = {
    "@architectures": "spacy_struct.BiaffineArcScorer.v1",
    "arc_width": 48,
    "label_width": 16,
    "dropout": 0.0,
    "context_width": 0,
    "tok2vec": {
        "@architectures": "spacy.HashEmbedCNN.v2",
        "pretrained_vectors": None,
        "width": 48,
        "depth": 2,
        "embed_size": 500,
        "window_size": 1,
        "maxout_pieces": 2,
        "subword_features": True,
    },
}


def examples_from(sentences, vocab):
    """One Example per sentence, the predicted doc holding only the words."""
    out = []
    for doc in sentences_to_docs(sentences, vocab, n_sents=1):
        out.append(Example(Doc(vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc]), doc))
    return out


def train(nlp, examples, epochs, seed=0):
    random.Random(seed).shuffle(examples)
    optimizer = nlp.initialize(lambda: examples)
    losses_per_epoch = []
    for _ in range(epochs):
        losses = {}
        for i in range(0, len(examples), 16):
            nlp.update(examples[i:i + 16], sgd=optimizer, losses=losses)
        losses_per_epoch.append(losses["mst_parser"])
    return losses_per_epoch


def heads_of(sent):
    return np.array([-1] + [0 if t.head.i == t.i else t.head.i - sent.start + 1 for t in sent])


@pytest.fixture(scope="module")
def dev_sentences():
    from spacy_struct.convert.conllu import read_conllu
    from conftest import SAMPLE

    return list(read_conllu(SAMPLE / "sample-dev.conllu"))


@pytest.fixture(scope="module")
def trained(sample_sentences):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": SMALL_MODEL})
    losses = train(nlp, examples_from(sample_sentences, nlp.vocab), epochs=12)
    return nlp, losses


def parser_order(nlp) -> int:
    return nlp.get_pipe("mst_parser").order


def test_the_factory_default_is_second_order_with_the_margin_loss():
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser")
    assert parser.order == 2 and parser.cfg["loss"] == "margin" and parser.cfg["decoder"] == "cle"
    assert nlp.config["components"]["mst_parser"]["loss"] == "margin"
    # the other components keep the shared default
    assert nlp.add_pipe("nested_ner").cfg["loss"] == "crf"


def test_training_lowers_the_loss_and_parses_held_out_sentences(trained, dev_sentences):
    nlp, losses = trained
    assert losses[-1] < 0.2 * losses[0]
    dev = examples_from(dev_sentences, nlp.vocab)
    scores = nlp.evaluate(dev)
    assert scores["dep_uas"] > 0.9
    assert scores["dep_las"] > 0.85
    # the sample's extraposed relatives and PPs are non-projective: CLE finds them
    assert scores["dep_nonproj_r"] > 0.5


def test_eisner_decoding_returns_projective_trees(trained, dev_sentences):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    parser.cfg["decoder"] = "eisner"
    try:
        docs = list(nlp.pipe([eg.predicted for eg in examples_from(dev_sentences, nlp.vocab)]))
    finally:
        parser.cfg["decoder"] = "cle"
    assert all(not crossing_arcs(heads_of(s)).any() for d in docs for s in d.sents)


def test_one_root_per_sentence_and_the_sentences_are_kept(trained):
    nlp, _ = trained
    text = "The dog saw a cat. A bird arrived today of the village. The old farmer sold the car in the park."
    doc = nlp.make_doc(text)
    for i, token in enumerate(doc):
        token.is_sent_start = i == 0 or doc[i - 1].text == "."
    before = [(s.start, s.end) for s in doc.sents]
    doc = nlp(doc)
    assert [(s.start, s.end) for s in doc.sents] == before
    for sent in doc.sents:
        assert sum(t.head.i == t.i for t in sent) == 1
        assert sent.root.dep_ == "ROOT"
        assert all(t.dep_ in nlp.get_pipe("mst_parser").labels for t in sent if t.head.i != t.i)


def test_multi_root_allows_several_roots(sample_sentences):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, order=1), "multi_root": True, "loss": "local"})
    examples = examples_from(sample_sentences[:40], nlp.vocab)
    train(nlp, examples, epochs=1)
    parser = nlp.get_pipe("mst_parser")
    head = parser.model.get_ref("head")
    # make the root the best head of every word: the decoder must then hang
    # several words from it with multi_root, and exactly one without
    distance = head.get_param("distance").copy()
    distance[-1] = 1e3          # the root row's bucket
    head.set_param("distance", distance)
    doc = nlp("dog cat bird")
    assert sum(t.head.i == t.i for t in doc) == 3
    parser.cfg["multi_root"] = False
    doc = nlp("dog cat bird")
    assert sum(t.head.i == t.i for t in doc) == 1


def test_an_unsegmented_long_doc_is_cut_and_an_empty_doc_is_fine(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    old = parser.cfg["max_unsegmented_length"]
    parser.cfg["max_unsegmented_length"] = 30
    try:
        words = ("the dog saw a cat . " * 40).split()
        doc = nlp(Doc(nlp.vocab, words=words))
        lengths = [len(s) for s in doc.sents]
        assert max(lengths) <= 30 and sum(lengths) == len(words)
        assert all(s[-1].text == "." for s in doc.sents)     # cut after the full stops
        assert len(nlp("")) == 0
        docs = list(nlp.pipe(["", "The dog slept.", ""]))
        assert len(docs[1]) == 4 and docs[1].has_annotation("DEP")
    finally:
        parser.cfg["max_unsegmented_length"] = old


def test_training_ranges_take_the_gold_sentences_and_keep_a_boundaryless_doc_whole():
    from spacy_struct.pipeline.sentences import training_ranges

    nlp = spacy.blank("en")
    words = ["a", "b", ".", "c", "d", ".", "e"]
    # one sentence per doc, as spaCy's gold_preproc reader gives: kept whole
    eg = Example(Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words))
    assert training_ranges(eg, 200, 512) == [(0, 7)]
    assert training_ranges(eg, 4, 512) == [(0, 3), (3, 6), (6, 7)]       # a longer doc: by rule
    ref = Doc(nlp.vocab, words=words, sent_starts=[True, False, False, True, False, False, True])
    assert training_ranges(Example(Doc(nlp.vocab, words=words), ref), 200, 512) == [(0, 3), (3, 6), (6, 7)]
    assert training_ranges(Example(Doc(nlp.vocab, words=words), ref), 200, 2) == [
        (0, 2), (2, 3), (3, 5), (5, 6), (6, 7)]                          # over the hard cap


def test_sentence_ranges():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words=["a"] * 25)
    assert sentence_ranges(doc, 30, 100) == [(0, 25)]
    pieces = sentence_ranges(doc, 10, 100)
    assert pieces == [(0, 9), (9, 18), (18, 25)]          # equal pieces under the limit
    doc = Doc(nlp.vocab, words=["a", "b", ".", "c", "d", "e", "!", "f"])
    assert sentence_ranges(doc, 5, 100) == [(0, 3), (3, 7), (7, 8)]
    doc = Doc(nlp.vocab, words=["a"] * 8, sent_starts=[True] + [False] * 7)
    assert sentence_ranges(doc, 2, 100) == [(0, 8)]        # given boundaries are kept
    assert sentence_ranges(doc, 2, 4) == [(0, 4), (4, 8)]  # unless over the hard cap
    assert ranges_from_starts([True, False, True, None, False]) == [(0, 2), (2, 5)]
    assert sentence_ranges(Doc(nlp.vocab, words=[]), 5, 5) == []


def test_serialization_round_trips(trained, tmp_path, dev_sentences):
    nlp, _ = trained
    texts = [" ".join(s.words) for s in dev_sentences[:20]]
    expected = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert loaded.get_pipe("mst_parser").labels == nlp.get_pipe("mst_parser").labels
    assert loaded.get_pipe("mst_parser").cfg == nlp.get_pipe("mst_parser").cfg
    got = [[(t.head.i, t.dep_) for t in d] for d in loaded.pipe(texts)]
    assert got == expected
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("mst_parser", config={"model": SMALL_MODEL})
    from_bytes.from_bytes(nlp.to_bytes())
    assert [[(t.head.i, t.dep_) for t in d] for d in from_bytes.pipe(texts)] == expected
    db = DocBin(docs=list(nlp.pipe(texts)))
    back = list(DocBin().from_bytes(db.to_bytes()).get_docs(nlp.vocab))
    assert [[(t.head.i, t.dep_) for t in d] for d in back] == expected


def test_context_layer_trains_and_round_trips(sample_sentences, dev_sentences, tmp_path):
    nlp = spacy.blank("en")
    model = dict(SMALL_MODEL, context_width=32, context_depth=1, order=1)
    nlp.add_pipe("mst_parser", config={"model": model, "loss": "local"})
    losses = train(nlp, examples_from(sample_sentences, nlp.vocab), epochs=6)
    assert losses[-1] < 0.2 * losses[0]
    assert nlp.evaluate(examples_from(dev_sentences, nlp.vocab))["dep_uas"] > 0.85
    texts = [" ".join(s.words) for s in dev_sentences[:10]]
    expected = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert [[(t.head.i, t.dep_) for t in d] for d in loaded.pipe(texts)] == expected


def test_character_encoder_widens_the_scorer_input_and_round_trips(sample_sentences, dev_sentences, tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, characters=24)})
    losses = train(nlp, examples_from(sample_sentences, nlp.vocab), epochs=6)
    assert losses[-1] < 0.2 * losses[0]
    # the tok2vec (48) and the character encoder (24) side by side
    assert nlp.get_pipe("mst_parser").model.get_ref("head").get_dim("nI") == 48 + 24
    texts = [" ".join(s.words) for s in dev_sentences[:10]]
    expected = [[(t.head.i, t.dep_) for t in d] for d in nlp.pipe(texts)]
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert [[(t.head.i, t.dep_) for t in d] for d in loaded.pipe(texts)] == expected
    with pytest.raises(ValueError, match="characters"):
        spacy.blank("en").add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, characters=-1)})


def test_bad_configuration_is_refused():
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match="decoder must be one of"):
        nlp.add_pipe("mst_parser", config={"decoder": "greedy"})
    with pytest.raises(ValueError, match="loss must be one of"):
        nlp.add_pipe("mst_parser", name="p2", config={"loss": "hinge"})
    with pytest.raises(ValueError, match="max_unsegmented_length"):
        nlp.add_pipe("mst_parser", name="p3", config={"max_unsegmented_length": 0})


def test_initialize_without_trees_is_an_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": SMALL_MODEL})
    doc = Doc(nlp.vocab, words=["no", "trees"])
    with pytest.raises(ValueError, match="no dependency labels"):
        nlp.initialize(lambda: [Example(doc, doc.copy())])


def test_unknown_label_in_training_names_the_example(trained, sample_sentences):
    nlp, _ = trained
    words = ["A", "dog", "slept"]
    ref = Doc(nlp.vocab, words=words, heads=[1, 2, 2], deps=["det", "brandnew", "ROOT"])
    eg = Example(Doc(nlp.vocab, words=words), ref)
    with pytest.raises(ValueError, match=r"example 0 \('A dog slept.*label 'brandnew' is not one of the component's labels"):
        nlp.get_pipe("mst_parser").update([eg])


def test_examples_without_trees_are_skipped_in_update(trained):
    nlp, _ = trained
    doc = Doc(nlp.vocab, words=["no", "tree", "here"])
    losses = nlp.get_pipe("mst_parser").update([Example(doc, doc.copy())])
    assert losses["mst_parser"] == 0.0


def test_partial_gold_is_completed_to_a_tree_and_cycles_are_refused(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    rng = np.random.default_rng(0)
    S = rng.normal(size=(5, 5, 5) if parser.order == 2 else (5, 5))  # parts or arcs
    gold = np.array([-1, 2, 0, -2, -2])
    done = parser.complete_gold(S, gold, "sentence 0")
    assert done[1] == 2 and done[2] == 0
    from spacy_struct.structs.dependency import check_heads
    check_heads(done, 4)
    with pytest.raises(ValueError, match="cannot be completed"):
        parser.complete_gold(S, np.array([-1, 2, 1, -2, -2]), "sentence 0")


def test_edge_features_model_trains_with_gold_tags_and_needs_tags_to_predict(sample_sentences, dev_sentences):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": {"@architectures": "spacy_struct.EdgeFeatures.v1", "n_bits": 18}})
    train(nlp, examples_from(sample_sentences, nlp.vocab), epochs=4)
    dev = examples_from(dev_sentences, nlp.vocab)
    untagged = [Example(eg.predicted.copy(), Doc(nlp.vocab, words=[t.text for t in eg.reference],
                                                 heads=[t.head.i for t in eg.reference],
                                                 deps=[t.dep_ for t in eg.reference]))
                for eg in dev[:2]]
    with pytest.raises(ValueError, match="neither the predicted doc nor the reference"):
        nlp.update(untagged)
    # UPOS alone (a morphologizer's, or a corpus without XPOS) is enough, and
    # an example without a parse (NER-only data) is not asked for tags
    upos_only = [Example(Doc(nlp.vocab, words=[t.text for t in eg.reference], pos=[t.pos_ for t in eg.reference]),
                         eg.reference) for eg in dev[:2]]
    no_parse = Example(Doc(nlp.vocab, words=["A", "b"]), Doc(nlp.vocab, words=["A", "b"]))
    nlp.update([no_parse] + upos_only)
    with pytest.raises(ValueError, match="no POS tags"):
        nlp(dev[0].predicted.copy())
    for eg in dev:
        for token, gold in zip(eg.predicted, eg.reference):
            token.tag_ = gold.tag_
    assert nlp.evaluate(dev)["dep_uas"] > 0.9


def test_entry_points_register_the_factory_without_an_import():
    code = ("import spacy; nlp = spacy.blank('en'); nlp.add_pipe('mst_parser'); "
            "from spacy.util import registry; registry.architectures.get('spacy_struct.EdgeFeatures.v1'); "
            "print(registry.scorers.get('spacy_struct.mst_parser_scorer.v1').__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "make_mst_parser_scorer"


def test_parse_benchmark_specs_are_checked(tmp_path):
    from tools.bench.systems import parse_spec

    system = parse_spec(f"mst (eisner)={tmp_path},decoder=eisner,gold_tags")
    assert (system.label, system.path, system.decoder, system.gold_tags) == ("mst (eisner)", tmp_path, "eisner", True)
    with pytest.raises(ValueError, match="a label cannot contain"):
        parse_spec(f"spaCy, min_action_freq=1={tmp_path}")
    with pytest.raises(ValueError, match="unknown option"):
        parse_spec(f"x={tmp_path},beam=4")
    assert parse_spec(f"x={tmp_path},matmul=numpy").matmul == "numpy"
    assert parse_spec(f"x={tmp_path},matmul=blis").matmul is None
    with pytest.raises(ValueError, match="matmul must be blis or numpy"):
        parse_spec(f"x={tmp_path},matmul=mkl")


def test_benchmark_matmul_option_loads_with_numpy_ops_and_restores_them(tmp_path):
    """matmul=numpy builds the pipeline's layers on NumpyOps without blis,
    and the process's current ops are the same object after the load."""
    import spacy
    from thinc.api import get_current_ops

    from tools.bench.systems import load_system, parse_spec

    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec")
    nlp.initialize()
    nlp.to_disk(tmp_path)
    before = get_current_ops()
    loaded = load_system(parse_spec(f"x={tmp_path},matmul=numpy"))
    assert get_current_ops() is before
    assert loaded.get_pipe("tok2vec").model.ops.use_blis is False
    assert load_system(parse_spec(f"x={tmp_path}")).get_pipe("tok2vec").model.ops is before


def test_parse_benchmark_summarises_seeds_by_mean_and_range(tmp_path):
    from tools.bench.parse import seed_summary
    from tools.bench.systems import System

    def system(label, uas, las):
        return System(label, tmp_path, scores={"dep_uas": uas, "dep_las": las})

    systems = [system("o2, seed 0", 0.80, 0.70), system("o2, seed 1", 0.83, 0.74),
               system("spaCy", 0.5, 0.4), system("o2, seed 2", 0.86, 0.72)]
    rows = seed_summary(systems).splitlines()
    assert rows[2] == "| o2 | 3 | 83.00 (80.0 to 86.0) | 72.00 (70.0 to 74.0) |"
    assert len(rows) == 3                                   # spaCy has no seed: no row
    assert seed_summary(systems[2:3]) == ""


def test_parameter_averaging_reaches_the_scorer_and_the_labeler(sample_sentences):
    from helpers.averaging import check_parameter_averaging

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": {**SMALL_MODEL, "context_width": 16}})
    examples = examples_from(sample_sentences[:48], nlp.vocab)
    docs = [eg.reference for eg in examples[:8]]

    def outputs(nlp):
        pipe = nlp.get_pipe("mst_parser")
        scores = pipe.model.predict(pipe.make_batch(docs))
        heads = [np.maximum(heads_of(sent), 0) for doc in docs for sent in doc.sents]
        labels = pipe.model.get_ref("labeler").predict((scores.label_dep, scores.label_head, heads))
        return np.concatenate([s.ravel() for s in [*scores.arcs, *labels]])

    check_parameter_averaging(nlp, "mst_parser", examples, outputs)


def test_raw_text_of_three_sentences_gets_three_trees_and_a_warning(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    parser._warned_rule_sentences = False
    text = "The dog saw a cat. A bird arrived today of the village! The old farmer sold the car in the park."
    with pytest.warns(UserWarning, match="senter"):
        doc = nlp(text)
    assert [s.text for s in doc.sents] == [
        "The dog saw a cat.", "A bird arrived today of the village!",
        "The old farmer sold the car in the park.",
    ]
    assert all(sum(t.head.i == t.i for t in s) == 1 for s in doc.sents)
    doc = nlp("The dog saw a cat\n\nA bird arrived today")     # a blank line ends a sentence too
    assert [len(s) for s in doc.sents] == [6, 4]


def test_whitespace_tokens_hang_from_a_word_with_the_dep_label(trained):
    nlp, _ = trained
    doc = nlp("The dog  saw a cat.\n The old farmer  sold the car .")
    spaces = [t for t in doc if t.is_space]
    assert len(spaces) == 3
    for sent in doc.sents:
        assert not sent.root.is_space
    assert all(not t.head.is_space for t in doc)           # a space heads nothing, not even itself
    assert all(t.dep_ == "dep" for t in spaces)
    # a sentence of whitespace alone still gets its one root
    doc = Doc(nlp.vocab, words=["\n", " "], spaces=[False, False])
    assert sum(t.head.i == t.i for t in nlp(doc)) == 1
    # without a senter, leading whitespace joins the first sentence by rule
    doc = nlp("\n\nA dog arrived. The cat slept.")
    assert [s.text for s in doc.sents] == ["\n\nA dog arrived.", "The cat slept."]
    assert not doc[0].dep_ == "ROOT" and doc[0].dep_ == "dep"


def test_a_sentence_cut_for_its_length_gets_a_warning(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    old = parser.cfg["max_sentence_length"]
    parser.cfg["max_sentence_length"] = 12
    parser._warned_long_sentences = False
    try:
        words = "the old farmer sold the car in the park and the dog saw a cat".split()
        doc = Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * (len(words) - 1))
        with pytest.warns(UserWarning, match="longer than 12 tokens"):
            doc = nlp(doc)
        assert [len(s) for s in doc.sents] == [8, 7]
    finally:
        parser.cfg["max_sentence_length"] = old


def test_changing_the_model_shape_at_load_time_is_a_clear_error(trained, tmp_path):
    nlp, _ = trained
    nlp.to_disk(tmp_path / "pipe")
    with pytest.raises(ValueError, match="fixed by training"):
        spacy.load(tmp_path / "pipe", config={"components": {"mst_parser": {"model": {"order": 3 - parser_order(nlp)}}}})


def test_decoding_with_several_roots_a_model_trained_with_one_warns(trained, tmp_path):
    nlp, _ = trained
    nlp.to_disk(tmp_path / "pipe")
    with pytest.warns(UserWarning, match="trained with one root per sentence"):
        spacy.load(tmp_path / "pipe", config={"components": {"mst_parser": {"multi_root": True}}})


def test_the_docs_get_exactly_the_predicted_heads_and_labels(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    docs = [nlp.make_doc(t) for t in ("The dog saw a cat. The old farmer sold the car in the park.",
                                      "A bird  arrived today.", "")]
    for doc in docs:
        for i, token in enumerate(doc):
            token.is_sent_start = i == 0 or doc[i - 1].text == "."
    batch, heads, labels = parser.predict(docs)
    parser.set_annotations(docs, (batch, heads, labels))
    assert len(batch.sents) == 3
    for (doc_i, start, end), h, lab in zip(batch.sents, heads, labels):
        for j, token in enumerate(docs[doc_i][start:end], start=1):
            if h[j] == 0:
                assert token.head.i == token.i and token.dep_ == "ROOT"
            else:
                assert token.head.i == start + h[j] - 1
                assert token.dep_ == ("dep" if token.is_space else parser.labels[lab[j - 1]])


def test_settings_given_at_load_time_are_used_and_labels_come_from_disk(trained, tmp_path, dev_sentences):
    nlp, _ = trained
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe", config={
        "components": {"mst_parser": {"decoder": "eisner", "max_sentence_length": 64}}})
    parser = loaded.get_pipe("mst_parser")
    assert parser.cfg["decoder"] == "eisner" and parser.structure.projective
    assert parser.cfg["max_sentence_length"] == 64
    assert parser.labels == nlp.get_pipe("mst_parser").labels
    docs = list(loaded.pipe([eg.predicted for eg in examples_from(dev_sentences, loaded.vocab)]))
    assert all(not crossing_arcs(heads_of(s)).any() for d in docs for s in d.sents)
    cle = [[t.head.i for t in d] for d in spacy.load(tmp_path / "pipe").pipe(
        [eg.predicted for eg in examples_from(dev_sentences, loaded.vocab)])]
    assert cle != [[t.head.i for t in d] for d in docs]        # the CLE trees had crossing arcs


def test_a_pipeline_saved_in_an_earlier_layout_gets_a_clear_error(trained, tmp_path):
    import srsly

    nlp, _ = trained
    nlp.to_disk(tmp_path / "pipe")
    cfg_path = tmp_path / "pipe" / "mst_parser" / "cfg"
    cfg = srsly.read_json(cfg_path)
    del cfg["model_format"]                     # as pipelines saved before it had none
    srsly.write_json(cfg_path, cfg)
    with pytest.raises(ValueError, match="earlier version of spacy_struct.*train it again"):
        spacy.load(tmp_path / "pipe")


@pytest.mark.parametrize("partial", [False, True], ids=["complete gold", "partial gold"])
def test_a_diverged_scorer_is_reported_as_divergence(trained, sample_sentences, partial):
    from spacy_struct.pipeline import TrainingDivergedError

    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    examples = examples_from(sample_sentences[:4], nlp.vocab)
    _, batch, scores = parser.score_docs([eg.predicted for eg in examples])
    golds = parser.collect_gold(examples)[2]
    if partial:                                 # an unknown head: gold completion runs first
        golds[0][0][2] = -2
    scores.arcs[0][1, 2] = np.nan
    with pytest.raises(TrainingDivergedError, match="training diverged.*learn_rate"):
        parser.get_loss_from_scores(batch, scores, golds)


def test_a_gold_tree_with_a_whitespace_head_is_an_error(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    label = parser.labels[0]
    words, spaces = ["Hi", " ", "there"], [True, False, False]
    ref = Doc(nlp.vocab, words=words, spaces=spaces, heads=[1, 1, 1], deps=[label, "ROOT", label])
    with pytest.raises(ValueError, match="whitespace token 1 the head of token 0"):
        parser.gold(Example(Doc(nlp.vocab, words=words, spaces=spaces), ref), 0)


def test_the_whitespace_mask_outweighs_any_score(trained):
    from spacy_struct.models import SentenceBatch

    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    doc = Doc(nlp.vocab, words=["a", "\n", "b", " "], spaces=[False] * 4)
    batch = SentenceBatch([doc], [(0, 0, 4)])
    S = np.zeros((5, 5, 5) if parser.order == 2 else (5, 5))  # parts (head, sibling, dependent) or arcs
    S[[2, 4]] = 1e6             # the whitespace tokens (nodes 2 and 4) would head everything
    S[0, ..., [2, 4]] = 1e6     # and hang from the root
    heads = parser.structure.argmax(parser.mask_whitespace(batch, [S]))[0]
    assert heads[2] not in (0, -1) and heads[4] not in (0, -1)
    assert not set(heads[1:].tolist()) & {2, 4}
    unmasked = parser.structure.argmax([S])[0]
    assert set(unmasked[1:].tolist()) & {2, 4}


def test_raw_text_training_leaves_out_arcs_the_alignment_cuts_off_and_counts_them(trained):
    nlp, _ = trained
    parser = nlp.get_pipe("mst_parser")
    label = parser.labels[0]
    # gold: "Hi" hangs from "." in the first sentence, "Yo" is the second;
    # the tokenizer glued ".Yo", so the second sentence starts at it and the
    # arc Hi -> "." would leave its sentence
    ref = Doc(nlp.vocab, words=["Hi", ".", "Yo"], spaces=[True, False, False],
              heads=[1, 1, 2], deps=[label, "ROOT", "ROOT"], sent_starts=[True, False, True])
    pred = Doc(nlp.vocab, words=["Hi", ".Yo"], spaces=[True, False])
    parser._misaligned = None                   # as after initialize
    with pytest.warns(UserWarning, match="left out of training"):
        kept, golds = parser.gold(Example(pred, ref), 0)
    assert parser.misaligned_gold["arcs"] == 1
    assert kept == [] and golds == []       # no known arc is left in either sentence
    # with the gold tokens nothing is left out: an arc out of its sentence is an error
    bad = Doc(nlp.vocab, words=["Hi", ".", "Yo"], spaces=[True, False, False],
              heads=[2, 1, 2], deps=[label, "ROOT", "ROOT"], sent_starts=[True, False, True])
    words = Doc(nlp.vocab, words=["Hi", ".", "Yo"], spaces=[True, False, False])
    with pytest.raises(ValueError, match="outside its sentence"):
        parser.gold(Example(words, bad), 0)


def test_a_blank_line_the_senter_made_a_sentence_joins_the_sentence_before(trained):
    nlp, _ = trained
    words = ["The", "dog", "slept", "\n\n", "A", "cat", "ran", "\n"]
    starts = [True, False, False, True, True, False, False, True]
    doc = nlp(Doc(nlp.vocab, words=words, spaces=[True, True, False, False, True, True, False, False],
                  sent_starts=starts))
    assert [len(s) for s in doc.sents] == [4, 4]
    assert all(not t.is_space or (t.dep_ == "dep" and t.head.i != t.i) for t in doc)


@pytest.mark.parametrize("decoder,loss", [("eisner", "crf"), ("cle", "margin")])
def test_second_order_parser_trains_decodes_and_round_trips(sample_sentences, dev_sentences, tmp_path,
                                                            decoder, loss):
    """order = 2: sibling parts and second-order Eisner (with "cle", followed
    by the non-projective search) in predict; the CRF over projective trees,
    or the margin against the search's output, in training."""
    from spacy_struct.structs import SiblingTrees

    nlp = spacy.blank("en")
    model = dict(SMALL_MODEL, order=2, sibling_width=16)
    nlp.add_pipe("mst_parser", config={"model": model, "decoder": decoder, "loss": loss})
    losses = train(nlp, examples_from(sample_sentences, nlp.vocab), epochs=8)
    assert losses[-1] < 0.2 * losses[0]
    parser = nlp.get_pipe("mst_parser")
    assert isinstance(parser.structure, SiblingTrees) and parser.structure.projective == (decoder == "eisner")
    assert np.abs(parser.model.get_ref("head").get_param("v")).max() > 0  # the sibling term learned
    dev = examples_from(dev_sentences, nlp.vocab)
    scores = nlp.evaluate(dev)
    assert scores["dep_uas"] > 0.9 and scores["dep_las"] > 0.85
    if decoder == "cle":
        assert scores["dep_nonproj_r"] > 0.5
    doc = nlp(Doc(nlp.vocab, words=["The", "dog", "  ", "saw", "a", "cat", "."]))
    assert doc[2].dep_ == "dep" and not list(doc[2].children) and doc[2].head.i != 2
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert loaded.get_pipe("mst_parser").order == 2
    docs = [eg.predicted for eg in examples_from(dev_sentences, nlp.vocab)]
    a = [[t.head.i for t in d] for d in nlp.pipe(docs)]
    b = [[t.head.i for t in d] for d in loaded.pipe([Doc(nlp.vocab, words=[t.text for t in d]) for d in docs])]
    assert a == b


def test_second_order_crf_with_the_non_projective_search_warns(sample_sentences):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, order=2, sibling_width=8), "loss": "crf"})
    with pytest.warns(UserWarning, match="loss = 'margin'"):
        nlp.initialize(lambda: examples_from(sample_sentences[:20], nlp.vocab))



def test_pruned_second_order_decodes_long_sentences_whole_and_every_part_cuts_them(sample_sentences):
    """With kept_heads (the default) only kept parts are made: a 450-word
    sentence is one tree. With every part ((n+1)^3 of them) and in training,
    sentences are cut at 200 words, whatever the setting says."""
    from spacy_struct.mst_parser.component import SECOND_ORDER_MAX_LENGTH

    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, order=2, sibling_width=8)})
    nlp.initialize(lambda: examples_from(sample_sentences[:20], nlp.vocab))
    assert parser.cfg["kept_heads"] == 8 and parser.max_sentence_length == 512
    assert parser.training_length == SECOND_ORDER_MAX_LENGTH
    long_doc = Doc(nlp.vocab, words=["word"] * 450, sent_starts=[True] + [False] * 449)
    assert [end - start for start, end in parser.sentence_ranges(long_doc)] == [450]
    doc = nlp(long_doc)
    assert sum(t.head.i == t.i for t in doc) == 1 and len(list(doc.sents)) == 1
    parser.cfg["kept_heads"] = 0
    assert parser.max_sentence_length == SECOND_ORDER_MAX_LENGTH
    assert [end - start for start, end in parser.sentence_ranges(long_doc)] == [150, 150, 150]


@pytest.mark.parametrize("kept_heads", [-1, -8])
def test_a_bad_kept_heads_is_refused(kept_heads):
    with pytest.raises(ValueError, match="kept_heads must be an int >= 0"):
        spacy.blank("en").add_pipe("mst_parser", config={"kept_heads": kept_heads})


def test_empty_docs_at_the_head_of_the_training_data_do_not_break_initialize(sample_sentences):
    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": SMALL_MODEL})
    empty = [Example(Doc(nlp.vocab, words=[]), Doc(nlp.vocab, words=[])) for _ in range(10)]
    examples = empty + examples_from(sample_sentences[:8], nlp.vocab)
    optimizer = nlp.initialize(lambda: examples)
    nlp.update(examples, sgd=optimizer)
    assert len(list(nlp("The cat sat .").sents)) == 1


@pytest.mark.parametrize("factory", ["mst_parser", "nested_ner"])
def test_a_loss_the_structure_cannot_train_is_refused_at_add_pipe(factory):
    with pytest.raises(ValueError, match=r"loss must be one of \(.*'crf'.*\), got 'multilabel_margin'"):
        spacy.blank("en").add_pipe(factory, config={"loss": "multilabel_margin"})


def test_arcs_between_the_pieces_of_a_sentence_cut_for_length_are_left_out_and_counted(sample_sentences):
    nlp = spacy.blank("en")
    parser = nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, order=1), "loss": "crf",
                                                "max_sentence_length": 6})
    examples = examples_from([s for s in sample_sentences if len(s.words) > 8][:20], nlp.vocab)
    assert examples
    nlp.initialize(lambda: examples)
    with pytest.warns(UserWarning, match="between the pieces of a sentence longer than max_sentence_length = 6"):
        losses = nlp.update(examples)
    assert np.isfinite(losses["mst_parser"]) and parser.unrepresentable_gold > 0


@pytest.mark.parametrize("loss, warns", [("crf", True), ("local", False), ("margin", False)])
def test_only_the_crf_loss_warns_with_second_order_and_the_search(sample_sentences, loss, warns):
    import warnings

    nlp = spacy.blank("en")
    nlp.add_pipe("mst_parser", config={"model": dict(SMALL_MODEL, order=2), "loss": loss, "decoder": "cle"})
    examples = examples_from(sample_sentences[:5], nlp.vocab)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nlp.initialize(lambda: examples)
    assert any("trains it on projective trees only" in str(w.message) for w in caught) == warns
