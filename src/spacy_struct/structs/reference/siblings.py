"""Straightforward numpy version of the second-order (sibling) tree structure.

The second-order Eisner recursion of McDonald & Pereira (2006) written out
with named tables and numpy over the split points, to be read and trusted,
not to be fast: the oracle of the tests on inputs too long to enumerate and
the baseline of the benchmark. `parts[h, s, m]` as in `structs.siblings`.
"""
from __future__ import annotations

import numpy as np

from ..arrays import NoLegalStructureError
from .dependency import _logsumexp


def _tables(parts: np.ndarray, single_root: bool, combine):
    """Fill the complete (C), incomplete (I) and sibling (S) tables with
    `combine` = np.max or logsumexp; back-pointers for the argmax."""
    N = parts.shape[0]
    C = np.full((N, N, 2), -np.inf)
    I = np.full((N, N, 2), -np.inf)
    S = np.full((N, N), -np.inf)
    bC = np.zeros((N, N, 2), dtype=np.int64)
    bI = np.zeros((N, N, 2), dtype=np.int64)
    bS = np.zeros((N, N), dtype=np.int64)
    for s in range(N):
        C[s, s, :] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            # s's right subtree next to t's left subtree
            r = np.arange(s, t)
            terms = C[s, r, 1] + C[r + 1, t, 0]
            S[s, t], bS[s, t] = combine(terms), r[np.argmax(terms)]
            # arc s -> t: t first (r = s), or after the dependent r of s
            r = np.arange(s, s + 1 if (single_root and s == 0) else t)
            inner = r[1:]
            terms = np.concatenate([[C[s + 1, t, 0] + parts[s, s, t]],
                                    I[s, inner, 1] + S[inner, t] + parts[s, inner, t]])
            I[s, t, 1], bI[s, t, 1] = combine(terms), r[np.argmax(terms)]
            # arc t -> s: s first (r = t), or after the dependent r of t
            if s > 0:
                inner = np.arange(s + 1, t)
                r = np.concatenate([[t], inner])
                terms = np.concatenate([[C[s, t - 1, 1] + parts[t, t, s]],
                                        S[s, inner] + I[inner, t, 0] + parts[t, inner, s]])
                I[s, t, 0], bI[s, t, 0] = combine(terms), r[np.argmax(terms)]
            r = np.arange(s, t)
            terms = C[s, r, 0] + I[r, t, 0]
            C[s, t, 0], bC[s, t, 0] = combine(terms), r[np.argmax(terms)]
            r = np.arange(s + 1, t + 1)
            terms = I[s, r, 1] + C[r, t, 1]
            C[s, t, 1], bC[s, t, 1] = combine(terms), r[np.argmax(terms)]
    return C, I, S, bC, bI, bS


def sibling_eisner(parts: np.ndarray, single_root: bool = True) -> np.ndarray:
    """Best projective tree under second-order part scores."""
    P = np.asarray(parts, dtype=np.float64)
    N = P.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    if N == 1:
        return heads
    C, I, S, bC, bI, bS = _tables(P, single_root, np.max)
    if C[0, -1, 1] == -np.inf:
        raise NoLegalStructureError("no projective tree has a finite score")
    stack = [("C", 0, N - 1, 1)]
    while stack:
        kind, a, b, d = stack.pop()
        if a == b:
            continue
        if kind == "S":
            r = bS[a, b]
            stack += [("C", a, r, 1), ("C", r + 1, b, 0)]
        elif kind == "I":
            r = bI[a, b, d]
            if d == 1:
                heads[b] = a
                stack += [("C", a + 1, b, 0)] if r == a else [("I", a, r, 1), ("S", r, b, 0)]
            else:
                heads[a] = b
                stack += [("C", a, b - 1, 1)] if r == b else [("S", a, r, 0), ("I", r, b, 0)]
        else:
            r = bC[a, b, d]
            stack += [("C", a, r, 0), ("I", r, b, 0)] if d == 0 else [("I", a, r, 1), ("C", r, b, 1)]
    return heads


def sibling_log_partition(parts: np.ndarray, single_root: bool = True) -> float:
    """log Z over projective trees under second-order part scores."""
    P = np.asarray(parts, dtype=np.float64)
    if P.shape[0] == 1:
        return 0.0
    return float(_tables(P, single_root, _logsumexp)[0][0, -1, 1])
