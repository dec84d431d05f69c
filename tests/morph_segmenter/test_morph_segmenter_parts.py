"""morph_segmenter's parts: token._.morphs and its storage, the converters,
and the scorers."""
import itertools
import os
import subprocess
import sys

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_struct.convert.morphology import (
    CANONICAL_KEY, CATEGORY_KEY, MorphologyFormatError, convert_sigmorphon, convert_ud_morphs,
)
from spacy_struct.annotations.morphs import Morphs, MorphsError, doc_morphs, write_morphs
from spacy_struct.morph_segmenter.scoring import (
    boundary_counts, lcs_length, levenshtein, score_morphs, sigmorphon_pairs, sigmorphon_scores,
)

from conftest import SHARED_DATA as DATA


# ---------------------------------------------------------------- morphs
def test_morphs_know_their_stem_affixes_and_cuts():
    m = Morphs(("un", "help", "ful", "ly"))
    assert (m.prefixes, m.stem, m.suffixes, m.cuts, m.tag) == (("un",), "help", ("ful", "ly"), (2, 6, 9), None)
    assert Morphs(("re", "do"), stem=1, tag=3).suffixes == () and Morphs(("re", "do"), stem=1, tag=3).tag == 3
    assert Morphs.from_cuts("unhelpful", [2, 6]) == ("un", "help", "ful")
    with pytest.raises(ValueError, match="not increasing"):
        Morphs.from_cuts("unhelpful", [6, 2])
    with pytest.raises(ValueError, match="stem position 4"):
        Morphs(("a", "b"), stem=4)


def test_morphs_are_stored_per_token_and_survive_docbin_and_bytes():
    nlp = spacy.blank("en")
    doc = nlp("the unhelpful dogs")
    doc[1]._.morphs = ["un", "help", "ful"]
    doc[2]._.morphs = Morphs(("dog", "s"), stem=0, tag=2)
    assert doc[0]._.morphs is None and doc[1]._.morphs.stem == "help"
    db = DocBin(store_user_data=True)
    db.add(doc)
    back = list(DocBin().from_bytes(db.to_bytes()).get_docs(nlp.vocab))[0]
    again = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    for d in (back, again):
        assert doc_morphs(d) == [None, ("un", "help", "ful"), ("dog", "s")]
        assert d[2]._.morphs.tag == 2 and d[2]._.morphs.stem_index == 0
    doc[1]._.morphs = None
    assert doc[1]._.morphs is None and doc[2]._.morphs == ("dog", "s")


def test_morphs_that_are_not_the_word_are_refused_naming_it():
    doc = spacy.blank("en")("the dogs")
    with pytest.raises(MorphsError, match="token 1 'dogs'.*do not concatenate"):
        doc[1]._.morphs = ["dog", "z"]
    with pytest.raises(MorphsError, match="the string 'dogs'"):
        doc[1]._.morphs = "dogs"
    with pytest.raises(MorphsError, match="non-empty"):
        write_morphs(doc, {1: ["dogs", ""]})
    doc[1]._.morphs = ["dog", "s"]
    with doc.retokenize() as retokenizer:
        retokenizer.merge(doc[0:2])
    with pytest.raises(ValueError, match="retokenized"):
        doc[0]._.morphs


# -------------------------------------------------------------- converters
def test_sigmorphon_words_keep_surface_gold_and_count_canonical_gold(tmp_path):
    path = tmp_path / "xx.word.train.tsv"
    path.write_text("dogs\tdog @@s\t100\nran\trun @@ed\t100\nstáti (se)\tstá @@ti (se)\t010\n", encoding="utf8")
    report = convert_sigmorphon(path, tmp_path / "w.spacy")
    assert (report.items, report.tokens, report.recoverable, report.not_recoverable) == (3, 3, 2, 1)
    docs = list(DocBin().from_disk(tmp_path / "w.spacy").get_docs(spacy.blank("xx").vocab))
    assert [len(d) for d in docs] == [1, 1, 1]  # a word with a space is still one word
    assert [d[0]._.morphs for d in docs] == [("dog", "s"), None, ("stá", "ti (se)")]
    assert docs[1].user_data[CANONICAL_KEY] == ("run", "ed") and docs[2].user_data[CATEGORY_KEY] == "010"
    assert any("do not concatenate" in line for line in report.lines())


def test_sigmorphon_sentences_align_words_and_keep_misaligned_ones_for_the_metric(tmp_path):
    path = tmp_path / "xx.sentence.dev.tsv"
    path.write_text("The dogs ran .\tThe dog @@s run @@ed .\nArm & Hammer\tArm & West ham @@er\n", encoding="utf8")
    report = convert_sigmorphon(path, tmp_path / "s.spacy")
    assert (report.items, report.tokens, report.recoverable, report.not_recoverable) == (2, 7, 3, 1)
    assert (report.misaligned_items, report.misaligned_tokens) == (1, 3)
    first, second = DocBin().from_disk(tmp_path / "s.spacy").get_docs(spacy.blank("xx").vocab)
    assert doc_morphs(first) == [("The",), ("dog", "s"), None, (".",)]
    assert doc_morphs(second) == [None, None, None]
    assert second.user_data[CANONICAL_KEY] == ("Arm", "&", "West", "ham", "er")
    with pytest.raises(MorphologyFormatError, match="cannot tell word from sentence"):
        convert_sigmorphon(tmp_path / "other.tsv", tmp_path / "o.spacy")
    (tmp_path / "bad.word.tsv").write_text("dogs\n", encoding="utf8")
    with pytest.raises(MorphologyFormatError, match="bad.word.tsv:1: expected"):
        convert_sigmorphon(tmp_path / "bad.word.tsv", tmp_path / "o.spacy")


def test_ud_multiword_tokens_are_morphs_of_their_surface_token(tmp_path):
    rows = [
        "# text = מתאילנד לישראל.",
        "1-2\tמתאילנד\t_\t_\t_\t_\t_\t_\t_\t_",
        "1\tמ\tמ\tADP\tADP\t_\t2\tcase\t_\t_",
        "2\tתאילנד\tתאילנד\tPROPN\tPROPN\t_\t0\troot\t_\t_",
        "3-4\tלישראל\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No",
        "3\tל\tל\tADP\tADP\t_\t4\tcase\t_\t_",
        "4\tהישראל\tישראל\tPROPN\tPROPN\t_\t2\tobl\t_\t_",
        "5\t.\t.\tPUNCT\tPUNCT\t_\t2\tpunct\t_\t_",
    ]
    path = tmp_path / "x.conllu"
    path.write_text("\n".join(rows) + "\n\n", encoding="utf8")
    report = convert_ud_morphs(path, tmp_path / "x.spacy")
    assert (report.tokens, report.recoverable, report.not_recoverable, report.segmented) == (3, 2, 1, 1)
    doc = list(DocBin().from_disk(tmp_path / "x.spacy").get_docs(spacy.blank("he").vocab))[0]
    assert doc.text == "מתאילנד לישראל. " and doc_morphs(doc) == [("מ", "תאילנד"), None, (".",)]
    assert doc.user_data[CANONICAL_KEY] == ("מ", "תאילנד", "ל", "הישראל", ".")


@pytest.mark.skipif(not (DATA / "sigmorphon2022_segmentation").exists(), reason="SIGMORPHON data absent")
@pytest.mark.parametrize("name, share", [("word/ces.word.dev.tsv", 100.0), ("word/mon.word.dev.tsv", 34.4),
                                         ("sentence/eng.sentence.dev.tsv", 94.1),
                                         ("sentence/mon.sentence.dev.tsv", 61.5)])
