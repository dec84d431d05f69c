"""The morph_segmenter component: learning from text, segmenting new words,
semi-supervised clamping, serialization and errors."""
import warnings

import pytest
import spacy
import srsly
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from conftest import SAMPLE
from spacy_struct.morph_segmenter import doc_morphs


def _examples(nlp, name):
    docs = list(DocBin().from_disk(SAMPLE / name).get_docs(nlp.vocab))
    return [Example(Doc(nlp.vocab, words=[t.text for t in d], spaces=[bool(t.whitespace_) for t in d]), d)
            for d in docs]


def _trained(stage="token_seg", clamp_gold=False, sweeps=10, seed=0, chains=5):
    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"clamp_gold": clamp_gold, "sweeps": sweeps, "stage": stage,
                                            "seed": seed, "chains": chains, "verbose": False})
    train = _examples(nlp, "morph_train.spacy")
    nlp.initialize(lambda: train)
    return nlp


@pytest.fixture(scope="module")
def trained():
    return _trained()


def test_initialization_reports_how_far_the_chains_agreed(trained):
    report = trained.get_pipe("morph_segmenter").init_report["chains"]
    assert report["chains"] == 5 and report["types"] == len(trained.get_pipe("morph_segmenter").model.forms)
    assert 0 <= report["not_first_chain"] <= report["disputed"] <= report["types"]
    assert "chains" not in _trained(sweeps=2, chains=1).get_pipe("morph_segmenter").init_report


def test_unsupervised_learning_finds_the_affixes_of_the_sample(trained):
    scores = trained.evaluate(_examples(trained, "morph_dev.spacy"))
    # the trivial segmentations score far lower: no split has recall 0,
    # a split after every character has precision under 0.2 here
    assert scores["morph_boundary_f"] > 0.85 and scores["morph_type_boundary_f"] > 0.85
    assert scores["sigmorphon_f"] > 0.85


def test_raw_text_gets_morphs_that_spell_each_word_and_new_words_are_segmented(trained):
    seen = set(trained.get_pipe("morph_segmenter").model.forms)
    new = [w for w in ("regriskingly", "unkindly", "rehultings", "unloudly") if w not in seen]
    doc = trained("The walkers quickly " + " ".join(new) + " .")
    assert all("".join(t._.morphs) == t.text for t in doc)
    morphs = {t.text: tuple(t._.morphs) for t in doc}
    assert morphs["walkers"] == ("walker", "s") and morphs["quickly"] == ("quick", "ly")
    assert len(new) >= 3 and all(len(morphs[w]) > 1 for w in new)  # never seen, known stems and affixes
    assert morphs["The"] == ("The",)
    whitespace = trained("the  walkers")
    assert whitespace[1].is_space and whitespace[1]._.morphs == (" ",)


def test_new_words_are_cached_within_a_bound_and_segment_the_same_after_it_starts_over(trained, monkeypatch):
    from spacy_struct.morph_segmenter import model as morph_model

    monkeypatch.setattr(morph_model, "NEW_WORD_CACHE_SIZE", 3)
    model = trained.get_pipe("morph_segmenter").model
    model._new.clear()
    words = ["regriskingly", "unkindly", "rehultings", "unloudly", "rewalkly"]
    first = [tuple(model.segment(w)) for w in words]
    assert len(model._new) <= 3
    assert [tuple(model.segment(w)) for w in words] == first


def test_each_model_stage_trains_and_is_reproducible():
    for stage in ("basic", "pos", "token_pos"):
        a, b = _trained(stage, sweeps=3, seed=1), _trained(stage, sweeps=3, seed=1)
        text = "the walkers reflanded quickly ."
        assert [tuple(t._.morphs) for t in a(text)] == [tuple(t._.morphs) for t in b(text)]


def test_clamped_gold_is_kept_and_counted():
    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"sweeps": 2, "verbose": False})
    train = _examples(nlp, "morph_train.spacy")
    walkers = next(t for eg in train for t in eg.reference if t.text == "walkers")
    walkers.doc[walkers.i]._.morphs = ["wal", "kers"]  # an odd gold, kept as given
    nlp.initialize(lambda: train)
    seg = nlp.get_pipe("morph_segmenter")
    assert seg.init_report["clamped_types"] > 50 and seg.init_report["conflicting_gold_types"] == 1
    assert nlp("walkers")[0]._.morphs == ("walker", "s")  # the most frequent gold of the type


