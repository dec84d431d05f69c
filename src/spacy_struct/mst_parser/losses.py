"""Tree losses over arc score matrices: value and gradient per sentence.

All three take the arc scores S (n+1 x n+1, float64) and the gold heads
(length n+1, heads[0] = -1) of each sentence and return the summed loss and
one gradient matrix per sentence:

- "margin": the structured hinge of the papers' online large-margin training,
  max_y [S(y) + Hamming(y, gold)] - S(gold), found by cost-augmented decoding
  with the parser's own decoder. Gradient: +1 on the arcs of the
  cost-augmented tree, -1 on the gold arcs.
- "crf": tree-CRF negative log-likelihood, log Z - S(gold), with the
  Matrix-Tree theorem (non-projective) or inside-outside (projective).
  Gradient: arc marginals minus the gold arcs. A sentence whose
  determinant loses its precision (word arcs that form cycles many orders of
  magnitude stronger than any tree, as scores grow late in training) gets
  the zero-temperature limit instead: the best tree as its marginals and its
  score as log Z, so one such sentence cannot stop a training run. With the
  projective decoder a non-projective gold tree is lifted to the nearest
  projective one first: Z sums over projective trees only, so a gold tree
  outside them would score above log Z and the loss would fall without bound.
- "local": per word, cross-entropy of a softmax over its possible heads. It
  ignores the tree constraint in training; the decoder restores it.
"""
from __future__ import annotations

from typing import Callable, List, Tuple

import numpy as np

from ..structs import dependency

LOSSES = ("margin", "crf", "local")
DECODERS = ("cle", "eisner")


def decode(scores: List[np.ndarray], decoder: str, single_root: bool) -> List[np.ndarray]:
    if not scores:
        return []
    if decoder == "cle":
        return dependency.chu_liu_edmonds(list(scores), single_root=single_root)
    return dependency.eisner(list(scores), single_root=single_root)


def _gold_indicator(shape, gold: np.ndarray) -> np.ndarray:
    G = np.zeros(shape, dtype=np.float64)
    G[gold[1:], np.arange(1, len(gold))] = 1.0
    return G


def margin_loss(scores, golds, decoder: str, single_root: bool, cost: float = 1.0):
    augmented = dependency.add_hamming_cost(list(scores), list(golds), cost=cost)
    predicted = decode(augmented, decoder, single_root)
    loss = 0.0
    grads = []
    for S, A, gold, pred in zip(scores, augmented, golds, predicted):
        d = np.arange(1, len(gold))
        value = A[pred[1:], d].sum() - S[gold[1:], d].sum()
        G = np.zeros_like(S)
        if value > 0 and not np.array_equal(pred, gold):
            G[pred[1:], d] += 1.0
            G[gold[1:], d] -= 1.0
            loss += value
        grads.append(G)
    return loss, grads


def _non_projective_marginals(scores, single_root: bool):
    """Matrix-Tree (log Z, marginals) per sentence, with the best-tree limit
    for the sentences whose determinant cannot be trusted."""
    try:
        return dependency.matrix_tree_marginals(list(scores), single_root=single_root)
    except FloatingPointError:
        pass
    results = []
    for S in scores:
        try:
            results.append(dependency.matrix_tree_marginals(S, single_root=single_root))
        except FloatingPointError:
            heads = dependency.chu_liu_edmonds(S, single_root=single_root)
            results.append((dependency.tree_score(S, heads), _gold_indicator(S.shape, heads)))
    return results


def crf_loss(scores, golds, decoder: str, single_root: bool):
    if decoder == "cle":
        results = _non_projective_marginals(scores, single_root)
    else:
        results = dependency.eisner_marginals(list(scores), single_root=single_root)
        golds = [
            dependency.lift_to_projective(g, single_root) if dependency.crossing_arcs(g).any() else g
            for g in golds
        ]
    loss = 0.0
    grads = []
    for S, gold, (log_z, marg) in zip(scores, golds, results):
        d = np.arange(1, len(gold))
        loss += log_z - S[gold[1:], d].sum()
        grads.append(marg - _gold_indicator(S.shape, gold))
    return loss, grads


def local_loss(scores, golds, decoder: str, single_root: bool):
    loss = 0.0
    grads = []
    for S, gold in zip(scores, golds):
        n1 = S.shape[0]
        X = S.copy()
        np.fill_diagonal(X, -np.inf)
        X = X[:, 1:]                                   # columns: dependents 1..n
        X = X - X.max(axis=0, keepdims=True)
        P = np.exp(X)
        P /= P.sum(axis=0, keepdims=True)
        d = np.arange(n1 - 1)
        loss += -np.log(np.maximum(P[gold[1:], d], 1e-300)).sum()
        P[gold[1:], d] -= 1.0
        G = np.zeros_like(S)
        G[:, 1:] = P
        grads.append(G)
    return loss, grads


def get_loss_function(name: str) -> Callable[..., Tuple[float, List[np.ndarray]]]:
    if name == "margin":
        return margin_loss
    if name == "crf":
        return crf_loss
    if name == "local":
        return local_loss
    raise ValueError(f"loss must be one of {LOSSES}, got {name!r}")
