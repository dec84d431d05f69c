"""spacy_struct.BiomedicalTokenizer.v1: words cut as biomedical corpora cut them."""
import pytest
import spacy

CASES = [
    # hyphenated names stay whole; spaCy's English rules would split them
    ("c-fos and NF-kappa B", ["c-fos", "and", "NF-kappa", "B"]),
    ("proto-oncogenes", ["proto-oncogenes"]),
    # a modifier after a term is cut off with its hyphen
    ("IL-6-induced expression", ["IL-6", "-induced", "expression"]),
    ("NF-kappa B-dependent", ["NF-kappa", "B", "-dependent"]),
    ("T-cell-specific genes", ["T-cell", "-specific", "genes"]),
    # a plus sign after a digit stays with the word
    ("CD4+ and CD8+ T cells", ["CD4+", "and", "CD8+", "T", "cells"]),
    # a slash between words splits
    ("enhancer/promoter", ["enhancer", "/", "promoter"]),
    # a full stop after a capital or a digit ends the sentence...
    ("binds NF-kappa B.", ["binds", "NF-kappa", "B", "."]),
    ("JunD.", ["JunD", "."]),
    # ...but initialisms and abbreviations stay whole
    ("the U.S. and e.g. this", ["the", "U.S.", "and", "e.g.", "this"]),
]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en", config={"nlp": {"tokenizer": {"@tokenizers": "spacy_struct.BiomedicalTokenizer.v1"}}})


@pytest.mark.parametrize("text,words", CASES, ids=[c[0] for c in CASES])
def test_biomedical_tokenizer_cuts_words_as_genia_does(nlp, text, words):
    assert [t.text for t in nlp.make_doc(text)] == words


def test_it_differs_from_spacys_english_rules_where_it_says():
    english = spacy.blank("en")
    assert [t.text for t in english.make_doc("c-fos")] != ["c-fos"]
    assert [t.text for t in english.make_doc("CD4+")] != ["CD4+"]


def test_the_tokenizer_round_trips_with_the_pipeline(nlp, tmp_path):
    text = "IL-6-induced c-fos in enhancer/promoter regions."
    nlp.to_disk(tmp_path / "pipe")
    loaded = spacy.load(tmp_path / "pipe")
    assert [t.text for t in loaded.make_doc(text)] == [t.text for t in nlp.make_doc(text)]
    assert loaded.config["nlp"]["tokenizer"]["@tokenizers"] == "spacy_struct.BiomedicalTokenizer.v1"
