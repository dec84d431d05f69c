"""Robustness: the cases of a fault battery kept as tests, by kind (pipeline
operations under fork and spawn, pickling after use, deep trees, long
tokens, stale annotations, bad gold, settings at load time, peak memory).
Each case gives the right output or a clear error naming the problem."""
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import robust_pipelines

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.filterwarnings("ignore:.*cut into sentences by rule")


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
    run = subprocess.run([sys.executable, str(HERE / "helpers" / "robust_pipelines.py"), *map(str, pipelines.values())],
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
    from spacy_struct.annotations.brackets import (
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
    import spacy

    return spacy.load(pipelines["joint_parser"])


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


def test_a_dependency_parsed_doc_is_parsed_in_its_own_sentences(joint):
    """spaCy forbids changing the sentences of a dependency-parsed doc, so
    the trees follow them: a sentence of whitespace alone gets its own."""
    from spacy.tokens import Doc

    doc = Doc(joint.vocab, words=["\n\n", "Hello", "there", "."], spaces=[False, True, False, False],
              heads=[0, 3, 3, 3], deps=["dep", "intj", "advmod", "ROOT"])
    assert [(s.start, s.end) for s in doc.sents] == [(0, 1), (1, 4)]
    doc = joint.get_pipe("joint_parser")(doc)
    assert [(s.start, s.end) for s in doc.sents] == [(0, 1), (1, 4)]
    assert all(sent._.labels for sent in doc.sents)


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
    from spacy_struct.annotations.trees import tree_ranges

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
    from spacy_struct.joint_parser import set_parse
    from spacy_struct.annotations.trees import USER_DATA_KEY

    doc = joint("The dog barked.")
    doc.user_data[USER_DATA_KEY]["labels"].pop()
    with pytest.raises(ValueError, match="lists of unequal length"):
        doc[:]._.labels
    example = _joint_example(joint, "The dog barked .".split())
    set_parse(example.reference, "(S (NP (DT The) (NN dog)) (VP (VBD barked)) (. .))")
    example.reference.user_data[USER_DATA_KEY]["starts"].pop()
    with pytest.raises(ValueError, match=r"example 0 .*its gold trees cannot be read: .*lists of unequal length"):
        joint.update([example])


# ----------------------------------------------------------------- memory
ROOT = HERE.parent


def _peak(case, docs):
    from tools.bench.memory import run_case

    return run_case(case, docs)


def test_second_order_parsing_memory_follows_the_chunk_not_the_batch():
    """nlp.pipe(batch_size=1000) over docs of 10 sentences of 35 words,
    each run in a fresh process: the second-order parser's peak stays
    within 1.5x the first-order one's, and four times the docs in one batch
    do not raise it by half (it held every (n+1)^3 part array of a batch).
    A peak is per process, so the three processes run two at a time."""
    from concurrent.futures import ThreadPoolExecutor

    cases = [("mst_parser order 1", 400), ("mst_parser order 2", 400), ("mst_parser order 2", 100)]
    with ThreadPoolExecutor(2) as pool:
        first, second, second_small = pool.map(lambda case: _peak(*case), cases)
    assert second["peak_mb"] <= 1.5 * first["peak_mb"], (first, second)
    assert second["rise_mb"] <= 1.5 * second_small["rise_mb"] + 50, (second_small, second)


def test_pruned_second_order_parses_400_words_in_less_memory_than_every_part_takes_for_200():
    """Kept parts grow with n k^2, every part with (n+1)^3: a 400-word
    sentence, parsed whole, raises the peak less than a 200-word one with
    every part (which holds 8 million of them)."""
    pruned = _peak("mst_parser order 2, kept parts, one sentence of 400 words", 1)
    full = _peak("mst_parser order 2, every part, one sentence of 200 words", 1)
    assert pruned["rise_mb"] < 0.5 * full["rise_mb"], (pruned, full)


def test_a_50000_character_token_stays_under_1_gb_and_is_left_whole():
    result = _peak("supervised_morph_segmenter, 50,000-character token", 1)
    assert result["peak_mb"] < 1024, result


def test_supervised_segmenter_leaves_long_tokens_whole_with_a_warning(pipelines):
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(pipelines["supervised_morph_segmenter"], config={
        "components": {"supervised_morph_segmenter": {"max_word_length": 20}}})
    long_word = "acgt" * 10
    with pytest.warns(UserWarning, match=r"1 token\(s\) longer than max_word_length = 20 .* left whole"):
        doc = nlp(Doc(nlp.vocab, words=["unhappiness", long_word]))
    assert tuple(doc[1]._.morphs) == (long_word,)
    assert "".join(doc[0]._.morphs) == "unhappiness"


def test_supervised_segmenter_leaves_long_gold_words_out_of_training():
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("supervised_morph_segmenter", config={"max_word_length": 10, "model": {
        "@architectures": "spacy_struct.MorphScorer.v1", "char_width": 8, "char_rows": 64, "word_width": 8,
        "char_context_width": 8, "hidden_width": 8, "lexicon_rows": 64, "dropout": 0.0,
        "tok2vec": robust_pipelines.TINY_TOK2VEC}})
    reference = Doc(nlp.vocab, words=["walking", "unbelievableness"])
    reference[0]._.morphs = ["walk", "ing"]
    reference[1]._.morphs = ["un", "believ", "able", "ness"]
    example = Example(Doc(nlp.vocab, words=["walking", "unbelievableness"]), reference)
    optimizer = nlp.initialize(lambda: [example])
    nlp.update([example], sgd=optimizer)
    assert nlp.get_pipe("supervised_morph_segmenter").unrepresentable_gold == 1


# ------------------------------------------------------ settings and input
def test_morph_segmenter_honours_or_warns_about_settings_given_at_load_time(pipelines, tmp_path):
    import spacy

    path = pipelines["morph_segmenter"]
    unseen = ["unrewalkingness", "rethinkers", "overbakings"]
    plain = spacy.load(path)
    before = [tuple(plain(w)[0]._.morphs) for w in unseen]
    assert any(len(m) > 1 for m in before), "the fixture segments some unseen word"
    with pytest.warns(UserWarning, match=r"max_length = 3, min_stem = 1 .* apply to the words the lexicon does not hold"):
        capped = spacy.load(path, config={"components": {"morph_segmenter": {"max_length": 3, "min_stem": 1}}})
    assert [tuple(capped(w)[0]._.morphs) for w in unseen] == [(w,) for w in unseen]  # longer words stay whole
    # a setting learning never reads has its whole effect at load time: no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_length = spacy.load(path, config={"components": {"morph_segmenter": {"new_strings": "length"}}})
    assert by_length.get_pipe("morph_segmenter").model.settings.new_strings == "length"
    with pytest.warns(UserWarning, match=r"n_tags = 7 in the config, but the lexicon was learned with n_tags = 5"):
        spacy.load(path, config={"components": {"morph_segmenter": {"n_tags": 7}}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spacy.load(path)  # no setting changed: no warning
        plain.to_disk(tmp_path / "again")
        spacy.load(tmp_path / "again")


def test_a_lexicon_saved_before_its_configuration_was_kept_loads_as_it_did(pipelines):
    """Format 2 lexicons have no configured settings beside the learned ones
    (which hold what tune_priors chose): the learned ones stay in force,
    without a warning, whatever the config says."""
    import warnings

    import spacy
    import srsly

    nlp = spacy.load(pipelines["morph_segmenter"])
    saved = srsly.msgpack_loads(nlp.get_pipe("morph_segmenter").to_bytes())
    del saved["configured"]
    saved["format"] = 2
    saved["settings"]["min_stem"] = 2  # as tune_priors may have chosen
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe = spacy.blank("en").add_pipe("morph_segmenter").from_bytes(srsly.msgpack_dumps(saved))
    assert pipe.model.settings.min_stem == 2


def test_extra_text_that_is_not_utf8_names_the_file_and_the_byte(tmp_path):
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example

    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"sweeps": 1, "verbose": False, "tune_priors": False})
    text = tmp_path / "latin1.txt"
    text.write_bytes(("walking talks\n" * 20_000 + "na\u00efve caf\u00e9s\n").encode("latin1"))
    example = Example(Doc(nlp.vocab, words=["walking"]), Doc(nlp.vocab, words=["walking"]))
    with pytest.raises(ValueError, match=r"morph_segmenter: extra_text .*latin1.txt' is not UTF-8 text: byte 280002 \(line 20001\)"):
        nlp.get_pipe("morph_segmenter").initialize(lambda: [example], nlp=nlp, extra_text=[str(text)])


def test_a_blown_up_learn_rate_raises_a_divergence_error_through_the_python_api():
    from thinc.api import Adam

    from spacy_struct.pipeline.base import TrainingDivergedError

    nlp = robust_pipelines._nested_ner()
    examples = robust_pipelines._nested_examples(nlp)
    optimizer = Adam(learn_rate=1e6, grad_clip=0)
    with pytest.raises(TrainingDivergedError, match="training diverged"):
        for _ in range(30):
            nlp.update(examples[:16], sgd=optimizer)


def test_a_second_order_cut_below_the_setting_says_why(pipelines):
    """Pruned (the default), a 250-word sentence is one tree; with every
    part (kept_heads = 0, set at load time) it is cut, and the warning says why."""
    import spacy
    from spacy.tokens import Doc

    nlp = spacy.load(pipelines["mst_parser"])
    parser = nlp.get_pipe("mst_parser")
    assert parser.order == 2 and parser.cfg["max_sentence_length"] > 200
    words = ["cells"] * 250
    doc = parser(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 249))
    assert sum(t.head.i == t.i for t in doc) == 1
    nlp = spacy.load(pipelines["mst_parser"], config={"components": {"mst_parser": {"kept_heads": 0}}})
    with pytest.warns(UserWarning, match=r"longer than 200 tokens .*the config asks for 512, but a second-order model"):
        nlp.get_pipe("mst_parser")(Doc(nlp.vocab, words=words, sent_starts=[True] + [False] * 249))
