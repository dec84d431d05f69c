"""Choosing the sampler's priors: on the annotated word types when there are
enough of them (semi-supervised), else by the code length of the text.

Why: Lee et al.'s priors were set for unsupervised learning, where nothing
tells the model how eagerly a language splits its words. With them, and
the SIGMORPHON Czech train words clamped to their gold, the sampler still
segments the other words as conservatively as without annotations
(boundary recall 37 on dev). Morfessor FlatCat tunes the weight of its
annotations for the same reason. Here the annotations choose the priors:

- a fifth of the annotated types (drawn with the model's seed) is held
  out: those words stay in the text but are not clamped;
- for the configured settings and for each candidate of the grid, the
  `basic` stage is learned with the other annotated types clamped, and
  the held-out types are segmented;
- the settings with the best type-weighted boundary F1 on them win (the
  configured ones on a tie), and the model is then learned with every
  annotated type clamped.

Only the annotations given for training are read, never an evaluation
set. The grid varies what decides how much the model splits: the
geometric priors on morph length (`gamma_length`) and on the number of
morphs (`gamma_segments`), and how many suffixes a hypothesis may have.
It costs one `basic` stage per candidate (a grid entry equal to the
configured settings is not run twice).

Without annotations (`select_by_code_length`) nothing says how well a
candidate segments, and the sampler's own log joint cannot compare
candidates: each candidate changes the prior the joint is taken under,
and on every SIGMORPHON set the joint prefers the paper's length prior,
which under-segments Czech (boundary F1 34.5 on the word set against
52.1 with `gamma_length` 0.9) and is right for English. So a yardstick
that no candidate changes decides: the two-part code length of the text
as the candidate segments it (Morfessor Baseline's cost, Creutz & Lagus
2002): a lexicon that spells each morph once, and the text as morph
tokens and word boundaries. Splitting too little leaves a long lexicon of
whole words; splitting too much, a long text of short morphs. Three
things vary (CODE_LENGTH_GRID): `gamma_length`, which decides how eagerly
the model splits; whether a word may have prefixes at all (the configured
`max_prefixes`, or none); and whether it may have more than one suffix
(the configured `max_suffixes`, or one). A language that only suffixes
(Mongolian) gives the prefix hypotheses nothing to find but word-initial
letters, which the sampler then cuts off as prefixes; the code of the
text says so. On the SIGMORPHON sets it is shorter without prefixes for
Mongolian and for English (whose few prefixes do not pay for the false
ones), and longer for Czech and Hebrew, which prefix often. A second
suffix slot lets the sampler cut a frequent one-letter suffix out of a
stem or out of a longer suffix ("стандар+т+ыг" where the gold has
"стандарт+ыг"); on all six sets the text is shorter to send with one
suffix at most, which leaves those cuts out.

A second round (`stem_relaxations`) starts from the first round's winner
and tries the stem constraints relaxed: a stem one letter shorter than
`min_stem` allows, affixes longer than the stem (`short_affixes` off),
and both. A language of short roots and long suffixes (Mongolian
"эс+тэй", "үг+ээр") cannot be segmented under the paper's constraint
that no affix is longer than the stem; the code of the text says when
the relaxed space pays. The same round tries the first round's winner
without the letters it restores to stems (`restored_endings`, English's
dropped "e"): a spelling rule of one language, which the code of another
language's text need not pay for. The rounds are searched one after the
other, not crossed, so the second costs at most four basic stages (each
in a wider space of hypotheses than the first round's), not four times
the first round. The code does not charge which stems carry a restored
letter, so where a written form can be read both ways it leans a little
toward keeping the restoration.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

from .model import DEFAULT_PRIORS, STAGES, MorphModel, MorphSettings
from ..annotations.morphs import Morphs
from .scoring import cut_counts, prf

#: a candidate: priors and MorphSettings fields to set
Candidate = Dict[str, Union[float, int]]
#: the candidates tried besides the configured settings
TUNING_GRID: Tuple[Candidate, ...] = tuple(
    {"gamma_length": length, "gamma_segments": segments, "max_suffixes": suffixes}
    for length in (0.5, 0.9) for segments in (0.5, 0.1) for suffixes in (2, 3)
)
#: the candidates tried without annotations (besides the configured settings):
#: each length prior with the configured prefixes and with none, each with
#: the configured number of suffixes and with one at most
CODE_LENGTH_GRID: Tuple[Candidate, ...] = tuple(
    {"gamma_length": length, **prefixes, **suffixes}
    for suffixes in ({}, {"max_suffixes": 1}) for prefixes in ({}, {"max_prefixes": 0})
    for length in (0.5, 0.6, 0.7, 0.8, 0.9)
)
#: share of the annotated types held out to score the candidates
HELD_OUT_SHARE = 0.2
#: fewer held-out types than this score a candidate too noisily to choose
MIN_HELD_OUT = 50


def can_tune(n_annotated: int) -> bool:
    """Whether that many annotated types hold out at least MIN_HELD_OUT."""
    return int(n_annotated * HELD_OUT_SHARE) >= MIN_HELD_OUT


def min_annotated_types() -> int:
    """The fewest annotated types for which the priors are tuned."""
    n = MIN_HELD_OUT
    while not can_tune(n):
        n += 1
    return n


@dataclass
class Tuning:
    """What `select_settings` or `select_by_code_length` found."""

    settings: MorphSettings  # the configured settings with the winner applied
    best: Candidate  # what the winner changes ({} for the configured settings)
    criterion: str  # what chose: HELD_OUT_F1 or CODE_LENGTH
    best_value: float  # the winner's figure under the criterion
    results: List[Tuple[Candidate, float]]  # every candidate and its figure, in the order tried


#: the criteria: held-out type-weighted boundary F1 (higher is better);
#: two-part code length of the text in nats (lower is better)
HELD_OUT_F1 = "held-out boundary F1"
CODE_LENGTH = "code length"
HIGHER_IS_BETTER = {HELD_OUT_F1: True, CODE_LENGTH: False}


def apply_candidate(settings: MorphSettings, candidate: Candidate, name: str = "morph_segmenter") -> MorphSettings:
    """`settings` with the candidate's priors and fields set, checked."""
    priors = {**settings.priors, **{k: v for k, v in candidate.items() if k in DEFAULT_PRIORS}}
    fields = {k: v for k, v in candidate.items() if k not in DEFAULT_PRIORS}
    out = replace(settings, priors=priors, **fields)
    out.check(name)
    return out


