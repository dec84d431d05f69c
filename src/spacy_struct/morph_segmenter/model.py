"""The segmentation model: its settings, the staged sampling that learns it,
and segmenting words with what was learned.

Learning (`MorphModel.fit`) follows Lee et al. (2011, section 4.3): the
model stages run in turn, each from the state the previous one left,
`sweeps` sweeps each (50 in the paper), from every word unsegmented:

1. `basic`: the lexicon and the segmentation model, one tag;
2. `pos`: `n_tags` latent tags per type, the affixes conditioned on them
   (tags drawn uniformly at random when they are introduced);
3. `token_pos`: + the tag HMM over the tokens in their sentences;
4. `token_seg`: + the agreement chain over adjacent segmentations.

`stage` names the last one, so `stage = "basic"` is the paper's first row
and `token_seg` the full model. With `settle` (the default), the last
stage ends with SETTLE_TEMPERATURES sweeps at falling temperatures below 1:
what is kept is then near the most probable lexicon the chain has found
(each type at its best segmentation given the others), not the last
sample of the chain, which still moves a few thousand types per sweep at
temperature 1. `settle = false` keeps the paper's last sample. Types
whose segmentation is given (semi-supervised) keep it and have only their
tag sampled.

With `chains` above 1 (5 by default), the stages run that many
times from independent seeds (`consensus.chain_seed`), and each type
keeps the analysis the chains agree with most (`consensus.py`): runs
settle in different modes, and which one a run reaches decides much of
its score, so a per-type consensus of several is steadier (on the
Mongolian sets, where one run was level with Morfessor FlatCat, it scores
higher than the same seeds' single runs; see docs/results/morph.md, "A
consensus of chains"). The tags, whose numbering is
each chain's own, are the first chain's. The chains run one after
another: learning takes `chains` times as long, segmenting no longer.

What is learned is a lexicon: each word type's segmentation and tag. A
word never sampled is segmented by the type-level model (tag prior,
lexicon, morph counts) with the counts as they stand, which is the
sampler's conditional for a new type without the token factors. A string
the lexicon lacks is priced there by a character model of the learned
stems (`new_strings = "spelling"`, see `spelling.py`), or, as in the
paper, by its length alone (`"length"`), which leaves most new words whole.
With `new_word_case`, a new word is also split as often as the learned
types written with its case (capitalized or not) are: the lexicon's names
mostly stay whole in English, so a new name does too. With
`new_word_endings`, a new word's cut before a final string is also
weighed by how often the lexicon cuts the learned types that end in it
there: most of its types in "-ing" before it, few of those in "-a" or
"-e", though it holds "a" and "e" as suffixes of some. With
`new_word_stems`, a new word that a held stem and held affixes can spell
is made of them as often as the learned types such a reading fits are (see
`_stem_odds`), not nearly always, as the stems' Dirichlet-multinomial
predicts for the next type it draws, which cut new words into a stem the
lexicon holds and whatever suffix spells the rest ("fat+e", "Sea+n",
"Brand+on").

A stem may be stored with a letter its spelling dropped before the suffix
(`restored_endings`; "structured" is structure + ed, cut "structur|ed"):
see hypotheses.py. `lexicon_morphs` gives those strings, `segment` the
written pieces.

Words are modelled lowercased (`lowercase`) where that keeps their length,
so "The" and "the" are one type; the cuts apply to the word as written.
"""
from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np

from ._sampler import MorphSampler
from .consensus import agreement, chain_seed, consensus_rows
from .context import build_context
from .hypotheses import HypothesisTable, Segmentation, build_hypotheses, is_affix_spelling, is_segmentable
from .spelling import Spelling
from ..annotations.morphs import Morphs

def is_capitalized(word: str) -> bool:
    """Whether `word` is written with a capital first letter (a name, in a
    script with case)."""
    return word[:1].isupper()