def test_the_surface_recoverable_shares_of_the_shared_task_sets(tmp_path, name, share):
    report = convert_sigmorphon(DATA / "sigmorphon2022_segmentation" / name, tmp_path / "x.spacy")
    assert round(100 * report.recoverable / report.tokens, 1) == share


# ---------------------------------------------------------------- scoring
def _pair(words, gold, pred):
    nlp = spacy.blank("xx")
    ref, hyp = Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words)
    write_morphs(ref, {i: m for i, m in enumerate(gold) if m is not None})
    write_morphs(hyp, {i: m for i, m in enumerate(pred) if m is not None})
    return Example(hyp, ref)


def _boundaries_by_characters(word, morphs):
    """Boundaries as the character positions after which "|" falls in the
    joined morphs: another way of counting them."""
    joined = "|".join(morphs)
    return {k - n for n, k in enumerate(i for i, c in enumerate(joined) if c == "|")}


def test_boundary_scores_weigh_tokens_or_types():
    examples = [
        _pair(["dogs", "dogs", "cat"], [("dog", "s"), ("dog", "s"), ("cat",)], [("do", "gs"), ("do", "gs"), ("c", "at")]),
        _pair(["walked", "dogs", "xyz"], [("walk", "ed"), ("dog", "s"), None], [("walk", "ed"), None, ("x", "yz")]),
    ]
    # the reference counts, by characters, over the tokens with gold
    def count(by_type):
        correct = predicted = gold = 0
        seen = set()
        for eg in examples:
            for t, g, p in zip(eg.reference, doc_morphs(eg.reference), doc_morphs(eg.predicted)):
                if g is None or (by_type and t.text in seen):
                    continue
                seen.add(t.text)
                gb = _boundaries_by_characters(t.text, g)
                pb = _boundaries_by_characters(t.text, p or (t.text,))
                correct, predicted, gold = correct + len(gb & pb), predicted + len(pb), gold + len(gb)
        return correct, predicted, gold
    assert boundary_counts(examples) == count(False) == (1, 4, 4)
    assert boundary_counts(examples, by_type=True) == count(True)
    # only the words `keep` accepts: "walked" is right; "dogs" is cut in the
    # wrong place twice and left whole once
    assert boundary_counts(examples, keep=lambda w: w == "walked") == (1, 1, 1)
    assert boundary_counts(examples, keep=lambda w: w == "dogs") == (0, 2, 3)
    assert boundary_counts(examples, by_type=True, keep=lambda w: w == "dogs") == (0, 1, 1)
    scores = score_morphs(examples)
    assert scores["morph_boundary_p"] == pytest.approx(1 / 4) and scores["morph_type_boundary_r"] == pytest.approx(1 / 2)


def _lcs_brute(a, b):
    for k in range(min(len(a), len(b)), -1, -1):
        subs = set(itertools.combinations(a, k))
        if any(s in subs for s in itertools.combinations(b, k)):
            return k
    return 0


def _levenshtein_brute(a, b):
    if not a or not b:
        return len(a) + len(b)
    return min(_levenshtein_brute(a[1:], b) + 1, _levenshtein_brute(a, b[1:]) + 1,
               _levenshtein_brute(a[1:], b[1:]) + (a[0] != b[0]))


def test_lcs_and_edit_distance_match_brute_force():
    import random

    rng = random.Random(0)
    for _ in range(200):
        a = [rng.choice("abc") for _ in range(rng.randint(0, 6))]
        b = [rng.choice("abc") for _ in range(rng.randint(0, 6))]
        assert lcs_length(a, b) == _lcs_brute(a, b)
        assert levenshtein("".join(a), "|".join(b)) == _levenshtein_brute("".join(a), "|".join(b))


def test_the_shared_task_metric_reads_canonical_gold_and_splits_morphs_at_spaces():
    nlp = spacy.blank("xx")
    ref = Doc(nlp.vocab, words=["státi (se)"])
    ref.user_data[CANONICAL_KEY] = ["stá", "ti (se)"]
    hyp = Doc(nlp.vocab, words=["státi (se)"])
    hyp[0]._.morphs = ["státi", " (se)"]
    assert sigmorphon_pairs([Example(hyp, ref)]) == [(["stá", "ti", "(se)"], ["státi", "", "(se)"])]
    scores = sigmorphon_scores([(["run", "ed"], ["ran"]), (["dog", "s"], ["dog", "s"])])
    assert scores["sigmorphon_p"] == pytest.approx(2 / 3) and scores["sigmorphon_r"] == pytest.approx(2 / 4)
    assert scores["sigmorphon_distance"] == pytest.approx((levenshtein("run|ed", "ran") + 0) / 2)


@pytest.mark.skipif(not os.environ.get("SPACY_STRUCT_SIGMORPHON_EVAL")
                    or not (DATA / "sigmorphon2022_segmentation").exists(),
                    reason="set SPACY_STRUCT_SIGMORPHON_EVAL to the shared task's evaluate.py (and the data)")
@pytest.mark.parametrize("name", ["sentence/eng.sentence.dev.tsv", "word/mon.word.dev.tsv"])
def test_the_shared_task_metric_equals_its_official_script(tmp_path, name):
    """Every word split at every other character against the gold, scored by
    ours and by the shared task's evaluate.py."""
    source = DATA / "sigmorphon2022_segmentation" / name
    convert_sigmorphon(source, tmp_path / "gold.spacy")
    nlp = spacy.blank("xx")
    examples = []
    lines = []
    for ref in DocBin().from_disk(tmp_path / "gold.spacy").get_docs(nlp.vocab):
        hyp = Doc(nlp.vocab, words=[t.text for t in ref], spaces=[bool(t.whitespace_) for t in ref])
        write_morphs(hyp, {t.i: [t.text[k:k + 2] for k in range(0, len(t.text), 2)] for t in hyp})
        examples.append(Example(hyp, ref))
        words = [" @@".join(m) for m in doc_morphs(hyp)]
        lines.append(f"{ref.text}\t{' '.join(words)}")
    (tmp_path / "guess.tsv").write_text("\n".join(lines) + "\n", encoding="utf8")
    out = subprocess.run([sys.executable, os.environ["SPACY_STRUCT_SIGMORPHON_EVAL"], "--gold", str(source),
                          "--guess", str(tmp_path / "guess.tsv")], capture_output=True, text=True, check=True).stdout
    official = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
    ours = sigmorphon_scores(sigmorphon_pairs(examples))
    assert f"{100 * ours['sigmorphon_f']:.2f}" == official["f_measure"]
    assert f"{100 * ours['sigmorphon_p']:.2f}" == official["precision"]
    assert f"{ours['sigmorphon_distance']:.2f}" == official["distance"]


# ------------------------------------------------------------- hypotheses
def _brute_force_segmentations(length, max_prefixes, max_suffixes, min_stem, short_affixes):
    """Every subset of cut offsets and every choice of stem among the
    pieces, kept when it meets the constraints."""
    out = {((), 0)}
    for n_cuts in range(1, length):
        for cuts in itertools.combinations(range(1, length), n_cuts):
            edges = (0, *cuts, length)
            pieces = [y - x for x, y in zip(edges, edges[1:])]
            for stem in range(len(pieces)):
                affixes = pieces[:stem] + pieces[stem + 1:]
                if (stem <= max_prefixes and len(pieces) - stem - 1 <= max_suffixes and pieces[stem] >= min_stem
                        and (not short_affixes or all(a <= pieces[stem] for a in affixes))):
                    out.add((cuts, stem))
    return out