def test_the_lexicon_round_trips_through_disk_bytes_and_two_processes(trained, tmp_path):
    texts = ["the walkers reflanded quickly .", "a glad morok hults the tabels ."]
    before = [[tuple(t._.morphs) for t in doc] for doc in trained.pipe(texts)]
    trained.to_disk(tmp_path / "nlp")
    loaded = spacy.load(tmp_path / "nlp")
    assert [[tuple(t._.morphs) for t in doc] for doc in loaded.pipe(texts)] == before
    assert [[tuple(t._.morphs) for t in doc] for doc in loaded.pipe(texts, n_process=2)] == before
    again = spacy.blank("en")
    again.add_pipe("morph_segmenter")
    again.from_bytes(trained.to_bytes())
    docs = list(again.pipe(texts))
    assert [[tuple(t._.morphs) for t in doc] for doc in docs] == before
    db = DocBin(store_user_data=True, docs=docs)
    back = list(DocBin().from_bytes(db.to_bytes()).get_docs(again.vocab))
    assert [[tuple(m) for m in doc_morphs(d)] for d in back] == before
    pipe = spacy.blank("en").add_pipe("morph_segmenter")
    with pytest.raises(ValueError, match="could not read the saved lexicon"):
        pipe.from_bytes(b"\x00\x01hello")
    with pytest.raises(ValueError, match="not a morph_segmenter lexicon"):
        pipe.from_bytes(srsly.msgpack_dumps({"labels": ["x"]}))
    # a lexicon saved before `short_affixes` existed reads with the constraint it had; a newer layout is refused
    saved = srsly.msgpack_loads(trained.get_pipe("morph_segmenter").to_bytes())
    assert saved["settings"]["short_affixes"] is trained.get_pipe("morph_segmenter").model.settings.short_affixes
    del saved["settings"]["short_affixes"]
    old = spacy.blank("en").add_pipe("morph_segmenter").from_bytes(srsly.msgpack_dumps({**saved, "format": 1}))
    assert old.model.settings.short_affixes is True
    with pytest.raises(ValueError, match="has format 99, this version reads"):
        pipe.from_bytes(srsly.msgpack_dumps({**saved, "format": 99}))
    assert saved["format"] == 8
    # one saved before `chains` existed was learned by one chain, and says so
    assert saved["settings"]["chains"] == 5
    before_chains = {**saved, "settings": {k: v for k, v in saved["settings"].items() if k != "chains"},
                     "configured": {k: v for k, v in saved["configured"].items() if k != "chains"}, "format": 7}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        one_chain = spacy.blank("en").add_pipe("morph_segmenter").from_bytes(srsly.msgpack_dumps(before_chains))
    assert one_chain.model.settings.chains == 1
    assert not [w for w in caught if "chains" in str(w.message)]
    # chains shape what is learned: given otherwise at load time, the lexicon keeps its own, and says so
    with pytest.warns(UserWarning, match=r"chains = 1 in the config, but the lexicon was learned with chains = 5, "
                                         r"which it keeps"):
        kept = spacy.blank("en").add_pipe("morph_segmenter", config={"chains": 1, "sweeps": 10}).from_bytes(
            trained.get_pipe("morph_segmenter").to_bytes())
    assert kept.model.settings.chains == 5
    # a setting learning never reads, turned off at load time, applies in
    # full and so without a warning; a lexicon saved before the setting
    # existed segments new words as it did then, without a warning, the
    # newer settings as saved
    read = {}
    for setting, older_format in (("new_word_stems", 6), ("new_word_endings", 5)):
        assert saved["settings"][setting] is True
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            off = spacy.blank("en").add_pipe("morph_segmenter", config={setting: False})
            assert getattr(off.from_bytes(srsly.msgpack_dumps(saved)).model.settings, setting) is False
        assert not [w for w in caught if setting in str(w.message)]
        del saved["settings"][setting], saved["configured"][setting]
        older = srsly.msgpack_dumps({**saved, "format": older_format})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            before = spacy.blank("en").add_pipe("morph_segmenter").from_bytes(older)
        assert not [w for w in caught if setting in str(w.message)]
        read[setting] = before.model.settings
        assert getattr(read[setting], setting) is False
    assert read["new_word_stems"].new_word_endings is True  # the settings it had as saved
    # one saved before `restored_endings` existed reads as it was learned:
    # no letter restored to its stems or to new words' (unless the config
    # given at load time says otherwise, which applies to new words)
    assert len(saved["tails"]) == len(saved["forms"])
    assert saved["settings"]["restored_endings"] == "e"
    del saved["tails"], saved["settings"]["restored_endings"], saved["configured"]["restored_endings"]
    del saved["capitalized"], saved["settings"]["new_word_case"], saved["configured"]["new_word_case"]
    format_4 = srsly.msgpack_dumps({**saved, "format": 4})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plain = spacy.blank("en").add_pipe("morph_segmenter").from_bytes(format_4)
    # the default config says nothing about the settings the lexicon predates
    assert not [w for w in caught if "restored_endings" in str(w.message) or "new_word_case" in str(w.message)]
    assert plain.model.settings.restored_endings == "" and set(plain.model.tails) == {""}
    assert plain.model._case_odds() == {True: (0.0, 0.0), False: (0.0, 0.0)}  # no case kept: none weighed
    with pytest.warns(UserWarning, match=r"restored_endings = 'ie' \(given at load time; saved: ''\) applies to the "
                      r"words the lexicon does not hold; .* Initialize again to learn under it$"):
        spacy.blank("en").add_pipe("morph_segmenter", config={"restored_endings": "ie"}).from_bytes(format_4)
    saved["settings"]["restored_endings"] = saved["configured"]["restored_endings"] = ""
    # one saved before `new_strings` existed reads with its default, and a
    # load-time setting still applies to it
    assert saved["settings"]["new_strings"] == "spelling"
    del saved["settings"]["new_strings"]
    del saved["configured"]["new_strings"]
    format_3 = srsly.msgpack_dumps({**saved, "format": 3})
    as_saved = spacy.blank("en").add_pipe("morph_segmenter", config={"restored_endings": ""})
    assert as_saved.from_bytes(format_3).model.settings.new_strings == "spelling"
    length = spacy.blank("en").add_pipe("morph_segmenter", config={"new_strings": "length", "restored_endings": ""})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        length.from_bytes(format_3)
    assert not [w for w in caught if "new_strings" in str(w.message)]
    assert length.model.settings.new_strings == "length"


