"""The signed, bucketed distance between a head and a dependent, which the
arc scorer weighs with a learned bias per bucket, and the edge labeler too
with `label_distance`.

The CNN tok2vec that spaCy trains on CPU sees a few words around each token,
so the arc scores get the distance explicitly, as McDonald et al.'s feature
models do. For the labels, the BiLSTM's views already carry most of it: on
English-EWT the labeler's bias per bucket moved dev LAS by less than the
seeds' spread (docs/results/parse.md, "The labeler weighs the arc's
distance"), so it is off by default.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

# |distance| 1..10 get a bucket each, then wider ones; h = 0 (root) its own.
_DISTANCE_EDGES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 20, 30, 50], dtype=np.int64)
N_DISTANCE_BUCKETS = 2 * len(_DISTANCE_EDGES) + 1


def buckets_of(heads: np.ndarray, dependents: np.ndarray) -> np.ndarray:
    """The bucket of each arc heads -> dependents (broadcast together; node
    0 is the root): left/right attachment x distance, an arc from the root
    the last bucket. int64."""
    dist = dependents - heads
    mag = np.maximum(np.digitize(np.abs(dist), _DISTANCE_EDGES) - 1, 0)
    buckets = np.where(dist > 0, mag, len(_DISTANCE_EDGES) + mag)
    return np.where(heads == 0, N_DISTANCE_BUCKETS - 1, buckets).astype(np.int64)


@lru_cache(maxsize=512)
def distance_buckets(n_nodes: int) -> np.ndarray:
    """(n+1) x (n+1) bucket ids, [head, dependent], of every possible arc.
    Cached per length; read-only."""
    buckets = buckets_of(np.arange(n_nodes)[:, None], np.arange(n_nodes)[None, :])
    buckets.flags.writeable = False
    return buckets


def arc_buckets(heads: np.ndarray) -> np.ndarray:
    """The bucket of each arc heads[m] -> m of a tree, m = 1..n (heads[0]
    is the root's placeholder): an (n,) int64 array."""
    return buckets_of(np.asarray(heads[1:]), np.arange(1, len(heads)))
