"""joint_parser's parts: trees and their chart, entities joined into trees,
the evalb scorer, and the trees on a Doc."""
import os
import random
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin

from spacy_struct.joint_parser import (
    NonConstituentError, TreeFormatError, entities_of, join_entities, parse_brackets,
    score_brackets, set_parse, to_brackets, tree_of,
)
from spacy_struct.joint_parser.evalb import evalb_brackets
from spacy_struct.joint_parser.entity_loss import EntityColumns, laminar_entities
from spacy_struct.joint_parser.label_parts import LabelParts
from spacy_struct.annotations.brackets import (
    EMPTY, Node, chart_to_tree, constituents, tree_to_chart, without_entities,
)

from references.brute_force_spans import brute_log_partition, brute_marginals
from conftest import SHARED_DATA as DATA

TREE = "(TOP (S (NP (DT The) (NN IL-2) (NN gene)) (VP (VBZ is) (VP (VBN expressed) (PP (IN in) (NP (NNS cells))))) (. .)))"


# --------------------------------------------------------------------- trees
def test_brackets_are_read_with_words_tags_and_escapes():
    tree = parse_brackets("(TOP (S (NP (NN 25-LRB-OH-RRB-2D3)) (VP (VBZ binds) (-LRB- -LRB-)) (. .)))")
    assert tree.words == ["25(OH)2D3", "binds", "(", "."]
    assert tree.tags == ["NN", "VBZ", "-LRB-", "."]
    assert tree.root.label == "S" and (tree.root.start, tree.root.end) == (0, 4)
    assert constituents(tree.root) == [(0, 4, "S"), (0, 1, "NP"), (1, 3, "VP")]
    back = to_brackets(tree.root, tree.words, tree.tags)
    assert back == "(TOP (S (NP (NN 25-LRB-OH-RRB-2D3)) (VP (VBZ binds) (-LRB- -LRB-)) (. .)))"


@pytest.mark.parametrize("text, problem", [
    ("(S (NP (DT The) (NN cat))", "too many '('"),
    ("(S (NP (DT The)))) (NN x)", "text after the tree"),
    ("", "empty"),
    ("(S ())", "an empty bracket '()'"),
    ("(S (-NONE- *T*))", "not a tree (no words)"),
    ("(S (NP (-LRB- () (NN cat) (-RRB- ))) (VP (VBD sat)))", "an empty bracket '()'"),
    (")", "does not open with a bracket"),
    ("(S (NP (DT The)) ) (NN cat))", "text after the tree"),
    ("(S (NP (DT The) ) ) )", "text after the tree"),
    ("word", "not a tree (it does not open with a bracket)"),
    ("(S ((DT The) (NN cat)))", "without a label"),
])
def test_broken_brackets_raise_naming_the_problem(text, problem):
    with pytest.raises(TreeFormatError, match=re.escape(problem)):
        parse_brackets(text, "line 3")


def test_untagged_words_are_written_so_that_they_read_back():
    tree = parse_brackets("(TOP (S (NP (NNS Dogs)) (VP (VBP bark) (ADVP (RB loudly)))))")
    tree.tags = [None, None, None]  # as a doc without a tagger has them
    assert constituents(tree.root) == [(0, 3, "S"), (0, 1, "NP"), (1, 3, "VP"), (2, 3, "ADVP")]
    text = to_brackets(tree.root, tree.words, tree.tags)
    assert text == "(TOP (S (NP ( Dogs)) (VP ( bark) (ADVP ( loudly)))))"
    back = parse_brackets(text)
    assert back.words == tree.words and back.tags == tree.tags
    assert constituents(back.root) == constituents(tree.root)