def tuned_keys(grid: Optional[Sequence[Candidate]] = None) -> List[str]:
    """The settings the grid varies, in a stable order."""
    return sorted({key for candidate in (TUNING_GRID if grid is None else grid) for key in candidate})


def current_value(settings: MorphSettings, key: str) -> Union[float, int]:
    """A tuned setting's value in `settings` (a prior or a field)."""
    return settings.priors[key] if key in DEFAULT_PRIORS else getattr(settings, key)


def distinct_candidates(settings: MorphSettings, grid: Optional[Sequence[Candidate]] = None) -> List[Candidate]:
    """The configured settings ({}) and the grid's candidates, each reduced
    to what it changes, without the ones that change nothing new."""
    out: List[Candidate] = [{}]
    seen = [apply_candidate(settings, {})]
    for candidate in TUNING_GRID if grid is None else grid:
        changed = {k: v for k, v in candidate.items() if current_value(settings, k) != v}
        candidate_settings = apply_candidate(settings, changed)
        if candidate_settings not in seen:
            seen.append(candidate_settings)
            out.append(changed)
    return out


def boundary_f1(model: MorphModel, gold: Dict[str, Morphs]) -> float:
    """Boundary F1 of the model's segmentation of `gold`'s forms, each form once."""
    counts = [cut_counts(morphs, model.segment(form)) for form, morphs in gold.items()]
    return prf(*(sum(column) for column in zip(*counts)), "boundary")["boundary_f"] if counts else 0.0


def code_length(model: MorphModel, sentences: Sequence[Sequence[str]]) -> float:
    """Nats to send the words of `sentences` as `model` segments them, as
    Morfessor Baseline 2.0 counts its cost (with token counts). The morphs
    are the lexicon's strings (`MorphModel.lexicon_morphs`: a stem with the
    letter its spelling dropped restored), which is what the model stores.

    The lexicon: each distinct morph spelled once, letter by letter with
    the lexicon's letter frequencies and an end mark after each morph, in
    no particular order (less log of the number of orders). The text: its
    morph tokens and a boundary after each word, each coded with its
    relative frequency, plus the frequencies themselves (one of the
    C(N - 1, M - 1) ways N morph tokens fall to M morphs). All are
    maximum-likelihood codes, so no prior of the sampler enters.
    """
    words = Counter(model.form(word) for sentence in sentences for word in sentence)
    morph_tokens: Counter = Counter()
    for form, count in words.items():
        for morph in model.lexicon_morphs(form):
            morph_tokens[morph] += count
    n_tokens, n_words, n_morphs = sum(morph_tokens.values()), sum(words.values()), len(morph_tokens)
    n_symbols = n_tokens + n_words
    text = (n_symbols * math.log(n_symbols) - n_words * math.log(n_words)
            - sum(c * math.log(c) for c in morph_tokens.values()))
    frequencies = math.lgamma(n_tokens) - math.lgamma(n_morphs) - math.lgamma(n_tokens - n_morphs + 1)
    letters = Counter(letter for morph in morph_tokens for letter in morph)
    letters[None] = n_morphs  # the end mark
    n_letters = sum(letters.values())
    lexicon = n_letters * math.log(n_letters) - sum(c * math.log(c) for c in letters.values())
    return text + frequencies + lexicon - math.lgamma(n_morphs + 1)