def held_stem_share(readings: HypothesisTable, chosen: HypothesisTable, chosen_rows: np.ndarray,
                    forms: Sequence[str], max_length: int) -> Optional[float]:
    """How often a learned type that a held reading fits is read so.

    A held reading of a type: a cut one whose stem another learned type
    has, and whose prefixes and suffixes other learned types have as
    prefixes and suffixes. Among the segmentable learned types that one of
    their readings fits, the share (add-one) that the lexicon cuts with a
    stem another type has: how often the learned words show such a reading
    to be the right one, which `MorphModel._stem_odds` gives a new word's
    held stems (0.90 on the English sentences, 0.95 on the Mongolian, 0.97
    on the Czech).

    readings: every hypothesis of every learned type; chosen, chosen_rows:
    the table (in the same string numbering) and row of each type's learned
    segmentation; forms: the types. RETURNS: the share, or None when no
    learned type a held reading fits."""
    n_types, n_ids = len(forms), len(readings.morph_strings)
    own = chosen.morphs[chosen_rows]                      # (types, width): each type's learned morphs
    own_stem_pos = chosen.stem_pos[chosen_rows][:, None]
    own_pos = np.arange(own.shape[1])[None, :]
    own_stem = np.take_along_axis(own, own_stem_pos, axis=1)[:, 0]
    own_sides = ((own >= 0) & (own_pos < own_stem_pos), (own >= 0) & (own_pos > own_stem_pos))
    stem_types = np.bincount(own_stem, minlength=n_ids)
    side_types = []                                       # per side, per string: the types that have it there
    for side in own_sides:
        counts = np.zeros(n_ids, dtype=np.int64)
        for row, mask in zip(own, side):
            counts[np.unique(row[mask])] += 1
        side_types.append(counts)

    type_of = np.repeat(np.arange(n_types), np.diff(readings.type_start))
    stem_of = readings.morphs[np.arange(len(type_of)), readings.stem_pos]
    # cut, with a stem another type has: then the affixes, on those rows only
    rows = np.flatnonzero((readings.n_morphs > 1) & (stem_types[stem_of] - (stem_of == own_stem[type_of]) > 0))
    morphs, types = readings.morphs[rows], type_of[rows]
    pos = np.arange(morphs.shape[1])[None, :]
    stem_pos = readings.stem_pos[rows][:, None]
    ids = np.maximum(morphs, 0)
    fits = np.ones(len(rows), dtype=bool)
    for side, own_side, counts in zip(((morphs >= 0) & (pos < stem_pos), (morphs >= 0) & (pos > stem_pos)),
                                      own_sides, side_types):
        # the type's own segmentation having the string on that side: one type fewer that has it
        mine = np.any((ids[:, :, None] == own[types][:, None, :]) & own_side[types][:, None, :], axis=2)
        fits &= np.all(~side | (counts[ids] - mine > 0), axis=1)
    fitted = np.zeros(n_types, dtype=bool)
    fitted[types[fits]] = True
    fitted &= np.array([is_segmentable(form, max_length) for form in forms], dtype=bool)
    if not fitted.any():
        return None
    cut_at_held = (chosen.n_morphs[chosen_rows] > 1) & (stem_types[own_stem] > 1)
    return (int(np.sum(fitted & cut_at_held)) + 1) / (int(np.sum(fitted)) + 2)


def _state_of(sampler: MorphSampler) -> Tuple[np.ndarray, np.ndarray]:
    """A copy of the sampler's state: each type's hypothesis row and tag."""
    return np.array(sampler.hyps_array, copy=True), np.array(sampler.tags_array, copy=True)


#: the model stages, in the order they run
STAGES = ("basic", "pos", "token_pos", "token_seg")

#: Lee et al.'s hyperparameters (section 5)
DEFAULT_PRIORS: Dict[str, object] = {
    "gamma_length": 0.5,
    "gamma_segments": 0.5,
    "gamma_prefix": 1 / 1.1,
    "gamma_stem": 1e-4,
    "gamma_suffix": 1 / 1.1,
    "alpha": 0.1,
    "alpha_emission": 1e-5,
    "alpha_transition": 1.0,
    "betas": [0.6, 0.1, 0.3],
}


#: temperatures of the sweeps that end the last stage with `settle`
SETTLE_TEMPERATURES = (0.5, 0.2, 0.05)

#: segmentations of unseen words kept for reuse; the cache starts over when full
NEW_WORD_CACHE_SIZE = 100_000

#: how a new word's strings that the lexicon lacks are priced: by a
#: character model of the learned stems, or by their length (the paper's)
NEW_STRING_PRICES = ("spelling", "length")
#: n of the character n-grams of "spelling"
SPELLING_ORDER = 3


