"""The coordination augmenter writes correct coordination ellipses."""
import random

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from spacy_struct.annotations.segments import get_segments, set_segments
from spacy_struct.overlap_segmenter.augment import create_coordination_augmenter


def _example(nlp, words, segments):
    reference = Doc(nlp.vocab, words=words)
    set_segments(reference, segments)
    return Example(Doc(nlp.vocab, words=words), reference)


def _keys(doc):
    return sorted((s.label_, s.offsets) for s in get_segments(doc))


def test_a_conjunct_seen_before_the_same_head_is_written_in_with_its_gapped_mention():
    nlp = spacy.blank("en")
    augment = create_coordination_augmenter(level=1.0, list_rate=0.0, or_rate=0.0)
    random.seed(0)
    first = _example(nlp, ["the", "IL-2", "gene", "binds"], [("DNA", [(1, 3)])])
    assert [len(eg.reference) for eg in augment(nlp, first)] == [4]   # nothing to substitute yet
    second = _example(nlp, ["a", "CD19", "gene", "in", "cells"], [("DNA", [(1, 3)]), ("cell_type", [(4, 5)])])
    original, coordinated = list(augment(nlp, second))
    assert original is second
    words = [t.text for t in coordinated.reference]
    assert words == ["a", "IL-2", "and", "CD19", "gene", "in", "cells"]
    assert [t.text for t in coordinated.predicted] == words
    assert _keys(coordinated.reference) == [
        ("DNA", ((1, 2), (4, 5))),         # IL-2 ... gene
        ("DNA", ((3, 5),)),                # CD19 gene, shifted
        ("cell_type", ((6, 7),)),          # cells, shifted
    ]


def test_a_list_gets_one_gapped_mention_per_left_conjunct_and_nothing_splits_a_fragment():
    nlp = spacy.blank("en")
    augment = create_coordination_augmenter(level=1.0, list_rate=1.0, or_rate=1.0)
    random.seed(1)
    for word in ("c-fos", "c-jun"):
        list(augment(nlp, _example(nlp, [word, "gene"], [("DNA", [(0, 2)])])))
    # "mouse CD19 gene" covers word 2: writing before "CD19" would split it,
    # so only the outer mention, at word 1, can get the conjuncts
    eg = _example(nlp, ["in", "mouse", "CD19", "gene"], [("DNA", [(1, 4)]), ("DNA", [(2, 4)])])
    out = list(augment(nlp, eg))
    assert len(out) == 1                      # no substitute seen for "CD19"-second-word
    eg = _example(nlp, ["in", "jun", "gene", "."], [("DNA", [(1, 3)]), ("protein", [(1, 2)])])
    _, coordinated = list(augment(nlp, eg))
    words = [t.text for t in coordinated.reference]
    assert words[2] == "," and words[4] == "or" and words[5:] == ["jun", "gene", "."]
    # substitutes of "jun" before "gene": the first words seen there, "CD19" included
    assert words[1] != words[3] and {words[1], words[3]} <= {"c-fos", "c-jun", "CD19"}
    assert [t.is_sent_start for t in coordinated.reference] == [True] + [False] * 7
    assert _keys(coordinated.reference) == [
        ("DNA", ((1, 2), (6, 7))),
        ("DNA", ((3, 4), (6, 7))),
        ("DNA", ((5, 7),)),
        ("protein", ((5, 6),)),
    ]


def test_a_conjunct_written_before_the_first_word_starts_the_sentence():
    nlp = spacy.blank("en")
    augment = create_coordination_augmenter(level=1.0, list_rate=0.0, or_rate=0.0)
    random.seed(0)
    list(augment(nlp, _example(nlp, ["IL-2", "gene", "."], [("DNA", [(0, 2)])])))
    starts = [True, False, False, True, False]          # two sentences
    reference = Doc(nlp.vocab, words=["IL-4", "gene", ".", "It", "binds"], sent_starts=starts)
    set_segments(reference, [("DNA", [(0, 2)])])
    _, coordinated = list(augment(nlp, Example(Doc(nlp.vocab, words=[t.text for t in reference]), reference)))
    assert [t.text for t in coordinated.reference][:3] == ["IL-2", "and", "IL-4"]
    assert [t.is_sent_start for t in coordinated.reference] == [True, False, False, False, False, True, False]


def test_the_augmenter_is_registered_for_configs_and_checks_its_settings():
    make = registry.augmenters.get("spacy_struct.coordination_augmenter.v1")
    assert make is create_coordination_augmenter
    with pytest.raises(ValueError, match="level must be in"):
        create_coordination_augmenter(level=1.5)
