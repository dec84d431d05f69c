"""The parts of nested_ner: span scorer gradients, losses against brute force,
the nesting-recall scorer, and the JSONL converter."""
import gzip
import json

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, Span
from spacy.training import Example

from helpers.grad_check import check_param_gradient, linear_objective
from references.brute_force_spans import brute_log_partition, enumerate_structures
from spacy_struct.convert.spans_jsonl import (
    SpansJSONLError,
    convert_file,
    read_spans_jsonl,
)
from spacy_struct import losses
from spacy_struct.structs.spans import LaminarSpans
from spacy_struct.pipeline.scoring import nesting_recall, score_nested_spans
from spacy_struct.models.batch import SentenceBatch
from spacy_struct.models.span_scorer import build_span_scorer, width_buckets


def _small_tok2vec():
    from spacy.ml.models.tok2vec import build_hash_embed_cnn_tok2vec

    return build_hash_embed_cnn_tok2vec(
        pretrained_vectors=None, width=16, depth=1, embed_size=100, window_size=1,
        maxout_pieces=2, subword_features=False)


# ---------------------------------------------------------------- span scorer
def _scorer_batch(context_width: int, seed: int, attention: bool = True):
    from thinc.api import fix_random_seed

    fix_random_seed(seed)
    nlp = spacy.blank("en")
    model = build_span_scorer(_small_tok2vec(), hidden_width=5, dropout=0.0,
                              context_width=context_width, context_depth=1,
                              attention=attention)
    model.get_ref("output").set_dim("nO", 3)
    docs = [Doc(nlp.vocab, words="IL-2 gene expression in T cells".split()),
            Doc(nlp.vocab, words=["NF-kappa", "B"])]
    batch = SentenceBatch(docs, [(0, 0, 6), (1, 0, 2), (0, 3, 5)])
    model.initialize(X=batch)
    rng = np.random.default_rng(seed)
    zeroed = ("U", "width", "content") + (("attend", "pooled") if attention else ())
    for name in zeroed:  # zero-initialised: make them matter
        head = model.get_ref("head")
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    return model, batch


@pytest.mark.parametrize("context_width", [0, 6])
@pytest.mark.parametrize("seed", [0, 1])
def test_span_scorer_gradients_match_finite_differences(context_width, seed):
    model, batch = _scorer_batch(context_width, seed)
    rng = np.random.default_rng(seed + 10)
    out, backprop = model(batch, is_train=True)
    assert [o.shape for o in out] == [(6, 6, 3), (2, 2, 3), (2, 2, 3)]
    R = [rng.normal(size=o.shape) for o in out]
    f = linear_objective(model, batch, backprop, R)

    names = [(model.get_ref("head"), n) for n in ("W", "b", "U", "width", "content", "attend", "pooled")]
    if context_width:
        lstm = next(node for node in model.walk() if node.name == "bilstm")
        names += [(lstm, p) for p in lstm.param_names]
    for node, name in names:
        # ReLU kinks and float32 leave a few percent of noise; a wrong term is far off
        check_param_gradient(node, name, f, rng, rel=5e-2)


def test_span_scorer_content_term_sums_the_covered_words():
    model, batch = _scorer_batch(0, 3, attention=False)
    for name in ("U", "width"):
        model.get_ref("head").set_param(name, np.zeros_like(model.get_ref("head").get_param(name)))
    out, _ = model(batch, is_train=False)
    S = out[0]
    # with only the content term left, span (i, j) = sum of the one-word spans
    for i in range(6):
        for j in range(i, 6):
            np.testing.assert_allclose(S[i, j], S[np.arange(i, j + 1), np.arange(i, j + 1)].sum(0), rtol=1e-4, atol=1e-5)
        for j in range(i):
            assert (S[i, j] == 0).all()