@pytest.mark.parametrize("max_prefixes,max_suffixes,min_stem,short_affixes",
                         [(2, 2, 1, True), (2, 2, 3, True), (0, 1, 3, True), (0, 1, 2, False), (2, 2, 2, False),
                          (1, 3, 1, False)])
def test_the_hypotheses_of_a_word_are_every_segmentation_meeting_the_constraints(
        max_prefixes, max_suffixes, min_stem, short_affixes):
    from spacy_struct.morph_segmenter.hypotheses import segmentations

    for length in range(1, 10):
        got = segmentations(length, max_prefixes, max_suffixes, min_stem, short_affixes)
        assert got[0] == ((), 0) and len(set(got)) == len(got)
        assert set(got) == _brute_force_segmentations(length, max_prefixes, max_suffixes, min_stem, short_affixes)
    # the counts the module's docstring gives for the paper's constraints
    assert [len(segmentations(n)) for n in (4, 8, 15)] == [10, 66, 553]


def test_a_stem_is_offered_with_the_letter_its_spelling_dropped_restored():
    from spacy_struct.morph_segmenter.hypotheses import build_hypotheses, segmentations

    words = ["structured", "structures", "making", "walked"]
    plain = build_hypotheses(words, max_prefixes=0, max_suffixes=1, min_stem=3)
    table = build_hypotheses(words, max_prefixes=0, max_suffixes=1, min_stem=3, restored_endings="e")
    assert not any(plain.stem_tail)
    analyses = {}
    for i, word in enumerate(words):
        hyps = table.hypotheses_of(i)
        got = [tuple(table.morph_strings[m] for m in table.morphs[h, :table.n_morphs[h]]) for h in hyps]
        # the written word's hypotheses are all there, in their order, each
        # followed by its restored twin where the rule allows one
        surface = [g for g, h in zip(got, hyps) if not table.stem_tail[h]]
        assert surface == [tuple(word[a:b] for a, b in zip((0, *c), (*c, len(word))))
                           for c, _ in segmentations(len(word), 0, 1, 3)]
        for h, morphs in zip(hyps, got):
            if table.stem_tail[h]:
                stem, suffix = morphs[table.stem_pos[h]], morphs[table.stem_pos[h] + 1]
                assert stem.endswith("e") and stem[-2] not in "aeiouy" and suffix[0] in "aeiouy"
                assert table.cuts[h] == table.cuts[h - 1]  # the same cuts as the written twin before it
        analyses[word] = {morphs for h, morphs in zip(hyps, got) if table.stem_tail[h]}
    assert ("structure", "ed") in analyses["structured"] and ("make", "ing") in analyses["making"]
    # not before the letter alone or with "s": "structures" is structure + s as written
    assert ("structure", "es") not in analyses["structures"]
    assert ("walke", "ed") in analyses["walked"]  # a candidate; the lexicon decides against it
    # a learned state is one hypothesis, its stem's string as learned; the
    # written stem is not interned beside it (no hypothesis uses it)
    state = build_hypotheses(["making"], clamped={0: ((3,), 0, "e")}, restored_endings="e")
    assert [state.morph_strings[m] for m in state.morphs[0, :2]] == ["make", "ing"] and len(state.n_morphs) == 1
    assert sorted(state.morph_strings) == ["ing", "make"]
    # a gold segmentation fixes the cuts only: its restored twin is offered
    gold = build_hypotheses(["making"], clamped={0: ((3,), 0)}, restored_endings="e")
    assert [tuple(gold.morph_strings[m] for m in gold.morphs[h, :2]) for h in range(2)] == [("mak", "ing"),
                                                                                        ("make", "ing")]
    assert gold.cuts == [(3,), (3,)] and gold.stem_tail == ["", "e"]


def test_restored_stems_are_shared_by_words_and_reach_new_ones():
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    stems = ["bake", "smile", "dance", "care", "score", "state", "trade", "shape", "share", "rate"]
    # every stem written whole, + d and + s; + ing (its "e" dropped) for half of them
    words = [form for stem in stems for form in (stem, stem + "d", stem + "s")] + [s[:-1] + "ing" for s in stems[:5]]
    sentences = [[w] for w in words] * 3
    settings = dict(stage="basic", sweeps=30, max_prefixes=0, max_suffixes=1, min_stem=3)
    model = MorphModel(MorphSettings(restored_endings="e", **settings))
    model.fit(sentences)
    plain = MorphModel(MorphSettings(restored_endings="", **settings))
    plain.fit(sentences)
    # with the restoration, one lexicon stem per lemma: "bak|ing" counts as bake + ing
    assert {model.lexicon_morphs(w)[0] for w in words} == set(stems)
    assert len({plain.lexicon_morphs(w)[0] for w in words}) > len(stems)
    assert model.lexicon_morphs("baking") == ("bake", "ing") and tuple(model.segment("baking")) == ("bak", "ing")
    # new words in "-ing" of known stems are cut before the suffix, on the
    # known stem; without the restoration their stem is a new string, and
    # they stay whole
    for stem in stems[5:]:
        new = stem[:-1] + "ing"
        assert model.segment(new).cuts == (len(stem) - 1,) and model.lexicon_morphs(new) == (stem, "ing")
        assert plain.segment(new).cuts == ()
    assert MorphModel.from_dict(model.to_dict()).lexicon_morphs("baking") == model.lexicon_morphs("baking")


def test_a_new_word_is_split_as_often_as_the_learned_words_written_alike():
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    # lowercase words take suffixes; capitalized ones (names) are mostly whole
    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull", "push", "kiss"]
    words = [stem + ending for stem in stems for ending in ("", "s", "ed", "ing", "er")]
    names = ["Anna", "Nina", "Olga", "Vera", "Lena", "Maria", "Tina", "Irena", "Paula", "Sonja", "Diana", "Linda"]
    sentences = [[w for w in words[k::7]] + [names[k % len(names)]] for k in range(7)] * 4
    sentences += [["walk", name] for name in names] * 3
    settings = dict(stage="basic", sweeps=30, max_prefixes=0, max_suffixes=1, min_stem=3)
    model = MorphModel(MorphSettings(**settings))
    model.fit(sentences)
    capitals = {form for form, c in zip(model.forms, model.capitalized) if c}
    assert capitals == {name.lower() for name in names}  # as written in most of their tokens
    whole, split = model._case_odds()[True]
    assert whole > 0 > split  # the learned names are split less often than the words are
    plain = MorphModel.from_dict({**model.to_dict(), "settings": {**model.to_dict()["settings"],
                                                                  "new_word_case": False}})
    # new names that end in a known suffix: written capitalized they stay
    # whole; in lowercase, or without the case odds, they are cut
    for name in ("Jenkins", "Walters", "Rivers"):
        assert plain.segment(name).cuts == plain.segment(name.lower()).cuts == (len(name) - 1,)
        assert model.segment(name.lower()).cuts == (len(name) - 1,)
        assert tuple(model.segment(name)) == (name,)
        # a sentence's first word is capitalized whatever it is: its case is not weighed
        assert model.segment(name, sentence_start=True).cuts == (len(name) - 1,)
    # a sentence's first word does not count toward a learned type's case
    opening = MorphModel(MorphSettings(**settings))
    opening.fit([["Walks", "talks"], ["walks", "Anna"], ["Walks"]])
    assert dict(zip(opening.forms, opening.capitalized)) == {"walks": False, "talks": False, "anna": True}
    assert model.capitalized == MorphModel.from_dict(model.to_dict()).capitalized


