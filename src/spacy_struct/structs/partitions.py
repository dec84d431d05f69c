"""Partitions of a sequence into contiguous pieces (semi-Markov segmentation).

Model. A sequence of m items (a word's characters) is cut into pieces
[0, c1), [c1, c2), ..., [ck, m); the partition's score is the sum of its
pieces' scores, given as `scores[i, j]` for the piece [i, j) in an
(m+1, m+1) array (entries with i >= j are unused). A partition is written
as its cuts, the increasing interior offsets (c1, ..., ck): an int64 array,
empty for the sequence left whole. There are 2^(m-1) of them.

Decoding is the semi-Markov Viterbi, best[j] = max_{i<j} best[i] + S[i, j];
the CRF's log Z and piece marginals come from forward-backward over the same
lattice. Both are O(m L) for pieces of at most L items (`max_length`; None
for any length), in Cython (`_partitions.pyx`), a batch per call.

The morph segmenter's supervised mode scores a word's morphs this way: a
piece is a morph, its score sees the characters at both of its ends.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from ._partitions import partition_argmax_batch, partition_marginals_batch
from .arrays import ArrayOrBatch, NoLegalStructureError, as_batch, check_int, check_scores, pack, unbatch, where
from .base import Structure

__all__ = ["Partitions", "partition_argmax", "partition_marginals", "pieces"]


def check_max_length(max_length: object) -> int:
    """The kernels' piece-length limit: -1 for none."""
    if max_length is None:
        return -1
    max_length = check_int(max_length, "max_length", "an int or None")
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1 (or None for any), got {max_length}")
    return max_length


def check_partition_scores(x: object, index: int = 0, single: bool = True) -> np.ndarray:
    """Validate one (m+1, m+1) score array (m >= 1); return it as float64."""
    arr = check_scores(x, "scores", 2, index, single)
    if arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise ValueError(
            f"scores{where(index, single)} must have shape (m+1, m+1) with m >= 1 items, "
            f"got {arr.shape}"
        )
    return arr


def _checked(scores: ArrayOrBatch, max_length: Optional[int]):
    items, single = as_batch(scores, "scores")
    limit = check_max_length(max_length)
    arrays = [check_partition_scores(x, i, single) for i, x in enumerate(items)]
    lengths = np.array([a.shape[0] - 1 for a in arrays], dtype=np.int64)
    return single, limit, arrays, lengths


def partition_argmax(
    scores: ArrayOrBatch, max_length: Optional[int] = None
) -> Union[np.ndarray, List[np.ndarray]]:
    """The best partition's cuts, for one (m+1, m+1) score array or a list.

    Raises NoLegalStructureError when every partition of a sequence scores
    -inf (e.g. a piece longer than max_length is needed and none shorter is
    allowed).
    """
    single, limit, arrays, lengths = _checked(scores, max_length)
    if not arrays:
        return []
    flat, offsets = pack(arrays)
    cuts = np.zeros(max(int(lengths.sum()), 1), np.int64)
    counts = np.zeros(len(arrays), np.int64)
    best = np.zeros(len(arrays), np.float64)
    partition_argmax_batch(flat, offsets, lengths, limit, cuts, counts, best)
    results, at = [], 0
    for b, (m, c) in enumerate(zip(lengths.tolist(), counts.tolist())):
        if best[b] == -np.inf:
            raise NoLegalStructureError(
                f"scores{where(b, single)}: every partition of the {m} items scores -inf"
            )
        results.append(cuts[at:at + c].copy())
        at += m
    return unbatch(results, single)


def partition_marginals(
    scores: ArrayOrBatch, max_length: Optional[int] = None
) -> Union[Tuple[float, np.ndarray], List[Tuple[float, np.ndarray]]]:
    """(log Z, piece marginals) for one (m+1, m+1) score array or a list.

    The marginals have the scores' shape and are the gradient of log Z; a
    sequence with no finite partition gets -inf and zeros.
    """
    single, limit, arrays, lengths = _checked(scores, max_length)
    if not arrays:
        return []
    flat, offsets = pack(arrays)
    log_z = np.zeros(len(arrays), np.float64)
    marginals = np.zeros_like(flat)
    partition_marginals_batch(flat, offsets, lengths, limit, log_z, marginals)
    results = [
        (float(log_z[b]), marginals[offsets[b]:offsets[b + 1]].reshape(a.shape))
        for b, a in enumerate(arrays)
    ]
    return unbatch(results, single)


def pieces(m: int, cuts: Sequence[int]) -> List[Tuple[int, int]]:
    """The pieces [i, j) of a sequence of m items cut at `cuts`."""
    edges = [0, *(int(c) for c in cuts), m]
    return list(zip(edges, edges[1:]))


class Partitions(Structure):
    """Partitions of sequences into pieces, as a structure object.

    max_length: the longest piece considered (None: any length).
    """

    name = "partitions"

    def __init__(self, max_length: Optional[int] = None) -> None:
        check_max_length(max_length)
        self.max_length = max_length

    def argmax(self, scores: Sequence[np.ndarray]) -> List[np.ndarray]:
        """The best cuts of each sequence (int64 arrays)."""
        return partition_argmax(list(scores), self.max_length)

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        return partition_marginals(list(scores), self.max_length)

    def local_marginals(self, scores):
        raise ValueError(
            "the 'local' loss is not defined for partitions (a piece's score spans "
            "several cut decisions); use 'crf' or 'margin'"
        )

    def add_hamming_cost(
        self, scores: Sequence[np.ndarray], golds: Sequence[np.ndarray], cost: float
    ) -> List[np.ndarray]:
        """Scores plus `cost` per wrong cut decision: a piece [i, j) pays for
        its end j if that is not a gold cut (a false cut) and for every gold
        cut strictly inside it (a missed one). Each cut decision is the end
        of exactly one piece or inside exactly one, so the sum over a
        partition's pieces is its Hamming distance to the gold over the
        m - 1 cut positions."""
        out = []
        for S, gold in zip(scores, golds):
            m = S.shape[0] - 1
            is_cut = np.zeros(m + 1, np.float64)
            is_cut[np.asarray(gold, np.int64)] = 1.0
            inside = np.concatenate([[0.0], np.cumsum(is_cut)])  # inside[k] = gold cuts < k
            i, j = np.triu_indices(m + 1, 1)
            false_end = np.where(j < m, 1.0 - is_cut[j], 0.0)
            missed = inside[j] - inside[i + 1]
            augmented = np.array(S, np.float64, copy=True)
            augmented[i, j] += cost * (false_end + missed)
            out.append(augmented)
        return out

    def indicator(self, shape: Tuple[int, ...], y: np.ndarray) -> np.ndarray:
        """1 on the pieces of the partition with cuts `y`."""
        out = np.zeros(shape, np.float64)
        for i, j in pieces(shape[0] - 1, y):
            out[i, j] = 1.0
        return out

    def score(self, scores: np.ndarray, y: np.ndarray) -> float:
        return float(sum(scores[i, j] for i, j in pieces(scores.shape[0] - 1, y)))

    def same(self, y1: np.ndarray, y2: np.ndarray) -> bool:
        return bool(np.array_equal(np.asarray(y1, np.int64), np.asarray(y2, np.int64)))