@dataclass
class MorphSettings:
    """How the model is learned (see the module's docstring)."""

    stage: str = "token_seg"
    n_tags: int = 5
    sweeps: int = 50
    anneal: float = 1.0
    seed: int = 0
    lowercase: bool = True
    max_prefixes: int = 2
    max_suffixes: int = 2
    max_length: int = 30
    min_stem: int = 3
    short_affixes: bool = True
    restored_endings: str = "e"
    new_strings: str = "spelling"
    new_word_case: bool = True
    new_word_endings: bool = True
    new_word_stems: bool = True
    settle: bool = True
    chains: int = 5
    priors: Dict[str, object] = field(default_factory=lambda: dict(DEFAULT_PRIORS))

    def check(self, name: str) -> None:
        """Raise a ValueError naming `name` and the setting that is wrong."""
        if self.stage not in STAGES:
            raise ValueError(f"{name}: stage must be one of {list(STAGES)}, got {self.stage!r}")
        for key, low in (("n_tags", 1), ("sweeps", 0), ("max_prefixes", 0), ("max_suffixes", 0), ("max_length", 1),
                         ("min_stem", 1), ("chains", 1)):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name}: {key} must be an integer >= {low}, got {value!r}")
        if self.new_strings not in NEW_STRING_PRICES:
            raise ValueError(f"{name}: new_strings must be one of {list(NEW_STRING_PRICES)}, got {self.new_strings!r}")
        endings = self.restored_endings
        if (not isinstance(endings, str) or not all(c.isalpha() for c in endings)
                or len(set(endings)) < len(endings)):
            raise ValueError(f"{name}: restored_endings must be a string of distinct letters (\"\" for none), "
                             f"got {endings!r}")
        for key in ("new_word_case", "new_word_endings", "new_word_stems", "settle"):
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"{name}: {key} must be true or false, got {getattr(self, key)!r}")
        if not isinstance(self.short_affixes, bool):
            raise ValueError(f"{name}: short_affixes must be true or false, got {self.short_affixes!r}")
        if not isinstance(self.anneal, (int, float)) or self.anneal < 1:
            raise ValueError(f"{name}: anneal (the first sweep's temperature) must be >= 1, got {self.anneal!r}")
        unknown = sorted(set(self.priors) - set(DEFAULT_PRIORS))
        if unknown:
            raise ValueError(f"{name}: unknown priors {unknown}; the priors are {sorted(DEFAULT_PRIORS)}")
        self.priors = {**DEFAULT_PRIORS, **self.priors}
        for key, value in self.priors.items():
            values = value if key == "betas" else [value]
            if key == "betas" and len(values) != 3:
                raise ValueError(f"{name}: betas must be three numbers, got {value!r}")
            if not all(isinstance(v, (int, float)) and 0 < v and (v < 1 or key.startswith("alpha")) for v in values):
                raise ValueError(f"{name}: prior {key} must be in (0, 1) (alphas > 0), got {value!r}")


#: what `fit` reports after each sweep: (stage, sweep within it, its log
#: joint, types changed, seconds of the sweep)
Progress = Callable[[str, int, float, int, float], None]


