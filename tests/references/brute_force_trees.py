"""All dependency trees over a root plus n words, by enumeration (n <= 6)."""
from functools import lru_cache
from itertools import product

import numpy as np


def _reaches_root(heads) -> bool:
    for start in range(1, len(heads)):
        seen = set()
        x = start
        while x != 0:
            if x in seen:
                return False
            seen.add(x)
            x = heads[x]
    return True


def _projective(heads) -> bool:
    n = len(heads) - 1
    for d in range(1, n + 1):
        h = heads[d]
        lo, hi = min(h, d), max(h, d)
        for k in range(lo + 1, hi):
            x = k
            while x not in (0, h):
                x = heads[x]
            if x != h:
                return False
    return True


@lru_cache(maxsize=None)
def all_trees(n: int, single_root: bool, projective: bool = False) -> np.ndarray:
    """Every tree as a row of heads (length n+1, heads[0] = -1)."""
    rows = []
    for h in product(range(n + 1), repeat=n):
        heads = (-1,) + h
        if any(heads[d] == d for d in range(1, n + 1)):
            continue
        if single_root and sum(1 for x in h if x == 0) != 1:
            continue
        if not _reaches_root(heads):
            continue
        if projective and not _projective(heads):
            continue
        rows.append(heads)
    return np.array(rows, dtype=np.int64).reshape(len(rows), n + 1)


def tree_scores(scores: np.ndarray, trees: np.ndarray) -> np.ndarray:
    n = scores.shape[0] - 1
    return scores[trees[:, 1:], np.arange(1, n + 1)].sum(axis=1)


def log_partition(scores, single_root, projective=False) -> float:
    t = tree_scores(scores, all_trees(scores.shape[0] - 1, single_root, projective))
    m = t.max()
    if not np.isfinite(m):
        return float(m)
    return float(m + np.log(np.exp(t - m).sum()))


def marginals(scores, single_root, projective=False) -> np.ndarray:
    trees = all_trees(scores.shape[0] - 1, single_root, projective)
    t = tree_scores(scores, trees)
    out = np.zeros_like(scores)
    if not np.isfinite(t.max()):
        return out
    p = np.exp(t - t.max())
    p /= p.sum()
    n = scores.shape[0] - 1
    for d in range(1, n + 1):
        np.add.at(out[:, d], trees[:, d], p)
    return out