# ---------------------------------------------------------------- sampler
SETTINGS = {"gamma_length": 0.5, "gamma_segments": 0.5, "gamma_prefix": 1 / 1.1, "gamma_stem": 1e-4,
            "gamma_suffix": 1 / 1.1, "alpha": 0.1, "alpha_emission": 1e-5, "alpha_transition": 1.0,
            "betas": (0.6, 0.1, 0.3)}
STAGES = [(1, False, False), (3, False, False), (3, True, False), (3, True, True)]


def _toy_sampler(seed=0, max_suffixes=2, restored_endings=""):
    from spacy_struct.morph_segmenter._sampler import MorphSampler
    from spacy_struct.morph_segmenter.context import build_context
    from spacy_struct.morph_segmenter.hypotheses import build_hypotheses

    words = ["walks", "walked", "talks", "talked", "the", "dog", "dogs", "unwalked", "walk", "."]
    if restored_endings:  # stems that drop their "e" before a vowel
        words[5:7] = ["baked", "bakes"]
    rng = np.random.default_rng(seed)
    sentences = [list(rng.integers(0, len(words), size=rng.integers(1, 7))) for _ in range(12)]
    sentences.append([6, 6, 0])  # a type next to itself
    for i in range(len(words)):  # every type has tokens
        sentences.append([i])
    table = build_hypotheses(words, clamped={3: ((4,), 0)}, max_suffixes=max_suffixes,
                             restored_endings=restored_endings)
    context = build_context(sentences, words)
    return MorphSampler(table, context, 3, SETTINGS, seed), table, sentences, words


def _reference(sampler, table, sentences, words, stage, tags=None, hyps=None):
    from references.brute_force_morphs import log_joint, segmentation_of

    tags = list(sampler.tags_array) if tags is None else tags
    hyps = list(sampler.hyps_array) if hyps is None else hyps
    return log_joint([segmentation_of(table, h) for h in hyps], tags, sentences, words, SETTINGS, *stage,
                     most_morphs=int(np.max(table.n_morphs)))


@pytest.mark.parametrize("max_suffixes,restored_endings", [(2, ""), (3, ""), (2, "e")])
@pytest.mark.parametrize("stage", STAGES)
def test_every_move_of_the_sampler_follows_the_joint_recomputed_from_scratch(stage, max_suffixes, restored_endings):
    sampler, table, sentences, words = _toy_sampler(max_suffixes=max_suffixes, restored_endings=restored_endings)
    assert np.max(table.n_morphs) == 3 + max_suffixes  # up to 2 prefixes, a stem and the suffixes
    assert any(table.stem_tail) == bool(restored_endings)
    for k, earlier in enumerate(STAGES[:STAGES.index(stage) + 1]):
        sampler.set_stage(*earlier)
        sampler.sweep()
    assert sampler.log_joint() == pytest.approx(_reference(sampler, table, sentences, words, stage), abs=1e-8)
    for i in range(table.n_types):
        weights = sampler.conditional(i)
        expected = np.zeros_like(weights)
        for t in range(weights.shape[0]):
            for k, h in enumerate(table.hypotheses_of(i)):
                tags, hyps = list(sampler.tags_array), list(sampler.hyps_array)
                tags[i], hyps[i] = t, h
                expected[t, k] = _reference(sampler, table, sentences, words, stage, tags, hyps)
        got = weights - weights.max()
        want = expected - expected.max()
        assert np.allclose(got, want, atol=1e-8), (stage, words[i])


def test_the_sampler_is_reproducible_and_keeps_clamped_types():
    runs = []
    for _ in range(2):
        sampler, table, _, _ = _toy_sampler(seed=3)
        for stage in STAGES:
            sampler.set_stage(*stage)
            for _ in range(5):
                sampler.sweep()
        runs.append((sampler.tags_array.copy(), sampler.hyps_array.copy(), sampler.log_joint()))
    assert all(np.array_equal(a, b) for a, b in zip(runs[0][:2], runs[1][:2])) and runs[0][2] == runs[1][2]
    assert runs[0][1][3] == table.type_start[3]  # "talked" stays talk + ed


def test_a_new_word_gets_the_best_segmentation_of_the_type_level_model():
    from references.brute_force_morphs import log_joint, segmentation_of
    from spacy_struct.morph_segmenter.hypotheses import build_hypotheses

    sampler, table, sentences, words = _toy_sampler()
    sampler.set_stage(3, False, False)
    for _ in range(20):
        sampler.sweep()
    ids = {s: k for k, s in enumerate(table.morph_strings)}
    known = len(ids)
    new = build_hypotheses(["talking"], morph_ids=ids)
    gamma = SETTINGS["gamma_length"]
    geometric = np.array([np.log(gamma) + len(s) * np.log1p(-gamma) for s in new.morph_strings[known:]])
    tag, h = sampler.best_new(new.morphs, new.n_morphs, new.stem_pos, geometric)
    segs = [segmentation_of(table, x) for x in sampler.hyps_array]
    tags = list(sampler.tags_array)
    scores = {}
    for t in range(3):
        for k in range(len(new.n_morphs)):
            scores[t, k] = log_joint(segs + [segmentation_of(new, k)], tags + [t], sentences, words + ["talking"],
                                     SETTINGS, 3, False, False, most_morphs=int(np.max(table.n_morphs)))
    assert scores[tag, h] == pytest.approx(max(scores.values()), abs=1e-9)
    # any other price of the new strings replaces their geometric one, term
    # for term: each hypothesis's score moves by the difference of the
    # prices of the new strings it uses (each counted once)
    prices = np.random.default_rng(0).uniform(-30.0, -1.0, len(geometric))
    tag, h = sampler.best_new(new.morphs, new.n_morphs, new.stem_pos, prices)
    moved = {}
    for (t, k), value in scores.items():
        used = {int(m) - known for m in new.morphs[k, :new.n_morphs[k]] if m >= known}
        moved[t, k] = value + sum(prices[u] - geometric[u] for u in used)
    assert moved[tag, h] == pytest.approx(max(moved.values()), abs=1e-9)
    # a log factor per hypothesis adds to each hypothesis's score under every tag
    factors = np.random.default_rng(1).uniform(-5.0, 5.0, len(new.n_morphs))
    tag, h = sampler.best_new(new.morphs, new.n_morphs, new.stem_pos, prices, factors)
    shifted = {(t, k): value + factors[k] for (t, k), value in moved.items()}
    assert shifted[tag, h] == pytest.approx(max(shifted.values()), abs=1e-9)
    with pytest.raises(ValueError, match="3 hypothesis costs for"):
        sampler.best_new(new.morphs, new.n_morphs, new.stem_pos, prices, factors[:3])


def test_the_stem_limits_apply_to_learned_words_and_to_new_ones(monkeypatch):
    import spacy_struct.morph_segmenter.model as model_module
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    built = []
    real = model_module.build_hypotheses

    def recording(words, *args, **kwargs):
        built.append((list(words), kwargs.get("min_stem"), kwargs.get("short_affixes")))
        return real(words, *args, **kwargs)

    monkeypatch.setattr(model_module, "build_hypotheses", recording)
    model = MorphModel(MorphSettings(stage="basic", sweeps=2, min_stem=2, short_affixes=False))
    model.fit([["walking", "talking", "walked", "talked"]])
    model.segment("jumping")
    assert built[0][1:] == (2, False)  # the learned words' hypotheses
    assert built[-1] == (["jumping"], 2, False)  # the new word's


