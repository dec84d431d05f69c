"""The coordination rule the segments bench runs as a peer
(tools/bench/coordination.py): what it adds, and what it must not."""
from tools.bench.coordination import coordinated, shape

WORDS = ("The expression of c-fos , c-jun and jun B proto-oncogenes in human and mouse CD19 genes "
         "and PKC isoenzymes alpha and beta").split()


def _text(found):
    return sorted((label, " … ".join(" ".join(WORDS[a:b]) for a, b in frags)) for label, frags in found)


def test_shared_heads_and_shared_modifiers_give_one_mention_per_conjunct():
    spans = [(13, 16, "DNA"), (17, 20, "protein")]          # mouse CD19 genes; PKC isoenzymes alpha
    assert _text(coordinated(WORDS, spans)) == [
        ("DNA", "human … CD19 genes"), ("protein", "PKC isoenzymes … beta")]


def test_a_list_of_conjuncts_gives_each_its_mention():
    words = "IL-2 , IL-3 , IL-5 and IL-4 genes".split()
    found = coordinated(words, [(6, 8, "DNA")])
    assert found == [("DNA", ((0, 1), (7, 8))), ("DNA", ((2, 3), (7, 8))), ("DNA", ((4, 5), (7, 8)))]


def test_no_mention_from_a_conjunct_of_another_shape_or_inside_another_span():
    # "cells" ends the predicted "human T cells": a mention of its own
    words = "human T cells and mouse B cells".split()
    assert coordinated(words, [(0, 3, "cell_type"), (4, 7, "cell_type")]) == []
    assert coordinated(words, [(4, 7, "cell_type")]) == [("cell_type", ((2, 3), (5, 7)))]
    assert coordinated("cells and the T cells".split(), [(3, 5, "cell_type")]) == []
    assert coordinated("IL-2 and cells".split(), [(0, 1, "protein")]) == []   # one word: no N
    assert coordinated("was found in CD19 and CD20 genes".split(), [(5, 7, "DNA")]) == [
        ("DNA", ((3, 4), (6, 7)))]
    assert coordinated("a plasma and serum proteins".split(), [(3, 5, "protein")]) == [
        ("protein", ((1, 2), (4, 5)))]
    assert coordinated("the and serum proteins".split(), [(2, 4, "protein")]) == []   # a stop word
    assert shape("IL-2") == "X-d" and shape("CD4+") == "Xd+" and shape("mouse") == "x"
