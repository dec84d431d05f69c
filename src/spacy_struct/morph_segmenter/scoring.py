"""Scores of morphological segmentation.

Boundary precision / recall / F1 (Poon et al. 2009, Lee et al. 2011): a
boundary is a cut inside a word, scored on the words that have a surface
gold segmentation (`token._.morphs`), either

- token-weighted: every running word counts, so frequent words weigh more
  (Lee et al.'s protocol on sentences), or
- type-weighted: every distinct word once, with its first occurrence's
  gold and prediction (the protocol for word lists).

A word that is one morph has no boundary to find and adds only to the
predicted count when it is cut.

The SIGMORPHON 2022 metric (`sigmorphon_scores`), on every item as the
corpus gives it, canonical gold included: per item (a word, or a sentence
with its words' morphs in order) the longest common subsequence of the gold
and predicted morph sequences counts as correct; precision and recall
divide its sum by the predicted and gold morph counts; the distance is the
mean Levenshtein distance of the morphs joined by "|". The same figures as
the shared task's `evaluate.py` (a test compares them when
`SPACY_STRUCT_SIGMORPHON_EVAL` names that script).
"""
from __future__ import annotations

from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from spacy.training import Example

from ..annotations.morphs import CANONICAL_KEY, doc_morphs


def prf(correct: int, predicted: int, gold: int, prefix: str) -> Dict[str, float]:
    """{prefix}_p, _r and _f from counts (0 where a count is 0)."""
    p = correct / predicted if predicted else 0.0
    r = correct / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {f"{prefix}_p": p, f"{prefix}_r": r, f"{prefix}_f": f}


def _cuts(morphs) -> set:
    return set(morphs.cuts) if morphs is not None else set()


def cut_counts(gold, predicted) -> Tuple[int, int, int]:
    """(correct, predicted, gold) boundaries of one word's segmentations
    (Morphs, or None for a word left whole)."""
    gc, pc = _cuts(gold), _cuts(predicted)
    return len(gc & pc), len(pc), len(gc)


def boundary_counts(examples: Iterable[Example], by_type: bool = False,
                    keep: Optional[Callable[[str], bool]] = None) -> Tuple[int, int, int]:
    """(correct, predicted, gold) boundaries over the reference tokens that
    have gold morphs (and whose text `keep` accepts, if given: the words a
    model never saw, say); the predicted doc must have the same tokens (a
    token it left without morphs is predicted unsegmented)."""
    correct = predicted = gold = 0
    seen = set()
    for eg in examples:
        ref, pred = eg.reference, eg.predicted
        if [t.text for t in ref] != [t.text for t in pred]:
            raise ValueError(
                f"morphs are scored on the gold tokens, but the predicted doc {pred.text[:40]!r} "
                f"has other tokens than the reference; segment the reference's words"
            )
        for token, g, p in zip(ref, doc_morphs(ref), doc_morphs(pred)):
            if g is None or (keep is not None and not keep(token.text)):
                continue
            if by_type:
                if token.text in seen:
                    continue
                seen.add(token.text)
            c, pc, gc = cut_counts(g, p)
            correct += c
            predicted += pc
            gold += gc
    return correct, predicted, gold


def score_morphs(examples: Iterable[Example], **kwargs) -> Dict[str, float]:
    """`spacy_struct.morph_segmenter_scorer.v1`: morph_boundary_p/r/f
    (token-weighted) and morph_type_boundary_p/r/f (type-weighted)."""
    examples = list(examples)
    scores = prf(*boundary_counts(examples), "morph_boundary")
    scores.update(prf(*boundary_counts(examples, by_type=True), "morph_type_boundary"))
    return scores


def predicted_sequence(doc) -> List[str]:
    """The doc's predicted morphs in order (a token without any as one morph)."""
    out: List[str] = []
    for token, morphs in zip(doc, doc_morphs(doc)):
        out.extend(morphs if morphs is not None else [token.text])
    return out


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two morph sequences."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b, 1):
            current.append(previous[j - 1] + 1 if x == y else max(current[j - 1], previous[j]))
        previous = current
    return previous[-1]


def levenshtein(a: str, b: str) -> int:
    """Edit distance of two strings (insertions, deletions, substitutions)."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def sigmorphon_scores(pairs: Iterable[Tuple[Sequence[str], Sequence[str]]]) -> Dict[str, float]:
    """The shared task's precision, recall, F1 (in [0, 1]) and mean distance
    over (gold morphs, predicted morphs) pairs, one per item."""
    correct = n_pred = n_gold = 0
    distance = 0
    n = 0
    for gold, guess in pairs:
        n += 1
        correct += lcs_length(gold, guess)
        n_pred += len(guess)
        n_gold += len(gold)
        distance += levenshtein("|".join(gold), "|".join(guess))
    scores = prf(correct, n_pred, n_gold, "sigmorphon")
    scores["sigmorphon_distance"] = distance / n if n else 0.0
    return scores


def sigmorphon_pairs(examples: Iterable[Example]) -> List[Tuple[List[str], List[str]]]:
    """(gold, predicted) morph sequences of every example whose reference
    carries the corpus's own gold (`convert sigmorphon` / `ud-morphs`). As
    in the shared task's script, a space inside a morph (word-level items
    such as "státi (se)") separates two."""
    pairs = []
    for eg in examples:
        gold: Optional[Sequence[str]] = eg.reference.user_data.get(CANONICAL_KEY)
        if gold is not None:
            pairs.append((_split_spaces(gold), _split_spaces(predicted_sequence(eg.predicted))))
    return pairs


def _split_spaces(morphs: Sequence[str]) -> List[str]:
    return [piece for morph in morphs for piece in morph.split(" ")]
