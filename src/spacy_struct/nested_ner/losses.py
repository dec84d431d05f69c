"""Losses over sets of nested (laminar) labeled spans, with their gradients.

A sentence's entities are one laminar set: a tree whose constituents are the
entities, every other node of the tree left latent. Both losses are defined
on that set, so the model is trained for the structure it decodes:

- "crf": the negative log-likelihood of the gold set under a CRF over all
  laminar sets, log Z - score(gold). log Z sums over every set once
  (`structs.spans.laminar_log_partition`), and the gradient is the span
  marginals minus the gold indicator. A span annotated with several labels
  counts as gold with any of them: its term is the log-sum-exp over them.
- "margin": the structured hinge max_y [score(y) + cost * Hamming(y, gold)]
  - score(gold), the best set found by CKY on cost-augmented scores.

Each function takes per-sentence float64 (n, n, L) scores, gold spans as
(start, end inclusive, label) rows, and optional (n, n) masks of allowed
spans; it returns the summed loss and per-sentence gradients.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from ..structs import spans as span_structs

LOSSES = ("crf", "margin")


def _gold_terms(scores: np.ndarray, gold: np.ndarray):
    """Score of the gold set and its gradient (a span with several gold
    labels contributes the log-sum-exp over them)."""
    grad = np.zeros_like(scores)
    total = 0.0
    if len(gold) == 0:
        return total, grad
    groups = {}
    for s, e, l in gold:
        groups.setdefault((int(s), int(e)), []).append(int(l))
    for (s, e), labels in groups.items():
        values = scores[s, e, labels]
        top = values.max()
        weights = np.exp(values - top)
        total += float(top + np.log(weights.sum()))
        grad[s, e, labels] = weights / weights.sum()
    return total, grad


def crf_loss(
    scores: Sequence[np.ndarray],
    golds: Sequence[np.ndarray],
    masks: Optional[Sequence[Optional[np.ndarray]]] = None,
) -> Tuple[float, List[np.ndarray]]:
    masks = list(masks) if masks is not None else [None] * len(scores)
    results = span_structs.laminar_marginals(list(scores), masks)
    loss, grads = 0.0, []
    for S, gold, (log_z, marg) in zip(scores, golds, results):
        gold_score, gold_grad = _gold_terms(S, gold)
        loss += log_z - gold_score
        grads.append(marg - gold_grad)
    return loss, grads


def margin_loss(
    scores: Sequence[np.ndarray],
    golds: Sequence[np.ndarray],
    masks: Optional[Sequence[Optional[np.ndarray]]] = None,
    cost: float = 1.0,
) -> Tuple[float, List[np.ndarray]]:
    masks = list(masks) if masks is not None else [None] * len(scores)
    # with several gold labels on one span, the best-scoring one is the target
    targets = []
    for S, gold in zip(scores, golds):
        best = {}
        for s, e, l in gold:
            key = (int(s), int(e))
            if key not in best or S[s, e, l] > S[s, e, best[key]]:
                best[key] = int(l)
        targets.append(np.array([(s, e, l) for (s, e), l in best.items()], dtype=np.int64).reshape(-1, 3))
    augmented = span_structs.add_hamming_cost(list(scores), targets, cost)
    predicted = span_structs.laminar_argmax(augmented, masks)
    loss, grads = 0.0, []
    for S, target, (pred, _) in zip(scores, targets, predicted):
        grad = np.zeros_like(S)
        pred_set = {tuple(int(v) for v in row) for row in pred}
        gold_set = {tuple(int(v) for v in row) for row in target}
        if pred_set != gold_set:
            for s, e, l in pred_set:
                grad[s, e, l] += 1.0
            for s, e, l in gold_set:
                grad[s, e, l] -= 1.0
            hamming = len(pred_set ^ gold_set)
            loss += float(sum(S[r] for r in pred_set) - sum(S[r] for r in gold_set)) + cost * hamming
        grads.append(grad)
    return max(loss, 0.0), grads


def get_loss_function(name: str):
    if name == "crf":
        return crf_loss
    if name == "margin":
        return margin_loss
    raise ValueError(f"nested_ner: loss must be one of {LOSSES}, got {name!r}")