def test_whitespace_words_are_written_so_that_they_read_back():
    """spaCy's whitespace tokens ("\n\n", "  ") are leaves of the tree too."""
    nlp = spacy.blank("en")
    doc = nlp("Dogs  bark.\n\nCats\u00a0purr.")
    assert [t.text for t in doc if t.is_space] == [" ", "\n\n", "\u00a0"]
    words = [t.text for t in doc]
    set_parse(doc, "(S (NP ( Dogs)) ( -SP-) (VP ( bark)) ( .) ( -NL--NL-) (NP ( Cats) ( -U+00A0-) ( purr)) ( .))")
    text = doc[:]._.parse_string
    assert "\n" not in text and "  " not in text and "\u00a0" not in text
    assert parse_brackets(text).words == words
    assert [n for n in text.split() if n.startswith("-")] == ["-SP-)", "-NL--NL-)", "-U+00A0-)"]


def test_empty_elements_and_empty_constituents_are_left_out():
    tree = parse_brackets("(TOP (S (NP-SBJ (-NONE- *)) (VP (VB Go) (NP (NN home)) (ADVP )) (. .)))")
    assert tree.words == ["Go", "home", "."]
    assert constituents(tree.root) == [(0, 3, "S"), (0, 2, "VP"), (1, 2, "NP")]
    one = parse_brackets("(NN Abstract)")
    assert one.words == ["Abstract"] and one.tags == ["NN"] and one.root is None


def test_a_wrapper_over_several_trees_is_an_unlabeled_root_and_separators_are_refused():
    tree = parse_brackets("(TOP (NP (NN Results)) (. :))")
    assert tree.root.label == "" and constituents(tree.root) == [(0, 1, "NP")]
    assert parse_brackets("(TOP (NN Abstract))").root is None
    assert tree_to_chart(None, 1) == [(0, 0, EMPTY)]
    bad = parse_brackets("(S (ADVP|PRT (RB up)) (VP (VB go)))")
    with pytest.raises(TreeFormatError, match="ADVP|PRT"):
        tree_to_chart(bad.root, 2)


def _random_tree(rng: random.Random, n: int) -> Node:
    """A random n-ary tree over n words with unary chains and words left
    without a phrase."""
    def build(start: int, end: int, depth: int):
        if end - start == 1 and rng.random() < 0.5:
            return start
        if end - start == 1:
            node = Node(rng.choice("ABC"), start, end, [start])
        else:
            cuts = sorted(rng.sample(range(start + 1, end), rng.randint(1, min(3, end - start - 1))))
            bounds = [start] + cuts + [end]
            node = Node(rng.choice("ABCD"), start, end, [build(a, b, depth + 1) for a, b in zip(bounds, bounds[1:])])
        while rng.random() < 0.25:  # a unary chain above it
            node = Node(rng.choice("ST"), start, end, [node])
        return node
    root = build(0, n, 0)
    return root if isinstance(root, Node) else Node("S", 0, n, [root])


def test_the_chart_is_a_binary_tree_that_gives_the_tree_back():
    rng = random.Random(0)
    for trial in range(300):
        n = rng.randint(1, 9)
        root = _random_tree(rng, n)
        chart = tree_to_chart(root, n)
        spans = [(s, e) for s, e, _ in chart]
        # 2n - 1 distinct spans that nest or are disjoint: a binary bracketing
        assert len(chart) == 2 * n - 1 and len(set(spans)) == len(spans)
        assert all(a[1] < b[0] or b[1] < a[0] or (a[0] <= b[0] and b[1] <= a[1]) or (b[0] <= a[0] and a[1] <= b[1])
                   for a in spans for b in spans)
        assert Counter(constituents(chart_to_tree(chart, n))) == Counter(constituents(root))


def test_unary_chains_are_one_chart_label_top_down():
    tree = parse_brackets("(TOP (S (S (VP (VBG Using) (NP (NN x)))) (. .)))")
    labels = {(s, e): label for s, e, label in tree_to_chart(tree.root, 3)}
    assert labels[(0, 2)] == ("S", None)       # the outer S has two children
    assert labels[(0, 1)] == ("S+VP", None)    # the inner S over a VP: one span
    assert labels[(0, 0)] == EMPTY             # "Using": no phrase of its own
    assert labels[(1, 1)] == ("NP", None)
    assert labels[(2, 2)] == EMPTY
    assert tree_to_chart(tree.root, 3)[0] == (0, 2, ("S", None))


