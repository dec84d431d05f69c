"""Straightforward numpy versions of the dependency-tree structures.

These are written to be read and trusted, not to be fast: the recursive
O(n^3) Chu-Liu-Edmonds with explicit contraction, single-root by trying each
root child (as common numpy parsers do), and Eisner with numpy over the split
points. They are the oracle of the tests and the baseline of the benchmark.
"""
from __future__ import annotations

import numpy as np

from ..arrays import NoLegalStructureError


def _find_cycle(heads: np.ndarray):
    n = len(heads)
    seen = np.zeros(n, dtype=np.int64)     # 0 new, >0 visit id
    for start in range(1, n):
        if seen[start]:
            continue
        x = start
        while x > 0 and not seen[x]:
            seen[x] = start
            x = heads[x]
        if x > 0 and seen[x] == start:
            cycle = [x]
            y = heads[x]
            while y != x:
                cycle.append(y)
                y = heads[y]
            return np.array(cycle)
    return None


def _cle(s: np.ndarray) -> np.ndarray:
    """Multi-root Chu-Liu-Edmonds on a matrix whose column 0 and diagonal are -inf."""
    N = s.shape[0]
    heads = s.argmax(axis=0)
    heads[0] = -1
    cycle = _find_cycle(heads)
    if cycle is None:
        return heads
    in_cycle = np.zeros(N, dtype=bool)
    in_cycle[cycle] = True
    rest = np.flatnonzero(~in_cycle)        # rest[0] == 0, the root
    c = len(rest)
    cycle_scores = s[heads[cycle], cycle]
    enter = s[np.ix_(rest, cycle)] - cycle_scores[None, :]
    best_enter = enter.argmax(axis=1)
    leave = s[np.ix_(cycle, rest)]
    best_leave = leave.argmax(axis=0)
    sub = np.full((c + 1, c + 1), -np.inf)
    sub[:c, :c] = s[np.ix_(rest, rest)]
    sub[:c, c] = enter[np.arange(c), best_enter]
    sub[c, :c] = leave[best_leave, np.arange(c)]
    sub[:, 0] = -np.inf
    sub_heads = _cle(sub)
    out = heads.copy()
    for i in range(1, c):
        h = sub_heads[i]
        out[rest[i]] = rest[h] if h < c else cycle[best_leave[i]]
    h = sub_heads[c]
    out[cycle[best_enter[h]]] = rest[h]
    return out


def chu_liu_edmonds(scores: np.ndarray, single_root: bool = True) -> np.ndarray:
    s = np.array(scores, dtype=np.float64)
    s[:, 0] = -np.inf
    np.fill_diagonal(s, -np.inf)
    heads = _cle(s)
    if not single_root or (heads[1:] == 0).sum() <= 1:
        best, best_score = heads, _score(s, heads)
    else:
        best, best_score = None, -np.inf
        for r in np.flatnonzero(np.isfinite(s[0])):
            t = s.copy()
            t[0, :] = -np.inf
            t[0, r] = s[0, r]
            h = _cle(t)
            score = _score(t, h)
            if score > best_score:
                best, best_score = h, score
    if best_score == -np.inf and len(s) > 1:
        raise NoLegalStructureError("no spanning tree has a finite score")
    return best


def _score(s: np.ndarray, heads: np.ndarray) -> float:
    return float(s[heads[1:], np.arange(1, len(heads))].sum())


def _eisner_tables(scores: np.ndarray, single_root: bool, combine):
    """Fill Eisner's four tables with `combine` = np.max or logsumexp."""
    N = scores.shape[0]
    C = np.full((N, N, 2), -np.inf)
    I = np.full((N, N, 2), -np.inf)
    bC = np.zeros((N, N, 2), dtype=np.int64)
    bI = np.zeros((N, N), dtype=np.int64)
    for s in range(N):
        C[s, s, :] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            r = np.arange(s, s + 1 if (single_root and s == 0) else t)
            parts = C[s, r, 1] + C[r + 1, t, 0]
            val, bI[s, t] = combine(parts), r[np.argmax(parts)]
            I[s, t, 0] = -np.inf if s == 0 else val + scores[t, s]
            I[s, t, 1] = val + scores[s, t]
            r = np.arange(s, t)
            parts = C[s, r, 0] + I[r, t, 0]
            C[s, t, 0], bC[s, t, 0] = combine(parts), r[np.argmax(parts)]
            r = np.arange(s + 1, t + 1)
            parts = I[s, r, 1] + C[r, t, 1]
            C[s, t, 1], bC[s, t, 1] = combine(parts), r[np.argmax(parts)]
    return C, I, bC, bI


def eisner(scores: np.ndarray, single_root: bool = True) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    N = s.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    if N == 1:
        return heads
    C, I, bC, bI = _eisner_tables(s, single_root, np.max)
    if C[0, -1, 1] == -np.inf:
        raise NoLegalStructureError("no projective tree has a finite score")
    stack = [("C", 0, N - 1, 1)]
    while stack:
        kind, a, b, d = stack.pop()
        if a == b:
            continue
        if kind == "I":
            heads[a if d == 0 else b] = b if d == 0 else a
            r = bI[a, b]
            stack += [("C", a, r, 1), ("C", r + 1, b, 0)]
        else:
            r = bC[a, b, d]
            stack += [("C", a, r, 0), ("I", r, b, 0)] if d == 0 else [("I", a, r, 1), ("C", r, b, 1)]
    return heads


def _logsumexp(x: np.ndarray) -> float:
    m = np.max(x)
    if not np.isfinite(m):
        return float(m)
    return float(m + np.log(np.exp(x - m).sum()))


def eisner_log_partition(scores: np.ndarray, single_root: bool = True) -> float:
    s = np.asarray(scores, dtype=np.float64)
    if s.shape[0] == 1:
        return 0.0
    C, _, _, _ = _eisner_tables(s, single_root, _logsumexp)
    return float(C[0, -1, 1])


def _laplacian(s: np.ndarray, single_root: bool):
    """(L, A, root): the Matrix-Tree Laplacian, plain exp() and no shifting."""
    W = np.exp(s)
    np.fill_diagonal(W, 0.0)
    A, root = W[1:, 1:], W[0, 1:]
    L = np.diag(A.sum(axis=0) + (0 if single_root else root)) - A
    if single_root:
        L[0, :] = root
    return L, A, root


def matrix_tree_log_partition(scores: np.ndarray, single_root: bool = True) -> float:
    """Per-sentence Matrix-Tree theorem without the batching and shifting."""
    return matrix_tree_marginals(scores, single_root, want_marginals=False)[0]


def matrix_tree_marginals(scores: np.ndarray, single_root: bool = True,
                          want_marginals: bool = True):
    """Per-sentence (log Z, marginals) by the Koo et al. (2007) formulas."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.shape[0] - 1
    out = np.zeros_like(s)
    if n == 0:
        return 0.0, out
    L, A, root = _laplacian(s, single_root)
    sign, logdet = np.linalg.slogdet(L)
    if sign <= 0:
        return -np.inf, out
    if not want_marginals:
        return float(logdet), out
    inv = np.linalg.inv(L)
    for h in range(n):
        for d in range(n):
            if h == d:
                continue
            if single_root:
                out[h + 1, d + 1] = A[h, d] * ((d != 0) * inv[d, d] - (h != 0) * inv[d, h])
            else:
                out[h + 1, d + 1] = A[h, d] * (inv[d, d] - inv[d, h])
    out[0, 1:] = root * (inv[:, 0] if single_root else np.diag(inv))
    return float(logdet), out
