"""The nested_ner component: training, prediction, serialization, errors."""

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example

from conftest import SAMPLE, SMALL_SPAN_SCORER as SMALL_MODEL, train_in_batches, SHARED_DATA
from spacy_struct.convert.spans_jsonl import read_spans_jsonl, sentence_to_doc
from spacy_struct.structs.spans import outermost



def _examples(nlp, name="sample-nested-train.jsonl", limit=None):
    out = []
    for sent in read_spans_jsonl(SAMPLE / name):
        ref = sentence_to_doc(sent, nlp.vocab)
        out.append(Example(Doc(nlp.vocab, words=[t.text for t in ref]), ref))
        if limit and len(out) >= limit:
            break
    return out


def _train(nlp, examples, epochs=8, seed=0):
    return train_in_batches(nlp, examples, epochs, seed)


@pytest.fixture(scope="module")
def trained():
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL, "set_ents": True})
    return _train(nlp, _examples(nlp))


def _f1(nlp, examples):
    return nlp.evaluate(examples)["spans_sc_f"]


def test_nested_ner_learns_nested_and_long_entities(trained):
    dev = _examples(trained, "sample-nested-dev.jsonl")
    scores = trained.evaluate(dev)
    assert scores["spans_sc_f"] > 0.9
    assert scores["spans_sc_inner_r"] > 0.9 and scores["spans_sc_outer_r"] > 0.9
    doc = trained("Expression of the HIV-1 long terminal repeat enhancer region requires IL-2 and STAT3 .")
    found = {(s.start, s.end, s.label_) for s in doc.spans["sc"]}
    assert (3, 9, "DNA") in found   # six tokens: past spancat's default 1-3 n-grams


def test_predictions_are_laminar_and_ents_are_the_outermost(trained):
    docs = list(trained.pipe(eg.reference.text for eg in _examples(trained, "sample-nested-dev.jsonl")))
    nested = 0
    for doc in docs:
        spans = list(doc.spans["sc"])
        for a in spans:
            for b in spans:
                assert not (a.start < b.start < a.end < b.end)
                nested += a is not b and a.start <= b.start and b.end <= a.end
        assert [(e.start, e.end) for e in doc.ents] == [(spans[i].start, spans[i].end) for i in outermost([(s.start, s.end) for s in spans])]
    assert nested > 10


def test_round_trips_to_disk_and_bytes_and_docbin(trained, tmp_path):
    texts = [eg.reference.text for eg in _examples(trained, "sample-nested-dev.jsonl")][:10]
    before = [[(s.start, s.end, s.label_) for s in d.spans["sc"]] for d in trained.pipe(texts)]
    trained.to_disk(tmp_path / "model")
    loaded = spacy.load(tmp_path / "model")
    after = [[(s.start, s.end, s.label_) for s in d.spans["sc"]] for d in loaded.pipe(texts)]
    assert before == after
    again = spacy.blank("en")
    again.add_pipe("nested_ner", config={"model": SMALL_MODEL, "set_ents": True})
    again.get_pipe("nested_ner").from_bytes(trained.get_pipe("nested_ner").to_bytes())
    assert [[(s.start, s.end, s.label_) for s in d.spans["sc"]] for d in again.pipe(texts)] == before
    db = DocBin(store_user_data=True, docs=loaded.pipe(texts))
    docs = list(DocBin().from_bytes(db.to_bytes()).get_docs(loaded.vocab))
    assert [[(s.start, s.end, s.label_) for s in d.spans["sc"]] for d in docs] == before


def test_crf_loss_decreases_and_margin_loss_trains_too():
    for loss in ("crf", "margin"):
        nlp = spacy.blank("en")
        nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL, "loss": loss})
        examples = _examples(nlp, limit=48)
        optimizer = nlp.initialize(lambda: examples)
        history = []
        for _ in range(25):
            losses = {}
            nlp.update(examples, sgd=optimizer, losses=losses)
            history.append(losses["nested_ner"])
        assert history[-1] < 0.5 * history[0], (loss, history)


def test_max_width_limits_predictions_and_warns_about_wider_gold():
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL, "max_width": 2})
    examples = _examples(nlp, limit=64)
    with pytest.warns(UserWarning, match="longer than max_width"):
        _train(nlp, examples, epochs=2)
    for doc in nlp.pipe(eg.reference.text for eg in examples[:20]):
        assert all(len(s) <= 2 for s in doc.spans["sc"])


def test_empty_docs_and_docs_without_sentences_work(trained):
    doc = trained.make_doc("")
    assert list(trained(doc).spans["sc"]) == []
    long_text = " ".join(["IL-2 activates the IL-2 gene in T cells ."] * 40)   # 400 tokens, no boundaries
    doc = trained(long_text)
    assert len(doc.spans["sc"]) > 40
    cfg = trained.get_pipe("nested_ner").cfg
    ranges = trained.get_pipe("nested_ner").sentence_ranges(trained.make_doc(long_text))
    assert max(e - s for s, e in ranges) <= cfg["max_unsegmented_length"]


def _example_with(nlp, words, spans, sent_starts=None):
    ref = Doc(nlp.vocab, words=words, sent_starts=sent_starts)
    ref.spans["sc"] = [Span(ref, s, e, label=l) for s, e, l in spans]
    return Example(Doc(nlp.vocab, words=words, sent_starts=sent_starts), ref)


def test_crossing_gold_spans_get_a_clear_error(trained):
    eg = _example_with(trained, "IL-2 gene in T cells".split(), [(0, 2, "DNA"), (1, 4, "protein")])
    with pytest.raises(ValueError, match="cross.*--crossing drop"):
        trained.update([eg])