# ------------------------------------------------------------------ bench
def test_the_bench_scores_any_segmenter_and_measures_the_agreement_cue(tmp_path):
    from spacy_struct.convert.morphology import read_sigmorphon
    from tools.bench.morph import _recase, agreement_cue, dev_references, score, unseen_types

    path = tmp_path / "xx.sentence.dev.tsv"
    path.write_text("The dogs ran .\tThe dog @@s ran .\nbig cats walked\tbig cat @@s walk @@ed\n", encoding="utf8")
    refs = dev_references(path, "sentence")
    assert score(refs, lambda w: (w,))["morph_boundary_r"] == 0.0
    perfect = {"dogs": ("dog", "s"), "cats": ("cat", "s"), "walked": ("walk", "ed")}
    scores = score(refs, lambda w: perfect.get(w, (w,)))
    assert scores["morph_boundary_f"] == 1.0 and scores["sigmorphon_f"] == 1.0
    assert _recase("Dogs", ["dog", "s"]) == ["Dog", "s"]
    # inductive: the learned text holds "dogs" (and "The", "ran") but not
    # "cats" or "walked"; a segmenter right on the seen words alone
    learned = {"the", "dogs", "ran", "."}
    assert unseen_types(refs, learned) == {"seen": 4, "unseen": 3}
    seen_only = score(refs, lambda w: perfect[w] if w == "dogs" else (w,), learned)
    assert seen_only["seen_morph_boundary_f"] == 1.0 and seen_only["seen_morph_type_boundary_f"] == 1.0
    assert seen_only["unseen_morph_boundary_r"] == 0.0
    unseen_only = score(refs, lambda w: perfect[w] if w in ("cats", "walked") else (w,), learned)
    assert unseen_only["unseen_morph_boundary_f"] == 1.0 and unseen_only["unseen_morph_type_boundary_f"] == 1.0
    assert unseen_only["seen_morph_boundary_r"] == 0.0
    assert "seen_morph_boundary_f" not in scores
    # no neighbours end alike over their longer final suffix ("cats walked":
    # "ts" against "ed"), so there is no figure
    assert agreement_cue(list(read_sigmorphon(path))) == ""
    path.write_text("dogs cats\tdog @@s cat @@s\nhats mats\that @@s mats\n", encoding="utf8")
    cue = agreement_cue(list(read_sigmorphon(path)))
    assert "2 pairs" in cue and "50.0%" in cue


def test_the_bench_scores_the_consensus_of_chains_and_the_first_chain_as_its_control(tmp_path, capsys):
    from dataclasses import replace

    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings
    from tools.bench.morph import dev_references, run_ours, score

    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull"]
    lines = [f"{s}{e} {t}{f}\t{s} @@{e} {t} @@{f}" for s, t in zip(stems, stems[1:] + stems[:1])
             for e, f in (("s", "ed"), ("ing", "er"))]
    path = tmp_path / "xx.sentence.dev.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    refs = dev_references(path, "sentence")
    text = [line.split("\t")[0].split() for line in lines] * 3
    settings = {"max_prefixes": 0, "n_tags": 2, "chains": 3}
    rows = run_ours(text, refs, "pos", [9], 3, settings=settings, tune=False)
    assert list(rows) == ["basic", "pos", "pos, unsettled", "pos, one chain"]
    # its progress, a line per seed, chain and stage, on stderr (a set runs for up to hours)
    progress = capsys.readouterr().err
    for line in ("seed 9 (1 of 1)", "seed 9: chain 1 of 3", "seed 9: chain 3 of 3", "seed 9: stage basic learned",
                 "seed 9: stage pos learned"):
        assert line in progress
    # the stage rows score the consensus the component keeps; the control, the seed's own single run
    configured = MorphSettings(stage="pos", sweeps=3, seed=9, **settings)
    for chains, label in ((3, "pos"), (1, "pos, one chain")):
        model = MorphModel(replace(configured, chains=chains))
        model.fit(text)
        assert rows[label].runs == [score(refs, model.segment, with_position=True)]
    assert rows["pos, one chain"].seconds[0] < rows["pos"].seconds[0]
    assert rows["pos"].runs != rows["pos, one chain"].runs  # they differ here, so the rows tell them apart


def test_spelling_against_witten_bell_by_hand_and_its_mass():
    import itertools
    import math

    from spacy_struct.morph_segmenter.spelling import Spelling

    # characters alone: a, b and the end mark seen once each (total 3, 3
    # kinds: weight 3 / 6), the base 1 / (2 characters + end + unseen)
    unigram = Spelling(["ab"], order=1)
    p = 0.5 * (1 / 3) + 0.5 * 0.25
    assert unigram.log_prob("ab") == pytest.approx(3 * math.log(p))
    assert unigram.log_prob("") == pytest.approx(math.log(p))
    # a bigram model of "aaab", "ab" (^ the start, $ the end): the unigram
    # level sees a 4 times, b twice, $ twice (8 events, 3 kinds)
    bigram = Spelling(["aaab", "ab"], order=2)
    def uni(count):
        return (8 / 11) * (count / 8) + (3 / 11) * 0.25
    p_a_first = (2 / 3) * 1.0 + (1 / 3) * uni(4)            # after ^: a twice
    p_b_after_a = (4 / 6) * (2 / 4) + (2 / 6) * uni(2)      # after a: a twice, b twice
    p_end_after_b = (2 / 3) * 1.0 + (1 / 3) * uni(2)        # after b: $ twice
    assert bigram.log_prob("ab") == pytest.approx(math.log(p_a_first * p_b_after_a * p_end_after_b))
    # a character never seen after its context gets the lower order's share
    # alone ("b" never starts a stem nor follows "b")
    p_b_first = (1 / 3) * uni(2)
    p_b_after_b = (1 / 3) * uni(2)
    assert bigram.log_prob("bb") == pytest.approx(math.log(p_b_first * p_b_after_b * p_end_after_b))
    # "c", never seen, gets the base's share; after it, a context never
    # seen, the unigram level alone prices the end
    p_c_after_a = (2 / 6) * ((3 / 11) * 0.25)
    assert bigram.log_prob("ac") == pytest.approx(math.log(p_a_first * p_c_after_a * uni(2)))
    # the default order: what the stems hold is likelier than its reverse
    trigram = Spelling(["aaab", "ab"], order=3)
    assert trigram.log_prob("aab") > trigram.log_prob("baa")
    # a distribution over the strings of the characters it has seen: the
    # mass of every string up to 14 characters is below 1 and near it
    # (what is missing: longer strings, and characters never seen)
    mass = sum(math.exp(bigram.log_prob("".join(chars)))
               for n in range(15) for chars in itertools.product("ab", repeat=n))
    assert 0.9 < mass < 1.0


