"""`pipeline.TokenMap`: token ranges between predicted and reference docs
that spell the same characters, whatever their spacing or tokenization."""
import itertools

import pytest
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_struct.joint_parser import set_parse
from spacy_struct.joint_parser.scoring import score_constituents
from spacy_struct.overlap_segmenter import score_segments
from spacy_struct.pipeline import TokenMap

WORDS = ["ab", "c", "de", "f"]


@pytest.mark.parametrize("ref_spaces", list(itertools.product([True, False], repeat=4)))
def test_same_words_map_to_themselves_whatever_the_spacing(ref_spaces):
    vocab = Vocab()
    ref = Doc(vocab, words=WORDS, spaces=list(ref_spaces))
    for pred_spaces in itertools.product([True, False], repeat=4):
        token_map = TokenMap(Example(Doc(vocab, words=WORDS, spaces=list(pred_spaces)), ref))
        for start, end in itertools.combinations(range(5), 2):
            assert token_map.to_reference(start, end) == (start, end)
            assert token_map.to_predicted(start, end) == (start, end)


def test_other_tokenization_maps_whole_words_and_refuses_pieces():
    vocab = Vocab()
    ref = Doc(vocab, words=["IL-2", "cells", "grew"])
    pred = Doc(vocab, words=["IL", "-", "2", "cells", "grew"], spaces=[False, False, True, True, False])
    token_map = TokenMap(Example(pred, ref))
    assert not token_map.same_tokens
    # brute force: a range maps exactly where the characters agree
    for start, end in itertools.combinations(range(len(pred) + 1), 2):
        expected = next(((a, b) for a, b in itertools.combinations(range(len(ref) + 1), 2)
                         if "".join(ref[a:b].text.split()) == "".join(pred[start:end].text.split())), None)
        assert token_map.to_reference(start, end) == expected
    assert token_map.to_predicted(0, 1) == (0, 3)
    assert token_map.to_predicted(0, 2) == (0, 4)


def test_segment_and_bracket_scores_do_not_depend_on_spacing():
    vocab = Vocab()
    ref = Doc(vocab, words=["IL-2", "cells", "grew", "."], spaces=[True, True, False, False])
    pred = Doc(vocab, words=[t.text for t in ref])  # same words, every token spaced
    tree = "(S (NP (NN IL-2) (NNS cells)) (VP (VBD grew)) (. .))"
    set_parse(ref, tree)
    set_parse(pred, tree)
    ref._.segments = [("CL", [(0, 2)]), ("PR", [(0, 1)])]
    pred._.segments = [("CL", [(0, 2)]), ("PR", [(0, 1)])]
    eg = Example(pred, ref)
    assert score_constituents([eg])["constituents_f"] == 1.0
    assert score_segments([eg], spans_key=None)["segments_f"] == 1.0
