"""The `morph_segmenter` component: each token's morphs in `token._.morphs`.

Learning is unsupervised (Lee, Haghighi & Barzilay 2011; model.py): no
gradient and no `update`; `nlp.initialize` (the start of `spacy train`)
samples the model from the training corpus's text, plus any unlabelled
text named in the `[initialize.components.<name>]` block (`extra_text`),
and prints its progress. Where the training examples carry gold morphs
(`token._.morphs` on the reference) and `clamp_gold` is on, those word
types keep their gold (semi-supervised, as Morfessor FlatCat uses
annotations). With `tune_priors` the priors are chosen first
(tuning.py): by the annotations where there are enough of them, else the
length prior, prefixes or none and the configured suffixes or one by
the code length of the text. After that, segmenting is a lookup of the
learned lexicon, or the model's best segmentation for a word it never
saw; no sampling.
"""

import sys
import time
import warnings
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import srsly
from spacy.language import Language
from spacy.pipeline import Pipe
from spacy.tokens import Doc, DocBin
from spacy.training import Example, validate_get_examples
from spacy.util import registry
from spacy.vocab import Vocab

from .model import DEFAULT_PRIORS, SETTLE_TEMPERATURES, MorphModel, MorphSettings
from ..pipeline import prf_weights
from ..annotations.morphs import Morphs, doc_morphs, write_morphs
from .scoring import score_morphs, sigmorphon_pairs, sigmorphon_scores
from . import tuning

MORPH_SEGMENTER_DEFAULTS: Dict[str, Any] = {
    "stage": "token_seg",
    "n_tags": 5,
    "sweeps": 50,
    "anneal": 1.0,
    "seed": 0,
    "lowercase": True,
    "clamp_gold": True,
    "tune_priors": True,
    "max_prefixes": 2,
    "max_suffixes": 2,
    "max_length": 30,
    "min_stem": 3,
    "short_affixes": True,
    "restored_endings": "e",
    "new_strings": "spelling",
    "new_word_case": True,
    "new_word_endings": True,
    "new_word_stems": True,
    "settle": True,
    "chains": 5,
    "priors": dict(DEFAULT_PRIORS),
    "verbose": True,
}
#: the settings that decide how a word the lexicon does not hold is
#: segmented, which a config given at load time may change
NEW_WORD_SETTINGS = ("max_prefixes", "max_suffixes", "max_length", "min_stem", "short_affixes", "restored_endings",
                     "new_strings", "new_word_case", "new_word_endings", "new_word_stems")
#: those of them that learning never reads: changed at load time, they
#: have the whole effect they would have had at initialization
NEW_WORD_ONLY_SETTINGS = ("new_strings", "new_word_case", "new_word_endings", "new_word_stems")
#: version of the saved lexicon's layout (2 added `short_affixes`; 3 the
#: configured settings beside the learned ones, so a setting given at load
#: time is told from what tune_priors chose; 4 `new_strings`; 5 the letter
#: restored to each learned stem, `restored_endings`, and whether each
#: learned word was written capitalized, `new_word_case`; 6
#: `new_word_endings` among the settings; 7 `new_word_stems`; 8 `chains`)
LEXICON_FORMAT = 8
#: the layouts this version reads: 1 is read with the constraint it had
#: then (`short_affixes` true, the default); 1 to 3 with `new_strings` at
#: its default, "spelling": the learned words keep their segmentation, the
#: words outside the lexicon are segmented as this version does; 1 to 4
#: with no letter restored (`restored_endings` ""), as they were learned,
#: and no case known, so that a new word's case does not move it; 1 to 5
#: with `new_word_endings` off (their new words are segmented as they were,
#: except that no affix spelled without letters is cut off any more); 1 to
#: 6 with `new_word_stems` off; 1 to 7 as learned by one chain (`chains` 1)
READABLE_LEXICON_FORMATS = (1, 2, 3, 4, 5, 6, 7, 8)