def test_the_bench_controls_change_only_how_new_words_are_segmented():
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings
    from tools.bench.morph import controls, setting_value

    assert [setting_value(v) for v in ("4", "false", "True", "", "e")] == [4, False, True, "", "e"]
    words = ["walks", "walked", "talks", "talked", "jumping", "Anna", "Nina", "Olga"]
    model = MorphModel(MorphSettings(stage="basic", sweeps=5, max_prefixes=0, max_suffixes=1))
    model.fit([words] * 3)
    found = controls(model)
    assert set(found) == {"length", "flat", "caseless", "suffixes alone", "held stems"}
    for how, control in found.items():
        assert control.forms == model.forms and control.cuts == model.cuts and control.capitalized == model.capitalized
    assert found["caseless"].settings.new_word_case is False and found["length"].settings.new_strings == "length"
    assert found["flat"].settings.new_word_case is True and found["caseless"].settings.new_word_endings is True
    alone = found["suffixes alone"].settings
    assert alone.new_word_endings is False and alone.new_word_case is True
    held = found["held stems"].settings
    assert held.new_word_stems is False and held.new_word_endings is True and alone.new_word_stems is True
    off = MorphModel.from_dict({**model.to_dict(), "settings": {**model.to_dict()["settings"], "new_word_case": False}})
    assert "caseless" not in controls(off)


def test_a_model_pickled_before_the_restoration_reads_as_it_was_learned():
    import copy
    import pickle

    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    model = MorphModel(MorphSettings(stage="basic", sweeps=3))
    model.fit([["walks", "walked", "making"]] * 2)
    state = model.__getstate__()
    state["settings"] = copy.copy(state["settings"])
    del state["tails"], state["capitalized"], vars(state["settings"])["new_word_endings"]  # as an older pickle holds it
    del vars(state["settings"])["new_word_stems"], vars(state["settings"])["chains"], state["chain_agreement"]
    old = MorphModel.__new__(MorphModel)
    old.__setstate__(state)
    assert old.settings.restored_endings == "" and old.tails == [""] * 3 and old.capitalized == [False] * 3
    assert old.settings.new_word_endings is False and old.settings.new_word_stems is False  # new words as then
    assert old.settings.chains == 1 and model.settings.chains == 5  # learned by one chain, as then
    assert old.chain_agreement is None and model.chain_agreement["chains"] == 5
    again = pickle.loads(pickle.dumps(model))
    assert again.settings.restored_endings == "e" and again.tails == model.tails
    assert again.settings.new_word_endings is True and again.settings.new_word_stems is True
    # pickled after the restoration, before the endings: only the endings are off
    state = model.__getstate__()
    state["settings"] = copy.copy(state["settings"])
    del vars(state["settings"])["new_word_endings"]
    newer = MorphModel.__new__(MorphModel)
    newer.__setstate__(state)
    assert newer.settings.new_word_endings is False and newer.settings.restored_endings == "e"
    assert newer.settings.new_word_stems is True and newer.settings.chains == 5
    assert [tuple(again.segment(w)) for w in ("walking", "Walks")] == [tuple(model.segment(w)) for w in ("walking", "Walks")]


def test_the_learned_words_endings_weigh_on_where_a_new_word_is_cut():
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    # "a" is the suffix of two learned words, but most words in "a" are whole;
    # most words in "ing" are cut before it
    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull"]
    cut = {f"{stem}ing": (len(stem),) for stem in stems} | {f"{stem}s": (len(stem),) for stem in stems}
    cut |= {"walka": (4,), "talka": (4,)}
    whole = {w: () for w in stems + ["nina", "olga", "vera", "lena", "tina", "diana", "linda", "sonja", "kinga",
                                      "paula", "maria", "anna", "thing", "king", "during", "sting"]}
    lexicon = {**cut, **whole}
    settings = MorphSettings(stage="basic", max_prefixes=0, max_suffixes=1, min_stem=3, restored_endings="",
                             new_word_case=False)
    data = {"settings": vars(settings), "forms": list(lexicon), "cuts": [list(c) for c in lexicon.values()],
            "stems": [0] * len(lexicon), "tags": [0] * len(lexicon), "tails": [""] * len(lexicon),
            "capitalized": [False] * len(lexicon)}
    model = MorphModel.from_dict(data)
    blind = MorphModel.from_dict({**data, "settings": {**data["settings"], "new_word_endings": False}})
    odds = model._ending_odds()
    # against a count by hand: the words ending in the string after a stem
    # of min_stem letters at least, and those cut there
    for string in ("a", "ing", "s", "ng", "ka"):
        ending = [w for w in lexicon if w.endswith(string) and len(w) - len(string) >= 3]
        cut_there = [w for w in ending if lexicon[w] and w[lexicon[w][-1]:] == string]
        assert odds[string] == pytest.approx(np.log((len(cut_there) + 1) / (len(ending) - len(cut_there) + 1)))
    assert "zz" not in odds and "hing" not in odds  # "t+hing": no stem of 3 letters before it
    # the odds move a new word's hypotheses that end in a suffix, by the
    # odds of the string they cut off: a known stem + "a" is cut by the
    # suffix's probability alone, and kept whole where words ending in
    # "a" are (almost) never cut there
    assert blind.segment("pulla").cuts == model.segment("pulla").cuts == (4,)  # -1.5 does not outweigh the stem
    model._reset()
    model._endings = {**odds, "a": -30.0}
    assert model.segment("pulla").cuts == () and model.segment("zumbing").cuts == (4,)
    model._reset()
    model._endings = {**odds, "ing": -30.0, "ng": 30.0}
    assert model.segment("zumbing").cuts == (5,)  # "zumbi+ng"
    assert blind.segment("zumbing").cuts == (4,)


def _lexicon_model(lexicon, **settings):
    """A MorphModel holding `lexicon` (form -> (cuts, stem tail)), stems first."""
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    base = MorphSettings(stage="basic", **settings)
    data = {"settings": vars(base), "forms": list(lexicon), "cuts": [list(c) for c, _ in lexicon.values()],
            "stems": [0] * len(lexicon), "tags": [0] * len(lexicon), "tails": [t for _, t in lexicon.values()],
            "capitalized": [False] * len(lexicon)}
    return MorphModel.from_dict(data), data