class MorphModel:
    """A lexicon of segmented word types and the counts to segment new ones."""

    def __init__(self, settings: MorphSettings) -> None:
        self.settings = settings
        self.forms: List[str] = []
        self.cuts: List[Tuple[int, ...]] = []
        self.stems: List[int] = []
        self.tails: List[str] = []
        self.tags: List[int] = []
        #: per learned type: whether most of its tokens after a sentence's
        #: first were written capitalized
        self.capitalized: List[bool] = []
        #: `held_stem_share` of the learned lexicon (None: no learned type
        #: a held reading fits, or a lexicon saved before it)
        self.stem_share: Optional[float] = None
        self._index: Dict[str, int] = {}
        self._frozen: Optional[Tuple[MorphSampler, Dict[str, int]]] = None
        self._new: Dict[Tuple[str, Optional[bool]], Tuple[Morphs, str]] = {}
        self._split_odds: Optional[Dict[bool, Tuple[float, float]]] = None
        self._endings: Optional[Dict[str, float]] = None
        self._stem_factors: Optional[Tuple[float, float, np.ndarray]] = None
        self._spelling: Optional[Spelling] = None
        self.sweep_seconds: List[float] = []
        #: after `fit` with several chains, how far they agreed (`consensus.agreement`)
        self.chain_agreement: Optional[Dict[str, int]] = None

    # ------------------------------------------------------------ words
    def form(self, word: str) -> str:
        """The string the model sees for `word`."""
        if self.settings.lowercase:
            lower = word.lower()
            if len(lower) == len(word):
                return lower
        return word

    @property
    def is_fitted(self) -> bool:
        return bool(self.forms)

    # --------------------------------------------------------- learning
    def fit(self, sentences: Iterable[Sequence[str]], clamped: Optional[Dict[str, Morphs]] = None,
            progress: Optional[Progress] = None,
            stage_end: Optional[Callable[[str, "MorphModel"], None]] = None,
            last_draw: Optional[Callable[["MorphModel"], None]] = None,
            on_chain: Optional[Callable[[int, int], None]] = None,
            first_chain: Optional[Callable[["MorphModel"], None]] = None) -> None:
        """Learn from sentences of words (each a sequence of strings).

        clamped: word form (as `form` gives it) to its known segmentation;
            those types keep it.
        progress: called after every sweep of every chain.
        stage_end: called after each stage with the model as that stage
            leaves it (a separate MorphModel whose `stage` is that stage:
            Lee et al.'s model of that row, trained as the paper trains it;
            with several chains, their consensus at that stage, once every
            chain has run).
        last_draw: with `settle`, called with the model of the last stage's
            last draw, before the cold sweeps (a separate MorphModel with
            `settle` off; with several chains, the consensus of their last
            draws): the same chains unsettled, to compare with.
        on_chain: with several chains, called before each with its number
            (from 1) and the number of chains.
        first_chain: with several chains, called with the first chain's
            own final model (a separate MorphModel with `chains` 1): the
            configured seed's single run, to compare with.
        """
        s = self.settings
        index: Dict[str, int] = {}
        ids: List[List[int]] = []
        tokens: Counter = Counter()  # per type, its tokens after a sentence's first word
        capitals: Counter = Counter()  # ... of them written capitalized
        for sentence in sentences:
            words = list(sentence)
            row = [index.setdefault(self.form(w), len(index)) for w in words]
            ids.append(row)
            for word, i in zip(words[1:], row[1:]):  # a sentence's first word is capitalized whatever it is
                tokens[i] += 1
                capitals[i] += is_capitalized(word)
        forms = list(index)
        capitalized = [2 * capitals[i] > tokens[i] for i in range(len(forms))]
        if not forms:
            raise ValueError("the model has no words to learn from")
        fixed = {index[f]: (tuple(m.cuts), m.stem_index) for f, m in (clamped or {}).items() if f in index}
        table = self._hypotheses(forms, fixed)
        context = build_context(ids, forms)
        stages = STAGES[:STAGES.index(s.stage) + 1]
        # per stage (and "draw": the last stage's last draw before settling), each chain's (hypotheses, tags)
        states: Dict[str, List[Tuple[np.ndarray, np.ndarray]]] = {}

        def model_of(settings: MorphSettings, chain_states: List[Tuple[np.ndarray, np.ndarray]],
                     rows: Optional[np.ndarray] = None) -> "MorphModel":
            """A separate model of the chains' consensus (`rows`, when known
            already) with the first chain's tags."""
            model = MorphModel(settings)
            if rows is None:
                rows = consensus_rows(np.stack([hyps for hyps, _ in chain_states]), table.cuts)
            model._take_state(forms, table, rows, chain_states[0][1], capitalized)
            return model

        for chain in range(s.chains):
            if s.chains > 1 and on_chain is not None:
                on_chain(chain + 1, s.chains)
            # the last chain ends each stage once every chain has: the stage's consensus is then known
            last = chain == s.chains - 1
            sampler = MorphSampler(table, context, s.n_tags, s.priors, chain_seed(s.seed, chain))

            def draw(sampler=sampler, last=last) -> None:
                states.setdefault("draw", []).append(_state_of(sampler))
                if last and last_draw is not None:
                    last_draw(model_of(replace(s, settle=False), states["draw"]))

            def stage_done(stage: str, sampler=sampler, last=last) -> None:
                states.setdefault(stage, []).append(_state_of(sampler))
                if last and stage_end is not None and stage != s.stage:
                    stage_end(stage, model_of(replace(s, stage=stage), states[stage]))

            self._run_stages(sampler, stages, progress, draw=draw, stage_done=stage_done)
            del sampler, draw, stage_done  # one chain's sampler in memory at a time
        if first_chain is not None and s.chains > 1:
            first_chain(model_of(replace(s, chains=1), states[s.stage][:1]))
        final = states[s.stage]
        final_rows = np.stack([hyps for hyps, _ in final])
        chosen = consensus_rows(final_rows, table.cuts)
        self._take_state(forms, table, chosen, final[0][1], capitalized)
        self.chain_agreement = agreement(final_rows, chosen) if s.chains > 1 else None
        if stage_end is not None:
            stage_end(s.stage, model_of(s, final, chosen))

    def _run_stages(self, sampler: MorphSampler, stages: Sequence[str], progress: Optional[Progress],
                    draw: Optional[Callable[[], None]] = None,
                    stage_done: Optional[Callable[[str], None]] = None) -> None:
        """Run `stages` in turn on `sampler`, `sweeps` sweeps each, and with
        `settle` the cold sweeps after the last; `draw` is called before
        those, `stage_done` after each stage, `progress` after every sweep."""
        s = self.settings
        for stage in stages:
            sampler.set_stage(1 if stage == "basic" else s.n_tags, stage in ("token_pos", "token_seg"),
                              stage == "token_seg")
            for sweep in range(s.sweeps):
                temperature = s.anneal + (1.0 - s.anneal) * sweep / max(s.sweeps - 1, 1)
                start = time.perf_counter()
                changed = sampler.sweep(temperature)
                seconds = time.perf_counter() - start
                self.sweep_seconds.append(seconds)
                if progress is not None:
                    progress(stage, sweep + 1, sampler.log_joint(), changed, seconds)
            if stage == s.stage and s.settle:
                if draw is not None:
                    draw()
                for number, temperature in enumerate(SETTLE_TEMPERATURES, 1):
                    start = time.perf_counter()
                    changed = sampler.sweep(temperature)
                    if progress is not None:
                        progress("settle", number, sampler.log_joint(), changed, time.perf_counter() - start)
            if stage_done is not None:
                stage_done(stage)

    def _hypotheses(self, words: Sequence[str], fixed: Optional[Dict[int, Segmentation]] = None,
                    morph_ids: Optional[Dict[str, int]] = None) -> HypothesisTable:
        """The hypothesis table of `words` under the settings' limits (the
        one place they are read, so learning and new words share them)."""
        s = self.settings
        return build_hypotheses(words, fixed, s.max_prefixes, s.max_suffixes, s.max_length, morph_ids=morph_ids,
                                min_stem=s.min_stem, short_affixes=s.short_affixes,
                                restored_endings=s.restored_endings)

    def _take_state(self, forms: List[str], table, hyps: np.ndarray, tags: np.ndarray,
                    capitalized: List[bool]) -> None:
        """Keep each type's analysis: its hypothesis row of `table` and its tag."""
        self.forms = list(forms)
        self.cuts = [table.cuts[h] for h in hyps]
        self.stems = [int(table.stem_pos[h]) for h in hyps]
        self.tails = [table.stem_tail[h] for h in hyps]
        self.tags = [int(t) for t in tags]
        self.capitalized = list(capitalized)
        self.stem_share = held_stem_share(table, table, hyps, forms, self.settings.max_length)
        self._reset()

    def _reset(self) -> None:
        self._index = {f: i for i, f in enumerate(self.forms)}
        self._frozen = None
        self._new = {}
        self._spelling = None
        self._split_odds = None
        self._endings = None
        self._stem_factors = None

    # -------------------------------------------------------- segmenting
    def segment(self, word: str, sentence_start: bool = False) -> Morphs:
        """The segmentation of `word` (its learned one, or the best under
        the type-level model for a word never sampled). `sentence_start`:
        the word begins its sentence, so its case tells nothing (see
        `new_word_case`)."""
        return self._analysis(word, sentence_start)[0]

    def lexicon_morphs(self, word: str, sentence_start: bool = False) -> Tuple[str, ...]:
        """The lexicon strings `word` is made of: its morphs as `segment`
        gives them, with the letter its stem dropped in writing restored
        (structure + ed for "structured"; see `restored_endings`)."""
        morphs, tail = self._analysis(word, sentence_start)
        out = list(morphs)
        out[morphs.stem_index] += tail
        return tuple(out)

    def _analysis(self, word: str, sentence_start: bool) -> Tuple[Morphs, str]:
        """`word`'s segmentation and the letter restored to its stem ("" for none)."""
        form = self.form(word)
        i = self._index.get(form)
        if i is not None:
            return Morphs.from_cuts(word, self.cuts[i], self.stems[i], self.tags[i]), self.tails[i]
        if not self.is_fitted or not is_segmentable(form, self.settings.max_length):
            return Morphs((word,)), ""
        key = self._new_word_key(word, sentence_start)
        known = self._new.get(key)
        if known is None:
            if len(self._new) >= NEW_WORD_CACHE_SIZE:
                self._new.clear()  # a stream of ever new words must not grow memory without bound
            known = self._new[key] = self._segment_new(form, key[1])
        morphs, tail = known
        return Morphs.from_cuts(word, morphs.cuts, morphs.stem_index, morphs.tag), tail

    def _new_word_key(self, word: str, sentence_start: bool) -> Tuple[str, Optional[bool]]:
        """A new word's entry in the cache: its form and the case weighed
        for it (None where it is not: at a sentence's start, or with
        `new_word_case` off)."""
        case = None if sentence_start or not self.settings.new_word_case else is_capitalized(word)
        return self.form(word), case

    def _segment_new(self, form: str, capitalized: Optional[bool] = None) -> Tuple[Morphs, str]:
        """The best segmentation of a word outside the lexicon, and the
        letter restored to its stem ("" for none); `capitalized`: its case
        (None: unknown, or not to be weighed). Each hypothesis is scored by
        the type-level model, its case odds (`_case_odds`), when it ends in
        a suffix the odds of that ending (`_ending_odds`), and whether the
        lexicon holds its stem (`_stem_odds`)."""
        sampler, ids = self._frozen_sampler()
        # the share replaces how the model weighs new stems as a whole, so it needs their spelling's
        # distribution; the paper's length price is none (a string costs its length alone)
        weigh_stems = self.settings.new_word_stems and self.settings.new_strings == "spelling"
        stem_odds = self._stem_odds() if weigh_stems else None
        n_known = len(ids)
        extended = dict(ids)
        table = self._hypotheses([form], morph_ids=extended)
        costs = self._new_string_costs(table.morph_strings[n_known:])
        hyp_costs = np.zeros(len(table.cuts), dtype=np.float64)
        if capitalized is not None:
            whole, split = self._case_odds()[capitalized]
            hyp_costs += np.where(table.n_morphs > 1, split, whole)
        if self.settings.new_word_endings:
            odds = self._ending_odds()
            # many hypotheses share their last cut (other prefixes, restored twins): one lookup per cut
            by_cut = {k: odds.get(form[k:], 0.0) for k in {cuts[-1] for cuts in table.cuts if cuts}}
            for h, cuts in enumerate(table.cuts):
                if table.stem_pos[h] < table.n_morphs[h] - 1:  # it ends in a suffix
                    hyp_costs[h] += by_cut[cuts[-1]]
        if stem_odds is not None:
            new_stem, held_stem, held = stem_odds
            stems = table.morphs[np.arange(len(table.cuts)), table.stem_pos]
            is_held = np.zeros(len(stems), dtype=bool)
            known = stems < n_known
            is_held[known] = held[stems[known]]
            hyp_costs += np.where(is_held, held_stem, new_stem)
            # a string the lexicon holds only as an affix is a new stem that the sampler
            # does not price as a string (it is in the lexicon): priced like the others
            unpriced = np.flatnonzero(known & ~is_held)
            if len(unpriced):
                hyp_costs[unpriced] += self._new_string_costs([table.morph_strings[stems[h]] for h in unpriced])
        tag, h = sampler.best_new(table.morphs, table.n_morphs, table.stem_pos, costs, hyp_costs)
        return Morphs.from_cuts(form, table.cuts[h], int(table.stem_pos[h]), tag), table.stem_tail[h]

    def _case_odds(self) -> Dict[bool, Tuple[float, float]]:
        """Per written case (capitalized or not): the log factors by which
        a new word's unsegmented and segmented hypotheses move, so that it
        is split as often as the learned words written alike are (add-one
        shares of the segmentable learned types of that case, over the share
        of all of them; see `new_word_case`)."""
        if self._split_odds is None:
            limit = self.settings.max_length
            counts = {True: [0, 0], False: [0, 0]}  # case -> [types, of them split]
            for form, cuts, capital in zip(self.forms, self.cuts, self.capitalized):
                if is_segmentable(form, limit):
                    counts[capital][0] += 1
                    counts[capital][1] += bool(cuts)
            n_all, split_all = counts[True][0] + counts[False][0], counts[True][1] + counts[False][1]
            share_all = (split_all + 1) / (n_all + 2)
            self._split_odds = {}
            for case, (n, split) in counts.items():
                if not n:  # no learned word written so (a lexicon saved before the case was kept)
                    self._split_odds[case] = (0.0, 0.0)
                    continue
                share = (split + 1) / (n + 2)
                self._split_odds[case] = (float(np.log((1 - share) / (1 - share_all))),
                                          float(np.log(share / share_all)))
        return self._split_odds

    def _ending_odds(self) -> Dict[str, float]:
        """Per final string of the segmentable learned types: the log odds
        that the lexicon cuts a type ending in it there, before a suffix
        (add-one; see `new_word_endings`), over the types where a cut there
        is possible (the stem before it at least `min_stem` long, the
        string spelled as an affix). A new word's hypothesis that ends in a
        suffix is weighed by the odds of its string: the lexicon's own
        evidence of how often a word ending so is a stem and that suffix,
        which the suffix's probability alone does not give (the lexicon
        holds "e" as the suffix of a few types, but keeps most types in
        "e" whole). A string no learned type ends in weighs nothing."""
        if self._endings is None:
            s = self.settings
            ends: Counter = Counter()
            cut: Counter = Counter()
            for form, cuts, stem in zip(self.forms, self.cuts, self.stems):
                if not is_segmentable(form, s.max_length):
                    continue
                possible = {k for k in range(s.min_stem, len(form)) if is_affix_spelling(form[k:])}
                ends.update(form[k:] for k in possible)
                # its last morph is a suffix, cut where a cut is counted possible
                # (a clamped gold segmentation may cut where no hypothesis would)
                if cuts and stem < len(cuts) and cuts[-1] in possible:
                    cut[form[cuts[-1]:]] += 1
            self._endings = {string: float(np.log((cut[string] + 1) / (n - cut[string] + 1)))
                             for string, n in ends.items()}
        return self._endings

    def _stem_odds(self) -> Tuple[float, float, np.ndarray]:
        """The log factors of a new word's hypotheses whose stem the lexicon
        lacks and of those whose stem it holds, and which string ids of the
        frozen sampler are held stems (a mask; see `new_word_stems`).

        The stems' Dirichlet-multinomial gives the next type it draws a stem
        it has not drawn with probability about alpha / (n + alpha L) (n
        types, L stems; e^-12 for the English sentences: nearly never),
        which is what sampling the learned types needs, since each of them
        is drawn again among the others. A word the lexicon does not hold is
        not such a draw: it is one the text never showed. So the weights of
        the two sides are replaced by the share of held stems among the
        learned types that a held reading fits (`held_stem_share`) and the
        rest, each side's own distribution kept: among held stems their
        counts, among new ones the price of their spelling (which
        `_segment_new` adds for a string the lexicon holds only as an
        affix). No share (no learned type such a reading fits): no factor."""
        if self._stem_factors is None:
            s, a = self.settings, float(self.settings.priors["alpha"])
            _, ids = self._frozen_sampler()
            stems = [ids[Morphs.from_cuts(form, cuts)[stem] + tail]
                     for form, cuts, stem, tail in zip(self.forms, self.cuts, self.stems, self.tails)]
            stem_types = np.bincount(np.array(stems, dtype=np.int64), minlength=len(ids))
            held = stem_types > 0
            if self.stem_share is None and self.forms:
                self.stem_share = self._held_stem_share_of_lexicon()
            q = self.stem_share
            if q is None or not 0.0 < q < 1.0:
                self._stem_factors = (0.0, 0.0, held)
                return self._stem_factors
            n, n_stems = len(self.forms), int(np.count_nonzero(held))
            # the sampler's weight of a stem it lacks, summed over the spellings (`_lexicon_weight`);
            # the stems it holds weigh (count + alpha) / (n + alpha L), which sums to one
            log_model_new = (math.log(a) + math.log(1 - float(s.priors["gamma_stem"]))
                             + math.lgamma(a * (n_stems + 1)) - math.lgamma(n + 1 + a * (n_stems + 1))
                             - math.lgamma(a * n_stems) + math.lgamma(n + a * n_stems))
            self._stem_factors = (math.log(1 - q) - log_model_new, math.log(q), held)
        return self._stem_factors

    def _held_stem_share_of_lexicon(self) -> Optional[float]:
        """`held_stem_share` of a lexicon made without it (built from its
        parts, not learned here): every reading of every type built anew."""
        ids: Dict[str, int] = {}
        chosen = self._hypotheses(self.forms, {i: (tuple(c), st, tail) for i, (c, st, tail)
                                               in enumerate(zip(self.cuts, self.stems, self.tails))}, morph_ids=ids)
        readings = self._hypotheses(self.forms, morph_ids=ids)
        return held_stem_share(readings, chosen, np.arange(len(self.forms)), self.forms, self.settings.max_length)

    def _new_string_costs(self, strings: Sequence[str]) -> np.ndarray:
        """log P(spelling each string the lexicon lacks), as `new_strings` says."""
        if self.settings.new_strings == "length":
            gamma = float(self.settings.priors["gamma_length"])
            lengths = np.array([len(s) for s in strings], dtype=np.float64)
            return np.log(gamma) + lengths * np.log(1.0 - gamma)  # as the sampler computes it
        return np.array([self._new_string_cost(s) for s in strings], dtype=np.float64)

    def _new_string_cost(self, string: str) -> float:
        """log P(spelling one string) under the character model of the stems."""
        if self._spelling is None:
            self._spelling = Spelling(self.learned_stems(), SPELLING_ORDER)
        return self._spelling.log_prob(string)

    def learned_stems(self) -> List[str]:
        """The distinct stems of the learned words that could be segmented
        (not punctuation, numbers or over-long tokens, which stay whole):
        the strings a new word's stem is like. Sorted."""
        limit = self.settings.max_length
        return sorted({Morphs.from_cuts(form, cuts)[stem] + tail
                       for form, cuts, stem, tail in zip(self.forms, self.cuts, self.stems, self.tails)
                       if is_segmentable(form, limit)})

    def _frozen_sampler(self) -> Tuple[MorphSampler, Dict[str, int]]:
        """A sampler whose counts are the learned state's (each type with its
        learned segmentation as its only hypothesis, its learned tag)."""
        if self._frozen is None:
            s = self.settings
            fixed = {i: (tuple(c), st, tail) for i, (c, st, tail) in enumerate(zip(self.cuts, self.stems, self.tails))}
            ids: Dict[str, int] = {}
            table = self._hypotheses(self.forms, fixed, morph_ids=ids)
            context = build_context([[i] for i in range(len(self.forms))], self.forms)
            sampler = MorphSampler(table, context, s.n_tags, s.priors, s.seed)
            sampler.tags_array[:] = self.tags
            sampler.set_stage(1 if s.stage == "basic" else s.n_tags, False, False, keep_tags=True)
            self._frozen = (sampler, ids)
        return self._frozen

    # ------------------------------------------------------ serializing
    def __getstate__(self) -> dict:
        """Pickle without the frozen sampler: a cache of Cython state (which
        cannot be pickled) rebuilt from the lexicon on first use."""
        state = dict(self.__dict__)
        state["_frozen"] = None
        state["_spelling"] = None
        state["_split_odds"] = None
        state["_endings"] = None
        state["_stem_factors"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        older = {}
        if "tails" not in state:  # pickled before restored_endings: learned without it
            older["restored_endings"] = ""
        if "new_word_endings" not in vars(state["settings"]):  # pickled before it: new words as then
            older["new_word_endings"] = False
        if "new_word_stems" not in vars(state["settings"]):  # pickled before it: new words as then
            older["new_word_stems"] = False
        if "chains" not in vars(state["settings"]):  # pickled before it: learned by one chain
            older["chains"] = 1
        if older:
            state["settings"] = replace(state["settings"], **older)
        self.__dict__.update(state)
        self.__dict__.setdefault("_spelling", None)  # pickled before new_strings existed
        self.__dict__.setdefault("tails", [""] * len(self.__dict__.get("forms", [])))  # before restored_endings
        self.__dict__.setdefault("capitalized", [False] * len(self.__dict__.get("forms", [])))  # before case
        self.__dict__.setdefault("_split_odds", None)
        self.__dict__.setdefault("_endings", None)
        self.__dict__.setdefault("_stem_factors", None)
        self.__dict__.setdefault("stem_share", None)
        self.__dict__.setdefault("chain_agreement", None)  # pickled before chains

    def to_dict(self) -> dict:
        """Plain data: the settings and the lexicon."""
        return {"settings": asdict(self.settings), "forms": self.forms, "cuts": [list(c) for c in self.cuts],
                "stems": self.stems, "tails": self.tails, "tags": self.tags, "capitalized": self.capitalized,
                "stem_share": self.stem_share}

    @classmethod
    def from_dict(cls, data: dict) -> "MorphModel":
        # a lexicon saved before `restored_endings` was learned without it,
        # and one saved before `new_word_endings` or `new_word_stems` segments new words as then;
        # one saved before `chains` was learned by one chain
        model = cls(MorphSettings(**{"restored_endings": "", "new_word_endings": False, "new_word_stems": False,
                                     "chains": 1, **data["settings"]}))
        model.forms = list(data["forms"])
        model.cuts = [tuple(c) for c in data["cuts"]]
        model.stems = [int(x) for x in data["stems"]]
        model.tags = [int(x) for x in data["tags"]]
        model.tails = [str(x) for x in data.get("tails", [""] * len(model.forms))]  # saved before restored_endings
        model.capitalized = [bool(x) for x in data.get("capitalized", [False] * len(model.forms))]  # and case
        share = data.get("stem_share")  # saved before `new_word_stems`, or made by hand: computed when needed
        model.stem_share = None if share is None else float(share)
        lengths = {key: len(getattr(model, key)) for key in ("cuts", "stems", "tags", "tails", "capitalized")}
        wrong = {key: n for key, n in lengths.items() if n != len(model.forms)}
        if wrong:
            raise ValueError(f"the saved lexicon is damaged: {len(model.forms)} word forms, but "
                             + ", ".join(f"{n} {key}" for key, n in wrong.items()))
        model._reset()
        return model