# --------------------------------------------------------------- joining
def test_entities_join_as_phrases_inserted_nodes_or_are_counted_as_crossing():
    tree = parse_brackets(TREE)
    entities = [(0, 3, "DNA"),      # the whole NP: a phrase
                (1, 3, "DNA"),      # "IL-2 gene": a run of the NP's children
                (1, 2, "protein"),  # "IL-2": a single word
                (2, 5, "other"),    # "gene is expressed": crosses the NP
                (0, 3, "protein")]  # the NP again, another type
    root, report = join_entities(tree.root, 8, entities)
    assert (report.constituents, report.runs, report.words) == (1, 1, 1)
    assert report.crossing == [(2, 5, "other")] and report.same_span == [(0, 3, "protein")]
    assert sorted(entities_of(root)) == [(0, 3, "DNA"), (1, 2, "protein"), (1, 3, "DNA")]
    # the inserted nodes are no constituents: the parse is unchanged
    assert constituents(without_entities(root)) == constituents(parse_brackets(TREE).root)
    chart = tree_to_chart(root, 8)
    back = chart_to_tree(chart, 8)
    assert sorted(entities_of(back)) == sorted(entities_of(root))
    assert Counter(constituents(back)) == Counter(constituents(parse_brackets(TREE).root))


# ------------------------------------------------------------------ evalb
def test_evalb_deletes_punctuation_and_top_and_equates_advp_prt():
    gold = parse_brackets("(TOP (S (NP (NNS Cells)) (VP (VBD grew) (PRT (RP up))) (. .)))")
    test = parse_brackets("(TOP (S (NP (NNS Cells)) (VP (VBD grew) (ADVP (RP up)) (. .))))")
    # gold: S 0-3, NP 0-1, VP 1-3, PRT 2-3; test's VP covers the full stop,
    # which evalb deletes: VP 1-3 matches, and ADVP = PRT
    assert evalb_brackets(constituents(gold.root), gold.tags) == Counter(
        {(0, 3, "S"): 1, (0, 1, "NP"): 1, (1, 3, "VP"): 1, (2, 3, "ADVP"): 1})
    counts = score_brackets([(constituents(gold.root), constituents(test.root), gold.tags)])
    assert (counts.matched, counts.gold, counts.test) == (4, 4, 4)


def test_evalb_counts_a_repeated_bracket_twice():
    gold = parse_brackets("(TOP (NP (NP (NN x)) (NN y)))")
    test = parse_brackets("(TOP (NP (NN x) (NN y)))")
    counts = score_brackets([(constituents(gold.root), constituents(test.root), gold.tags)])
    assert (counts.matched, counts.gold, counts.test) == (1, 2, 1)


def _evalb_binary():
    path = os.environ.get("SPACY_STRUCT_EVALB") or shutil.which("evalb")
    return path if path and Path(path).exists() else None


