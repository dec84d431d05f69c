"""A hidden layer that scores whole coordinations: the factor phi(c, t) of
`structs.coordination` for every two-fragment candidate [a0..a1] + [b0..b1].

The transitions of a gapped segment are first order: no score sees where
the left conjunct A = [a0..a1] starts and where the shared part [b0..b1]
("CD19 genes" in "human and mouse CD19 genes") ends at once. This layer
does, per candidate c:

    z(c) = relu(F[a0] + L[a1] + R[b0] + E[b1] + mean(M[a1+1 .. b0-1])
                + D[|A|] + D[|B|] + D[|A| - |B|] + D[gap]
                + P^T paths(c))
    phi(c, t) = z(c) . V[:, t]

with F, L, R, E, M affine maps of the encoder's word vectors (one
(nI, 5H) matrix), D rows of one table (fragment lengths, their difference
and the gap length: the conjuncts of a coordination mostly have the same
length), and paths(c) the transition scores of [A] alone, of [b0..b1]
alone and of the candidate itself, per type (3T numbers, read from the
transitions with the gradient stopped): whether [A] is a mention on its own
is what the corpus weighs against the gapped reading. V starts at 0, so an
untrained layer leaves every segment's score as the transitions give it.

Cost: m = O(n F^2 G) candidates per sentence (F the longest fragment, G the
longest gap), each a gather of per-word tables and one (H, T) product; the
gradients sum back by sorted index (np.add.reduceat).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Tuple

import numpy as np

from ..structs.coordination import coordination_candidates, coordination_paths

#: the per-word terms of a candidate, in the order of their column blocks
COORDINATION_TERMS = ("first", "left_end", "right_start", "last", "inside")
#: path scores are log-rates; clipped and scaled to keep the inputs O(1)
_PATH_CLIP, _PATH_SCALE = 30.0, 0.1


def table_rows(max_fragment: int, max_gap: int) -> int:
    """Rows of the length table: |A|, |B|, |A| - |B| and the gap length."""
    return 2 * max_fragment + (2 * max_fragment - 1) + max_gap


class _Scatter:
    """Sums of the rows of an (m, H) array by a fixed index into `length`
    rows: a sort order and np.add.reduceat, precomputed once per geometry
    (np.add.at and bincounts over m H cells are several times slower)."""

    def __init__(self, index: np.ndarray, length: int) -> None:
        self.order = np.argsort(index, kind="stable")
        sorted_index = index[self.order]
        self.starts = np.flatnonzero(np.r_[True, sorted_index[1:] != sorted_index[:-1]]) if len(index) else \
            np.zeros(0, np.int64)
        self.targets = sorted_index[self.starts]
        self.length = length

    def __call__(self, values: np.ndarray) -> np.ndarray:
        out = np.zeros((self.length, values.shape[1]), dtype=np.float32)
        if len(self.order):
            out[self.targets] = np.add.reduceat(values[self.order], self.starts, axis=0)
        return out


class CandidateGeometry:
    """What the layer needs of an n-word sentence's candidates, cached per
    (n, max_fragment, max_gap): the (m, 4) candidates; for each, its cell in
    the (n, F) tables of the left conjunct [a0, |A| - 1] and of the shared
    part [b0, |B| - 1], in the (n, G) table of gaps [a1, gap - 1], and its
    combination of lengths (|A| - 1, |B| - 1, gap - 1) in an (F, F, G)
    table; and the scatters that sum gradients back onto those cells."""

    def __init__(self, n: int, max_fragment: int, max_gap: int) -> None:
        F, G = max_fragment, max_gap
        self.n, self.F, self.G = n, F, G
        self.candidates = coordination_candidates(n, F, G)
        a0, a1, b0, b1 = self.candidates.T
        len_a, len_b, gap = a1 - a0, b1 - b0, b0 - a1 - 1
        self.left = a0 * F + len_a
        self.shared = b0 * F + len_b
        self.gap = a1 * G + gap - 1
        self.lengths = (len_a * F + len_b) * G + gap - 1
        self.scatter_left = _Scatter(self.left, n * F)
        self.scatter_shared = _Scatter(self.shared, n * F)
        self.scatter_gap = _Scatter(self.gap, n * G)
        self.scatter_lengths = _Scatter(self.lengths, F * F * G)


@lru_cache(maxsize=32)  # a few MB each for long sentences; building one takes milliseconds
def candidate_geometry(n: int, max_fragment: int, max_gap: int) -> CandidateGeometry:
    """The `CandidateGeometry` of an n-word sentence (cached)."""
    return CandidateGeometry(n, max_fragment, max_gap)


@lru_cache(maxsize=16)
def _length_rows(max_fragment: int, max_gap: int) -> np.ndarray:
    """(F F G, 4) rows of the length table that each combination of lengths
    (|A| - 1, |B| - 1, gap - 1) reads: |A|, |B|, |A| - |B|, the gap."""
    F, G = max_fragment, max_gap
    la, lb, g = np.meshgrid(np.arange(F), np.arange(F), np.arange(G), indexing="ij")
    rows = np.stack([la, F + lb, 2 * F + la - lb + F - 1, 4 * F - 1 + g], axis=-1).reshape(-1, 4)
    rows.flags.writeable = False
    return rows


def path_features(transitions: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """(m, 3T) float32: per type, the score of [A] alone, of [b0..b1] alone
    and of the candidate's path, clipped and scaled (a constant input)."""
    paths = np.concatenate(coordination_paths(transitions, candidates), axis=0)
    return (np.clip(paths, -_PATH_CLIP, _PATH_CLIP) * _PATH_SCALE).T.astype(np.float32)