def test_load_time_settings_are_compared_with_what_the_lexicon_runs_with(trained):
    """A value tune_priors chose is what the lexicon runs with: a load-time
    config asking for it changes nothing and warns of nothing; one asking
    for another value is told the chosen one, a dict setting by its entries."""
    saved = srsly.msgpack_loads(trained.get_pipe("morph_segmenter").to_bytes())
    # as if tune_priors had chosen min_stem 2 and gamma_length 0.7 over the configured 3 and 0.5
    assert saved["configured"]["min_stem"] == 3 and saved["configured"]["priors"]["gamma_length"] != 0.7
    saved["settings"]["min_stem"] = 2
    saved["settings"]["priors"]["gamma_length"] = 0.7
    data = srsly.msgpack_dumps(saved)
    base = {"clamp_gold": False, "sweeps": 10, "stage": "token_seg", "seed": 0, "verbose": False}

    def load(**given):
        priors = {**saved["configured"]["priors"], **given.pop("priors", {})}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pipe = spacy.blank("en").add_pipe("morph_segmenter", config={**base, **given, "priors": priors})
            pipe.from_bytes(data)
        return pipe.model.settings, [str(w.message) for w in caught if "given at load time" in str(w.message)
                                     or "in the config, but" in str(w.message)]

    settings, said = load(min_stem=2, priors={"gamma_length": 0.7})
    assert settings.min_stem == 2 and settings.priors["gamma_length"] == 0.7 and said == []
    settings, said = load(min_stem=4)
    assert settings.min_stem == 4
    assert len(said) == 1 and "min_stem = 4 (given at load time; saved: 2) applies to the words" in said[0]
    settings, said = load(priors={"gamma_length": 0.6})
    assert settings.priors["gamma_length"] == 0.7
    assert said == ["morph_segmenter: priors.gamma_length = 0.6 in the config, but the lexicon was learned "
                    "with priors.gamma_length = 0.7, which it keeps: these settings shape the sampled model "
                    "and only initializing again changes them"]
    settings, said = load()  # the saved config's values: the chosen ones stay, silently
    assert settings.min_stem == 2 and said == []