@pytest.mark.data
@pytest.mark.skipif(_evalb_binary() is None, reason="no evalb binary (set SPACY_STRUCT_EVALB to one built from source)")
def test_evalb_matches_the_c_evalb_on_every_dev_sentence(tmp_path):
    """Perturbed GENIA dev trees (relabeled spans, random re-bracketing) are
    scored by the C evalb with COLLINS.prm and by this module: the matched,
    gold and test bracket counts agree on every sentence."""
    trees_file = DATA / "genia_treebank" / "dev.trees"
    if not trees_file.exists():
        pytest.skip("GENIA Treebank dev is absent")
    rng = random.Random(0)
    labels = ["NP", "VP", "PP", "S", "", "", "", "ADVP", "PRT", "S+VP", "NP+NP"]
    golds, tests = [], []
    for line in trees_file.read_text(encoding="utf8").splitlines():
        tree = parse_brackets(line)
        n = len(tree.words)
        chart = [(s, e, (rng.choice(labels), None)) if rng.random() < 0.15 else (s, e, l)
                 for s, e, l in tree_to_chart(tree.root, n)]
        test = chart_to_tree(chart, n)
        if len(constituents(test)) > 190:  # evalb holds 200 brackets per sentence
            test = tree.root
        golds.append(tree)
        tests.append(test)
    (tmp_path / "gold").write_text("".join(to_brackets(t.root, t.words, t.tags) + "\n" for t in golds))
    (tmp_path / "test").write_text("".join(to_brackets(p, g.words, g.tags) + "\n" for g, p in zip(golds, tests)))
    (tmp_path / "COLLINS.prm").write_text(
        "DEBUG 0\nMAX_ERROR 10\nCUTOFF_LEN 40\nLABELED 1\n"
        + "".join(f"DELETE_LABEL {x}\n" for x in ["TOP", "-NONE-", ",", ":", "``", "''", "."])
        + "DELETE_LABEL_FOR_LENGTH -NONE-\nEQ_LABEL ADVP PRT\n")
    out = subprocess.run([_evalb_binary(), "-p", str(tmp_path / "COLLINS.prm"), str(tmp_path / "gold"),
                          str(tmp_path / "test")], capture_output=True, text=True, check=True).stdout
    rows = [line.split() for line in out.splitlines() if len(line.split()) == 12 and line.split()[0].isdigit()]
    assert len(rows) == len(golds)
    for row, gold, test in zip(rows, golds, tests):
        g = evalb_brackets(constituents(gold.root), gold.tags)
        t = evalb_brackets(constituents(test), gold.tags)
        assert (sum((g & t).values()), sum(g.values()), sum(t.values())) == tuple(int(x) for x in row[5:8])
    counts = score_brackets((constituents(g.root), constituents(t), g.tags) for g, t in zip(golds, tests))
    summary = out[out.index("-- All --"):]
    assert f"Bracketing FMeasure       = {100 * counts.f:6.2f}" in summary


# ------------------------------------------------------- trees on a Doc
def test_trees_on_a_doc_read_as_benepar_and_survive_docbin():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="The IL-2 gene is expressed in cells .".split())
    set_parse(doc, TREE)
    sent = doc[:]
    assert sent._.labels == ("S",) and doc[0:3]._.labels == ("NP",) and doc[1]._.labels == ()
    assert [c.text for c in sent._.children] == ["The IL-2 gene", "is expressed in cells", "."]
    assert doc[6:7]._.labels == ("NP",)        # an NP over one noun is the word's node
    assert doc[6]._.parent.text == "in cells" and doc[5:7]._.parent.text == "expressed in cells"
    assert sent._.parent is None
    assert sent._.parse_string == TREE[5:-1]
    assert [c.text for c in doc[5:7]._.constituents] == ["in cells", "in", "cells"]
    with pytest.raises(NonConstituentError, match="not a constituent"):
        doc[1:4]._.labels
    db = DocBin(store_user_data=True)
    db.add(doc)
    back = list(DocBin().from_bytes(db.to_bytes()).get_docs(nlp.vocab))[0]
    assert back[:]._.parse_string == sent._.parse_string
    assert [c.text for c in back._.constituents] == [c.text for c in doc._.constituents]
    assert Counter(constituents(tree_of(back, 0, len(back)))) == Counter(constituents(parse_brackets(TREE).root))


def test_a_tree_that_does_not_fit_the_tokens_is_refused():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="The cat sat".split())
    with pytest.raises(TreeFormatError, match="word 1 of the tree is 'dog'"):
        set_parse(doc, "(S (NP (DT The) (NN dog)) (VP (VBD sat)))")
    with pytest.raises(TreeFormatError, match="2 words and the text 3 tokens"):
        set_parse(doc, "(S (NP (DT The) (NN cat)))")


