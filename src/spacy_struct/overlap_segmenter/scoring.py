"""Segment scores: exact match of (label, fragments), micro-averaged.

A segment counts as found when a predicted segment has the same label and
the same fragments (the same words; concept ids play no part), each
distinct (label, fragments) counted once per doc. Reported:

- `segments_p/r/f` overall and `segments_per_type`;
- `segments_discontinuous_p/r/f`: gold and predicted both filtered to
  segments with a gap (as Dai et al. 2020 score discontinuous NER);
- `segments_crossing_p/r/f`: on segments that cross another segment of
  their own set in the doc (they share words, neither holds the other's
  words): recall over the crossing gold segments (found by any prediction),
  precision over the crossing predicted segments (right if gold at all), so
  a wrong prediction cannot make a right one count as crossing;
- `segments_contiguous_p/r/f`: both filtered to segments without a gap;
- `spans_<key>_p/r/f`: spaCy's `Scorer.score_spans` of `doc.spans[key]`,
  what spancat reports, so `spacy evaluate` figures compare.

Predicted segments are mapped to the reference's tokens through spaCy's
alignment (`pipeline.TokenMap`), so raw-text tokenization is scored fairly;
one that does not map counts as wrong.
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional, Sequence, Set

from spacy.scorer import PRFScore, Scorer
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from ..pipeline import TokenMap
from ..annotations.segments import Key, Segment, crossing_keys, get_segments, has_segments

SegmentGetter = Callable[[Doc], Sequence[Segment]]


def _reference_keys(segments: Iterable[Segment]) -> Set[Key]:
    return {(seg.label_, tuple(seg.offsets)) for seg in segments}


def _predicted_keys(eg: Example, segments: Iterable[Segment]) -> Set[Key]:
    """Predicted segments in reference token offsets; a segment whose
    fragments do not map onto reference tokens gets an unmatched key."""
    token_map = TokenMap(eg)
    keys: Set[Key] = set()
    for seg in segments:
        frags = []
        for s, e in seg.offsets:
            mapped = token_map.to_reference(s, e)
            if mapped is None:
                frags = None
                break
            frags.append(mapped)
        if frags is None:
            # negative offsets: a key no reference segment has
            keys.add((seg.label_, tuple((-1 - s, -1 - e) for s, e in seg.offsets)))
        else:
            keys.add((seg.label_, tuple(frags)))
    return keys


def score_segments(
    examples: Iterable[Example],
    spans_key: Optional[str] = "sc",
    predicted_segments: SegmentGetter = get_segments,
    **kwargs,
) -> Dict[str, object]:
    """The scores above for `examples`.

    spans_key: the `doc.spans` key for spaCy's span scores (None: leave
        them out).
    predicted_segments: how to read segments off a predicted doc
        (`doc._.segments` by default; the bench reads spancat's spans).
    RETURNS: a dict of scores, as `Language.evaluate` reports them.
    """
    examples = list(examples)
    if not any(has_segments(eg.reference) for eg in examples):
        # nothing to score against (a reader that dropped user_data, say):
        # None, as spaCy's scorers report a missing annotation, not 0
        missing: Dict[str, object] = {
            f"segments_{part}": None for part in ("p", "r", "f", "per_type")}
        for name in ("discontinuous", "contiguous", "crossing"):
            missing.update({f"segments_{name}_{m}": None for m in "prf"})
        if spans_key is not None:
            missing.update(_span_scores(examples, spans_key))
        return missing
    overall = PRFScore()
    per_type: Dict[str, PRFScore] = {}
    subsets = {name: PRFScore() for name in ("discontinuous", "contiguous")}
    # right crossing predictions, crossing predictions, found crossing gold, crossing gold
    crossing_counts = [0, 0, 0, 0]
    for eg in examples:
        gold = _reference_keys(get_segments(eg.reference))
        guess = _predicted_keys(eg, predicted_segments(eg.predicted))
        overall.score_set(guess, gold)
        for label in {k[0] for k in gold | guess}:
            per_type.setdefault(label, PRFScore()).score_set(
                {k for k in guess if k[0] == label}, {k for k in gold if k[0] == label}
            )
        subsets["discontinuous"].score_set(
            {k for k in guess if len(k[1]) > 1}, {k for k in gold if len(k[1]) > 1}
        )
        subsets["contiguous"].score_set(
            {k for k in guess if len(k[1]) == 1}, {k for k in gold if len(k[1]) == 1}
        )
        crossing_guess, crossing_gold = crossing_keys(guess), crossing_keys(gold)
        crossing_counts[0] += len(crossing_guess & gold)
        crossing_counts[1] += len(crossing_guess)
        crossing_counts[2] += len(crossing_gold & guess)
        crossing_counts[3] += len(crossing_gold)
    scores: Dict[str, object] = {
        "segments_p": overall.precision,
        "segments_r": overall.recall,
        "segments_f": overall.fscore,
        "segments_per_type": {label: prf.to_dict() for label, prf in sorted(per_type.items())},
    }
    for name, prf in subsets.items():
        scores[f"segments_{name}_p"] = prf.precision
        scores[f"segments_{name}_r"] = prf.recall
        scores[f"segments_{name}_f"] = prf.fscore
    right, predicted, found, total = crossing_counts
    p = right / predicted if predicted else 0.0
    r = found / total if total else 0.0
    scores["segments_crossing_p"] = p
    scores["segments_crossing_r"] = r
    scores["segments_crossing_f"] = 2 * p * r / (p + r) if p + r else 0.0
    if spans_key is not None:
        scores.update(_span_scores(examples, spans_key))
    return scores


def _span_scores(examples, spans_key: str) -> Dict[str, object]:
    """spaCy's own span scores of `doc.spans[spans_key]`."""
    return Scorer.score_spans(
        examples,
        f"spans_{spans_key}",
        getter=lambda doc, _attr: doc.spans.get(spans_key, []),
        has_annotation=lambda doc: spans_key in doc.spans,
        allow_overlap=True,
    )


@registry.scorers("spacy_struct.overlap_segmenter_scorer.v1")
def make_overlap_segmenter_scorer():
    return score_segments