def _choose(settings: MorphSettings, grid: Sequence[Candidate], criterion: str,
            measure: Callable[[MorphModel], float],
            report: Optional[Callable[[Candidate, float], None]], measured: Optional[float] = None) -> Tuning:
    """Learn the `basic` stage for the configured settings and each distinct
    candidate, `measure` each model, and keep the best (the first on a tie:
    the configured settings). `measured`: the configured settings' figure
    when it is known already (they are not learned again). The candidates
    are compared on one chain's last draw (`settle` off, `chains` 1), as
    when the grids were measured: settling and the consensus of chains end
    the final model's learning alone."""
    results: List[Tuple[Candidate, float]] = []
    for candidate in distinct_candidates(settings, grid):
        if not candidate and measured is not None:
            results.append(({}, measured))
            continue
        value = measure(MorphModel(replace(apply_candidate(settings, candidate), stage=STAGES[0], settle=False,
                                       chains=1)))
        results.append((dict(candidate), value))
        if report is not None:
            report(candidate, value)
    sign = 1.0 if HIGHER_IS_BETTER[criterion] else -1.0
    best, best_value = max(results, key=lambda item: sign * item[1])
    return Tuning(apply_candidate(settings, best), best, criterion, best_value, results)


def select_by_code_length(
    settings: MorphSettings,
    sentences: Sequence[Sequence[str]],
    clamped: Optional[Dict[str, Morphs]] = None,
    grid: Optional[Sequence[Candidate]] = None,
    report: Optional[Callable[[Candidate, float], None]] = None,
    relaxations: Optional[Sequence[Candidate]] = None,
) -> Tuning:
    """The settings under which the text's segmentation is shortest to send.

    settings: the configured ones; a candidate replaces only its own keys.
    sentences: the text the model learns from.
    clamped: annotated types (too few to hold out), clamped in every candidate.
    grid: the first round's candidates besides the configured settings
        (None: `grid_for(CODE_LENGTH, settings)`).
    report: called with each candidate and its code length in nats.
    relaxations: the second round's candidates besides the first round's
        winner (None: its `stem_relaxations` and
        `restoration_alternatives`; empty: no second round).
    RETURNS: the `Tuning` (criterion CODE_LENGTH): `best` is all that the
        two rounds changed, `results` every candidate measured, each as
        what it changes from the configured settings.
    """
    settings = apply_candidate(settings, {})

    def measure(model: MorphModel) -> float:
        model.fit(sentences, clamped or {})
        return code_length(model, sentences)

    first = _choose(settings, grid_for(CODE_LENGTH, settings) if grid is None else grid, CODE_LENGTH, measure, report)
    if relaxations is None:
        relaxations = stem_relaxations(first.settings)
        if restores_any(first.settings, sentences):
            relaxations += restoration_alternatives(first.settings)
    second_grid = relaxations
    if not second_grid:
        return first
    # each candidate reported and kept as what it changes from the configured settings
    merged_report = None if report is None else (lambda candidate, value: report({**first.best, **candidate}, value))
    second = _choose(first.settings, second_grid, CODE_LENGTH, measure, merged_report, measured=first.best_value)
    return Tuning(second.settings, {**first.best, **second.best}, CODE_LENGTH, second.best_value,
                  first.results + [({**first.best, **c}, v) for c, v in second.results[1:]])


def stem_relaxations(settings: MorphSettings) -> Tuple[Candidate, ...]:
    """The second round's candidates from `settings` (the first round's
    winner): `min_stem` one shorter (not below 1), affixes longer than the
    stem allowed, and both; none that `settings` already has.

    Both together are what a short root with a long suffix needs ("эс+тэй":
    a two-letter stem under a three-letter suffix); each alone is the
    smaller step, for short stems with short affixes or long affixes on
    stems of the configured length, and lets the code say which of the two
    limits it is that costs."""
    shorter = {"min_stem": settings.min_stem - 1} if settings.min_stem > 1 else {}
    longer_affixes = {"short_affixes": False} if settings.short_affixes else {}
    candidates = [c for c in (shorter, longer_affixes) if c]
    if len(candidates) == 2:
        candidates.append({**shorter, **longer_affixes})
    return tuple(candidates)


def restoration_alternatives(settings: MorphSettings) -> Tuple[Candidate, ...]:
    """The second round's candidate without the letters restored to stems
    (`restored_endings` ""), when `settings` restore any: a spelling rule
    of one language (English drops a stem's "e" before "-ed" and "-ing"),
    which the code of another language's text may not pay for."""
    return ({"restored_endings": ""},) if settings.restored_endings else ()