def test_trees_are_drawn_with_their_labels_and_entities():
    from spacy.tokens import Span, SpanGroup

    from spacy_struct.joint_parser import render_trees

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="The IL-2 gene is expressed in cells .".split())
    with pytest.raises(ValueError, match="no constituency parse"):
        render_trees(doc[:])
    set_parse(doc, TREE)
    doc.spans["sc"] = SpanGroup(doc, name="sc", spans=[Span(doc, 1, 3, "DNA"), Span(doc, 1, 2, "protein")])
    svg = render_trees(doc[:])
    assert svg.startswith("<svg") and svg.count("<text") == 8 + 8 + 6 + 2  # words, tags, phrases, entities
    assert ">PP<" in svg and ">DNA<" in svg and ">protein<" in svg
    assert render_trees(doc[:], page=True).startswith("<!DOCTYPE html>")


def test_a_one_word_phrase_is_drawn_above_its_word_and_docs_without_sentences_draw():
    import re as regex

    from spacy_struct.joint_parser import render_trees

    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="IL-2 works now".split())
    set_parse(doc, "(S (NP (NN IL-2)) (VP (VBZ works) (ADVP (RB now))))")
    svg = render_trees(doc)  # no sentence boundaries: the doc is drawn whole
    lines = [tuple(float(v) for v in m) for m in regex.findall(
        r"<line x1='([\d.]+)' y1='([\d.]+)' x2='([\d.]+)' y2='([\d.]+)'", svg)]
    assert len(lines) == 6  # S-NP, S-VP, NP-IL-2, VP-works, VP-ADVP, ADVP-now
    assert all(y2 > y1 for _, y1, _, y2 in lines)  # every line goes down to a child


def test_set_parse_refuses_a_span_that_cuts_a_stored_tree():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="The IL-2 gene is expressed in cells .".split())
    set_parse(doc, TREE)
    with pytest.raises(TreeFormatError, match="cut the stored constituent"):
        set_parse(doc[2:5], "(S (NN gene) (VBZ is) (VBN expressed))")


def test_constituents_are_scored_through_the_alignment_of_other_tokens():
    from spacy.training import Example

    from spacy_struct.joint_parser import score_constituents

    nlp = spacy.blank("en")
    ref = Doc(nlp.vocab, words=["c-fos", "binds", "DNA"], spaces=[True, True, False])
    set_parse(ref, "(S (NP (NN c-fos)) (VP (VBZ binds) (NP (NN DNA))))")
    same = Doc(nlp.vocab, words=["c-fos", "binds", "DNA"], spaces=[True, True, False])
    set_parse(same, "(S (NP (NN c-fos)) (VP (VBZ binds) (NP (NN DNA))))")
    split = Doc(nlp.vocab, words=["c", "-", "fos", "binds", "DNA"], spaces=[False, False, True, True, False])
    # "c" alone is no reference token: its NP cannot match; the rest align
    set_parse(split, "(S (NP (NN c)) (X (HYPH -) (NN fos)) (VP (VBZ binds) (NP (NN DNA))))")
    assert score_constituents([Example(same, ref)])["constituents_f"] == 1.0
    scores = score_constituents([Example(split, ref)])
    # gold S, NP, VP, NP; test S, NP(c), X(- fos), VP, NP: S, VP, NP(DNA) match
    assert scores["constituents_r"] == pytest.approx(3 / 4) and scores["constituents_p"] == pytest.approx(3 / 5)


# --------------------------------------------------------------- label parts
LABELS = ["NP", "NP|protein", "PP|protein", "S+VP", "|protein", "NP|DNA", "|DNA"]


def test_a_joint_label_scores_as_its_chain_its_entity_type_and_itself():
    parts = LabelParts(LABELS, factored=True)
    rng = np.random.default_rng(0)
    P = rng.normal(size=(3, 3, parts.n_parts))
    column = {part: k for k, part in enumerate(parts.parts)}
    S = parts.label_scores(P)
    for k, label in enumerate(LABELS):
        chain, _, entity = label.partition("|")
        expected = P[:, :, column["chain", chain]]
        if "|" in label:
            expected = expected + P[:, :, column["entity", entity]] + P[:, :, column["joint", label]]
        assert np.allclose(S[:, :, k], expected), label
    # the entity part is shared: moving it moves every protein label, phrase
    # or inserted node, and nothing else
    moved = P.copy()
    moved[:, :, column["entity", "protein"]] += 1.0
    shift = parts.label_scores(moved) - S
    for k, label in enumerate(LABELS):
        assert np.allclose(shift[:, :, k], 1.0 if label.partition("|")[2] == "protein" else 0.0), label


