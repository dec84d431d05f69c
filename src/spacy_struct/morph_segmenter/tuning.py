"""Choosing the sampler's priors on the annotated word types (semi-supervised).

Why: Lee et al.'s priors were set for unsupervised learning, where nothing
tells the model how eagerly a language splits its words. With them, and
the SIGMORPHON Czech train words clamped to their gold, the sampler still
segments the other words as conservatively as without annotations
(boundary recall 37 on dev). Morfessor FlatCat tunes the weight of its
annotations for the same reason. Here the annotations choose the priors:

- a fifth of the annotated types (drawn with the model's seed) is held
  out: those words stay in the text but are not clamped;
- for each candidate of the grid, the `basic` stage is learned with the
  other annotated types clamped, and the held-out types are segmented;
- the candidate with the best type-weighted boundary F1 on them wins, and
  the model is then learned with every annotated type clamped.

Only the annotations given for training are read, never an evaluation
set. The grid varies what decides how much the model splits: the
geometric priors on morph length (`gamma_length`) and on the number of
morphs (`gamma_segments`), and how many suffixes a hypothesis may have.
"""
from __future__ import annotations

import random
from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from .model import DEFAULT_PRIORS, STAGES, MorphModel, MorphSettings
from .morphs import Morphs

#: the candidates tried, each a set of priors and MorphSettings fields
TUNING_GRID: Tuple[Dict[str, float], ...] = tuple(
    {"gamma_length": length, "gamma_segments": segments, "max_suffixes": suffixes}
    for length in (0.5, 0.9) for segments in (0.5, 0.1) for suffixes in (2, 4)
)
#: share of the annotated types held out to score the candidates
HELD_OUT = 0.2
#: fewer held-out types than this score a candidate too noisily to choose
MIN_HELD_OUT = 50


def apply_candidate(settings: MorphSettings, candidate: Dict[str, float]) -> MorphSettings:
    """`settings` with the candidate's priors and fields set."""
    priors = {**settings.priors, **{k: v for k, v in candidate.items() if k in DEFAULT_PRIORS}}
    fields = {k: v for k, v in candidate.items() if k not in DEFAULT_PRIORS}
    return replace(settings, priors=priors, **fields)


def boundary_f1(model: MorphModel, gold: Dict[str, Morphs]) -> float:
    """Type-weighted boundary F1 of the model's segmentation of `gold`'s forms."""
    correct = predicted = expected = 0
    for form, morphs in gold.items():
        found = set(model.segment(form).cuts)
        wanted = set(morphs.cuts)
        correct += len(found & wanted)
        predicted += len(found)
        expected += len(wanted)
    if not correct:
        return 0.0
    return 2 * correct / (predicted + expected)


def select_settings(
    settings: MorphSettings,
    sentences: Sequence[Sequence[str]],
    clamped: Dict[str, Morphs],
    grid: Optional[Sequence[Dict[str, float]]] = None,
    report: Optional[Callable[[Dict[str, float], float], None]] = None,
) -> Optional[Tuple[MorphSettings, List[Tuple[Dict[str, float], float]]]]:
    """The settings whose priors segment held-out annotated types best.

    settings: the configured ones; the candidates replace only their own keys.
    grid: the candidates (None: TUNING_GRID).
    sentences: the text the model learns from (forms as `MorphModel.form` gives).
    clamped: the annotated types (form -> gold).
    report: called with each candidate and its held-out F1 as it is scored.
    RETURNS: (the chosen settings, every candidate with its F1), or None when
        fewer than MIN_HELD_OUT types would be held out.
    """
    forms = sorted(clamped)
    random.Random(settings.seed).shuffle(forms)
    n_held = int(len(forms) * HELD_OUT)
    if n_held < MIN_HELD_OUT:
        return None
    held = {form: clamped[form] for form in forms[:n_held]}
    kept = {form: clamped[form] for form in forms[n_held:]}
    results = []
    for candidate in TUNING_GRID if grid is None else grid:
        model = MorphModel(replace(apply_candidate(settings, candidate), stage=STAGES[0]))
        model.fit(sentences, kept)
        f1 = boundary_f1(model, held)
        results.append((dict(candidate), f1))
        if report is not None:
            report(candidate, f1)
    best = max(results, key=lambda item: item[1])[0]
    return apply_candidate(settings, best), results