def restores_any(settings: MorphSettings, sentences: Sequence[Sequence[str]]) -> bool:
    """Whether a letter of `restored_endings` occurs in the text at all (in
    Cyrillic or Hebrew text the Latin "e" does not, and learning without
    it would only repeat the model)."""
    letters = set(settings.restored_endings)
    return any(letters & set(word.lower()) for sentence in sentences for word in sentence)


def annotated_in_text(settings: MorphSettings, sentences: Sequence[Sequence[str]],
                      clamped: Dict[str, Morphs]) -> List[str]:
    """The annotated forms that the text holds, sorted: the ones that can be
    held out. A form the text lacks is not learned, so the model would
    segment it as a new word, by the settings that only new words read,
    and the priors chosen would depend on them."""
    reader = MorphModel(settings)
    in_text = {reader.form(word) for sentence in sentences for word in sentence}
    return sorted(form for form in clamped if form in in_text)


def criterion_for(n_annotated: int) -> str:
    """What chooses the priors with that many annotated types: the held-out
    ones when there are enough (`can_tune`), else the code length."""
    return HELD_OUT_F1 if can_tune(n_annotated) else CODE_LENGTH


def relaxations_for(criterion: str, settings: MorphSettings,
                    sentences: Optional[Sequence[Sequence[str]]] = None) -> Tuple[Candidate, ...]:
    """The second round's candidates that criterion tries after the first
    round on the configured `settings`: without annotations the stem
    relaxations and the restoration turned off (the default first round
    changes neither, so the configured settings' are the winner's), none
    with them. With `sentences`, the restoration is not tried off where
    its letters do not occur (`restores_any`)."""
    if criterion != CODE_LENGTH:
        return ()
    if sentences is not None and not restores_any(settings, sentences):
        return stem_relaxations(settings)
    return stem_relaxations(settings) + restoration_alternatives(settings)


def grid_for(criterion: str, settings: MorphSettings) -> Tuple[Candidate, ...]:
    """The candidates that criterion tries besides the configured `settings`.

    Without annotations the affix options only narrow what `settings`
    allow: "one suffix at most" is not offered to a model configured with
    none, nor any prefixes to one configured without them."""
    if criterion == HELD_OUT_F1:
        return TUNING_GRID
    return tuple(candidate for candidate in CODE_LENGTH_GRID
                 if all(candidate[key] <= getattr(settings, key)
                        for key in ("max_prefixes", "max_suffixes") if key in candidate))


def choose_settings(
    settings: MorphSettings,
    sentences: Sequence[Sequence[str]],
    clamped: Dict[str, Morphs],
    report: Optional[Callable[[Candidate, float], None]] = None,
) -> Tuning:
    """The priors `tune_priors` chooses: `select_settings` with enough
    annotated types (`criterion_for`), else `select_by_code_length`, each
    over its own grid. Arguments as theirs."""
    # select_settings declines (None) exactly where criterion_for says the code length
    return (select_settings(settings, sentences, clamped, report=report)
            or select_by_code_length(settings, sentences, clamped, report=report))


def select_settings(
    settings: MorphSettings,
    sentences: Sequence[Sequence[str]],
    clamped: Dict[str, Morphs],
    grid: Optional[Sequence[Candidate]] = None,
    report: Optional[Callable[[Candidate, float], None]] = None,
) -> Optional[Tuning]:
    """The settings that segment held-out annotated types best.

    settings: the configured ones; a candidate replaces only its own keys.
    sentences: the text the model learns from.
    clamped: the annotated types (form as `MorphModel.form` gives it -> gold).
    grid: the candidates besides the configured settings (None: TUNING_GRID).
    report: called with each candidate (what it changes) and its held-out
        F1 as it is scored.
    RETURNS: the `Tuning` (criterion HELD_OUT_F1), or None when fewer than
        MIN_HELD_OUT types would be held out (fewer than
        `min_annotated_types()` annotated types that the text holds: only
        those are held out, see `annotated_in_text`).
    """
    settings = apply_candidate(settings, {})
    forms = annotated_in_text(settings, sentences, clamped)
    random.Random(settings.seed).shuffle(forms)
    if not can_tune(len(forms)):
        return None
    n_held = int(len(forms) * HELD_OUT_SHARE)
    held = {form: clamped[form] for form in forms[:n_held]}
    kept = {form: clamped[form] for form in forms[n_held:]}
    kept.update((form, morphs) for form, morphs in clamped.items() if form not in held and form not in kept)

    def measure(model: MorphModel) -> float:
        model.fit(sentences, kept)
        return boundary_f1(model, held)

    return _choose(settings, TUNING_GRID if grid is None else grid, HELD_OUT_F1, measure, report)
