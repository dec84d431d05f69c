"""Labeled span trees and nested span sets over a sentence of n words.

Scores have shape (n, n, L): `scores[i, j, l]` scores the span of words i..j
(inclusive, i <= j) with label l; entries with j < i are ignored, -inf (or a
False in the optional (n, n) or (n, n, L) boolean `mask`) forbids a labeled
span. Spans come back as an int64 (m, 3) array of rows (start, end, label),
end inclusive, sorted by start ascending then end descending (outer first).

Two formulations
----------------
1. Labeled binary trees (`cky_*`, constituency-style). A structure is a
   binary bracketing of the n words: its 2n - 1 spans are the n one-word
   leaves, n - 2 inner spans and the whole sentence, and every one of them
   carries exactly one label. Its score is the sum of its labeled spans'
   scores. With u[i, j] = logsumexp_l scores[i, j, l] the inside recursion is
       beta[i, i] = u[i, i],
       beta[i, j] = u[i, j] + logsumexp_{k=i}^{j-1} beta[i, k] + beta[k+1, j],
   log Z = beta[0, n-1]; the argmax replaces logsumexp by max. Marginals are
   the reverse-mode derivative of log Z (outside pass). n = 0 has exactly one
   (empty) tree: score 0, log Z = 0. If every tree scores -inf, argmax raises
   NoLegalStructureError, log Z is -inf and the marginals are all zero.

2. Laminar labeled span sets (`laminar_*`, nested NER). A structure is any
   set of labeled spans that pairwise do not cross (two spans are disjoint or
   nested; a span (i, j) appears at most once, with one label); the empty set
   is allowed, so log Z is always finite. Its score is the sum of the chosen
   spans' scores; spans left out score 0.
   The argmax is CKY with an extra "unlabeled" label of score 0 (a label is
   kept only if it scores strictly more): every laminar set completes to a
   binary tree, so the best tree gives the best set.
   How spurious ambiguity is avoided: for sums the completion is not unique
   (a set would be counted once per binary completion), so log Z uses a
   decomposition in which each set has exactly one derivation. With
   w[i, j] = sum_l exp scores[i, j, l],
       A[i, j] = weight of all sets within words i..j,
       N[i, j] = weight of those sets not containing span (i, j) itself,
   decompose a set by what covers word i: either no chosen span in i..j
   covers word i (the rest is any set within i+1..j), or the largest chosen
   span covering it is (i, k), k < j, chosen with any set strictly inside it,
   and the rest is any set within k+1..j (nothing can cross (i, k), and
   nothing larger starts at i). So
       N[i, i] = 1,   N[i, j] = A[i+1, j] + sum_{k=i}^{j-1} w[i, k] N[i, k] A[k+1, j],
       A[i, j] = N[i, j] (1 + w[i, j]),   Z = A[0, n-1],
   all computed in log space; marginals are its hand-written reverse-mode
   derivative.

Complexity (n words, L labels, one sentence): every function is
O(n^3 + n^2 L) time and O(n^2) scratch memory (plus the O(n^2 L) output of
the marginals); `add_hamming_cost` is O(n^2 L + m) for m gold spans.

Every function takes one array (and returns one result) or a list/tuple of
arrays (and returns a list): a batch is checked in Python, packed into one
buffer and decoded by one Cython call with the GIL released.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _spans
from .base import Structure
from .arrays import (
    ArrayOrBatch,
    NoLegalStructureError,
    as_batch,
    check_mask,
    check_scores,
    pack,
    per_item,
    unbatch,
    unpack,
    where,
)

__all__ = [
    "cky_argmax",
    "cky_log_partition",
    "cky_marginals",
    "laminar_argmax",
    "laminar_log_partition",
    "laminar_marginals",
    "add_hamming_cost",
    "crosses",
    "first_crossing",
    "outermost",
    "LaminarSpans",
    "SpanTrees",
    "NoLegalStructureError",
]

MaskOrBatch = Optional[Union[np.ndarray, Sequence[Optional[np.ndarray]]]]


def _check_one(x: object, index: int, single: bool) -> np.ndarray:
    """One sentence's scores as float64 (n, n, L), L >= 1, or a clear error."""
    s = check_scores(x, "scores", 3, index, single)
    if s.shape[0] != s.shape[1]:
        raise ValueError(
            f"scores{where(index, single)} must have shape (n, n, L), got {s.shape}"
        )
    if s.shape[2] == 0:
        raise ValueError(
            f"scores{where(index, single)} has no labels (shape {s.shape}); "
            f"L must be at least 1"
        )
    return s