def _fragment_tables(first: np.ndarray, last: np.ndarray, F: int) -> np.ndarray:
    """(n, F, H): [s, l] = first[s] + last[s + l]; where s + l is past the
    sentence, first[s] alone (no candidate reads those cells)."""
    n, H = first.shape
    padded = np.zeros((n + F, H), dtype=np.float32)
    padded[:n] = last
    out = np.empty((n, F, H), dtype=np.float32)
    for l in range(F):
        np.add(first, padded[l:l + n], out=out[:, l])
    return out


def _gap_table(inside: np.ndarray, G: int) -> np.ndarray:
    """(n, G, H): [e, g - 1] = mean of inside[e + 1 .. e + g] (the g words
    skipped after a left conjunct that ends at word e; where those run past
    the sentence, a partial sum that no candidate reads)."""
    n, H = inside.shape
    sums = np.zeros((n + G + 1, H), dtype=np.float32)
    np.cumsum(inside, axis=0, out=sums[1:n + 1])
    sums[n + 1:] = sums[n]
    out = np.empty((n, G, H), dtype=np.float32)
    for g in range(1, G + 1):
        np.subtract(sums[1 + g:n + 1 + g], sums[1:n + 1], out=out[:, g - 1])
        out[:, g - 1] *= 1.0 / g
    return out


def coordination_hidden(
    terms: Dict[str, np.ndarray], table: np.ndarray, path_weights: np.ndarray, geometry: CandidateGeometry,
    paths: np.ndarray,
) -> np.ndarray:
    """The pre-activation (m, H) of every candidate of one sentence.

    terms: COORDINATION_TERMS, each (n, H); table (rows, H); path_weights
    (3T, H); paths (m, 3T) from `path_features`.
    """
    F, G, H = geometry.F, geometry.G, table.shape[1]
    left = _fragment_tables(terms["first"], terms["left_end"], F).reshape(-1, H)
    shared = _fragment_tables(terms["right_start"], terms["last"], F).reshape(-1, H)
    gaps = _gap_table(terms["inside"], G).reshape(-1, H)
    lengths = table[_length_rows(F, G)].sum(axis=1)
    pre = paths @ path_weights
    pre += left[geometry.left]
    pre += shared[geometry.shared]
    pre += gaps[geometry.gap]
    pre += lengths[geometry.lengths]
    return pre


def coordination_hidden_backprop(
    d_pre: np.ndarray, geometry: CandidateGeometry, n_rows: int, paths: np.ndarray,
) -> Tuple[Dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Gradients of the per-word terms ({term: (n, H)}), of the length table
    (n_rows, H) and of the path weights (3T, H) from d_pre (m, H)."""
    n, F, G, H = geometry.n, geometry.F, geometry.G, d_pre.shape[1]
    grads = {}
    for (first, last), scatter in ((("first", "left_end"), geometry.scatter_left),
                                   (("right_start", "last"), geometry.scatter_shared)):
        d = scatter(d_pre).reshape(n, F, H)
        grads[first] = d.sum(axis=1)
        d_last = np.zeros((n + F, H), dtype=np.float32)
        for l in range(F):
            d_last[l:l + n] += d[:, l]
        grads[last] = d_last[:n]
    d_gaps = geometry.scatter_gap(d_pre).reshape(n, G, H)
    d_sums = np.zeros((n + G + 1, H), dtype=np.float32)
    for g in range(1, G + 1):
        d_mean = d_gaps[:, g - 1] * (1.0 / g)
        d_sums[1 + g:n + 1 + g] += d_mean
        d_sums[1:n + 1] -= d_mean
    d_sums[n] += d_sums[n + 1:].sum(axis=0)  # the padding repeats sums[n]
    # sums[k] adds inside[w] for w < k: inside[w] gets every d_sums[k > w]
    grads["inside"] = np.cumsum(d_sums[n:0:-1], axis=0)[::-1].astype(np.float32)
    d_lengths = geometry.scatter_lengths(d_pre)
    d_table = np.zeros((n_rows, H), dtype=np.float32)
    np.add.at(d_table, _length_rows(F, G).ravel(), np.repeat(d_lengths, 4, axis=0))
    return grads, d_table, (paths.T @ d_pre).astype(np.float32)
