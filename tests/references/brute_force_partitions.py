"""Every partition of a short sequence, for checking the partition decoder
and its marginals by enumeration."""
from itertools import combinations
from math import exp, log

import numpy as np


def all_partitions(m, max_length=None):
    """Every cut tuple of m items whose pieces are at most max_length long."""
    out = []
    for k in range(m):
        for cuts in combinations(range(1, m), k):
            edges = (0, *cuts, m)
            if max_length is None or all(b - a <= max_length for a, b in zip(edges, edges[1:])):
                out.append(cuts)
    return out


def partition_score(S, cuts):
    m = S.shape[0] - 1
    edges = (0, *cuts, m)
    return float(sum(S[a, b] for a, b in zip(edges, edges[1:])))


def enumerate_marginals(S, max_length=None):
    """(log Z, marginals, best cuts, best score) by enumeration."""
    m = S.shape[0] - 1
    found = [(partition_score(S, c), c) for c in all_partitions(m, max_length)]
    finite = [(s, c) for s, c in found if s != -np.inf]
    marginals = np.zeros_like(S, dtype=np.float64)
    if not finite:
        return -np.inf, marginals, None, -np.inf
    top = max(s for s, _ in finite)
    log_z = top + log(sum(exp(s - top) for s, _ in finite))
    for s, cuts in finite:
        p = exp(s - log_z)
        edges = (0, *cuts, m)
        for a, b in zip(edges, edges[1:]):
            marginals[a, b] += p
    best_score, best = max(finite, key=lambda x: x[0])
    return log_z, marginals, best, best_score


def hamming(m, cuts_a, cuts_b):
    """Cut positions 1..m-1 on which two partitions disagree."""
    return len(set(cuts_a) ^ set(cuts_b))