def _prepare(scores: ArrayOrBatch, mask: MaskOrBatch):
    """Check, mask and pack a batch: the arguments of every Cython call."""
    items, single = as_batch(scores, "scores")
    masks = [None] * len(items) if mask is None else per_item(mask, "mask", len(items), single)
    arrays = []
    for b, (x, m) in enumerate(zip(items, masks)):
        s = _check_one(x, b, single)
        if m is not None:
            keep = check_mask(m, s.shape, "mask", b, single)
            s = np.where(keep != 0, s, -np.inf)
        arrays.append(s)
    flat, offsets = pack(arrays)
    lengths = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    nlabels = np.array([a.shape[2] for a in arrays], dtype=np.int64)
    return arrays, single, flat, offsets, lengths, nlabels


def _argmax(scores, mask, laminar: bool):
    arrays, single, flat, offsets, lengths, nlabels = _prepare(scores, mask)
    span_offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(np.maximum(2 * lengths - 1, 0), out=span_offsets[1:])
    spans = np.zeros(3 * span_offsets[-1], dtype=np.int64)
    counts = np.zeros(len(arrays), dtype=np.int64)
    best = np.zeros(len(arrays), dtype=np.float64)
    _spans.argmax(flat, offsets, lengths, nlabels, laminar, spans, span_offsets, counts, best)
    results = []
    for b in range(len(arrays)):
        if counts[b] < 0:
            raise NoLegalStructureError(
                f"every tree over scores{where(b, single)} has score -inf "
                f"(check the -inf entries and the mask)"
            )
        start = 3 * span_offsets[b]
        out = spans[start : start + 3 * counts[b]].reshape(-1, 3)
        results.append((out, float(best[b])))
    return unbatch(results, single)


def _log_partition(scores, mask, laminar: bool):
    arrays, single, flat, offsets, lengths, nlabels = _prepare(scores, mask)
    log_z = np.zeros(len(arrays), dtype=np.float64)
    _spans.log_partition(flat, offsets, lengths, nlabels, laminar, log_z)
    return unbatch([float(z) for z in log_z], single)


def _marginals(scores, mask, laminar: bool):
    arrays, single, flat, offsets, lengths, nlabels = _prepare(scores, mask)
    log_z = np.zeros(len(arrays), dtype=np.float64)
    marg = np.zeros_like(flat)
    _spans.marginals(flat, offsets, lengths, nlabels, laminar, log_z, marg)
    margs = unpack(marg, offsets, [a.shape for a in arrays])
    return unbatch([(float(z), m) for z, m in zip(log_z, margs)], single)