def test_a_new_word_takes_a_held_stem_as_often_as_the_learned_words_it_could_spell_do():
    from math import exp, log

    from spacy_struct.morph_segmenter._sampler import _dm
    from spacy_struct.morph_segmenter.model import MorphModel

    # eight stems with "-ing" and "-s", two words cut before "e", "-er" on
    # two stems and not on a third, a stem restored ("mak(e)+ing"), a
    # token that is no word, and words whose stem no other word has
    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull"]
    lexicon = {f"{stem}ing": ((len(stem),), "") for stem in stems} | {f"{stem}s": ((len(stem),), "") for stem in stems}
    lexicon |= {"bake": ((3,), ""), "cake": ((3,), ""), "talker": ((4,), ""), "kicker": ((4,), ""),
                "walker": ((), ""), "make": ((), ""), "making": ((3,), "e"), "123": ((), "")}
    alone = ["fat", "sea", "brand", "nina", "olga", "vera", "lena", "table", "chair", "house", "horse", "river",
             "stone", "cloud", "green", "light", "bread", "apple", "board", "candle", "dinner", "eagle", "forest"]
    lexicon |= {w: ((), "") for w in stems + alone}
    settings = dict(max_prefixes=0, max_suffixes=1, min_stem=3, restored_endings="e", new_word_case=False,
                    new_word_endings=False)
    model, data = _lexicon_model(lexicon, **settings)
    blind = MorphModel.from_dict({**data, "settings": {**data["settings"], "new_word_stems": False}})
    assert model.stem_share is None  # made by hand: computed from the lexicon when first needed
    new_stem, held_stem, held = model._stem_odds()
    # by hand, the words a stem another word has and a suffix another word
    # has can spell: the 16 "-ing" and "-s" words, "talker" and "kicker"
    # (each other's "-er"), "making" (the "make" of "make"), all cut so, and
    # "walker", kept whole. Not "bak+e" (no other word has "bak"), not
    # "tabl+e" (no word has the stem), not "123" (no word)
    share = (19 + 1) / (20 + 2)  # 19 cut so of the 20
    assert model.stem_share == pytest.approx(share)
    assert held_stem == pytest.approx(log(share))
    # the sampler's weight of a new stem: one more outcome of the stems'
    # Dirichlet-multinomial (its marginal recomputed), not drawn as a string
    stem_types = {"talk": 4, "kick": 4, **{stem: 3 for stem in stems if stem not in ("talk", "kick")}, "make": 2}
    counts = np.array(list(stem_types.values()) + [1] * (len(alone) + 4))  # + bak, cak, walker, 123
    assert counts.sum() == len(lexicon)
    a, gamma = model.settings.priors["alpha"], model.settings.priors["gamma_stem"]
    marginal = _dm(counts, a, len(counts))
    as_new = _dm(np.append(counts, 1), a, len(counts) + 1) - marginal + log(1 - gamma)
    assert new_stem == pytest.approx(log(1 - share) - as_new)
    # ... while the held stems' weights sum to one
    grown = [_dm(counts + (np.arange(len(counts)) == k), a, len(counts)) - marginal for k in range(len(counts))]
    assert sum(exp(w) for w in grown) == pytest.approx(1.0)
    _, ids = model._frozen_sampler()
    held_strings = stems + ["bak", "cak", "make", "walker", "123"] + alone
    assert sorted(np.flatnonzero(held)) == sorted(ids[stem] for stem in held_strings)
    # a held stem and a string the lexicon lacks as a suffix: cut without
    # it, whole with it; known suffixes still come off new and held stems
    assert blind.segment("tablet").cuts == (5,) and model.segment("tablet").cuts == ()
    for word, cuts in (("kicking", (4,)), ("zumbing", (4,)), ("fats", (3,)), ("tables", (5,)), ("boarding", (5,))):
        assert model.segment(word).cuts == blind.segment(word).cuts == cuts, word
    # a stem the lexicon holds only as a suffix ("ing+s") is priced as a
    # new stem's spelling, which the sampler does not charge a held string
    priced = []
    for segmenter in (model, blind):
        spell = segmenter._new_string_costs
        segmenter._new_string_costs = lambda strings, spell=spell: (priced.append((segmenter, list(strings))),
                                                                     spell(strings))[1]
        segmenter.segment("ings")
    assert (model, ["ing"]) in priced and not [s for m, s in priced if m is blind and "ing" in s]
    # the paper's length price is no distribution over new spellings: the share does not apply to it
    asked = []
    for prices in ("length", "spelling"):
        priced_so, _ = _lexicon_model(lexicon, **settings, new_strings=prices)
        weigh = priced_so._stem_odds
        priced_so._stem_odds = lambda prices=prices, weigh=weigh: asked.append(prices) or weigh()
        priced_so.segment("tablet")
    assert asked == ["spelling"]
    # learned with the lexicon, the share is saved with it and read back
    learned = MorphModel(model.settings)
    learned.fit([list(lexicon)] * 2)
    assert learned.stem_share is not None
    assert MorphModel.from_dict(learned.to_dict()).stem_share == learned.stem_share
    again = MorphModel.from_dict({**learned.to_dict(), "stem_share": None})
    assert again._stem_odds()[:2] == pytest.approx(learned._stem_odds()[:2])


def test_a_held_reading_takes_prefixes_and_suffixes_from_their_own_side():
    # "s" is a suffix of two words and no prefix: "stalk" (whole) is not
    # "s+talk", so only "walks"/"talks" count (each other's "s")
    lexicon = {"walk": ((), ""), "talk": ((), ""), "walks": ((4,), ""), "talks": ((4,), ""), "stalk": ((), ""),
               "rewalk": ((2,), ""), "retalk": ((2,), "")}
    model, _ = _lexicon_model(lexicon, max_prefixes=1, max_suffixes=1, min_stem=3, restored_endings="")
    # "rewalk" (stem 1 after the prefix) is re + walk
    model.stems[lexicon_index(lexicon, "rewalk")] = model.stems[lexicon_index(lexicon, "retalk")] = 1
    model._reset()
    assert model._held_stem_share_of_lexicon() == pytest.approx((4 + 1) / (4 + 2))
    # with "s" also a prefix somewhere, "stalk" is read s + talk and kept whole
    model2, _ = _lexicon_model({**lexicon, "swalk": ((1,), "")}, max_prefixes=1, max_suffixes=1, min_stem=3,
                               restored_endings="")
    for word in ("rewalk", "retalk", "swalk"):
        model2.stems[lexicon_index({**lexicon, "swalk": None}, word)] = 1
    model2._reset()
    # fitted: walks, talks, rewalk, retalk (cut) and stalk (whole); not
    # swalk, whose "s" no other word has as a prefix
    assert model2._held_stem_share_of_lexicon() == pytest.approx((4 + 1) / (5 + 2))


def lexicon_index(lexicon, word):
    return list(lexicon).index(word)


def test_an_affix_is_spelled_with_letters():
    from spacy_struct.morph_segmenter.hypotheses import build_hypotheses, is_affix_spelling

    assert is_affix_spelling("ing") and is_affix_spelling("'s") and is_affix_spelling("in-")
    assert not is_affix_spelling("'") and not is_affix_spelling("-")  # a letter at least
    assert is_affix_spelling("ы\u0306")  # a combining mark
    assert not any(is_affix_spelling(p) for p in ("@enron", ".crab", "/x", "s2", ".", "a b"))
    table = build_hypotheses(["warner@enron", "alt.crab", "it's", "walks"], max_prefixes=1, max_suffixes=2,
                             min_stem=1)
    for i, word in enumerate(["warner@enron", "alt.crab", "it's", "walks"]):
        for h in table.hypotheses_of(i):
            edges = (0, *table.cuts[h], len(word))
            pieces = [word[x:y] for x, y in zip(edges, edges[1:])]
            assert all(is_affix_spelling(p) for k, p in enumerate(pieces) if k != table.stem_pos[h]), pieces
    shapes = {(tuple(table.cuts[h]), int(table.stem_pos[h])) for h in table.hypotheses_of(0)}
    assert ((6,), 0) not in shapes  # not "warner+@enron" with the sign in the suffix
    assert ((7,), 0) in shapes and ((6,), 1) in shapes  # "warner@+enron", "warner+@enron" as prefix + stem
    assert (2,) in {tuple(table.cuts[h]) for h in table.hypotheses_of(2)}  # "it+'s"
    # a word of letters alone keeps every hypothesis
    assert len(table.hypotheses_of(3)) == len(build_hypotheses(["walks"], max_prefixes=1, max_suffixes=2,
                                                               min_stem=1).cuts)