def test_the_part_gradient_is_the_adjoint_of_the_label_scores():
    rng = np.random.default_rng(1)
    for factored in (True, False):
        parts = LabelParts(LABELS, factored)
        P = rng.normal(size=(4, 4, parts.n_parts))
        G = rng.normal(size=(4, 4, len(LABELS)))
        assert float((parts.label_scores(P) * G).sum()) == pytest.approx(
            float((P * parts.part_gradient(G)).sum()), rel=1e-5)


def test_labels_without_entities_are_their_own_parts():
    for factored in (True, False):
        parts = LabelParts(["NP", "S+VP", "VP"], factored)
        assert parts.n_parts == 3 and np.array_equal(parts.matrix, np.eye(3))
    assert LabelParts(LABELS, factored=False).n_parts == len(LABELS)
    # 4 chains ("" the inserted node), 2 types, 5 joint labels
    assert LabelParts(LABELS, factored=True).n_parts == 4 + 2 + 5


# ------------------------------------------------- the entity columns' own loss
def test_only_entities_that_can_be_one_nested_set_are_kept_outer_first():
    entities = [(1, 3, "DNA"), (0, 4, "protein"), (2, 5, "RNA"), (1, 3, "protein"), (0, 4, "protein")]
    # (0, 4) first (once); both types of (1, 3) stay; (2, 5) crosses (0, 4)
    assert laminar_entities(entities) == [(0, 4, "protein"), (1, 3, "DNA"), (1, 3, "protein")]
    # the outer one wins, as in the tree: (3, 6) crosses (2, 5), placed first
    assert laminar_entities([(3, 6, "DNA"), (2, 5, "RNA")]) == [(2, 5, "RNA")]
    assert laminar_entities([(0, 1, "DNA"), (1, 2, "DNA")]) == [(0, 1, "DNA"), (1, 2, "DNA")]


def test_the_entity_loss_is_the_nested_set_crf_of_the_entity_columns_by_enumeration():
    parts = LabelParts(LABELS, factored=True)
    columns = EntityColumns(parts)
    assert columns.types == ("protein", "DNA")
    rng = np.random.default_rng(3)
    P = rng.normal(size=(3, 3, parts.n_parts))
    gold, unknown = columns.gold_rows([(0, 2, "DNA"), (1, 2, "protein"), (1, 3, "DNA")])  # the last crosses
    assert gold.tolist() == [[0, 1, 1], [1, 1, 0]] and unknown == []
    loss, (grad,) = columns.loss([P], [gold])
    entity = P[:, :, columns.columns]
    assert loss == pytest.approx(brute_log_partition(entity, "laminar") - entity[0, 1, 1] - entity[1, 1, 0])
    expected = brute_marginals(entity, "laminar")
    expected[0, 1, 1] -= 1.0
    expected[1, 1, 0] -= 1.0
    assert np.allclose(grad[:, :, columns.columns], expected)
    others = np.setdiff1d(np.arange(parts.n_parts), columns.columns)
    assert not grad[:, :, others].any()  # chain and joint columns are left alone
    # two types on the same words: the span stands for either (LaminarSpans)
    both, _ = columns.gold_rows([(0, 3, "DNA"), (0, 3, "protein")])
    loss, _ = columns.loss([P], [both])
    pair = np.logaddexp(entity[0, 2, 0], entity[0, 2, 1])
    assert loss == pytest.approx(brute_log_partition(entity, "laminar") - pair)
    assert columns.gold_rows([(0, 1, "RNA")])[1] == [(0, 1, "RNA")]  # no column: handed back