def test_clear_errors():
    nlp = spacy.blank("en")
    seg = nlp.add_pipe("morph_segmenter", config={"verbose": False})
    with pytest.raises(ValueError, match="learned nothing; initialize it first"):
        nlp("walkers")
    with pytest.raises(ValueError, match="found no words to learn from"):
        nlp.initialize(lambda: [Example(nlp.make_doc(""), nlp.make_doc(""))])
    with pytest.raises(ValueError, match="extra_text 'nowhere.txt' does not exist"):
        seg.initialize(lambda: [Example(nlp.make_doc("a b"), nlp.make_doc("a b"))], nlp=nlp,
                       extra_text=["nowhere.txt"])
    with pytest.raises(ValueError, match="stage must be one of"):
        spacy.blank("en").add_pipe("morph_segmenter", config={"stage": "full"})
    with pytest.raises(ValueError, match="unknown priors"):
        spacy.blank("en").add_pipe("morph_segmenter", config={"priors": {"gamma": 0.5}})
    with pytest.raises(ValueError, match="short_affixes"):  # spaCy's config check names it
        spacy.blank("en").add_pipe("morph_segmenter", config={"short_affixes": "no"})
    from spacy_struct.morph_segmenter.model import MorphSettings

    with pytest.raises(ValueError, match="seg: short_affixes must be true or false, got 'no'"):
        MorphSettings(short_affixes="no").check("seg")
    with pytest.raises(ValueError, match=r"new_strings must be one of \['spelling', 'length'\], got 'chars'"):
        spacy.blank("en").add_pipe("morph_segmenter", config={"new_strings": "chars"})
    for wrong in ("-", "ee"):
        with pytest.raises(ValueError, match=rf"restored_endings must be a string of distinct letters .*, got '{wrong}'"):
            spacy.blank("en").add_pipe("morph_segmenter", config={"restored_endings": wrong})


def test_extra_text_is_learned_from(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"sweeps": 5, "clamp_gold": False, "verbose": False})
    (tmp_path / "raw.txt").write_text("the zorbers zorbed .\nthe zorbing zorbers .\n" * 20, encoding="utf8")
    seg = nlp.get_pipe("morph_segmenter")
    seg.initialize(lambda: _examples(nlp, "morph_train.spacy"), nlp=nlp, extra_text=[str(tmp_path / "raw.txt")])
    assert seg.init_report["sentences"] == 300 + 40
    assert "zorbers" in seg.model.forms


def _sample_text_and_gold(nlp):
    from spacy_struct.annotations.morphs import Morphs

    train = _examples(nlp, "morph_train.spacy")
    text = [[t.text for t in eg.predicted] for eg in train]
    gold = {t.text.lower(): Morphs(tuple(m)) for eg in train
            for t, m in zip(eg.reference, doc_morphs(eg.reference)) if m is not None}
    return text, gold


def test_boundary_f1_of_a_model_against_hand_counted_cuts():
    from spacy_struct.annotations.morphs import Morphs
    from spacy_struct.morph_segmenter.tuning import boundary_f1

    class Fixed:
        def __init__(self, table):
            self.table = table

        def segment(self, word):
            return Morphs(self.table[word])

    gold = {"walkers": Morphs(("walk", "er", "s")), "quickly": Morphs(("quick", "ly")), "cat": Morphs(("c", "at"))}
    model = Fixed({"walkers": ("walk", "ers"), "quickly": ("quick", "ly"), "cat": ("cat",)})
    # cuts: predicted {4}, {5}, {} against gold {4, 6}, {5}, {1}: 2 right of 2 predicted, 4 expected
    assert boundary_f1(model, gold) == pytest.approx(2 * 2 / (2 + 4))
    assert boundary_f1(Fixed({w: (w,) for w in gold}), gold) == 0.0
    assert boundary_f1(model, {}) == 0.0