def test_the_ending_odds_count_only_cuts_a_hypothesis_could_make():
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    # clamped gold may cut after a stem shorter than min_stem ("ab+s"): such
    # a cut is not counted, so the odds stay finite
    lexicon = {"abs": [2], "cabs": [], "stabs": [3], "grabs": [4]}
    settings = MorphSettings(stage="basic", max_prefixes=0, max_suffixes=1, min_stem=3)
    model = MorphModel.from_dict({"settings": vars(settings), "forms": list(lexicon), "cuts": list(lexicon.values()),
                                  "stems": [0] * 4, "tags": [0] * 4, "tails": [""] * 4, "capitalized": [False] * 4})
    odds = model._ending_odds()
    assert odds["s"] == pytest.approx(np.log(2 / 3))  # "grab+s" cut, "cabs" and "stabs" not there; "ab+s" impossible
    assert odds["bs"] == pytest.approx(np.log(2 / 2))  # "sta+bs" cut, "grabs" not there
    assert all(np.isfinite(v) for v in odds.values())


def test_the_last_stage_settles_toward_the_most_probable_lexicon():
    from dataclasses import replace

    from spacy_struct.morph_segmenter.model import SETTLE_TEMPERATURES, MorphModel, MorphSettings

    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull", "push", "kiss", "want", "need"]
    words = [stem + ending for stem in stems for ending in ("", "s", "ed", "ing", "er", "ers")]
    sentences = [words[k::5] for k in range(5)] * 3 + [["the", w] for w in words]
    rises = 0
    for seed in range(4):
        settings = MorphSettings(stage="pos", sweeps=4, seed=seed, max_prefixes=0, n_tags=3, chains=1)
        reports, plain_reports = [], []
        model, draws = MorphModel(settings), []
        model.fit(sentences, progress=lambda *report: reports.append(report), last_draw=draws.append)
        settled = [r for r in reports if r[0] == "settle"]
        assert [r[1] for r in settled] == list(range(1, len(SETTLE_TEMPERATURES) + 1))
        assert reports[-len(settled):] == settled  # after the last stage's sweeps
        last_sample = reports[-len(settled) - 1][2]
        # the cold sweeps climb: the kept lexicon is at least as probable as the last draw
        assert settled[-1][2] >= last_sample - 1e-9
        rises += settled[-1][2] > last_sample + 1e-6
        # without it, the same chain and its last draw (the paper's)
        plain = MorphModel(replace(settings, settle=False))
        plain.fit(sentences, progress=lambda *report: plain_reports.append(report), last_draw=draws.append)
        assert [r[:3] for r in plain_reports] == [r[:3] for r in reports[:-len(settled)]]
        # the draw before the cold sweeps is handed over once, and is that chain's
        assert len(draws) == 1 and draws[0].settings.settle is False
        assert draws[0].cuts == plain.cuts and draws[0].tags == plain.tags
    assert rises  # it does something
    with pytest.raises(ValueError, match="settle must be true or false"):
        MorphSettings(settle="yes").check("morph_segmenter")


def test_the_consensus_keeps_per_type_the_chains_analysis_with_the_least_boundary_disagreement():
    from spacy_struct.morph_segmenter.consensus import consensus_rows

    rng = np.random.default_rng(0)
    cuts = [(), (1,), (2,), (1, 2), (3,), (1, 3), (2, 3), (1, 2, 3)]  # every cut set of a four-letter word
    for _ in range(200):
        chains, types = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        rows = rng.integers(0, len(cuts), size=(chains, types))
        chosen = consensus_rows(rows, cuts)
        for t in range(types):
            # brute force: every analysis a chain reached, its boundary errors against all chains
            errors = {r: sum(len(set(cuts[r]) ^ set(cuts[other])) for other in rows[:, t]) for r in rows[:, t]}
            least = min(errors.values())
            assert chosen[t] in set(rows[:, t]) and errors[chosen[t]] == least
            # on a tie, the first chain (in chain order) that holds a least-error analysis
            assert chosen[t] == next(r for r in rows[:, t] if errors[r] == least)
    assert list(consensus_rows(np.array([[4, 5, 6]]), cuts)) == [4, 5, 6]  # one chain: itself
    # three chains: a majority wins over the first chain's analysis
    assert list(consensus_rows(np.array([[1], [2], [2]]), cuts)) == [2]
    with pytest.raises(ValueError, match="chains, types"):
        consensus_rows(np.zeros((0, 3), dtype=int), cuts)


def test_several_chains_keep_the_consensus_of_the_runs_one_chain_makes_from_each_seed():
    from dataclasses import replace

    from spacy_struct.morph_segmenter.consensus import chain_seed, consensus_rows
    from spacy_struct.morph_segmenter.model import STAGES, MorphModel, MorphSettings

    stems = ["walk", "talk", "jump", "play", "look", "call", "kick", "pull", "push", "kiss", "want", "need"]
    words = [stem + ending for stem in stems for ending in ("", "s", "ed", "ing", "er", "ers")]
    sentences = [words[k::5] for k in range(5)] * 3 + [["the", w] for w in words]
    settings = MorphSettings(stage="pos", sweeps=4, seed=7, max_prefixes=0, n_tags=3, chains=3)
    ends, draws, starts, firsts = [], [], [], []
    model = MorphModel(settings)
    model.fit(sentences, stage_end=lambda stage, m: ends.append((stage, m)), last_draw=draws.append,
              on_chain=lambda number, chains: starts.append((number, chains)), first_chain=firsts.append)
    assert starts == [(1, 3), (2, 3), (3, 3)]
    singles, single_basics, single_draws = [], [], []
    for chain in range(3):
        single = MorphModel(replace(settings, chains=1, seed=chain_seed(7, chain)))
        single.fit(sentences, stage_end=lambda stage, m: single_basics.append(m) if stage == "basic" else None,
                   last_draw=single_draws.append)
        singles.append(single)
    assert len({tuple(s.cuts) for s in singles}) > 1  # the chains differ, or the test shows nothing

    def agreed(models, form):
        """The analysis of `form` the models agree with most (the first of equals)."""
        options = [tuple(m.cuts[m.forms.index(form)]) for m in models]
        errors = [sum(len(set(a) ^ set(b)) for b in options) for a in options]
        return options[errors.index(min(errors))]

    # per type, the analysis the three single runs agree with most; the first chain's tags
    assert model.cuts == [agreed(singles, form) for form in model.forms]
    assert model.tags == singles[0].tags
    assert firsts[0].cuts == singles[0].cuts and firsts[0].settings.chains == 1
    # each stage is handed over once, as the consensus of the runs at that stage; the last draw too
    assert [stage for stage, _ in ends] == list(STAGES[:2])
    assert ends[0][1].cuts == [agreed(single_basics, form) for form in model.forms]
    assert ends[0][1].settings.stage == "basic" and ends[0][1].tags == single_basics[0].tags
    assert ends[-1][1].cuts == model.cuts and len(draws) == 1 and draws[0].settings.settle is False
    assert draws[0].cuts == [agreed(single_draws, form) for form in model.forms]
    # how far the runs agreed, counted against the single runs
    options = [[tuple(m.cuts[m.forms.index(form)]) for m in singles] for form in model.forms]
    assert model.chain_agreement == {
        "chains": 3, "types": len(model.forms),
        "disputed": sum(len(set(o)) > 1 for o in options),
        "not_first_chain": sum(cuts != o[0] for cuts, o in zip(model.cuts, options))}
    assert model.chain_agreement["disputed"] > 0 and firsts[0].chain_agreement is None
    again = MorphModel(settings)
    again.fit(sentences)
    assert again.cuts == model.cuts and again.tags == model.tags  # reproducible
    assert chain_seed(7, 0) == 7 and chain_seed(7, 1) != chain_seed(8, 0)
    with pytest.raises(ValueError, match="chains must be an integer >= 1"):
        MorphSettings(chains=0).check("morph_segmenter")