def test_unknown_label_and_sentence_crossing_spans_get_clear_errors(trained):
    eg = _example_with(trained, "IL-2 gene in T cells".split(), [(0, 2, "virus")])
    with pytest.raises(ValueError, match="label 'virus' is not one of"):
        trained.update([eg])
    words = "IL-2 gene . T cells".split()
    eg = _example_with(trained, words, [(1, 4, "DNA")], [True, False, False, True, False])
    with pytest.raises(ValueError, match="crosses a sentence boundary"):
        trained.update([eg])


def test_initialize_without_spans_and_predict_before_initialize_are_errors():
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL, "spans_key": "ents_nested"})
    examples = _examples(nlp, limit=5)
    with pytest.raises(ValueError, match="found no spans under doc.spans\\['ents_nested'\\]"):
        nlp.initialize(lambda: examples)
    with pytest.raises(ValueError, match="no labels"):
        nlp("IL-2 gene")


def test_a_span_with_two_gold_labels_trains_without_error():
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL})
    examples = _examples(nlp, limit=20)
    examples.append(_example_with(nlp, "the IL-2 gene".split(), [(1, 3, "DNA"), (1, 3, "protein")]))
    optimizer = nlp.initialize(lambda: examples)
    losses = nlp.update(examples, sgd=optimizer)
    assert np.isfinite(losses["nested_ner"]) and losses["nested_ner"] > 0


def test_bad_settings_are_rejected():
    nlp = spacy.blank("en")
    for config, message in (({"loss": "hinge"}, "loss must be one of"),
                            ({"max_width": -1}, "max_width"),
                            ({"spans_key": ""}, "spans_key")):
        with pytest.raises(ValueError, match=message):
            nlp.add_pipe("nested_ner", name=f"n{len(nlp.pipe_names)}", config=config)


@pytest.mark.data
def test_genia_dev_converts_with_its_published_counts(tmp_path):
    src = SHARED_DATA / "genia_nested_ner" / "dev.jsonl"
    if not src.exists():
        pytest.skip("GENIA nested NER not in ../shared/data")
    from spacy_struct.convert.spans_jsonl import convert_file

    report = convert_file(src, tmp_path / "dev.spacy", lang="en")
    assert (report.sentences, report.tokens) == (1765, 45449)
    assert report.spans == 4714 and report.crossing == 0 and report.duplicates == 0
    assert report.nested == 444   # the corpus README's count of entities inside another
    assert sorted(report.labels) == ["DNA", "RNA", "cell_line", "cell_type", "protein"]


def test_initializing_again_keeps_the_label_set_or_says_why_not():
    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL})
    examples = _examples(nlp, limit=20)
    nlp.initialize(lambda: examples)
    ner = nlp.get_pipe("nested_ner")
    assert set(ner.labels) == {"DNA", "RNA", "cell_line", "cell_type", "protein"}
    with pytest.raises(ValueError, match="already initialized"):
        ner.add_label("virus")
    nlp.initialize(lambda: examples)       # same labels: initializes again
    assert len(ner.labels) == 5
    with pytest.raises(ValueError, match="cannot be resized to 2"):
        ner.initialize(lambda: examples, nlp=nlp, labels=["DNA", "protein"])
    assert len(ner.labels) == 5


def test_parameter_averaging_reaches_every_span_scorer_parameter():
    from helpers.averaging import check_parameter_averaging

    nlp = spacy.blank("en")
    nlp.add_pipe("nested_ner", config={"model": SMALL_MODEL})
    examples = _examples(nlp, limit=48)
    docs = [eg.reference for eg in examples[:8]]

    def outputs(nlp):
        pipe = nlp.get_pipe("nested_ner")
        return np.concatenate([s.ravel() for s in pipe.model.predict(pipe.make_batch(docs))])

    check_parameter_averaging(nlp, "nested_ner", examples, outputs)


def test_a_reference_without_the_spans_key_is_an_error_not_silence(trained):
    ref = Doc(trained.vocab, words="the IL-2 gene".split())
    ref.spans["entities"] = [Span(ref, 1, 3, label="DNA")]
    eg = Example(Doc(trained.vocab, words="the IL-2 gene".split()), ref)
    with pytest.raises(ValueError, match=r"no doc.spans\['sc'\].*'entities'.*spans_key"):
        trained.update([eg])


def test_settings_given_at_load_time_are_used(trained, tmp_path):
    trained.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe", config={
        "components": {"nested_ner": {"max_width": 1, "spans_key": "nested", "set_ents": False}}})
    ner = loaded.get_pipe("nested_ner")
    assert ner.labels == trained.get_pipe("nested_ner").labels
    doc = loaded("the IL-2 gene and the IL-2 receptor alpha chain gene")
    assert "nested" in doc.spans and "sc" not in doc.spans and not doc.ents
    assert all(len(span) == 1 for span in doc.spans["nested"])


def test_a_gold_span_over_a_full_stop_inside_one_sentence_trains(trained):
    words = "binding of p50 . p65 heterodimer to DNA".split()
    eg = _example_with(trained, words, [(2, 6, "protein")])
    losses = trained.update([eg])
    assert np.isfinite(losses["nested_ner"])


def test_a_short_doc_without_boundaries_is_one_span_tree_and_a_long_one_is_cut(trained):
    ner = trained.get_pipe("nested_ner")
    short = trained.make_doc("binding of p50. p65 heterodimer to DNA. It was seen.")
    assert ner.sentence_ranges(short) == [(0, len(short))]
    long = trained.make_doc("IL-2 gene expression was seen. " * 60)
    ranges = ner.sentence_ranges(long)
    assert len(ranges) == 60 and all(long[e - 1].text == "." for _, e in ranges)
