"""k-best gapped segments (McDonald, Crammer & Pereira 2005, "Flexible text
segmentation with structured multilabel classification").

Model. A segment of type t is a nonempty increasing sequence of word
positions i1 < ... < im (1-based; 0 is a start sentinel, n+1 an end
sentinel). Its score factorises over consecutive included positions:

    f = g(0, i1) + g(i1, i2) + ... + g(im, n+1),

given as `scores[t, j, i]` = g(j, i) in an array of shape (T, n+2, n+2).
Gaps are allowed, and segments of one sentence may overlap or embed, which
BIO tagging cannot express.

Decoding. Per type, S[i] = max_{j<i} S[j] + g(j, i) with S[0] = 0, in its
k-best form: position i keeps the k best partial segments ending at i, the
k-way merge of its predecessors' lists shifted by g(j, i). The merge uses a
heap over the predecessors' heads, O(P + k log P) for P predecessors, so
decoding costs O(T (n^2 + n k log n)) (within the paper's O(n^2 k T)), and
with a maximum gap g, O(T (n g + n k log g + k log n)) (within O(n g k T)).
Memory O(n k) scratch plus the output.

Prediction (`select_segments`) keeps segments above a threshold, with the
paper's optional restrictions against overlapping and embedded segments.
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from .arrays import ArrayOrBatch, as_batch, check_scores, pack, unbatch, where
from ._segments import kbest_segments_batch

__all__ = ["Segments", "kbest_segments", "select_segments"]


@dataclass(frozen=True, eq=False)
class Segments:
    """Segments of one sentence, in CSR form (no Python object per segment).

    The words of segment s are `words[offsets[s]:offsets[s+1]]` (0-based,
    increasing). Ordered by type, then by descending score.
    """

    types: np.ndarray  # (m,) int64
    scores: np.ndarray  # (m,) float64
    offsets: np.ndarray  # (m + 1,) int64
    words: np.ndarray  # (offsets[-1],) int64

    def __len__(self) -> int:
        return int(self.types.shape[0])

    def as_list(self) -> List[Tuple[int, Tuple[int, ...], float]]:
        """(type, words, score) per segment, for tests and inspection."""
        o = self.offsets.tolist()
        w = self.words.tolist()
        return [
            (int(t), tuple(w[o[s] : o[s + 1]]), float(sc))
            for s, (t, sc) in enumerate(zip(self.types.tolist(), self.scores.tolist()))
        ]

    @classmethod
    def empty(cls) -> "Segments":
        return cls(
            np.zeros(0, np.int64), np.zeros(0, np.float64),
            np.zeros(1, np.int64), np.zeros(0, np.int64),
        )


def check_k(k: object) -> int:
    if isinstance(k, bool):
        raise TypeError("k must be an int, not bool")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"k must be an int, not {type(k).__name__}") from None
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return k


def check_gap(max_gap: object, contiguous: bool) -> int:
    """The effective maximum gap; -1 means unlimited."""
    if max_gap is not None:
        if isinstance(max_gap, bool):
            raise TypeError("max_gap must be an int or None, not bool")
        try:
            max_gap = operator.index(max_gap)
        except TypeError:
            raise TypeError(
                f"max_gap must be an int or None, not {type(max_gap).__name__}"
            ) from None
        if max_gap < 0:
            raise ValueError(f"max_gap must be >= 0, got {max_gap}")
    if contiguous:
        if max_gap is not None and max_gap > 0:
            raise ValueError(
                f"contiguous=True contradicts max_gap={max_gap}; "
                f"contiguous means max_gap=0"
            )
        return 0
    return -1 if max_gap is None else max_gap


def check_segment_scores(x: object, index: int = 0, single: bool = True) -> np.ndarray:
    """Validate one (T, n+2, n+2) score array; return it as float64."""
    arr = check_scores(x, "scores", 3, index, single)
    at = where(index, single)
    T, a, b = arr.shape
    if a != b or a < 2:
        raise ValueError(
            f"scores{at} must have shape (T, n+2, n+2) with n >= 0, got {arr.shape}"
        )
    if T == 0:
        raise ValueError(f"scores{at} has no segment types (T = 0)")
    return arr


def _n_segments_bound(n: int, k: int) -> int:
    """min(k, 2^n - 1): there are only 2^n - 1 nonempty word subsets."""
    return k if n >= 62 else min(k, (1 << n) - 1)


def kbest_segments(
    scores: ArrayOrBatch,
    k: int,
    max_gap: Optional[int] = None,
    contiguous: bool = False,
) -> Union[Segments, List[Segments]]:
    """The k best segments of each type (fewer if fewer have score > -inf).

    `scores`: one (T, n+2, n+2) array, or a list/tuple of them (returns a
    list). `max_gap`: at most that many words skipped between two consecutive
    included words (the start and end transitions are not gaps);
    `contiguous=True` means max_gap=0. Returned segments are distinct; among
    equal scores the order is arbitrary.
    """
    items, single = as_batch(scores, "scores")
    k = check_k(k)
    gap = check_gap(max_gap, contiguous)
    arrays = [check_segment_scores(x, i, single) for i, x in enumerate(items)]
    if not arrays:
        return []
    ns = np.array([a.shape[1] - 2 for a in arrays], dtype=np.int64)
    ts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    bounds = [_n_segments_bound(int(n), k) * int(t) for n, t in zip(ns, ts)]
    seg_cap = sum(bounds)
    word_cap = sum(b * int(n) for b, n in zip(bounds, ns))
    k_dp = _n_segments_bound(int(ns.max()), k)
    flat, offsets = pack(arrays)
    out_types = np.empty(max(seg_cap, 1), np.int64)
    out_scores = np.empty(max(seg_cap, 1), np.float64)
    out_offsets = np.zeros(seg_cap + 1, np.int64)
    out_words = np.empty(max(word_cap, 1), np.int64)
    counts = np.zeros(len(arrays), np.int64)
    kbest_segments_batch(
        flat, offsets, ns, ts, max(k_dp, 1), gap,
        out_types, out_scores, out_offsets, out_words, counts,
    )
    results = []
    s0 = 0
    for c in counts.tolist():
        s1 = s0 + c
        o = out_offsets[s0 : s1 + 1]
        results.append(Segments(
            out_types[s0:s1].copy(), out_scores[s0:s1].copy(), o - o[0],
            out_words[o[0] : o[-1]].copy(),
        ))
        s0 = s1
    return unbatch(results, single)


def select_segments(
    segments: Union[Segments, Sequence[Segments]],
    threshold: float = 0.0,
    allow_overlap: bool = True,
    allow_embedding: bool = True,
) -> Union[Segments, List[Segments]]:
    """The paper's prediction rule: the k-best segments scoring > threshold.

    With restrictions (§3.2.1, for data without overlapping or embedded
    segments), candidates are visited greedily in descending score over all
    types, and one is dropped if `allow_overlap` is False and it shares a word
    with a segment kept before it, or if `allow_embedding` is False and its
    word set is a subset or superset of a kept one's (identical word sets of
    two types count as embedded): of two conflicting segments the higher
    scoring wins. Accepts one `Segments` or a list (returns a list); the
    result keeps the order by type, then descending score.
    """
    if isinstance(segments, Segments):
        items, single = [segments], True
    elif isinstance(segments, (list, tuple)):
        items, single = list(segments), False
        for i, s in enumerate(items):
            if not isinstance(s, Segments):
                raise TypeError(
                    f"segments (batch item {i}) must be Segments, not {type(s).__name__}"
                )
    else:
        raise TypeError(
            f"segments must be Segments or a list of them, not {type(segments).__name__}"
        )
    threshold = float(threshold)
    if np.isnan(threshold):
        raise ValueError("threshold is NaN")
    return unbatch(
        [_select_one(s, threshold, allow_overlap, allow_embedding) for s in items],
        single,
    )


def _select_one(
    seg: Segments, threshold: float, allow_overlap: bool, allow_embedding: bool
) -> Segments:
    above = np.flatnonzero(seg.scores > threshold)
    if allow_overlap and allow_embedding:
        keep = above
    else:
        order = above[np.argsort(-seg.scores[above], kind="stable")]
        o = seg.offsets.tolist()
        words = seg.words.tolist()
        used: set = set()
        kept_sets: List[frozenset] = []
        kept = []
        for s in order.tolist():
            ws = frozenset(words[o[s] : o[s + 1]])
            if not allow_overlap and not used.isdisjoint(ws):
                continue
            if not allow_embedding and any(ws <= q or q <= ws for q in kept_sets):
                continue
            kept.append(s)
            kept_sets.append(ws)
            used |= ws
        keep = np.sort(np.asarray(kept, dtype=np.int64))
    return _take(seg, keep)


def _take(seg: Segments, keep: np.ndarray) -> Segments:
    """The segments at indices `keep` (increasing), as a new Segments."""
    starts = seg.offsets[keep]
    lens = seg.offsets[keep + 1] - starts
    offsets = np.zeros(len(keep) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    # word index of each kept word: its segment's start + its rank within it
    idx = np.repeat(starts - offsets[:-1], lens) + np.arange(offsets[-1])
    return Segments(
        seg.types[keep].copy(), seg.scores[keep].copy(), offsets,
        seg.words[idx].astype(np.int64, copy=False),
    )
