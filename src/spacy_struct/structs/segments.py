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

A gapped end. A score array may also come as (T, n+2, n+3): its last
column [t, i+1, n+2] = e(i, t) is added to the end transition of every
segment of type t that has a gap and ends at word i,

    f = g(0, i1) + ... + g(im, n+1) + [the segment has a gap] e(im),

so what closes a coordination ("human and mouse CD19 *genes*") can weigh
for the gapped reading and not for the contiguous ones, which a first-order
score cannot do: its end transition does not know whether a skip came
before. `GappedSegments` decodes and normalizes it exactly on a lattice of
two phases (`two_phase_lattice`): every word has a node before the first
skip and one after it, a skip leads from the first phase to the second, and
the end reads e only from the second; positions still increase along every
path, so the same kernels run on it, at four times the cells.

Likelihood (`segment_marginals`). The mass M_t = sum over segments y of
type t of exp(f(y)) is a path sum over the lattice of positions 0..n+1
(forward-backward, O(T n^2) per sentence), and its gradient gives each
transition's expected use. `GappedSegments` is the structure object over
both: the k-best decoder for prediction and the paper's margin loss, and a
CRF over segment *sets* for the "crf" loss (see the class).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from .arrays import ArrayOrBatch, as_batch, check_int, check_scores, pack, unbatch, where
from ._segments import kbest_segments_batch, segment_marginals_batch, two_phase_fill
from .base import Structure
from .coordination import (
    add_candidate_paths, candidate_index, candidate_paths, candidate_words, coordination_parts, find_candidate,
    is_coordinated, pack_coordination,
)