def cky_argmax(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """Best labeled binary tree: `(spans, score)`, spans (2n - 1, 3).

    Raises NoLegalStructureError if every tree scores -inf. O(n^3 + n^2 L).
    """
    return _argmax(scores, mask, False)


def cky_log_partition(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """log Z over all labeled binary trees (-inf if none is legal). O(n^3 + n^2 L)."""
    return _log_partition(scores, mask, False)


def cky_marginals(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """`(log_z, marginals)`: P(span (i, j) with label l is in the tree), (n, n, L).

    The gradient of log Z with respect to the scores, for CRF-style training.
    O(n^3 + n^2 L).
    """
    return _marginals(scores, mask, False)


def laminar_argmax(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """Best laminar labeled span set: `(spans, score)`, score >= 0.

    A span enters only if it strictly helps, so all-zero scores give no span.
    O(n^3 + n^2 L).
    """
    return _argmax(scores, mask, True)


def laminar_log_partition(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """log Z over all laminar labeled span sets, each counted once. O(n^3 + n^2 L)."""
    return _log_partition(scores, mask, True)


def laminar_marginals(scores: ArrayOrBatch, mask: MaskOrBatch = None):
    """`(log_z, marginals)`: P(span (i, j) with label l is in the set), (n, n, L).

    O(n^3 + n^2 L).
    """
    return _marginals(scores, mask, True)


def _check_gold(g: object, shape: Tuple[int, ...], index: int, single: bool) -> np.ndarray:
    at = where(index, single)
    if not isinstance(g, np.ndarray):
        g = np.asarray(g)
    if g.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    if g.dtype.kind not in "iu":
        raise TypeError(f"gold_spans{at} must hold integers, not dtype {g.dtype}")
    if g.ndim != 2 or g.shape[1] != 3:
        raise ValueError(
            f"gold_spans{at} must have shape (m, 3) of (start, end, label), got {g.shape}"
        )
    g = g.astype(np.int64)
    n, _, L = shape
    start, end, label = g[:, 0], g[:, 1], g[:, 2]
    bad = (start < 0) | (end >= n) | (start > end) | (label < 0) | (label >= L)
    if bad.any():
        row = g[np.argmax(bad)]
        raise ValueError(
            f"gold_spans{at} has span {tuple(int(v) for v in row)} outside a sentence "
            f"of {n} words with {L} labels (need 0 <= start <= end < n, 0 <= label < L)"
        )
    return g


def add_hamming_cost(
    scores: ArrayOrBatch,
    gold_spans: Union[np.ndarray, Sequence[np.ndarray]],
    cost: float = 1.0,
):
    """Scores for cost-augmented decoding: `scores + cost * (1 - 2 * gold)`.

    The Hamming cost (#predicted labeled spans not in gold + #gold not
    predicted) equals that per-span sum plus the constant #gold, so the argmax
    of these scores is the argmax of score + cost, for max-margin training.
    Gold spans are (start, end inclusive, label) rows; duplicates count once.
    """
    if not np.isfinite(cost) or isinstance(cost, (bool, np.bool_)):
        raise ValueError(f"cost must be a finite number, got {cost!r}")
    items, single = as_batch(scores, "scores")
    arrays = [_check_one(x, b, single) for b, x in enumerate(items)]
    golds = per_item(gold_spans, "gold_spans", len(items), single)
    results = []
    for b, (s, g) in enumerate(zip(arrays, golds)):
        gold = _check_gold(g, s.shape, b, single)
        sign = np.ones(s.shape)
        sign[gold[:, 0], gold[:, 1], gold[:, 2]] = -1.0
        results.append(s + float(cost) * sign)
    return unbatch(results, single)


# ------------------------------------------------------------ span-set helpers
Range = Tuple[int, int]


def crosses(a: Range, b: Range) -> bool:
    """Two [start, end) ranges overlap and neither contains the other."""
    return a[0] < b[0] < a[1] < b[1] or b[0] < a[0] < b[1] < a[1]


def first_crossing(ranges: Sequence[Range]) -> Optional[Tuple[Range, Range]]:
    """The first pair of [start, end) ranges (in start order) that cross, or
    None when the ranges are laminar and so can be one tree."""
    pairs = sorted(set((int(s), int(e)) for s, e in ranges))
    for i, a in enumerate(pairs):
        for b in pairs[i + 1:]:
            if b[0] >= a[1]:
                break
            if crosses(a, b):
                return a, b
    return None


def outermost(ranges: Sequence[Range]) -> List[int]:
    """Indices of the [start, end) ranges that no other range contains, in
    start order (of several equal ranges, the first); they never overlap
    when the ranges are laminar."""
    order = sorted(range(len(ranges)), key=lambda i: (ranges[i][0], -ranges[i][1]))
    out: List[int] = []
    for i in order:
        if out and ranges[i][1] <= ranges[out[-1]][1]:
            continue
        out.append(i)
    return out


# ----------------------------------------------------------- structure objects
class _SpanStructure(Structure):
    """Shared parts of the two span structures: a width limit, the indicator
    of a set of (start, end inclusive, label) rows, the Hamming cost."""

    laminar = True

    def __init__(self, max_width: int = 0) -> None:
        if isinstance(max_width, bool) or not isinstance(max_width, (int, np.integer)) or max_width < 0:
            raise ValueError(f"max_width must be 0 (no limit) or a positive integer, got {max_width!r}")
        self.max_width = int(max_width)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(max_width={self.max_width})"

    def masks(self, scores: Sequence[np.ndarray]) -> List[Optional[np.ndarray]]:
        """The (n, n) mask of allowed spans per sentence (None: all)."""
        if not self.max_width:
            return [None] * len(scores)
        return [_width_mask(s.shape[0], self.max_width) for s in scores]

    def argmax(self, scores: Sequence[np.ndarray]) -> List[np.ndarray]:
        if not len(scores):
            return []
        return [spans for spans, _ in _argmax(list(scores), self.masks(scores), self.laminar)]

    def log_partition(self, scores: Sequence[np.ndarray]) -> List[float]:
        if not len(scores):
            return []
        return _log_partition(list(scores), self.masks(scores), self.laminar)

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        if not len(scores):
            return []
        return _marginals(list(scores), self.masks(scores), self.laminar)

    def add_hamming_cost(self, scores, golds, cost: float = 1.0) -> List[np.ndarray]:
        return add_hamming_cost(list(scores), list(golds), cost)

    def indicator(self, shape: Tuple[int, ...], spans: np.ndarray) -> np.ndarray:
        G = np.zeros(shape, dtype=np.float64)
        spans = np.asarray(spans, dtype=np.int64).reshape(-1, 3)
        G[spans[:, 0], spans[:, 1], spans[:, 2]] = 1.0
        return G

    def same(self, y1: np.ndarray, y2: np.ndarray) -> bool:
        rows = lambda y: {tuple(int(v) for v in r) for r in np.asarray(y).reshape(-1, 3)}
        return rows(y1) == rows(y2)

    def local_marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """Every allowed span decides on its own between its labels and
        being out (score 0): a softmax over [0, scores[i, j, :]] per allowed span."""
        results = []
        for S in scores:
            n = S.shape[0]
            allowed = self._allowed(n)
            X = np.where(allowed[:, :, None], np.asarray(S, dtype=np.float64), -np.inf)
            top = np.maximum(X.max(axis=2, keepdims=True), 0.0)
            E = np.exp(X - top)
            denom = np.exp(-top) + E.sum(axis=2, keepdims=True)
            P = E / denom
            log_z = float(np.where(allowed, (np.log(denom) + top)[:, :, 0], 0.0).sum())
            results.append((log_z, P))
        return results

    def _allowed(self, n: int) -> np.ndarray:
        upper = np.triu(np.ones((n, n), dtype=bool))
        return upper if not self.max_width else upper & _width_mask(n, self.max_width)


class LaminarSpans(_SpanStructure):
    """Sets of labeled spans that pairwise do not cross (nested NER), decoded
    by CKY; any subset is allowed, the empty set included, and spans left
    out score 0 (see the module docstring, formulation 2).

    max_width: longest span in words (0: no limit).

    An annotation is (start, end inclusive, label) rows; a span may carry
    several gold labels, and then stands for any one of them: `gold_score`
    sums over the choices (log-sum-exp per span), `gold_target` takes the
    best-scoring one.
    """

    name = "laminar span set"
    laminar = True

    def _label_groups(self, gold: np.ndarray):
        groups = {}
        for s, e, l in np.asarray(gold, dtype=np.int64).reshape(-1, 3):
            labels = groups.setdefault((int(s), int(e)), [])
            if int(l) not in labels:
                labels.append(int(l))
        return groups

    def gold_target(self, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
        rows = [(s, e, max(labels, key=lambda l: scores[s, e, l]))
                for (s, e), labels in self._label_groups(gold).items()]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def gold_score(self, scores: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
        grad = np.zeros(scores.shape, dtype=np.float64)
        total = 0.0
        for (s, e), labels in self._label_groups(gold).items():
            values = scores[s, e, labels]
            top = values.max()
            weights = np.exp(values - top)
            total += float(top + np.log(weights.sum()))
            grad[s, e, labels] = weights / weights.sum()
        return total, grad


class SpanTrees(_SpanStructure):
    """Labeled binary trees over the words (constituency-style), decoded by
    CKY: 2n - 1 spans, each with exactly one label (the module docstring,
    formulation 1). A width limit would leave no binary tree over a longer
    sentence, so this structure has none.
    """

    name = "binary span tree"
    laminar = False

    def __init__(self) -> None:
        super().__init__(0)

    def __repr__(self) -> str:
        return "SpanTrees()"


def _width_mask(n: int, max_width: int) -> np.ndarray:
    width = np.arange(n)[None, :] - np.arange(n)[:, None] + 1
    return width <= max_width