@Language.factory(
    "morph_segmenter",
    assigns=["token._.morphs"],
    default_config={**MORPH_SEGMENTER_DEFAULTS, "scorer": {"@scorers": "spacy_struct.morph_segmenter_scorer.v1"}},
    default_score_weights=prf_weights("morph_boundary", 1.0, morph_type_boundary_f=0.0),
)
def make_morph_segmenter(
    nlp: Language,
    name: str,
    stage: str,
    n_tags: int,
    sweeps: int,
    anneal: float,
    seed: int,
    lowercase: bool,
    clamp_gold: bool,
    tune_priors: bool,
    max_prefixes: int,
    max_suffixes: int,
    max_length: int,
    min_stem: int,
    short_affixes: bool,
    restored_endings: str,
    new_strings: str,
    new_word_case: bool,
    new_word_endings: bool,
    new_word_stems: bool,
    settle: bool,
    chains: int,
    priors: Dict[str, Any],
    verbose: bool,
    scorer: Optional[Callable],
) -> "MorphSegmenter":
    """Morphological segmenter, learned from text by Gibbs sampling.

    stage: the last model stage: "basic" (lexicon only), "pos" (+ latent
        tags), "token_pos" (+ their HMM over tokens) or "token_seg" (+ the
        agreement of adjacent segmentations, the full model).
    n_tags: number of latent tags (5 in the paper).
    sweeps: sampling sweeps per stage (50 in the paper).
    anneal: temperature of each stage's first sweep, falling to 1 at its
        last (1: none).
    seed: of the sampler's random stream.
    lowercase: model "The" and "the" as one word type.
    clamp_gold: keep the gold segmentation of the word types that have one
        in the training examples (semi-supervised); false ignores it.
    tune_priors: choose the priors before sampling (see tuning.py): with
        enough annotated types, the priors and max_suffixes that segment a
        held-out fifth of those types best; otherwise the length prior
        (gamma_length), prefixes or none (max_prefixes) and the configured
        suffixes or one (max_suffixes) under which the text's segmentation
        is shortest to send, and then whether the stem limits (min_stem,
        short_affixes) are relaxed by a step. The chosen values override
        the configured ones and are saved with the lexicon; false keeps the
        configured ones.
    max_prefixes, max_suffixes, max_length: the hypotheses of a word (at
        most that many affixes on each side; longer words stay whole).
    min_stem: the shortest stem of a segmented word (the paper has 1; 3,
        the default, is the best on the SIGMORPHON dev sets: it keeps
        English function words such as "of" or "and" whole).
    short_affixes: no affix longer than the stem (the paper's constraint;
        false lets short roots carry long suffixes, as Mongolian "эс+тэй").
        With tune_priors and no annotations, min_stem and short_affixes are
        where the search starts: the code length may relax each by a step.
    restored_endings: letters a stem may drop in writing before a suffix
        that begins with a vowel ("e": English structure + ed is written
        "structured", make + ing "making"), offered restored so that the
        written forms of one stem count as one lexicon string; "" for none.
        The output cuts are the written word's ("structur|ed"). With
        tune_priors and no annotations, the code length may turn it off.
    new_strings: how a word the lexicon does not hold prices the morphs
        the lexicon lacks: "spelling" (a character model of the learned
        stems, so known affixes come off new stems; see spelling.py) or
        "length" (Lee et al.'s geometric length alone, which leaves most
        such words whole). Lexicons saved before this setting existed read
        as "spelling".
    new_word_case: a word the lexicon does not hold is split as often as
        the learned words written with the same case are (capitalized or
        not, by the first letter): where the learned names mostly stay
        whole (English), a new capitalized word does too; where they are
        split like other words (Czech), its case changes nothing.
    new_word_endings: a cut of a word the lexicon does not hold before a
        final string is weighed by the log odds that the lexicon cuts the
        learned words ending in it there (most English words in "-ing",
        few in "-a" or "-e", though it holds "a" and "e" as suffixes of
        some).
    new_word_stems: a word the lexicon does not hold that a learned stem
        and learned affixes can spell is made of them as often as the
        learned words such a reading fits are (9 in 10 in English), not
        nearly always, as the stems' Dirichlet-multinomial predicts for
        the next learned type, which cut new words into a held stem and
        whatever suffix spells the rest ("fat+e", "Sea+n"). With
        new_strings "spelling" only: the length price is no distribution
        over a new stem's spelling, and with it the share would keep
        nearly every new word whole.
    settle: end the last stage with a few sweeps at falling temperatures
        below 1 (0.5, 0.2, 0.05), so that the lexicon kept is near the most
        probable one the sampler found rather than its last draw; false
        keeps the last draw (the paper's).
    chains: how many times the stages run, each from its own seed (the
        first from `seed`); each word type keeps the analysis whose cuts
        differ least from the other chains' (see consensus.py). Runs
        settle in different modes; on the SIGMORPHON Mongolian sets the
        consensus of five scores higher than the same seeds' single runs
        and varies less from seed to seed; on words outside the lexicon
        it moves both ways (docs/results/morph.md, "A consensus of
        chains"). Learning takes
        `chains` times as long (tuning compares its candidates on one
        chain); segmenting is unchanged. 1: one run (the paper's).
    priors: Lee et al.'s hyperparameters (gamma_*, alpha*, betas); the
        ones not given keep the paper's values.
    verbose: print the sampler's progress during initialization.
    """
    settings = MorphSettings(stage=stage, n_tags=n_tags, sweeps=sweeps, anneal=anneal, seed=seed,
                             lowercase=lowercase, max_prefixes=max_prefixes, max_suffixes=max_suffixes,
                             max_length=max_length, min_stem=min_stem, short_affixes=short_affixes,
                             restored_endings=restored_endings, new_strings=new_strings,
                             new_word_case=new_word_case, new_word_endings=new_word_endings,
                             new_word_stems=new_word_stems,
                             settle=settle, chains=chains, priors=dict(priors))
    return MorphSegmenter(nlp.vocab, name, settings, clamp_gold=clamp_gold, tune_priors=tune_priors,
                          verbose=verbose, scorer=scorer)


