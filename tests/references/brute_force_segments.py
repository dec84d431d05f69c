"""Brute-force gapped segments: enumerate every nonempty word subset.

Only for small n (2^n - 1 subsets per type); scored by the definition
f = g(0, i1) + g(i1, i2) + ... + g(im, n+1) with positions i = word + 1,
plus e(im) = scores[t, im, n+2] for a segment with a gap when the array
has that column (shape (T, n+2, n+3), a gapped end).
"""
from __future__ import annotations

from itertools import combinations
from typing import List, Optional, Tuple

import numpy as np


def segment_score(scores: np.ndarray, t: int, words) -> float:
    n = scores.shape[1] - 2
    pos = [0] + [w + 1 for w in words] + [n + 1]
    total = float(sum(scores[t, a, b] for a, b in zip(pos, pos[1:])))
    gapped = any(b - a > 1 for a, b in zip(words, words[1:]))
    if scores.shape[2] == n + 3 and gapped:
        total += float(scores[t, words[-1] + 1, n + 2])
    return total


def is_legal(words, max_gap: Optional[int]) -> bool:
    """Nonempty, strictly increasing, and no gap above max_gap words."""
    if not words or any(b <= a for a, b in zip(words, words[1:])):
        return False
    return max_gap is None or all(b - a - 1 <= max_gap for a, b in zip(words, words[1:]))


def all_segments(
    scores: np.ndarray, max_gap: Optional[int] = None
) -> List[Tuple[int, Tuple[int, ...], float]]:
    """Every legal segment of every type with score > -inf."""
    T, N, _ = scores.shape
    n = N - 2
    out = []
    for t in range(T):
        for m in range(1, n + 1):
            for words in combinations(range(n), m):
                if not is_legal(words, max_gap):
                    continue
                s = segment_score(scores, t, words)
                if s > -np.inf:
                    out.append((t, words, s))
    return out


def kbest_scores(
    scores: np.ndarray, k: int, max_gap: Optional[int] = None
) -> List[List[float]]:
    """Per type, the k best scores in descending order."""
    T = scores.shape[0]
    per_type: List[List[float]] = [[] for _ in range(T)]
    for t, _, s in all_segments(scores, max_gap):
        per_type[t].append(s)
    return [sorted(v, reverse=True)[:k] for v in per_type]