def test_the_priors_are_chosen_on_held_out_annotated_types_never_clamped(monkeypatch):
    from dataclasses import replace

    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    nlp = spacy.blank("en")
    text, gold = _sample_text_and_gold(nlp)
    fits = []
    real_fit = MorphModel.fit

    def recording_fit(self, sentences, clamped=None, **kwargs):
        fits.append((self.settings, set(clamped)))
        return real_fit(self, sentences, clamped, **kwargs)

    monkeypatch.setattr(MorphModel, "fit", recording_fit)
    monkeypatch.setattr(tuning, "MIN_HELD_OUT", 5)
    settings = MorphSettings(sweeps=5, seed=3, priors={"gamma_segments": 0.99})
    grid = [{"gamma_segments": 0.99},  # the configured value: not run again
            {"gamma_segments": 0.1, "gamma_length": 0.9, "max_suffixes": 3}]
    found = tuning.select_settings(settings, text, gold, grid)
    n_held = int(len(gold) * tuning.HELD_OUT_SHARE)
    assert [f[0].priors["gamma_segments"] for f in fits] == [0.99, 0.1]
    assert all(f[0].stage == "basic" and not f[0].settle and f[0].chains == 1 for f in fits)
    assert fits[0][1] == fits[1][1] and len(fits[0][1]) == len(gold) - n_held
    held = set(gold) - fits[0][1]
    # each figure is its basic-stage model's F1 on exactly the held-out types
    assert [c for c, _ in found.results] == [{}, grid[1]]
    for candidate, f1 in found.results:
        model = MorphModel(replace(tuning.apply_candidate(settings, candidate), stage="basic", settle=False, chains=1))
        real_fit(model, text, {f: gold[f] for f in fits[0][1]})
        assert f1 == pytest.approx(tuning.boundary_f1(model, {f: gold[f] for f in held}))
    assert found.results[0][1] < found.results[1][1]  # one morph per word, nearly: few cuts
    assert found.best == grid[1] and found.best_value == found.results[1][1] and found.criterion == tuning.HELD_OUT_F1
    assert found.settings == tuning.apply_candidate(settings, grid[1]) and found.settings.stage == settings.stage
    assert tuning.select_settings(settings, text, dict(list(gold.items())[:20]), grid) is None
    # an annotated form the text lacks is never held out: the model would segment it as a new
    # word, by settings learning does not read; it stays clamped
    from spacy_struct.annotations.morphs import Morphs

    absent = {form: Morphs.from_cuts(form, (len(form) - 3,), 0) for form in (f"zq{'x' * i}ing" for i in range(40))}
    assert not set(absent) & {word.lower() for sentence in text for word in sentence}
    fits.clear()
    tuning.select_settings(settings, text, {**gold, **absent}, grid[:1])
    held = (set(gold) | set(absent)) - fits[0][1]
    assert held <= set(gold) and len(held) == n_held and set(absent) <= fits[0][1]
    with pytest.raises(ValueError, match="gamma_length"):
        tuning.select_settings(settings, text, gold, [{"gamma_length": 1.5}])


def test_a_tie_keeps_the_configured_settings(monkeypatch):
    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphSettings

    monkeypatch.setattr(tuning, "MIN_HELD_OUT", 5)
    text, gold = _sample_text_and_gold(spacy.blank("en"))
    settings = MorphSettings(sweeps=3, max_suffixes=1, priors={"gamma_length": 0.7})
    found = tuning.select_settings(settings, text, gold, [{"max_suffixes": 1, "gamma_length": 0.71}])
    assert found.results[0][1] == found.results[1][1]  # the sample's affixes: both find them all
    assert found.best == {} and found.settings == tuning.apply_candidate(settings, {})


class _FixedSegmentation:
    """A stand-in for MorphModel: a fixed table of cuts per lowercased form;
    like MorphModel, it cuts the word as written."""

    def __init__(self, table):
        self.table = table

    def form(self, word):
        return word.lower()

    def segment(self, word):
        pieces, start = [], 0
        for length in map(len, self.table.get(self.form(word), (word,))):
            pieces.append(word[start:start + length])
            start += length
        return tuple(pieces)

    def lexicon_morphs(self, word):
        """The table's strings as given (a stem may carry a restored letter)."""
        return tuple(self.table.get(self.form(word), (self.form(word),)))


def test_code_length_against_the_sum_over_every_symbol_sent():
    import math
    from collections import Counter

    from spacy_struct.morph_segmenter.tuning import code_length

    text = [["Walked", "talks", "walks"], ["talked", "walk", "walked"]]
    split = _FixedSegmentation({"walked": ("walk", "ed"), "talks": ("talk", "s"), "walks": ("walk", "s"),
                                "talked": ("talk", "ed")})
    # the model's forms are lowercase: "Walked" is the type "walked"
    tokens = [m for sentence in text for w in sentence for m in split.segment(w.lower())]
    counts = Counter(tokens)
    n_words = sum(map(len, text))
    n_symbols = len(tokens) + n_words  # each morph token, and a boundary after each word
    lexicon = sorted(counts)  # each morph spelled once, then an end mark
    letters = Counter("".join(lexicon)) + Counter({"#": len(lexicon)})
    expected = (-sum(math.log(counts[m] / n_symbols) for m in tokens) - n_words * math.log(n_words / n_symbols)
                + math.log(math.comb(len(tokens) - 1, len(lexicon) - 1))
                - sum(math.log(letters[ch] / sum(letters.values())) for m in lexicon for ch in m + "#")
                - math.log(math.factorial(len(lexicon))))
    assert code_length(split, text) == pytest.approx(expected)
    # the words are made of few morphs: sending the morphs is shorter than sending the words
    stems, endings = ["walk", "talk", "jump", "play", "look", "call"], ["", "s", "ed", "ing"]
    words = [[stem + ending for stem in stems for ending in endings]] * 3
    whole = _FixedSegmentation({})
    cut = _FixedSegmentation({s + e: (s, e) for s in stems for e in endings if e})
    assert code_length(cut, words) < code_length(whole, words)
    # the lexicon's strings are sent, a stem with its restored letter among
    # them: one stem per lemma is shorter than the written stems
    stems = ["make", "bake", "smile", "dance", "share"]
    words = [[w for s in stems for w in (s, s + "s", s[:-1] + "ing")]] * 3
    written = _FixedSegmentation({**{s + "s": (s, "s") for s in stems},
                                  **{s[:-1] + "ing": (s[:-1], "ing") for s in stems}})
    restored = _FixedSegmentation({**{s + "s": (s, "s") for s in stems},
                                   **{s[:-1] + "ing": (s, "ing") for s in stems}})
    assert code_length(restored, words) < code_length(written, words)


