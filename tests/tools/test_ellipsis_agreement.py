"""The ellipsis-agreement analysis of the segments bench
(tools/bench/ellipsis_agreement.py): which sites it finds, how it counts
agreement and how it sorts a model's gapped segments, checked against
counts made by hand."""
from collections import Counter

import spacy
from spacy.tokens import Doc

from spacy_struct.annotations.segments import set_segments
from tools.bench.ellipsis_agreement import agreement, gapped_errors, sites

GAPPED = "human and mouse CD19 genes".split()
GAPPED_SEGMENTS = [("DNA", ((0, 1), (3, 5))), ("DNA", ((2, 5),))]
ALONE = "the NF-AT and AP-1 sites".split()
ALONE_SEGMENTS = [("protein", ((1, 2),)), ("DNA", ((3, 5),))]


def test_a_site_is_gapped_or_alone_by_how_the_first_conjunct_is_annotated():
    assert sites(GAPPED, GAPPED_SEGMENTS) == [(("human", "genes"), "gapped")]
    assert sites(ALONE, ALONE_SEGMENTS) == [(("nf-at", "sites"), "alone")]
    comma = "human , mouse CD19 genes".split()
    assert sites(comma, [("DNA", ((0, 1),)), ("DNA", ((2, 5),))]) == [(("human", "genes"), "alone")]


def test_no_site_without_a_coordinator_a_two_word_b_n_or_an_annotated_a():
    assert sites("human with mouse CD19 genes".split(), GAPPED_SEGMENTS) == []
    assert sites("human and mouse".split(), [("DNA", ((0, 1),)), ("DNA", ((2, 3),))]) == []
    assert sites(GAPPED, [("DNA", ((2, 5),))]) == []


def test_conjuncts_of_up_to_three_words():
    words = "w1 w2 w3 w4 and mouse genes".split()
    b_n = ("DNA", ((5, 7),))
    assert sites(words, [("DNA", ((1, 4),)), b_n]) == [(("w2 w3 w4", "genes"), "alone")]
    assert sites(words, [("DNA", ((0, 4),)), b_n]) == []  # four words: not a conjunct


def test_one_site_per_mention_with_the_shortest_conjunct_gapped_first():
    words = "PEBP2 alpha A1 and B1 genes".split()
    b_n = ("DNA", ((4, 6),))
    both_alone = [("protein", ((0, 3),)), ("protein", ((1, 3),)), b_n]
    assert sites(words, both_alone) == [(("alpha a1", "genes"), "alone")]
    one_gapped = [("protein", ((1, 3),)), ("DNA", ((0, 3), (5, 6))), b_n]
    assert sites(words, one_gapped) == [(("pebp2 alpha a1", "genes"), "gapped")]


def test_a_conjunct_ending_with_the_head_is_no_site():
    words = "B cells and epithelial cells".split()
    assert sites(words, [("cell_type", ((0, 2),)), ("cell_type", ((3, 5),))]) == []


def test_majority_agreement_over_repeated_keys():
    found = agreement([(("a", "n"), "gapped")] * 3 + [(("a", "n"), "alone")] + [(("b", "n"), "alone")] * 2
                      + [(("c", "m"), "gapped")])
    # repeated keys: (a, n) 3 of 4 on the majority side, (b, n) 2 of 2: 5 of 6
    assert found["repeated_sites"] == 6 and abs(found["majority_agreement"] - 5 / 6) < 1e-12
    assert list(found["mixed"]) == [("a", "n")]
    assert found["repeated_gapped"] == 3 and found["mixed_gapped"] == 3
    assert found["by_head"]["n"] == Counter(gapped=3, alone=3)
    assert found["sites"] == Counter(gapped=4, alone=3)


def _doc(vocab, words, segments):
    doc = Doc(vocab, words=words)
    set_segments(doc, segments)
    return doc


