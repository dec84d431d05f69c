"""Second-order tree scores, log Z and part marginals by enumeration (n <= 6).

The parts of a tree are listed here from its definition (each head's
dependents on each side, sorted by distance, paired with the one before),
independently of `structs.siblings.tree_parts`.
"""
import numpy as np

from references.brute_force_trees import all_trees


def parts_of(heads):
    rows = []
    n = len(heads) - 1
    for h in range(n + 1):
        for side in (-1, 1):
            deps = sorted((m for m in range(1, n + 1) if heads[m] == h and (m - h) * side > 0),
                          key=lambda m: abs(m - h))
            previous = h
            for m in deps:
                rows.append((h, previous, m))
                previous = m
    return rows


def scores_of(parts, trees):
    return np.array([sum(parts[h, s, m] for h, s, m in parts_of(t)) for t in trees])


def best(parts, single_root, projective=True):
    trees = all_trees(parts.shape[0] - 1, single_root, projective)
    values = scores_of(parts, trees)
    return trees, values


def log_partition(parts, single_root):
    trees, values = best(parts, single_root)
    top = values.max()
    if not np.isfinite(top):
        return float(top)
    return float(top + np.log(np.exp(values - top).sum()))


def marginals(parts, single_root):
    trees, values = best(parts, single_root)
    out = np.zeros_like(parts)
    if not np.isfinite(values.max()):
        return out
    p = np.exp(values - values.max())
    p /= p.sum()
    for tree, weight in zip(trees, p):
        for h, s, m in parts_of(tree):
            out[h, s, m] += weight
    return out
