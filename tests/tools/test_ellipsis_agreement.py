"""The ellipsis-agreement analysis of the segments bench
(tools/bench/ellipsis_agreement.py): which sites it finds and how it
counts agreement, checked against counts made by hand."""
from collections import Counter

from tools.bench.ellipsis_agreement import agreement, sites

GAPPED = "human and mouse CD19 genes".split()
GAPPED_SEGMENTS = [("DNA", ((0, 1), (3, 5))), ("DNA", ((2, 5),))]
ALONE = "the NF-AT and AP-1 sites".split()
ALONE_SEGMENTS = [("protein", ((1, 2),)), ("DNA", ((3, 5),))]


def test_a_site_is_gapped_or_alone_by_how_the_first_conjunct_is_annotated():
    assert sites(GAPPED, GAPPED_SEGMENTS) == [(("human", "genes"), "gapped")]
    assert sites(ALONE, ALONE_SEGMENTS) == [(("nf-at", "sites"), "alone")]


def test_no_site_without_a_coordinator_a_two_word_conjunct_b_n_or_an_annotated_a():
    assert sites("human , mouse CD19 genes".split(), [("DNA", ((0, 1),)), ("DNA", ((2, 5),))]) != []
    assert sites("human with mouse CD19 genes".split(), GAPPED_SEGMENTS) == []
    assert sites("human and mouse".split(), [("DNA", ((0, 1),)), ("DNA", ((2, 3),))]) == []
    assert sites(GAPPED, [("DNA", ((2, 5),))]) == []


def test_majority_agreement_over_repeated_keys():
    found = agreement([(("a", "n"), "gapped")] * 3 + [(("a", "n"), "alone")] + [(("b", "n"), "alone")] * 2
                      + [(("c", "m"), "gapped")])
    # repeated keys: (a, n) 3 of 4 on the majority side, (b, n) 2 of 2: 5 of 6
    assert found["repeated_sites"] == 6 and abs(found["majority_agreement"] - 5 / 6) < 1e-12
    assert list(found["mixed"]) == [("a", "n")]
    assert found["repeated_gapped"] == 3 and found["mixed_gapped"] == 3
    assert found["by_head"]["n"] == Counter(gapped=3, alone=3)
    assert found["sites"] == Counter(gapped=4, alone=3)