def test_without_annotations_the_length_prior_is_chosen_by_code_length(monkeypatch):
    from dataclasses import replace

    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    text, gold = _sample_text_and_gold(spacy.blank("en"))
    fitted = []
    real_fit = MorphModel.fit

    def recording_fit(self, sentences, clamped=None, **kwargs):
        fitted.append((self.settings, dict(clamped or {})))
        return real_fit(self, sentences, clamped, **kwargs)

    monkeypatch.setattr(MorphModel, "fit", recording_fit)
    settings = MorphSettings(sweeps=5, seed=1)
    grid = [{"gamma_length": 0.5}, {"gamma_length": 0.05}, {"gamma_length": 0.9},
            {"gamma_length": 0.9, "max_prefixes": 0}, {"gamma_length": 0.9, "max_suffixes": 1}]
    found = tuning.select_by_code_length(settings, text, None, grid, relaxations=())
    assert [f[0].priors["gamma_length"] for f in fitted] == [0.5, 0.05, 0.9, 0.9, 0.9]  # 0.5 is the configured value
    assert [f[0].max_prefixes for f in fitted] == [2, 2, 2, 0, 2]
    assert [f[0].max_suffixes for f in fitted] == [2, 2, 2, 2, 1]
    # each candidate learns the basic stage, judged on its last draw (not settled)
    assert all(f[0].stage == "basic" and not f[0].settle and f[0].chains == 1 and f[1] == {} for f in fitted)
    assert found.criterion == tuning.CODE_LENGTH and [c for c, _ in found.results] == [{}] + grid[1:]
    for candidate, value in found.results:
        model = MorphModel(replace(tuning.apply_candidate(settings, candidate), stage="basic", settle=False, chains=1))
        real_fit(model, text)
        assert value == pytest.approx(tuning.code_length(model, text))
    best = min(found.results, key=lambda item: item[1])
    assert found.best == best[0] and found.best_value == best[1]
    assert found.settings == tuning.apply_candidate(settings, best[0])
    # a few annotated types are clamped in every candidate
    some = dict(list(gold.items())[:3])
    fitted.clear()
    tuning.select_by_code_length(settings, text, some, grid[:2])
    # and in the second round's: three relaxations of the stem limits, no letter restored
    assert len(fitted) == 2 + 3 + 1 and all(f[1] == some for f in fitted)


