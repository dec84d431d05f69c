"""Brute force for the span structures: enumerate every structure (small n).

Each enumeration is an int matrix `idx` (structures x max spans) of flat
indices into scores.ravel(), padded with the index n*n*L, which points to an
extra 0 appended to the scores: a structure's score is then a row sum, and
its probability can be scattered back to marginals with bincount.
"""
from __future__ import annotations

import itertools
from functools import lru_cache
from typing import List, Tuple

import numpy as np

Span = Tuple[int, int]


def _bracketings(i: int, j: int) -> List[List[Span]]:
    """All binary bracketings of words i..j, as span lists (outer first)."""
    if i == j:
        return [[(i, i)]]
    out = []
    for k in range(i, j):
        for left in _bracketings(i, k):
            for right in _bracketings(k + 1, j):
                out.append([(i, j)] + left + right)
    return out


def _crosses(a: Span, b: Span) -> bool:
    return (a[0] < b[0] <= a[1] < b[1]) or (b[0] < a[0] <= b[1] < a[1])


def _laminar_sets(n: int) -> List[List[Span]]:
    """All sets of pairwise non-crossing spans over n words (empty included)."""
    spans = [(i, j) for i in range(n) for j in range(i, n)]
    out: List[List[Span]] = []

    def grow(start: int, chosen: List[Span]) -> None:
        out.append(list(chosen))
        for t in range(start, len(spans)):
            if not any(_crosses(spans[t], c) for c in chosen):
                chosen.append(spans[t])
                grow(t + 1, chosen)
                chosen.pop()

    grow(0, [])
    return out


@lru_cache(maxsize=None)
def enumerate_structures(kind: str, n: int, L: int) -> np.ndarray:
    """`idx` of every labeled structure of `kind` ("cky" or "laminar")."""
    pad = n * n * L
    if kind == "cky":
        shapes = _bracketings(0, n - 1) if n else [[]]
    else:
        shapes = _laminar_sets(n)
    width = max(len(s) for s in shapes)
    rows = []
    for spans in shapes:
        for labels in itertools.product(range(L), repeat=len(spans)):
            row = [(i * n + j) * L + l for (i, j), l in zip(spans, labels)]
            rows.append(row + [pad] * (width - len(row)))
    return np.array(rows, dtype=np.int64).reshape(len(rows), width)


def structure_scores(scores: np.ndarray, kind: str) -> Tuple[np.ndarray, np.ndarray]:
    """(idx, score of every structure) for scores of shape (n, n, L)."""
    n, _, L = scores.shape
    idx = enumerate_structures(kind, n, L)
    ext = np.append(scores.ravel(), 0.0)
    return idx, ext[idx].sum(axis=1)


def brute_best(scores: np.ndarray, kind: str) -> float:
    return float(np.max(structure_scores(scores, kind)[1]))


def brute_log_partition(scores: np.ndarray, kind: str) -> float:
    _, tot = structure_scores(scores, kind)
    mx = np.max(tot)
    if mx == -np.inf:
        return -np.inf
    return float(mx + np.log(np.sum(np.exp(tot - mx))))


def brute_marginals(scores: np.ndarray, kind: str) -> np.ndarray:
    n, _, L = scores.shape
    idx, tot = structure_scores(scores, kind)
    log_z = brute_log_partition(scores, kind)
    if log_z == -np.inf:
        return np.zeros(scores.shape)
    p = np.exp(tot - log_z)
    counts = np.bincount(
        idx.ravel(), weights=np.repeat(p, idx.shape[1]), minlength=n * n * L + 1
    )
    return counts[: n * n * L].reshape(scores.shape)


def is_cky_tree(spans: np.ndarray, n: int, L: int) -> bool:
    """Is `spans` a full binary bracketing of n words, every span labeled once?"""
    got = sorted((int(i), int(j)) for i, j, _ in spans)
    if len(set(got)) != len(got) or any(not 0 <= l < L for _, _, l in spans):
        return False
    return any(sorted(t) == got for t in _bracketings(0, n - 1)) if n else not got


def is_laminar(spans: np.ndarray, n: int, L: int) -> bool:
    pairs = [(int(i), int(j)) for i, j, _ in spans]
    if len(set(pairs)) != len(pairs):
        return False
    if any(not (0 <= i <= j < n) for i, j in pairs):
        return False
    if any(not 0 <= l < L for _, _, l in spans):
        return False
    return not any(_crosses(a, b) for a, b in itertools.combinations(pairs, 2))


def span_score(scores: np.ndarray, spans: np.ndarray) -> float:
    return float(sum(scores[i, j, l] for i, j, l in spans))


def hamming(pred: np.ndarray, gold: np.ndarray) -> int:
    p = {tuple(int(v) for v in r) for r in pred}
    g = {tuple(int(v) for v in r) for r in gold}
    return len(p - g) + len(g - p)


def brute_best_cost_augmented(scores: np.ndarray, gold: np.ndarray, kind: str, cost: float) -> float:
    """max over structures of score + cost * Hamming(structure, gold)."""
    n, _, L = scores.shape
    idx, tot = structure_scores(scores, kind)
    gold_flat = np.unique([(int(i) * n + int(j)) * L + int(l) for i, j, l in gold]).astype(np.int64)
    n_pred = (idx != n * n * L).sum(axis=1)
    n_both = np.isin(idx, gold_flat).sum(axis=1)
    return float(np.max(tot + cost * (n_pred + len(gold_flat) - 2 * n_both)))
