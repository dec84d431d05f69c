"""Robustness: the cases of a fault battery kept as tests, by kind (pipeline
operations under fork and spawn, pickling after use, deep trees, long
tokens, stale annotations, bad gold, settings at load time, peak memory).
Each case gives the right output or a clear error naming the problem."""
import subprocess
import sys
from pathlib import Path

import pytest

import robust_pipelines

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def pipelines(tmp_path_factory):
    """One small trained pipeline per factory, saved to disk."""
    return robust_pipelines.build_all(tmp_path_factory.mktemp("pipelines"))


# ------------------------------------------------------ pipeline operations
def test_every_pipeline_annotates_alike_under_spawn_and_pickles_after_use(pipelines):
    """nlp.pipe(n_process=2) under the spawn start method (macOS, Windows,
    Ray and Spark workers) pickles the pipeline into each worker: it must
    give the serial annotations, and the pipeline must pickle after use
    (morph_segmenter caches Cython state when it meets an unseen word)."""
    run = subprocess.run([sys.executable, str(HERE / "robust_pipelines.py"), *map(str, pipelines.values())],
                         capture_output=True, text=True, timeout=600)
    lines = [line for line in run.stdout.splitlines() if line]
    assert len(lines) == len(pipelines), run.stdout + run.stderr[-3000:]
    assert run.returncode == 0, run.stdout


def test_every_pipeline_annotates_alike_under_fork(pipelines):
    import multiprocessing

    import spacy

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork start method here")
    for name, path in pipelines.items():
        nlp = spacy.load(path)
        serial = [robust_pipelines.annotations(d) for d in nlp.pipe(robust_pipelines.TEXTS)]
        forked = [robust_pipelines.annotations(d) for d in nlp.pipe(robust_pipelines.TEXTS, n_process=2, batch_size=2)]
        assert forked == serial, name


# ------------------------------------------------------------- deep trees
def _right_branching(words, label="X", tag="NN"):
    return "".join(f"({label} ({tag} {w}) " for w in words[:-1]) + f"({tag} {words[-1]})" + ")" * (len(words) - 1)


def test_tree_code_handles_trees_deeper_than_the_recursion_limit():
    """Reading, the chart, writing back and every extension walk a tree
    level by level without recursion: a right-branching tree of 1,200
    words is 1,199 levels deep, past Python's default limit of 1,000."""
    import spacy
    from spacy.tokens import Doc
    from spacy_struct.joint_parser import parse_brackets, set_parse
    from spacy_struct.joint_parser.trees import (
        chart_to_tree, constituents, to_brackets, tree_to_chart, without_entities)

    n = 1200
    words = [f"w{i}" for i in range(n)]
    brackets = _right_branching(words)
    tree = parse_brackets(brackets)
    chart = tree_to_chart(tree.root, n)
    assert len(chart) == 2 * n - 1
    back = chart_to_tree(chart, n)
    assert constituents(back) == constituents(tree.root)
    assert to_brackets(without_entities(back), tree.words, tree.tags, wrapper=None) == brackets
    doc = Doc(spacy.blank("en").vocab, words=words)
    set_parse(doc, brackets)
    assert doc[:]._.parse_string == brackets
    assert doc[n - 2:]._.parse_string == f"(X (NN w{n - 2}) (NN w{n - 1}))"
    assert doc[5]._.parent == doc[5:] and doc[5:]._.parent == doc[4:]
    assert len(list(doc[:]._.constituents)) == 2 * n - 1


def test_joint_parser_trains_and_parses_a_512_token_right_branching_sentence():
    import spacy
    from spacy.tokens import Doc, SpanGroup
    from spacy.training import Example
    from spacy_struct.joint_parser import set_parse

    nlp = spacy.blank("en")
    nlp.add_pipe("joint_parser", config={"model": robust_pipelines.TINY_SPAN_SCORER})
    words = ("c-fos is able to induce the STAT3 gene and " * 60).split()[:512]
    starts = [True] + [False] * 511
    reference = Doc(nlp.vocab, words=words, sent_starts=starts)
    set_parse(reference, _right_branching(words))
    reference.spans["sc"] = SpanGroup(reference, spans=[reference.char_span(0, 5, label="DNA")])
    example = Example(Doc(nlp.vocab, words=words, sent_starts=starts), reference)
    optimizer = nlp.initialize(lambda: [example])
    for _ in range(2):
        nlp.update([example], sgd=optimizer)
    doc = nlp(Doc(nlp.vocab, words=words, sent_starts=starts))
    sentence = doc[:]
    assert sentence._.labels  # a tree over the whole sentence
    assert len(list(sentence._.constituents)) >= 512


# ---------------------------------------------- sentences and stale trees
@pytest.fixture(scope="module")
def joint(pipelines):
    import warnings

    import spacy

    nlp = spacy.load(pipelines["joint_parser"])
    warnings.simplefilter("ignore")  # the rule-sentence warning
    return nlp