def test_the_second_round_relaxes_the_stem_limits_from_the_first_rounds_winner(monkeypatch):
    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphModel, MorphSettings

    assert tuning.stem_relaxations(MorphSettings()) == (
        {"min_stem": 2}, {"short_affixes": False}, {"min_stem": 2, "short_affixes": False})
    assert tuning.stem_relaxations(MorphSettings(min_stem=1)) == ({"short_affixes": False},)
    assert tuning.stem_relaxations(MorphSettings(min_stem=2, short_affixes=False)) == ({"min_stem": 1},)
    assert tuning.stem_relaxations(MorphSettings(min_stem=1, short_affixes=False)) == ()
    assert tuning.restoration_alternatives(MorphSettings()) == ({"restored_endings": ""},)
    assert tuning.restoration_alternatives(MorphSettings(restored_endings="")) == ()

    text, _ = _sample_text_and_gold(spacy.blank("en"))
    fitted = []
    monkeypatch.setattr(MorphModel, "fit", lambda self, sentences, clamped=None, **kw: fitted.append(self.settings))

    def rigged_code_length(model, sentences):
        """A code that a first-round candidate (gamma_length 0.9) and then
        both relaxations together make shortest."""
        s = model.settings
        return (100.0 - 10 * (s.priors["gamma_length"] == 0.9) - 1 * (s.min_stem == 2)
                - 1 * (not s.short_affixes) - 5 * (s.min_stem == 2 and not s.short_affixes))

    monkeypatch.setattr(tuning, "code_length", rigged_code_length)
    settings = MorphSettings(sweeps=5, seed=1)
    reports = []
    found = tuning.select_by_code_length(settings, text, None, [{"gamma_length": 0.05}, {"gamma_length": 0.9}],
                                         report=lambda candidate, value: reports.append(candidate))
    # the second round starts from the winner, which is not learned again
    assert [f.priors["gamma_length"] for f in fitted] == [0.5, 0.05, 0.9, 0.9, 0.9, 0.9, 0.9]
    assert [(f.min_stem, f.short_affixes, f.restored_endings) for f in fitted] == (
        [(3, True, "e")] * 3 + [(2, True, "e"), (3, False, "e"), (2, False, "e"), (3, True, "")])
    assert reports == [c for c, _ in found.results]
    assert [c for c, _ in found.results] == [
        {}, {"gamma_length": 0.05}, {"gamma_length": 0.9}, {"gamma_length": 0.9, "min_stem": 2},
        {"gamma_length": 0.9, "short_affixes": False}, {"gamma_length": 0.9, "min_stem": 2, "short_affixes": False},
        {"gamma_length": 0.9, "restored_endings": ""}]
    assert [v for _, v in found.results] == [100, 100, 90, 89, 89, 83, 90]
    assert found.best == {"gamma_length": 0.9, "min_stem": 2, "short_affixes": False} and found.best_value == 83
    assert found.settings == tuning.apply_candidate(settings, found.best)
    # when no relaxation is shorter, the first round's winner stands
    def relaxing_costs(model, sentences):
        s = model.settings
        return 100.0 - 10 * (s.priors["gamma_length"] == 0.9) + (s.min_stem != 3 or not s.short_affixes)

    monkeypatch.setattr(tuning, "code_length", relaxing_costs)
    found = tuning.select_by_code_length(settings, text, None, [{"gamma_length": 0.05}, {"gamma_length": 0.9}])
    assert found.best == {"gamma_length": 0.9} and found.settings == tuning.apply_candidate(settings, found.best)
    assert len(found.results) == 7


def test_the_default_code_length_grid_crosses_length_prefixes_and_suffixes():
    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphSettings

    settings = MorphSettings()
    candidates = [tuning.apply_candidate(settings, c) for c in tuning.distinct_candidates(settings, tuning.CODE_LENGTH_GRID)]
    seen = {(c.priors["gamma_length"], c.max_prefixes, c.max_suffixes) for c in candidates}
    assert len(candidates) == len(seen)
    assert seen == {(length, prefixes, suffixes) for length in (0.5, 0.6, 0.7, 0.8, 0.9)
                    for prefixes in (settings.max_prefixes, 0) for suffixes in (settings.max_suffixes, 1)}
    assert tuning.grid_for(tuning.CODE_LENGTH, settings) == tuning.CODE_LENGTH_GRID
    # the affix options only narrow the configuration: none is widened
    for max_prefixes, max_suffixes, n in ((2, 1, 10), (2, 0, 10), (0, 0, 5), (0, 3, 10)):
        narrow = MorphSettings(max_prefixes=max_prefixes, max_suffixes=max_suffixes)
        chosen = [tuning.apply_candidate(narrow, c)
                  for c in tuning.distinct_candidates(narrow, tuning.grid_for(tuning.CODE_LENGTH, narrow))]
        assert len(chosen) == n
        assert all(c.max_prefixes <= max_prefixes and c.max_suffixes <= max_suffixes for c in chosen)


def test_initialize_without_annotations_chooses_the_length_prior(monkeypatch):
    from spacy_struct.morph_segmenter import tuning

    monkeypatch.setattr(tuning, "CODE_LENGTH_GRID", ({"gamma_length": 0.05}, {"gamma_length": 0.9}))
    for tune in (True, False):
        nlp = spacy.blank("en")
        nlp.add_pipe("morph_segmenter", config={"sweeps": 3, "verbose": False, "tune_priors": tune,
                                                "clamp_gold": False})
        nlp.initialize(lambda: _examples(nlp, "morph_train.spacy"))
        seg = nlp.get_pipe("morph_segmenter")
        if tune:
            tuned = seg.init_report["tuned"]
            assert tuned["criterion"] == tuning.CODE_LENGTH
            assert seg.model.settings.priors["gamma_length"] == tuned.get("gamma_length", 0.5)
        else:
            assert "tuned" not in seg.init_report and seg.model.settings.priors["gamma_length"] == 0.5