def score_morph_segmentation(examples: Iterable[Example], **kwargs) -> Dict[str, float]:
    """Boundary P/R/F token- and type-weighted (`score_morphs`), and the
    SIGMORPHON metric when the references carry the corpus's gold."""
    examples = list(examples)
    scores = score_morphs(examples)
    pairs = sigmorphon_pairs(examples)
    if pairs:
        scores.update(sigmorphon_scores(pairs))
    return scores


@registry.scorers("spacy_struct.morph_segmenter_scorer.v1")
def make_morph_segmenter_scorer():
    return score_morph_segmentation


class MorphSegmenter(Pipe):
    """Sets `token._.morphs` from a lexicon learned without supervision."""

    def __init__(self, vocab: Vocab, name: str = "morph_segmenter", settings: Optional[MorphSettings] = None, *,
                 clamp_gold: bool = True, tune_priors: bool = True, verbose: bool = True,
                 scorer: Optional[Callable] = None) -> None:
        self.vocab = vocab
        self.name = name
        settings = settings or MorphSettings()
        settings.check(name)
        self.model = MorphModel(settings)
        #: the settings the component was configured with (the model's may
        #: differ: tune_priors chooses some); saved beside the lexicon, so a
        #: setting given at load time is told from the saved configuration
        self.configured = settings
        self.clamp_gold = bool(clamp_gold)
        self.tune_priors = bool(tune_priors)
        self.verbose = bool(verbose)
        self.scorer = scorer
        #: what initialization found: gold word types clamped, conflicting
        #: golds, and with tune_priors the candidate chosen
        self.init_report: Dict[str, Any] = {}

    # ------------------------------------------------------------ learning
    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   extra_text: Sequence[str] = ()) -> None:
        """Sample the model from the examples' text (and `extra_text`).

        get_examples: the training examples; their predicted docs' words are
            the text, their references' `token._.morphs` the gold.
        nlp: the pipeline, whose tokenizer cuts plain-text `extra_text`.
        extra_text: paths of unlabelled text: `.spacy` files (their docs'
            words) or text files (one sentence per line).
        """
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        sentences: List[List[str]] = []
        gold: Dict[str, Counter] = {}
        for eg in get_examples():
            sentences.extend(_sentences(eg.predicted))
            if self.clamp_gold:
                for token, morphs in zip(eg.reference, doc_morphs(eg.reference)):
                    if morphs is not None and not token.is_space:
                        key = (tuple(morphs.cuts), morphs.stem_index)
                        gold.setdefault(self.model.form(token.text), Counter())[key] += 1
        for path in extra_text:
            sentences.extend(self._read_text(Path(path), nlp))
        sentences = [s for s in sentences if s]
        if not sentences:
            raise ValueError(f"{self.name}: found no words to learn from in the training examples"
                             + (" or in extra_text" if extra_text else ""))
        clamped = {}
        conflicts = 0
        for form, options in gold.items():
            (cuts, stem), _ = options.most_common(1)[0]
            conflicts += len(options) > 1
            clamped[form] = Morphs.from_cuts(form, cuts, stem)
        self.init_report = {"sentences": len(sentences), "tokens": sum(map(len, sentences)),
                            "clamped_types": len(clamped), "conflicting_gold_types": conflicts}
        if self.tune_priors:
            self._tune(sentences, clamped)
        start = time.perf_counter()
        self._say(f"{self.name}: sampling from {len(sentences):,} sentences, "
                  f"{self.init_report['tokens']:,} tokens"
                  + (f", {len(clamped):,} word types clamped to their gold" if clamped else "")
                  + (f" ({conflicts} with more than one gold: the most frequent kept)" if conflicts else ""))
        self.model.fit(sentences, clamped, progress=self._progress, on_chain=lambda number, chains: self._say(
            f"{self.name}: chain {number} of {chains}"))
        self._say(f"{self.name}: {len(self.model.forms):,} word types segmented in "
                  f"{time.perf_counter() - start:.1f} s")
        agreed = self.model.chain_agreement
        if agreed is not None:
            self.init_report["chains"] = agreed
            self._say(f"{self.name}: the {agreed['chains']} chains analysed {agreed['disputed']:,} of the "
                      f"{agreed['types']:,} word types differently; {agreed['not_first_chain']:,} keep another "
                      f"chain's analysis than the first's")

    def _tune(self, sentences: List[List[str]], clamped: Dict[str, Morphs]) -> None:
        """Replace the model by one with the priors chosen: on held-out
        annotated types when there are enough, else by code length."""
        configured = self.model.settings
        in_text = len(tuning.annotated_in_text(configured, sentences, clamped))
        criterion = tuning.criterion_for(in_text)
        grid = tuning.grid_for(criterion, configured)
        relaxations = tuning.relaxations_for(criterion, configured, sentences)
        keys = tuning.tuned_keys([*grid, *relaxations])
        if criterion == tuning.HELD_OUT_F1:
            how = (f"on a held-out {tuning.HELD_OUT_SHARE:.0%} of the {in_text:,} annotated word types"
                   + (" the text holds" if in_text < len(clamped) else ""))
        else:
            how = "by the code length of the text's segmentation"
            if clamped:
                self._say(f"{self.name}: {in_text} annotated word types in the text, fewer than the "
                          f"{tuning.min_annotated_types()} the priors are tuned on")

        def describe(candidate) -> str:
            return ", ".join(f"{k} = {v!r}" for k, v in candidate.items()) or "the configured values"

        start = time.perf_counter()
        self._say(f"{self.name}: choosing {', '.join(keys)} {how}: the configured values ("
                  + ", ".join(f"{k} = {tuning.current_value(configured, k)!r}" for k in keys)
                  + f") and {len(tuning.distinct_candidates(configured, grid)) - 1} other candidates, "
                  f"each learned at the basic stage"
                  + ("; then the best of them with its stem limits relaxed or no letter restored ("
                     + "; ".join(describe(c) for c in relaxations) + ")" if relaxations else ""))

        def figure(value: float) -> str:
            return f"{criterion} {100 * value:.1f}" if criterion == tuning.HELD_OUT_F1 else f"{criterion} {value:,.0f} nats"

        found = tuning.choose_settings(configured, sentences, clamped, report=lambda candidate, value: self._say(
            f"{self.name}:   {describe(candidate)}: {figure(value)}"))
        self.init_report["tuned"] = {**found.best, "criterion": found.criterion, "value": found.best_value}
        chosen = ", ".join(f"{k} = {v!r} (configured: {tuning.current_value(configured, k)!r})"
                           for k, v in found.best.items())
        self._say(f"{self.name}: {'chose ' + chosen if chosen else 'kept the configured values'}; "
                  f"{figure(found.best_value)}; {time.perf_counter() - start:.1f} s")
        self.model = MorphModel(found.settings)

    def _progress(self, stage: str, sweep: int, log_joint: float, changed: int, seconds: float) -> None:
        sweeps = len(SETTLE_TEMPERATURES) if stage == "settle" else self.model.settings.sweeps
        if sweep == 1 or sweep == sweeps or sweep % 10 == 0:
            self._say(f"{self.name}: {stage} sweep {sweep}/{sweeps}: log P {log_joint:,.1f}, "
                      f"{changed:,} type{'' if changed == 1 else 's'} changed, {seconds:.2f} s/sweep")

    def _say(self, text: str) -> None:
        if self.verbose:
            print(text, file=sys.stderr, flush=True)

    def _read_text(self, path: Path, nlp: Optional[Language]) -> List[List[str]]:
        if not path.exists():
            raise ValueError(f"{self.name}: extra_text {str(path)!r} does not exist")
        if path.suffix == ".spacy":
            return [s for doc in DocBin().from_disk(path).get_docs(self.vocab) for s in _sentences(doc)]
        if nlp is None:
            raise ValueError(f"{self.name}: plain-text extra_text needs the pipeline's tokenizer (nlp)")
        data = path.read_bytes()
        try:
            lines = data.decode("utf8").splitlines()
        except UnicodeDecodeError as err:  # err.start is an offset in the whole file
            line = data[:err.start].count(b"\n") + 1
            raise ValueError(
                f"{self.name}: extra_text {str(path)!r} is not UTF-8 text: byte {err.start} (line "
                f"{line}) is {err.object[err.start:err.start + 1]!r}; convert it to UTF-8 (e.g. "
                f"iconv -f latin1 -t utf8)"
            ) from None
        return [[t.text for t in nlp.make_doc(line.strip()) if not t.is_space] for line in lines if line.strip()]

    # ---------------------------------------------------------- predicting
    def __call__(self, doc: Doc) -> Doc:
        """Set `token._.morphs` on every token (whitespace stays whole)."""
        if not self.model.is_fitted:
            raise ValueError(f"{self.name}: the component has learned nothing; initialize it first")
        # a sentence's first word is capitalized whatever it is: its case is not weighed
        write_morphs(doc, {t.i: (Morphs((t.text,)) if t.is_space
                                 else self.model.segment(t.text, sentence_start=bool(t.is_sent_start)))
                           for t in doc if t.text})
        return doc

    # --------------------------------------------------------- serializing
    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        return srsly.msgpack_dumps({"format": LEXICON_FORMAT, **self.model.to_dict(),
                                    "configured": asdict(self.configured)})

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "MorphSegmenter":
        try:
            data = srsly.msgpack_loads(bytes_data)
        except Exception as err:
            raise ValueError(f"{self.name}: could not read the saved lexicon ({type(err).__name__}: "
                             f"{err}): it is another component's, or damaged") from err
        if not isinstance(data, dict) or "format" not in data:
            raise ValueError(f"{self.name}: the saved data is not a morph_segmenter lexicon "
                             f"(another component's?)")
        if data.get("format") not in READABLE_LEXICON_FORMATS:
            raise ValueError(f"{self.name}: the saved lexicon has format {data.get('format')}, "
                             f"this version reads {list(READABLE_LEXICON_FORMATS)}; initialize it again")
        model = MorphModel.from_dict(data)
        self._apply_load_time_settings(model, data.get("configured"))
        self.model = model
        return self

    def _apply_load_time_settings(self, model: MorphModel, saved_configured: Optional[dict]) -> None:
        """Settings given at load time (the config differs from the one the
        lexicon was saved with) that differ from what the lexicon runs with
        (its configured settings, and what `tune_priors` chose): those that
        shape how a word never seen is segmented (NEW_WORD_SETTINGS) apply
        to such words: silently when learning never reads them
        (NEW_WORD_ONLY_SETTINGS), otherwise with a warning that the learned
        words keep their segmentation; the others shaped the sampled model,
        which only initializing again changes: kept, with a warning. A value
        given at load time that equals the saved config's cannot be told
        from no value given, so a value `tune_priors` chose stays then."""
        plain = lambda settings: srsly.msgpack_loads(srsly.msgpack_dumps(asdict(settings)))  # as saved
        if saved_configured is None:
            # saved before format 3: what the config said then is unknown
            # (the lexicon's own settings include what tune_priors chose),
            # so the saved settings stay in force, as they did then
            return
        now = plain(self.configured)
        running = plain(model.settings)
        # a setting newer than the saved lexicon: what the lexicon runs with
        before = {**running, **saved_configured}
        defaults = plain(MorphSettings())
        # ... and a config that leaves it at its default says nothing about
        # it: spaCy fills in the default when the saved config lacks the key
        changed = [key for key in now if key in before and now[key] != before[key]
                   and (key in saved_configured or now[key] != defaults.get(key))
                   and now[key] != running.get(key)]
        new_word = [key for key in changed if key in NEW_WORD_SETTINGS]
        fixed = [key for key in changed if key not in NEW_WORD_SETTINGS]
        if new_word:
            model.settings = replace(model.settings, **{key: now[key] for key in new_word})
            model.settings.check(self.name)

        def differences(keys: List[str]) -> List[Tuple[str, Any, Any]]:
            """(name, given, the lexicon's) per changed setting; a dict
            setting (the priors) by the entries that differ."""
            out = []
            for key in keys:
                given, held = now[key], running.get(key)
                if isinstance(given, dict) and isinstance(held, dict):
                    out.extend((f"{key}.{k}", given.get(k), held.get(k))
                               for k in sorted(set(given) | set(held)) if given.get(k) != held.get(k))
                else:
                    out.append((key, given, held))
            return out

        learned_under = differences([key for key in new_word if key not in NEW_WORD_ONLY_SETTINGS])
        if learned_under:
            one = len(learned_under) == 1
            warnings.warn(
                f"{self.name}: " + ", ".join(f"{name} = {given!r}" for name, given, _ in learned_under)
                + " (given at load time; saved: " + ", ".join(f"{held!r}" for _, _, held in learned_under)
                + f") {'applies' if one else 'apply'} to the words the lexicon does not hold; its "
                f"{len(model.forms):,} learned words keep the segmentation they were learned with. "
                f"Initialize again to learn under {'it' if one else 'them'}"
            )
        kept = differences(fixed)
        if kept:
            warnings.warn(
                f"{self.name}: " + ", ".join(f"{name} = {given!r}" for name, given, _ in kept)
                + " in the config, but the lexicon was learned with "
                + ", ".join(f"{name} = {held!r}" for name, _, held in kept)
                + ", which it keeps: these settings shape the sampled model and only "
                "initializing again changes them"
            )

    def to_disk(self, path, *, exclude: Iterable[str] = tuple()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "lexicon.msgpack").write_bytes(self.to_bytes())

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "MorphSegmenter":
        return self.from_bytes((Path(path) / "lexicon.msgpack").read_bytes())


def _sentences(doc: Doc) -> List[List[str]]:
    """The doc's sentences (the whole doc when it has no boundaries) as words."""
    spans = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
    return [[t.text for t in span if not t.is_space and t.text] for span in spans]