def test_span_scorer_attention_term_is_a_softmax_weighted_mean_of_the_covered_words():
    model, batch = _scorer_batch(0, 4)
    for name in ("U", "width", "content"):
        model.get_ref("head").set_param(name, np.zeros_like(model.get_ref("head").get_param(name)))
    out, _ = model(batch, is_train=False)
    tokvecs = model.get_ref("tok2vec").predict(batch.docs)[0]
    relevance = tokvecs @ model.get_ref("head").get_param("attend")
    values = tokvecs @ model.get_ref("head").get_param("pooled")
    for i in range(6):
        for j in range(i, 6):
            w = np.exp(relevance[i:j + 1] - relevance[i:j + 1].max(0))
            expected = (w * values[i:j + 1]).sum(0) / w.sum(0)
            np.testing.assert_allclose(out[0][i, j], expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_attention_mean_keeps_precision_after_a_dominant_word(seed):
    from spacy_struct.models.span_scorer import _attention_mean

    rng = np.random.default_rng(seed)
    relevance = rng.normal(size=(7, 2)) - 25.0
    relevance[0] = 28.0  # word 0 outweighs the rest by e^53
    values = rng.normal(size=(7, 2))
    mean, _ = _attention_mean(relevance, values)
    for i in range(1, 7):
        for j in range(i, 7):
            w = np.exp(relevance[i:j + 1] - relevance[i:j + 1].max(0))
            np.testing.assert_allclose(mean[i, j], (w * values[i:j + 1]).sum(0) / w.sum(0), rtol=1e-9)


def test_width_buckets_separate_short_widths_and_group_long_ones():
    b = width_buckets(60)
    assert b[0, 0] != b[0, 1] and b[3, 12] == b[0, 9]
    assert b[0, 59] == b[0, 55] and b[0, 59] != b[0, 30]


@pytest.mark.parametrize("kwargs", [{"hidden_width": 0}, {"context_width": 5}, {"dropout": 1.0}])
def test_span_scorer_rejects_bad_sizes(kwargs):
    with pytest.raises(ValueError):
        build_span_scorer(_small_tok2vec(), **kwargs)


# ---------------------------------------------------------------------- losses
def _brute_gold_loss(S, gold_sets):
    """-log sum over the allowed gold sets of p(set), by enumeration."""
    n, _, L = S.shape
    idx = enumerate_structures("laminar", n, L)
    flat = np.append(S.ravel(), 0.0)
    totals = flat[idx].sum(1)
    log_z = brute_log_partition(S, "laminar")
    keys = [frozenset(int(v) for v in row if v != n * n * L) for row in idx]
    wanted = [frozenset(int(s * n * L + e * L + l) for s, e, l in g) for g in gold_sets]
    picked = totals[[k in wanted for k in keys]]
    return log_z - np.logaddexp.reduce(picked)


@pytest.mark.parametrize("seed", range(4))
def test_crf_loss_is_the_enumerated_negative_log_likelihood(seed):
    rng = np.random.default_rng(seed)
    n, L = 4, 2
    S = rng.normal(size=(n, n, L))
    gold = np.array([[0, 2, 1], [1, 1, 0], [3, 3, 0]])
    loss, grads = losses.crf_loss(LaminarSpans(), [S], [gold])
    assert loss == pytest.approx(_brute_gold_loss(S, [gold.tolist()]), rel=1e-9)
    # gradient by finite differences
    direction = rng.normal(size=S.shape)
    eps = 1e-6
    up = losses.crf_loss(LaminarSpans(), [S + eps * direction], [gold])[0]
    down = losses.crf_loss(LaminarSpans(), [S - eps * direction], [gold])[0]
    assert float((grads[0] * direction).sum()) == pytest.approx((up - down) / (2 * eps), rel=1e-5)


def test_crf_loss_accepts_either_label_of_a_span_with_two():
    rng = np.random.default_rng(9)
    S = rng.normal(size=(3, 3, 2))
    gold = np.array([[0, 1, 0], [0, 1, 1], [2, 2, 1]])
    loss, grads = losses.crf_loss(LaminarSpans(), [S], [gold])
    either = [[(0, 1, 0), (2, 2, 1)], [(0, 1, 1), (2, 2, 1)]]
    assert loss == pytest.approx(_brute_gold_loss(S, either), rel=1e-9)
    assert loss > 0


def test_margin_loss_is_zero_when_gold_wins_by_the_cost_and_positive_otherwise():
    n, L = 4, 2
    gold = np.array([[0, 3, 0], [1, 2, 1]])
    S = np.full((n, n, L), -5.0)
    S[0, 3, 0] = S[1, 2, 1] = 5.0
    loss, grads = losses.margin_loss(LaminarSpans(), [S], [gold], cost=1.0)
    assert loss == 0 and not grads[0].any()
    S[1, 2, 1] = 0.5   # wins by less than the cost of leaving it out
    loss, grads = losses.margin_loss(LaminarSpans(), [S], [gold], cost=1.0)
    assert loss == pytest.approx(0.5) and grads[0][1, 2, 1] == -1.0


def test_losses_respect_the_width_mask():
    rng = np.random.default_rng(2)
    S = rng.normal(size=(4, 4, 1))
    mask = (np.arange(4)[None, :] - np.arange(4)[:, None]) < 2
    gold = np.array([[0, 1, 0]])
    _, grads = losses.crf_loss(LaminarSpans(max_width=2), [S], [gold])
    assert not grads[0][~mask].any()


# --------------------------------------------------------------------- scoring
def _example(nlp, words, gold, predicted):
    ref = Doc(nlp.vocab, words=words)
    ref.spans["sc"] = [Span(ref, s, e, label=l) for s, e, l in gold]
    pred = Doc(nlp.vocab, words=words)
    pred.spans["sc"] = [Span(pred, s, e, label=l) for s, e, l in predicted]
    return Example(pred, ref)


def test_nesting_recall_splits_outer_and_inner_gold_spans():
    nlp = spacy.blank("en")
    words = "the IL-2 gene promoter in T cells".split()
    gold = [(1, 4, "DNA"), (1, 2, "protein"), (5, 7, "cell_type")]
    eg = _example(nlp, words, gold, [(1, 2, "protein"), (5, 7, "cell_type"), (0, 1, "DNA")])
    scores = nesting_recall([eg], "sc")
    assert scores == {"spans_sc_outer_r": 0.5, "spans_sc_inner_r": 1.0}
    full = score_nested_spans([eg], spans_key="sc")
    assert full["spans_sc_p"] == pytest.approx(2 / 3) and full["spans_sc_r"] == pytest.approx(2 / 3)
    assert "protein" in full["spans_sc_per_type"]


# ------------------------------------------------------------------- converter
def _write_jsonl(path, records, gz=False):
    opener = gzip.open if gz else open
    with opener(path, "wt", encoding="utf8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


RECORDS = [
    {"id": "a-0", "doc_id": "a", "text": "IL-2 gene expression requires NF-kappa B.",
     "tokens": ["IL-2", "gene", "expression", "requires", "NF-kappa", "B", "."],
     "spans": [{"start": 0, "end": 2, "label": "DNA"}, {"start": 0, "end": 1, "label": "protein"},
               {"start": 4, "end": 6, "label": "protein"}, {"start": 4, "end": 6, "label": "protein"}]},
    {"id": "a-1", "doc_id": "a", "tokens": ["T", "cells", "and", "B", "cells"],
     "spans": [{"start": 0, "end": 2, "label": "cell_type"}, {"start": 1, "end": 4, "label": "X"},
               {"start": 3, "end": 5, "label": "cell_type"}, {"start": 3, "end": 5, "label": "cell_line"}]},
]


@pytest.mark.parametrize("gz", [False, True])
def test_spans_jsonl_converter_keeps_tokens_and_reports_crossing_spans(tmp_path, gz):
    src = tmp_path / ("in.jsonl.gz" if gz else "in.jsonl")
    _write_jsonl(src, RECORDS, gz)
    report = convert_file(src, tmp_path / "out.spacy", crossing="drop", lang="en")
    assert (report.sentences, report.tokens) == (2, 12)
    assert report.duplicates == 1
    assert report.crossing == 4 and report.crossing_dropped == 1   # "cells and B" crosses two
    assert report.multi_label == 1 and report.nested == 1
    assert report.spans == 6 and report.labels["cell_type"] == 2
    text = "\n".join(report.lines())
    assert "1 dropped" in text and "more than one label" in text

    from spacy.tokens import DocBin

    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(nlp.vocab))
    assert [t.text for t in docs[0]] == RECORDS[0]["tokens"]
    assert docs[0].text == "IL-2 gene expression requires NF-kappa B."
    assert sorted((s.start, s.end, s.label_) for s in docs[1].spans["sc"]) == [
        (0, 2, "cell_type"), (3, 5, "cell_line"), (3, 5, "cell_type")]


def test_spans_jsonl_converter_can_keep_crossing_spans(tmp_path):
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, RECORDS)
    report = convert_file(src, tmp_path / "out.spacy", crossing="keep")
    assert report.crossing == 4 and report.crossing_dropped == 0 and report.spans == 7
    assert "all kept" in "\n".join(report.lines())