def test_gapped_errors_sorts_right_missed_and_three_kinds_of_wrong():
    vocab = spacy.blank("en").vocab
    words = "c-jun and c-fos genes , human and mouse CD19 genes , IL-2 and IL-4 sites".split()
    gold = _doc(vocab, words, [
        ("DNA", ((0, 1),)), ("DNA", ((2, 4),)),                       # c-jun alone, c-fos genes
        ("DNA", ((5, 6), (8, 10))), ("DNA", ((7, 10),)),              # human … CD19 genes
        ("DNA", ((11, 12), (14, 15))), ("DNA", ((13, 15),)),          # IL-2 … sites (missed)
    ])
    predicted = _doc(vocab, words, [
        ("DNA", ((0, 1), (3, 4))),        # wrong: first fragment a gold mention of its own
        ("DNA", ((5, 6), (8, 10))),       # right
        ("protein", ((5, 6), (9, 10))),   # wrong: other
        ("RNA", ((11, 12), (14, 15))),    # wrong: another label (so the DNA one is missed)
    ])
    counts = gapped_errors([gold], [predicted], gapped_keys={("c-jun", "genes")})
    assert counts["right"] == 1 and counts["missed"] == 1
    assert counts["wrong: another label"] == 1 and counts["wrong: other"] == 1
    assert counts["wrong: first fragment a gold mention of its own"] == 1
    assert counts["  of which the key is annotated gapped elsewhere"] == 1
    assert gapped_errors([gold], [predicted], gapped_keys=set())[
        "  of which the key is annotated gapped elsewhere"] == 0


def test_rates_call_a_site_by_its_key_then_its_head_then_the_overall_share():
    from tools.bench.ellipsis_agreement import predict_by_rates

    learned = ([(("human", "genes"), "gapped")] * 3 + [(("il-2", "genes"), "alone")]
               + [(("nf-at", "sites"), "alone")] * 2 + [(("ap-1", "sites"), "gapped")])
    # overall 4/7; head "genes" (3 + 2*4/7) / 6 = 0.69, "sites" (1 + 8/7) / 5 = 0.43
    # (human, genes): (3 + 2*0.69) / 5 = 0.88 -> gapped; (il-2, genes): (0 + 1.38) / 3 = 0.46 -> alone
    # (mouse, genes), unseen key: the head's 0.69 -> gapped; (x, sites): 0.43 -> alone
    # (y, cells), unseen head: the overall 4/7 -> gapped
    scored = [(("human", "genes"), "gapped"), (("il-2", "genes"), "gapped"), (("mouse", "genes"), "alone"),
              (("x", "sites"), "alone"), (("y", "cells"), "gapped")]
    called = predict_by_rates(learned, scored)
    # called gapped: human (right), mouse (wrong), y (right); alone: il-2 (wrong), x (right)
    assert called["sites"] == 5
    assert abs(called["accuracy"] - 3 / 5) < 1e-12 and abs(called["majority_accuracy"] - 2 / 5) < 1e-12
    assert abs(called["precision"] - 2 / 3) < 1e-12 and abs(called["recall"] - 2 / 3) < 1e-12
    assert abs(called["f1"] - 2 / 3) < 1e-12


def test_a_model_calls_a_site_gapped_by_a_segment_from_its_conjunct_to_its_head():
    from tools.bench.ellipsis_agreement import model_calls, score_calls

    vocab = spacy.blank("en").vocab
    words = "human and mouse CD19 genes , the NF-AT and AP-1 sites".split()
    gold = _doc(vocab, words, [("DNA", ((0, 1), (3, 5))), ("DNA", ((2, 5),)),
                               ("protein", ((7, 8),)), ("DNA", ((9, 11),))])
    # the gapped site called with another label and its second fragment cut short: still called;
    # the alone site called gapped
    predicted = _doc(vocab, words, [("protein", ((0, 1), (4, 5))), ("DNA", ((7, 8), (10, 11)))])
    calls = model_calls([gold], [predicted])
    assert calls == [("gapped", True), ("alone", True)]
    assert model_calls([gold], [_doc(vocab, words, [])]) == [("gapped", False), ("alone", False)]
    called = score_calls(calls)
    assert called["accuracy"] == 0.5 and called["precision"] == 0.5 and called["recall"] == 1.0
