"""Scores of `joint_parser`: labeled brackets as evalb, and entities.

- `constituents_p/r/f`: evalb's bracketing precision, recall and F with
  COLLINS.prm (`evalb.py`) of the predicted trees against the reference's,
  with the reference's tags deciding which words evalb deletes; entity
  nodes are not constituents and never counted. Predicted constituents are
  mapped to the reference's tokens through spaCy's alignment
  (`pipeline.TokenMap`), so raw-text
  tokenization is scored too: one that no reference span matches is a
  wrong bracket. `constituents_per_label`: P/R/F per label.
- `spans_<key>_p/r/f` (and per type): spaCy's span scores of the entities
  (exact match, nested allowed), as nested_ner and spancat report them.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Tuple

from spacy.training import Example
from spacy.util import registry

from ..pipeline import TokenMap
from ..pipeline.scoring import score_nested_spans
from ..annotations.trees import brackets
from .evalb import COLLINS, score_brackets


def _aligned(eg: Example) -> List[Tuple[int, int, str]]:
    """The predicted constituents in reference token offsets (-1 where a
    boundary falls inside a reference token)."""
    token_map = TokenMap(eg)
    out = []
    for s, e, label in brackets(eg.predicted):
        mapped = token_map.to_reference(s, e)
        out.append((*mapped, label) if mapped is not None else (-1, -1, label))
    return out


def score_constituents(examples: Iterable[Example]) -> Dict[str, object]:
    """evalb scores over the examples whose reference has a tree."""
    triples = []
    for eg in examples:
        ref = eg.reference
        gold = brackets(ref)
        if not gold:
            continue
        tags = [t.tag_ or None for t in ref]
        test = _aligned(eg)
        # brackets that do not align can match nothing; keep them counted
        triples.append((gold, [(s, e, l) if s >= 0 else (len(ref) + 1, len(ref) + 2, l) for s, e, l in test],
                        tags + [None, None]))
    counts = score_brackets(triples, COLLINS)
    if not counts.sentences:
        return {"constituents_p": None, "constituents_r": None, "constituents_f": None}
    per_label = {}
    for label, (m, g, t) in sorted(counts.per_label.items()):
        p, r = (m / t if t else 0.0), (m / g if g else 0.0)
        per_label[label] = {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}
    return {
        "constituents_p": counts.precision, "constituents_r": counts.recall,
        "constituents_f": counts.f, "constituents_per_label": per_label,
    }


def score_joint(examples: Iterable[Example], spans_key: str = "sc", ner: bool = True,
                **kwargs) -> Dict[str, object]:
    """Bracket scores, and with `ner` the entity scores (the component's
    settings arrive as keyword arguments, as spaCy passes a pipe's cfg)."""
    examples = list(examples)
    scores = score_constituents(examples)
    if ner and any(spans_key in eg.reference.spans for eg in examples):
        scores.update(score_nested_spans(examples, spans_key))
    return scores


@registry.scorers("spacy_struct.joint_parser_scorer.v1")
def make_joint_parser_scorer():
    return score_joint