__all__ = [
    "GappedSegments", "Segments", "fold_two_phase", "has_gapped_end", "kbest_segments", "segment_marginals",
    "select_segments", "two_phase_lattice",
]


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
    def from_list(cls, items: Sequence[Tuple[int, Sequence[int]]]) -> "Segments":
        """Segments from (type, increasing word indices) pairs, score 0."""
        lengths = [len(words) for _, words in items]
        offsets = np.zeros(len(items) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        words = [w for _, ws in items for w in ws]
        return cls(
            np.array([t for t, _ in items], np.int64).reshape(-1),
            np.zeros(len(items), np.float64),
            offsets,
            np.array(words, np.int64).reshape(-1),
        )

    def keys(self) -> List[Tuple[int, Tuple[int, ...]]]:
        """(type, words) per segment: what identifies a segment."""
        return [(t, w) for t, w, _ in self.as_list()]

    @classmethod
    def empty(cls) -> "Segments":
        return cls(
            np.zeros(0, np.int64), np.zeros(0, np.float64),
            np.zeros(1, np.int64), np.zeros(0, np.int64),
        )


def check_k(k: object) -> int:
    k = check_int(k, "k")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    return k


def check_gap(max_gap: object, contiguous: bool) -> int:
    """The effective maximum gap; -1 means unlimited."""
    if max_gap is not None:
        max_gap = check_int(max_gap, "max_gap", "an int or None")
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


def _checked_batch(scores: ArrayOrBatch, max_gap: Optional[int], contiguous: bool):
    """(single, effective gap, checked float64 arrays, n per sentence, T per
    sentence): the input checks the batched kernels share."""
    items, single = as_batch(scores, "scores")
    gap = check_gap(max_gap, contiguous)
    arrays = [check_segment_scores(x, i, single) for i, x in enumerate(items)]
    ns = np.array([a.shape[1] - 2 for a in arrays], dtype=np.int64)
    ts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    return single, gap, arrays, ns, ts


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
    k = check_k(k)
    single, gap, arrays, ns, ts = _checked_batch(scores, max_gap, contiguous)
    if not arrays:
        return []
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
    gapped_threshold: Optional[float] = None,
) -> Union[Segments, List[Segments]]:
    """The paper's prediction rule: the k-best segments scoring > threshold
    (> gapped_threshold for a segment with a gap, when it is given).

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
    gapped_threshold = threshold if gapped_threshold is None else float(gapped_threshold)
    if np.isnan(threshold) or np.isnan(gapped_threshold):
        raise ValueError("threshold is NaN")
    return unbatch(
        [_select_one(s, threshold, gapped_threshold, allow_overlap, allow_embedding) for s in items],
        single,
    )


def _has_gap(seg: Segments) -> np.ndarray:
    """(m,) bool: whether each segment skips a word."""
    m = len(seg)
    if m == 0:
        return np.zeros(0, bool)
    owner = np.repeat(np.arange(m), np.diff(seg.offsets))
    skips = (np.diff(seg.words) > 1) & (owner[1:] == owner[:-1])
    return np.bincount(owner[1:][skips], minlength=m) > 0


def _select_one(
    seg: Segments, threshold: float, gapped_threshold: float, allow_overlap: bool, allow_embedding: bool
) -> Segments:
    if gapped_threshold == threshold:
        above = np.flatnonzero(seg.scores > threshold)
    else:
        above = np.flatnonzero(seg.scores > np.where(_has_gap(seg), gapped_threshold, threshold))
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
    """The segments at indices `keep` (in that order), as a new Segments."""
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


def segment_marginals(
    scores: ArrayOrBatch, max_gap: Optional[int] = None, contiguous: bool = False
) -> Union[Tuple[np.ndarray, np.ndarray], List[Tuple[np.ndarray, np.ndarray]]]:
    """Log mass per type and each transition's share of it, per sentence.

    `scores`: one (T, n+2, n+2) array or a list of them.
    RETURNS: (log_mass of shape (T,): log of the sum over legal segments y
    of type t of exp(f(y)), -inf when none is legal; shares of the scores'
    shape: the part of that sum held by the segments using transition
    j -> i, i.e. P(a segment drawn in proportion to exp(f) uses j -> i),
    0 outside the lattice), or a list of them.
    """
    single, gap, arrays, ns, ts = _checked_batch(scores, max_gap, contiguous)
    if not arrays:
        return []
    flat, offsets = pack(arrays)
    log_mass = np.zeros(int(ts.sum()), np.float64)
    shares = np.zeros_like(flat)
    segment_marginals_batch(flat, offsets, ns, ts, gap, log_mass, shares)
    z_off = np.concatenate([[0], np.cumsum(ts)])
    results = [
        (log_mass[z_off[b]:z_off[b + 1]].copy(), shares[offsets[b]:offsets[b + 1]].reshape(a.shape))
        for b, a in enumerate(arrays)
    ]
    return unbatch(results, single)


#: list size of the first decoding pass of `GappedSegments.argmax`: 8 keeps
#: the second pass rare (few segments of a type pass the threshold in one
#: sentence) and decodes CRAFT dev 18% faster than 16, the same segments
_FIRST_K = 8


def _top_per_type(seg: Segments, k: int) -> Segments:
    """The first k segments of each type (they come by type, best first)."""
    if len(seg) == 0:
        return seg
    starts = np.flatnonzero(np.r_[True, seg.types[1:] != seg.types[:-1]])
    rank = np.arange(len(seg)) - np.repeat(starts, np.diff(np.r_[starts, len(seg)]))
    keep = np.flatnonzero(rank < k)
    return seg if len(keep) == len(seg) else _take(seg, keep)


def transitions(n: int, words: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """The (from, to) lattice positions of a segment's transitions:
    0 -> first word, each word -> the next, last word -> n + 1."""
    pos = np.concatenate([[0], np.asarray(words, np.int64) + 1, [n + 1]])
    return pos[:-1], pos[1:]


def has_gapped_end(shape: Tuple[int, ...]) -> bool:
    """Whether a score array of this shape carries the gapped-end column:
    (T, n+2, n+3)."""
    return len(shape) == 3 and shape[2] == shape[1] + 1


def used_cells(shape: Tuple[int, ...], words: Sequence[int]) -> Tuple[np.ndarray, np.ndarray]:
    """The (row, column) cells of a score array of `shape` that a segment
    over `words` adds up: its transitions, and with a gapped-end column
    (`has_gapped_end`) the gapped end of its last word if it has a gap."""
    n = shape[1] - 2
    rows, cols = transitions(n, words)
    if has_gapped_end(shape) and np.any(np.diff(np.asarray(words)) > 1):
        rows, cols = np.append(rows, words[-1] + 1), np.append(cols, n + 2)
    return rows, cols


def _segment_score(scores: np.ndarray, t: int, words: Sequence[int]) -> float:
    """The score of one segment of type t over `words`."""
    return float(scores[t][used_cells(scores.shape, words)].sum())


def _two_phase_masks(n: int, gap: int) -> Tuple[np.ndarray, np.ndarray]:
    """(skips, onward), (n, n) bool over word pairs (j, i): a skip j -> i
    (i > j + 1) leads from the first phase to the second; in the second any
    later word may follow; both within `gap` skipped words (-1: any)."""
    skipped = np.arange(n)[None, :] - np.arange(n)[:, None] - 1
    within = skipped <= gap if gap >= 0 else np.ones((n, n), bool)
    return (skipped >= 1) & within, (skipped >= 0) & within


def two_phase_lattice(scores: np.ndarray, max_gap: Optional[int] = None, index: int = 0) -> np.ndarray:
    """The first-order lattice of a score array with a gapped end.

    scores: (T, n+2, n+3), the transitions as in a (T, n+2, n+2) array and
        e(i, t) in column n+2 (see the module docstring).
    max_gap: most words skipped between two words of a segment (None: any);
        the lattice applies it itself, so the kernels run on it unlimited.
    RETURNS: a (T, 2n+2, 2n+2) float64 array: node 0 the start, w + 1 word w
        before any skip, n + 1 + w word w after one, 2n + 1 the end; -inf
        where no segment goes. Its paths and the segments are one to one
        (the first skip decides the phase), with the same scores, so its
        k best paths and its path sum are the segments' (words of the
        second phase read back by `first_phase_words`).
    """
    S = check_scores(scores, "scores", 3, index, False)
    T, N, M = S.shape
    if M != N + 1 or N < 2:
        raise ValueError(f"scores{where(index, False)} with a gapped end must have shape (T, n+2, n+3), got {S.shape}")
    if T == 0:
        raise ValueError(f"scores{where(index, False)} has no segment types (T = 0)")
    n = N - 2
    A = np.full((T, 2 * n + 2, 2 * n + 2), -np.inf)
    two_phase_fill(S, check_gap(max_gap, False), A)
    return A


def fold_two_phase(d_lattice: np.ndarray, n: int, max_gap: Optional[int] = None) -> np.ndarray:
    """A quantity per cell of `two_phase_lattice` (a gradient, expected
    uses) summed back onto the cells of the (T, n+2, n+3) scores it was
    built from (0 where the lattice is -inf)."""
    T = d_lattice.shape[0]
    out = np.zeros((T, n + 2, n + 3))
    if n == 0:
        return out
    skips, onward = _two_phase_masks(n, check_gap(max_gap, False))
    second = slice(n + 1, 2 * n + 1)
    nxt = np.arange(n - 1)
    out[:, 0, 1:n + 1] = d_lattice[:, 0, 1:n + 1]
    out[:, nxt + 1, nxt + 2] = d_lattice[:, nxt + 1, nxt + 2]
    out[:, 1:n + 1, 1:n + 1] += np.where(skips, d_lattice[:, 1:n + 1, second], 0.0)
    out[:, 1:n + 1, 1:n + 1] += np.where(onward, d_lattice[:, second, second], 0.0)
    out[:, 1:n + 1, n + 1] = d_lattice[:, 1:n + 1, 2 * n + 1] + d_lattice[:, second, 2 * n + 1]
    out[:, 1:n + 1, n + 2] = d_lattice[:, second, 2 * n + 1]
    return out


def first_phase_words(seg: Segments, n: int) -> Segments:
    """Segments decoded on a two-phase lattice, with their second-phase
    nodes (n + w) read back as words w."""
    words = np.where(seg.words >= n, seg.words - n, seg.words)
    return Segments(seg.types, seg.scores, seg.offsets, words)


class GappedSegments(Structure):
    """Sets of typed gapped segments per sentence, as a structure object.

    A structure `y` is a `Segments` (types and words; scores unused). The
    scores of a sentence are (T, n+2, n+2), or (T, n+2, n+3) with a gapped
    end (module docstring), which every method below reads through the
    two-phase lattice; the arrays of one call are all of one kind. Either
    may come as a `CoordinatedScores` (`structs.coordination`), whose
    candidates' rates are exp(f + phi): `argmax`, `marginals`, `gold_score`
    and `score` apply the factor (checked against enumeration); `kbest`
    refuses it.
    - `argmax`: the k best segments per type (k = `k`, or the sentence
      length when 0, the paper's choice) that score above `threshold`
      (segments with a gap: above `gapped_threshold`, when it is given),
      under the restrictions given (`select_segments`).
    - `marginals`: for the "crf" loss, a distribution over *sets* of
      segments in which every segment y is present independently, with
      rate exp(f(y)) (a Poisson process over the segments of the lattice):
      P(G) = prod_{y in G} exp(f(y)) * exp(-M), M = sum over all segments of
      every type of exp(f(y)). So log Z = M (finite, by forward-backward),
      its gradient is the expected use of each transition, and the gold
      term is the plain sum of the gold segments' scores: the shared CRF
      loss is exactly -log P(gold set). Unlike one softmax per type, a
      sentence may hold several segments of a type, each decided on its
      own evidence. A gold set holds a segment 0 or 1 times, and the
      maximum-likelihood rate of a 0/1 count is its mean, so exp(f(y))
      estimates the probability that y is gold: f(y) > log(1/2) = -0.69 is
      the decision point. With `gapped_weight` w != 1 each gapped gold
      segment counts w times in the gold term (see `gold_score`), so a
      gapped segment's exp(f(y)) estimates w times that probability.
    - `candidates` / `candidate_indicator`: what the paper's multilabel
      margin loss needs (the k-best wrong segments and the gold ones).
    """

    name = "gapped segments"

    def __init__(
        self,
        max_gap: Optional[int] = None,
        contiguous: bool = False,
        k: int = 0,
        threshold: float = 0.0,
        allow_overlap: bool = True,
        allow_embedding: bool = True,
        gapped_weight: float = 1.0,
        gapped_threshold: Optional[float] = None,
    ) -> None:
        self.gap = check_gap(max_gap, contiguous)
        if isinstance(gapped_weight, bool) or not isinstance(gapped_weight, (int, float)) \
                or not np.isfinite(gapped_weight) or gapped_weight <= 0:
            raise ValueError(f"gapped_weight must be a finite number > 0, got {gapped_weight!r}")
        self.gapped_weight = float(gapped_weight)
        self.max_gap = None if self.gap < 0 else self.gap
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be 0 (the sentence length) or positive, got {k!r}")
        self.k = int(k)
        self.threshold = float(threshold)
        self.gapped_threshold = self.threshold if gapped_threshold is None else float(gapped_threshold)
        self.allow_overlap = bool(allow_overlap)
        self.allow_embedding = bool(allow_embedding)

    def _k(self, n: int) -> int:
        return self.k or max(n, 1)

    def kbest(self, scores: Sequence[np.ndarray]) -> List[Segments]:
        """The k best segments of each type per sentence (no threshold).

        With k = 0 each sentence keeps its own length's worth per type, so a
        sentence's result does not depend on the batch it is decoded in.
        """
        if not scores:
            return []
        if any(is_coordinated(S) for S in scores):
            raise ValueError(
                "k-best lists are not defined with the coordination factor (coordination_width > 0: a "
                "candidate's score is not a path score); decode with argmax, and train with the 'crf' loss"
            )
        k = max(self._k(S.shape[1] - 2) for S in scores)
        found = self._decode(scores, list(range(len(scores))), k)
        if self.k:
            return found
        return [_top_per_type(seg, self._k(S.shape[1] - 2)) for seg, S in zip(found, scores)]

    def argmax(self, scores: Sequence[np.ndarray]) -> List[Segments]:
        """The predicted segments per sentence (see the class docstring).

        The same as thresholding the k best, found faster: few segments of a
        type pass the threshold, so each sentence is decoded with a short
        list first, and again with a longer one only while a type fills its
        list with segments above the threshold (then some may be missing).
        With the coordination factor the lattice's lists rank by path score
        alone, so a sentence is decoded again while a type's list is full
        above the threshold and holds fewer than k segments that are not
        candidates (the candidates are decided on f + phi apart).
        """
        if not scores:
            return []
        coordinated = [is_coordinated(S) for S in scores]
        limits = [self._k(coordination_parts(S)[0].shape[1] - 2) for S in scores]
        lowest = min(self.threshold, self.gapped_threshold)
        found: List[Optional[Segments]] = [None] * len(scores)
        pending = list(range(len(scores)))
        k = min(_FIRST_K, max(limits))
        lattices = self._lattices(scores)
        while pending:
            decoded = self._decode(scores, pending, k, lattices)
            retry = []
            for i, seg in zip(pending, decoded):
                if coordinated[i]:
                    if self._coordinated_list_short(seg, scores[i], k, limits[i], lowest):
                        retry.append(i)
                        continue
                elif k > limits[i]:
                    seg = _top_per_type(seg, limits[i])
                elif k < limits[i]:
                    above = seg.types[seg.scores > lowest]
                    if len(above) and np.bincount(above).max() >= k:
                        retry.append(i)
                        continue
                found[i] = seg
            pending = retry
            k *= 4
        found = [_top_per_type(self._with_coordination(seg, S), limit) if coordinated_i else seg
                 for seg, S, limit, coordinated_i in zip(found, scores, limits, coordinated)]
        return select_segments(found, self.threshold, self.allow_overlap, self.allow_embedding,
                               self.gapped_threshold)

    @staticmethod
    def _coordinated_list_short(seg: Segments, scores: np.ndarray, k: int, limit: int, lowest: float) -> bool:
        """Whether a k-best list of a sentence with the coordination factor
        may miss segments that are not candidates and belong to the answer:
        some type fills its list above the threshold with fewer than
        `limit` non-candidates in it."""
        transitions, candidates, _ = coordination_parts(scores)
        above = seg.scores > lowest
        if not above.any() or np.bincount(seg.types[above]).max() < k:
            return False  # every segment above the threshold is listed
        plain = candidate_index(seg.offsets, seg.words, candidates, transitions.shape[1] - 2) < 0
        full = np.flatnonzero(np.bincount(seg.types[above]) >= k)
        kept = np.bincount(seg.types[above & plain], minlength=int(seg.types.max()) + 1)
        return bool(np.any(kept[full] < limit))

    def _legal_candidates(self, candidates: np.ndarray) -> np.ndarray:
        """Which candidates are segments of the lattice (skip at most
        `max_gap` words)."""
        if self.max_gap is None:
            return np.ones(len(candidates), bool)
        return candidates[:, 2] - candidates[:, 1] - 1 <= self.max_gap

    def _with_coordination(self, seg: Segments, scores: np.ndarray) -> Segments:
        """The decoded segments of one sentence with the coordination factor
        applied: the candidates the lattice found leave, and every legal
        candidate above the lower threshold comes in at f + phi, each
        decided on its own score (`argmax` cuts the list to k per type
        after)."""
        transitions, candidates, phi = coordination_parts(scores)
        if candidates is None or len(candidates) == 0:
            return seg
        n = transitions.shape[1] - 2
        kept = _take(seg, np.flatnonzero(candidate_index(seg.offsets, seg.words, candidates, n) < 0))
        total = np.where(self._legal_candidates(candidates)[None, :],
                         candidate_paths(transitions, candidates) + phi, -np.inf)
        types, chosen = np.nonzero(total > min(self.threshold, self.gapped_threshold))
        offsets, words = candidate_words(candidates[chosen])
        both = Segments(
            np.concatenate([kept.types, types.astype(np.int64)]),
            np.concatenate([kept.scores, total[types, chosen].astype(np.float64)]),
            np.concatenate([kept.offsets, kept.offsets[-1] + offsets[1:]]),
            np.concatenate([kept.words, words]),
        )
        return _take(both, np.lexsort((-both.scores, both.types)))

    def _lattices(self, scores: Sequence[np.ndarray]) -> Tuple[List[np.ndarray], Optional[int], bool]:
        """What the kernels run on, the gap limit to give them, and whether
        they are two-phase lattices: the score arrays and `max_gap`, or, for
        arrays with a gapped end, their lattices (which apply `max_gap`
        themselves) and None."""
        scores = [coordination_parts(S)[0] if isinstance(S, np.ndarray) else S for S in scores]
        ends = [isinstance(S, np.ndarray) and has_gapped_end(S.shape) for S in scores]
        if not any(ends):
            return list(scores), self.max_gap, False
        if not all(ends):
            raise ValueError(
                "scores: a batch mixes arrays with a gapped-end column, (T, n+2, n+3), and "
                f"without it: item {ends.index(False)} has shape {np.shape(scores[ends.index(False)])}"
            )
        return [two_phase_lattice(S, self.max_gap, i) for i, S in enumerate(scores)], None, True

    def _decode(self, scores: Sequence[np.ndarray], items: List[int], k: int,
                lattices: Optional[Tuple[List[np.ndarray], Optional[int], bool]] = None) -> List[Segments]:
        """The k best segments per type of the sentences `items`, in words
        (`lattices`: what `_lattices` gave for `scores`, if known)."""
        arrays, gap, two_phase = lattices or self._lattices(scores)
        found = kbest_segments([arrays[i] for i in items], k, max_gap=gap)
        if not two_phase:
            return found
        return [first_phase_words(seg, coordination_parts(scores[i])[0].shape[1] - 2) for i, seg in zip(items, found)]

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """(M, expected uses of each cell of the scores) per sentence, M the
        summed rate of all segments of every type (the log partition of the
        set model)."""
        if not scores:
            return []
        lattices, gap, two_phase = self._lattices(scores)
        out = []
        with np.errstate(divide="ignore", over="ignore"):
            for S, (log_mass, shares) in zip(scores, segment_marginals(lattices, max_gap=gap)):
                transitions, candidates, phi = coordination_parts(S)
                mass = np.exp(log_mass)  # 0 where no segment is legal
                # expected uses, inf only where the use itself overflows (no 0 * inf)
                uses = np.exp(np.log(shares) + log_mass[:, None, None])
                if two_phase:
                    uses = fold_two_phase(uses, transitions.shape[1] - 2, self.max_gap)
                if candidates is None:
                    out.append((float(mass.sum()), uses))
                    continue
                # M' = M + sum_c exp(f)(exp(phi) - 1): each candidate's
                # transitions are used at its new rate less its old one
                legal = self._legal_candidates(candidates)[None, :]
                f = candidate_paths(transitions, candidates)
                extra = np.where(legal & (phi != 0), np.exp(f) * np.expm1(phi), 0.0)  # no inf * 0
                add_candidate_paths(uses, candidates, extra)
                full = pack_coordination(uses, candidates, np.where(legal, np.exp(f + phi), 0.0))
                out.append((float(mass.sum() + extra.sum()), np.asarray(full)))
        return out

    def gold_score(self, scores: np.ndarray, gold: Segments) -> Tuple[float, np.ndarray]:
        """The gold term of the "crf" loss and its gradient: the gold
        segments' scores, a gapped one's counted `gapped_weight` times.
        With a weight w the loss is, up to a constant, the negative
        log-likelihood of a corpus in which each gapped gold segment
        appeared w times, so the rate the model learns for gapped segments
        (1.9% of CRAFT's mentions) rises about w-fold. A gold candidate of
        the coordination factor adds its phi (w times) to both."""
        transitions, candidates, phi = coordination_parts(scores)
        if candidates is None:
            return self._transition_gold_score(scores, gold)
        value, grad = self._transition_gold_score(transitions, gold)
        d_phi = np.zeros(phi.shape)
        legal = self._legal_candidates(candidates)
        for t, words in self.gold_target(scores, gold).keys():
            c = find_candidate(candidates, words)
            if c >= 0 and legal[c]:
                value += self.gapped_weight * float(phi[t, c])
                d_phi[t, c] += self.gapped_weight
        return value, np.asarray(pack_coordination(grad, candidates, d_phi))

    def _transition_gold_score(self, scores: np.ndarray, gold: Segments) -> Tuple[float, np.ndarray]:
        """`gold_score` over the transitions alone (a plain array)."""
        value, grad = super().gold_score(scores, gold)
        if self.gapped_weight == 1.0:
            return value, grad
        gapped = Segments.from_list([(t, words) for t, words in self.gold_target(scores, gold).keys()
                                     if np.any(np.diff(words) > 1)])
        extra = self.gapped_weight - 1.0  # each gapped segment is in the plain term once already
        return value + extra * self.score(scores, gapped), grad + extra * self.indicator(scores.shape, gapped)

    def indicator(self, shape: Tuple[int, ...], y: Segments) -> np.ndarray:
        """How often each transition is used by the segments of `y`."""
        out = np.zeros(shape, np.float64)
        for t, words in y.keys():
            np.add.at(out[t], used_cells(shape, words), 1.0)
        return out

    def score(self, scores: np.ndarray, y: Segments) -> float:
        """Sum of the segments' scores (with the coordination factor's phi
        for the candidates among them)."""
        transitions, candidates, phi = coordination_parts(scores)
        total = sum(_segment_score(transitions, t, words) for t, words in y.keys())
        if candidates is not None:
            legal = self._legal_candidates(candidates)
            for t, words in y.keys():
                c = find_candidate(candidates, words)
                if c >= 0 and legal[c]:
                    total += float(phi[t, c])
        return total

    def local_marginals(self, scores):
        raise ValueError(
            "the 'local' loss is not defined for gapped segments; use 'crf' or "
            "'multilabel_margin'"
        )

    def add_hamming_cost(self, scores, golds, cost):
        raise ValueError(
            "the 'margin' loss needs one best structure per sentence, and segments "
            "are a set; use 'multilabel_margin' (the paper's) or 'crf'"
        )

    def candidates(self, scores: Sequence[np.ndarray]) -> List[List[Tuple[Any, float]]]:
        """Per sentence, the k-best segments of every type as (key, score)."""
        return [
            [((t, w), s) for t, w, s in seg.as_list()] for seg in self.kbest(scores)
        ]

    def gold_candidates(self, scores: np.ndarray, gold: Segments) -> List[Tuple[Any, float]]:
        """The gold segments as (key, score)."""
        return [((t, words), _segment_score(scores, t, words)) for t, words in gold.keys()]

    def candidate_indicator(self, shape: Tuple[int, ...], key: Any) -> np.ndarray:
        """The transitions of one candidate segment (type, words)."""
        t, words = key
        return self.indicator(shape, Segments.from_list([(t, words)]))