@pytest.mark.parametrize("record,message", [
    ({"tokens": []}, "non-empty list"),
    ({"tokens": ["a", "b"], "spans": [{"start": 1, "end": 3, "label": "X"}]}, "not a token range"),
    ({"tokens": ["a", "b"], "spans": [{"start": 1, "end": 1, "label": "X"}]}, "not a token range"),
    ({"tokens": ["a"], "spans": [{"start": 0, "end": 1}]}, "'start', 'end' and 'label'"),
    ({"tokens": ["a"], "spans": [{"start": 0, "end": 1, "label": ""}]}, "label"),
])
def test_spans_jsonl_converter_names_the_line_of_bad_input(tmp_path, record, message):
    src = tmp_path / "bad.jsonl"
    _write_jsonl(src, [RECORDS[1], record])
    with pytest.raises(SpansJSONLError, match=message) as err:
        list(read_spans_jsonl(src))
    assert "bad.jsonl:2" in str(err.value)


def test_spans_jsonl_tokens_that_do_not_match_the_text_get_spaces_and_a_count(tmp_path):
    src = tmp_path / "in.jsonl"
    _write_jsonl(src, [{"tokens": ["a", "b"], "text": "a c", "spans": []}])
    report = convert_file(src, tmp_path / "out.spacy")
    assert report.unaligned_text == 1
    assert "do not match their text" in "\n".join(report.lines())


def test_spans_jsonl_cli(tmp_path, capsys):
    from spacy_struct.__main__ import main

    src = tmp_path / "in.jsonl"
    _write_jsonl(src, RECORDS)
    assert main(["convert", "spans-jsonl", str(src), str(tmp_path / "o.spacy"), "--crossing", "keep"]) == 0
    assert "4 spans cross another span" in capsys.readouterr().out
    _write_jsonl(src, [{"tokens": "abc"}])
    assert main(["convert", "spans-jsonl", str(src), str(tmp_path / "o.spacy")]) == 1
    assert "in.jsonl:1" in capsys.readouterr().err