def test_too_few_annotations_choose_by_code_length_with_them_clamped(monkeypatch):
    from spacy_struct.morph_segmenter import tuning
    from spacy_struct.morph_segmenter.model import MorphModel

    fitted = []
    real_fit = MorphModel.fit

    def recording_fit(self, sentences, clamped=None, **kwargs):
        fitted.append(set(clamped or {}))
        return real_fit(self, sentences, clamped, **kwargs)

    monkeypatch.setattr(MorphModel, "fit", recording_fit)
    monkeypatch.setattr(tuning, "CODE_LENGTH_GRID", ({"gamma_length": 0.9},))
    nlp = spacy.blank("en")
    nlp.add_pipe("morph_segmenter", config={"sweeps": 3, "verbose": False})
    nlp.initialize(lambda: _examples(nlp, "morph_train.spacy"))
    seg = nlp.get_pipe("morph_segmenter")
    _, gold = _sample_text_and_gold(nlp)
    assert not tuning.can_tune(len(gold))  # the sample has fewer annotated types than held-out tuning needs
    assert seg.init_report["tuned"]["criterion"] == tuning.CODE_LENGTH
    # two candidates, three relaxations of the stem limits, no letter restored, then the model
    assert len(fitted) == 2 + 3 + 1 + 1 and all(f == set(gold) for f in fitted)


def test_initialize_tunes_the_priors_on_the_annotations_unless_told_not_to(monkeypatch):
    from spacy_struct.morph_segmenter import tuning

    monkeypatch.setattr(tuning, "MIN_HELD_OUT", 5)
    monkeypatch.setattr(tuning, "TUNING_GRID", ({"gamma_segments": 0.5, "max_suffixes": 3}, {"gamma_length": 0.2}))
    for tune in (True, False):
        nlp = spacy.blank("en")
        # the configured prior on the number of morphs all but forbids a cut: a candidate must win
        nlp.add_pipe("morph_segmenter", config={"sweeps": 3, "verbose": False, "tune_priors": tune,
                                                "priors": {"gamma_segments": 0.99}})
        train = _examples(nlp, "morph_train.spacy")
        nlp.initialize(lambda: train)
        seg = nlp.get_pipe("morph_segmenter")
        settings = seg.model.settings
        # the final model clamps every annotated type, the held-out ones included
        _, gold = _sample_text_and_gold(nlp)
        assert all(tuple(seg.model.segment(form)) == tuple(morphs) for form, morphs in gold.items())
        if tune:
            tuned = seg.init_report["tuned"]
            assert tuned["gamma_segments"] == 0.5 and settings.priors["gamma_segments"] == 0.5
            assert settings.max_suffixes == tuned["max_suffixes"] == 3
            reloaded = spacy.blank("en")
            reloaded.add_pipe("morph_segmenter").from_bytes(seg.to_bytes())
            assert reloaded.get_pipe("morph_segmenter").model.settings == settings
        else:
            assert "tuned" not in seg.init_report
            assert settings.priors["gamma_segments"] == 0.99 and settings.max_suffixes == 2


def test_never_seen_stems_lose_the_affixes_the_model_learned(trained):
    """A stem the sample never has ("blorf") with the sample's affixes:
    spelled by the learned stems' characters, the known affixes come off;
    priced by length alone (the paper's), a new word costs hardly more
    whole than split, and some stay whole."""
    from dataclasses import replace

    model = trained.get_pipe("morph_segmenter").model
    words = ["blorfed", "blorfing", "blorfs", "blorfly", "reblorfed", "unblorfly"]
    assert not set(words) & set(model.forms)
    assert model.settings.new_strings == "spelling"
    spelled = {w: tuple(model.segment(w)) for w in words}
    assert spelled == {"blorfed": ("blorf", "ed"), "blorfing": ("blorf", "ing"), "blorfs": ("blorf", "s"),
                       "blorfly": ("blorf", "ly"), "reblorfed": ("re", "blorf", "ed"),
                       "unblorfly": ("un", "blorf", "ly")}
    saved = model.settings
    try:
        model.settings = replace(saved, new_strings="length", new_word_endings=False)  # the paper's new words
        model._reset()
        by_length = {w: tuple(model.segment(w)) for w in words}
    finally:
        model.settings = saved
        model._reset()
    assert sum(len(m) == 1 for m in by_length.values()) >= 2
