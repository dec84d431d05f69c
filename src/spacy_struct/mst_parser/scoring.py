"""Parser scores: spaCy's, the CoNLL-2018 figures, and non-projective arcs.

- `dep_uas`, `dep_las`, `dep_las_per_type`, `sents_*`: spaCy's own parser
  scorer, punctuation left out, so the figures compare with spaCy's `parser`.
- `dep_conll_uas`, `dep_conll_las`: CoNLL-2018 shared task definitions, every
  word counted (punctuation too), LAS comparing the universal part of the
  label (before ":").
- `dep_nonproj_p/r/f`: arcs that cross another arc (an arc from the root,
  placed before the first word, included). An arc is found when the parser
  attaches the word to its gold head and that arc crosses another arc in the
  parser's tree too, so a projective parser that gets the head right only
  because the crossing partner is wrong does not score. Recall: found / gold
  crossing arcs. Precision: found / predicted crossing arcs.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.pipeline.dep_parser import parser_score
from spacy.training import Example
from spacy.util import registry

from ..structs.dependency import crossing_arcs


def sentence_heads(doc) -> List[Tuple[int, np.ndarray]]:
    """(start, heads) per sentence of a parsed doc, heads sentence-relative."""
    out = []
    for sent in doc.sents:
        heads = np.full(len(sent) + 1, -1, dtype=np.int64)
        for t in sent:
            heads[t.i - sent.start + 1] = 0 if t.head.i == t.i else t.head.i - sent.start + 1
        out.append((sent.start, heads))
    return out


def _crossing_tokens(doc) -> set:
    tokens = set()
    if not doc.has_annotation("DEP"):
        return tokens
    for start, heads in sentence_heads(doc):
        for j in np.flatnonzero(crossing_arcs(heads)):
            tokens.add(start + int(j))
    return tokens


def extra_parse_scores(examples: Iterable[Example]) -> Dict[str, Optional[float]]:
    """CoNLL-2018 UAS/LAS with punctuation, and non-projective arc P/R/F."""
    words = heads_ok = labels_ok = 0
    np_tp_gold = np_gold = np_tp_pred = np_pred = 0
    for eg in examples:
        pred, gold = eg.predicted, eg.reference
        if not gold.has_annotation("DEP") or not pred.has_annotation("DEP"):
            continue
        x2y, y2x = eg.alignment.x2y, eg.alignment.y2x
        gold_crossing = _crossing_tokens(gold)
        pred_crossing = _crossing_tokens(pred)
        correct = set()
        for g in gold:
            if not g.has_head():
                continue
            words += 1
            xs = y2x[g.i]
            if len(xs) != 1:
                continue
            p = pred[int(xs[0])]
            ys = x2y[p.head.i]
            if len(ys) != 1 or int(ys[0]) != g.head.i:
                continue
            correct.add(p.i)
            heads_ok += 1
            if p.dep_.lower().split(":")[0] == g.dep_.lower().split(":")[0]:
                labels_ok += 1
            if g.i in gold_crossing and p.i in pred_crossing:
                np_tp_gold += 1
        np_gold += len(gold_crossing)
        np_pred += len(pred_crossing)
        np_tp_pred += sum(1 for i in pred_crossing & correct
                          if len(x2y[i]) == 1 and int(x2y[i][0]) in gold_crossing)
    if not words:
        return {"dep_conll_uas": None, "dep_conll_las": None, "dep_nonproj_p": None,
                "dep_nonproj_r": None, "dep_nonproj_f": None}
    p = np_tp_pred / np_pred if np_pred else 0.0
    r = np_tp_gold / np_gold if np_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "dep_conll_uas": heads_ok / words,
        "dep_conll_las": labels_ok / words,
        "dep_nonproj_p": p,
        "dep_nonproj_r": r,
        "dep_nonproj_f": f,
    }


def score_mst_parse(examples: Iterable[Example], **kwargs) -> Dict[str, object]:
    """spaCy's parser scores plus the CoNLL-2018 and non-projective figures."""
    examples = list(examples)
    results = parser_score(examples, **kwargs)
    results.update(extra_parse_scores(examples))
    return results


@registry.scorers("spacy_struct.mst_parser_scorer.v1")
def make_mst_parser_scorer():
    return score_mst_parse