def test_every_sentence_of_doc_sents_has_a_tree(joint):
    """doc.sents and the trees agree: a text ending in a newline (the
    sentencizer makes the newline a sentence of its own), a senter's blank
    line, and a given sentence over max_sentence_length, which is parsed in
    pieces that become the doc's sentences."""
    import spacy
    from spacy.tokens import Doc

    nlp = joint
    sentencizer = spacy.blank("en").add_pipe("sentencizer")
    for text in ("A dog barked.\n", "A dog barked.\n\nThe cat sat.\n\n", "\nHello there."):
        doc = nlp(sentencizer(nlp.make_doc(text)))
        assert all(sent._.labels for sent in doc.sents), text
        assert "".join(sent.text_with_ws for sent in doc.sents) == text
    parser = nlp.get_pipe("joint_parser")
    n = parser.cfg["max_sentence_length"] + 20
    doc = parser(Doc(nlp.vocab, words=["cells"] * n, sent_starts=[True] + [False] * (n - 1)))
    assert len(list(doc.sents)) == 2 and all(sent._.labels for sent in doc.sents)


def test_a_one_word_sentence_gets_a_phrase_label(joint):
    """The whole sentence always carries a phrase label, never an entity
    alone (which would leave sent._.labels empty)."""
    parser = joint.get_pipe("joint_parser")
    # the scorer's columns are label parts; "|protein" has a joint part of its own
    entity_only = [k for k, (kind, name) in enumerate(parser.label_parts.parts)
                   if kind == "joint" and name.startswith("|")]
    assert entity_only, "the fixture's labels hold entity-only chart labels"
    score_docs = parser.score_docs

    def favour_entities(docs):
        docs, batch, scores = score_docs(docs)
        for S in scores:
            S[:, :, entity_only] += 50.0
        return docs, batch, scores

    parser.score_docs = favour_entities
    try:
        for text in ("IL-2", "Hello", "cells"):
            assert joint(text)[:]._.labels, text
    finally:
        del parser.score_docs


def test_trees_of_a_changed_doc_raise_a_clear_error(joint):
    text = "Expression of the IL-2 gene was studied in human lymphocytes. STAT3 binds the c-fos promoter."
    doc = joint(text)
    cut = doc[9:].as_doc(copy_user_data=True)
    with pytest.raises(ValueError, match="were written for a doc of 19 tokens.*Span.as_doc"):
        cut[0:2]._.labels
    merged = joint(text)
    with merged.retokenize() as retokenizer:
        retokenizer.merge(merged[3:5])
    with pytest.raises(ValueError, match="retokenized"):
        merged[3]._.parent
    assert joint(merged)[3]._.parent is not None  # parsing it again replaces the stale trees


def test_a_new_parse_replaces_a_stored_tree_over_other_sentence_cuts(joint):
    from spacy.tokens import Doc
    from spacy_struct.joint_parser.constituents import tree_ranges

    first = joint("Expression of the IL-2 gene was studied . STAT3 binds the c-fos promoter .")
    n = len(first)
    assert tree_ranges(first) == [(0, 8), (8, n)]
    again = Doc(joint.vocab, words=[t.text for t in first], spaces=[bool(t.whitespace_) for t in first],
                sent_starts=[t.i in (0, 5) for t in first])
    again.user_data.update(first.user_data)
    again = joint.get_pipe("joint_parser")(again)
    assert tree_ranges(again) == [(0, 5), (5, n)]
    assert [(s.start, s.end) for s in again.sents] == [(0, 5), (5, n)]


# ----------------------------------------------------------------- bad gold
def _joint_example(nlp, words, sent_starts=None):
    from spacy.tokens import Doc, SpanGroup
    from spacy.training import Example

    reference = Doc(nlp.vocab, words=words, sent_starts=sent_starts)
    reference.spans["sc"] = SpanGroup(reference, spans=[])
    return Example(Doc(nlp.vocab, words=words), reference)


def test_a_tree_over_part_of_a_training_sentence_is_an_error(joint):
    from spacy_struct.joint_parser import set_parse

    words = "The dog barked . The cat sat .".split()
    example = _joint_example(joint, words)
    set_parse(example.reference[0:4], "(S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .))")
    with pytest.raises(ValueError, match=r"example 0 .*tokens 0\.\.7 are one training sentence.*only 0\.\.3"):
        joint.update([example])
    set_parse(example.reference[4:8], "(S (NP (DT The) (NN cat)) (VP (VBD sat)) (. .))")
    with pytest.raises(ValueError, match=r"cover 0\.\.3, 4\.\.7: a tree must cover its whole sentence"):
        joint.update([example])


def test_stored_tree_lists_of_unequal_length_are_an_error(joint):
    from spacy_struct.joint_parser.constituents import USER_DATA_KEY

    doc = joint("The dog barked.")
    doc.user_data[USER_DATA_KEY]["labels"].pop()
    with pytest.raises(ValueError, match="lists of unequal length"):
        doc[:]._.labels
