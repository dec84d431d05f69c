"""A factor over whole coordinations: two-fragment gapped segments scored as
a unit, on top of their transitions.

Why. A gapped segment's score in `segments` is first order: the skip from
the left conjunct's last word to the shared part's first word cannot see
where the conjunct starts or where the shared part ends. In GENIA the two
conjuncts of "A and B N" agree in length (|A| = |B| in most gapped gold
mentions), and whether [A] + [N] is read as one mention depends on [A] and
[B N] as wholes. A *candidate* is a two-fragment segment [a0..a1] + [b0..b1]
(0-based words, inclusive) with both fragments at most `max_fragment` words
and at most `max_gap` words skipped; the model gives each candidate and type
a score phi(c, t), added to the candidate's path score f(c, t).

Where it lives. The factor rides in the score array itself, so the losses,
the batching and the checks of the pipeline pass it through unchanged: a
`CoordinatedScores` is the sentence's transition array, (T, n+2, W) as in
`segments` (W = n+2, or n+3 with a gapped end), with max(2, ceil(m / W))
more rows when m > 0 that hold phi(c, t) row-major from cell 0 (the rest
0), and the candidates' words in its attribute `candidates`, (m, 4) int64
rows (a0, a1, b0, b1), increasing. The extra rows grow with m, not with
(n+2) m, and are at least two, so an array that lost its candidates (numpy
functions such as np.asarray or np.stack return plain arrays) has no plain
layout and is refused rather than read as a longer sentence. A gradient or expected-use
array has the same layout as a plain array (`pack_coordination` builds it,
`coordination_parts` reads it).

In the set CRF (`GappedSegments`, a Poisson process over segments) the rate
of a candidate becomes exp(f + phi), so the summed rate is

    M' = M + sum_c exp(f(c)) * (exp(phi(c)) - 1),

with M the lattice's path sum: exact, whatever the number of candidates,
and phi = 0 leaves every quantity as it was. Candidates that skip more words
than the structure's `max_gap` are not segments of its lattice: their phi is
ignored.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Optional, Tuple

import numpy as np

__all__ = [
    "CoordinatedScores", "add_candidate_paths", "candidate_paths", "coordination_candidates",
    "candidate_index", "candidate_words", "coordination_parts", "is_coordinated", "coordination_paths", "find_candidate",
    "fragment_paths",
    "pack_coordination",
]


class CoordinatedScores(np.ndarray):
    """One sentence's score array with the coordination factor's rows (see
    the module docstring). `candidates` survives copies, arithmetic,
    `astype` and pickling; a slice keeps it too, so read the parts with
    `coordination_parts`, not by slicing."""

    candidates: np.ndarray

    def __new__(cls, array: np.ndarray, candidates: np.ndarray) -> "CoordinatedScores":
        candidates = np.asarray(candidates, dtype=np.int64).reshape(-1, 4)
        if len(candidates) > 1:
            n = int(candidates.max()) + 1
            keys = ((candidates[:, 0] * n + candidates[:, 1]) * n + candidates[:, 2]) * n + candidates[:, 3]
            if np.any(np.diff(keys) <= 0):
                raise ValueError("candidates must be distinct rows (a0, a1, b0, b1) in increasing order")
        obj = np.asarray(array).view(cls)
        obj.candidates = candidates
        return obj

    def __array_finalize__(self, obj) -> None:
        self.candidates = getattr(obj, "candidates", np.zeros((0, 4), np.int64))

    def __reduce__(self):
        # pickled as a plain array plus the candidates
        return (CoordinatedScores, (np.asarray(self), self.candidates))


@lru_cache(maxsize=512)
def coordination_candidates(n: int, max_fragment: int, max_gap: int) -> np.ndarray:
    """Every candidate of an n-word sentence: (m, 4) int64 rows
    (a0, a1, b0, b1), ordered by a0, then a1, b0, b1; read-only, cached.

    max_fragment: most words in either fragment (>= 1).
    max_gap: most words skipped between them (>= 1).
    """
    if max_fragment < 1 or max_gap < 1:
        raise ValueError(f"max_fragment and max_gap must be >= 1, got {max_fragment} and {max_gap}")
    a0, la, gap, lb = np.meshgrid(
        np.arange(n), np.arange(max_fragment), np.arange(1, max_gap + 1), np.arange(max_fragment), indexing="ij"
    )
    a1 = a0 + la
    b0 = a1 + gap + 1
    b1 = b0 + lb
    keep = b1 < n
    out = np.stack([a0[keep], a1[keep], b0[keep], b1[keep]], axis=1).astype(np.int64)
    out.flags.writeable = False
    return out


def _extra_rows(m: int, width: int) -> int:
    """Rows that hold m values of phi per type: at least two (module
    docstring)."""
    return max(2, -(-m // width)) if m else 0


def pack_coordination(transitions: np.ndarray, candidates: np.ndarray, phi: np.ndarray) -> "CoordinatedScores":
    """The layout of the module docstring from (T, n+2, W) transitions, (m, 4)
    candidates and (T, m) values per candidate (scores, gradients, uses),
    in the transitions' dtype."""
    T, N, W = transitions.shape
    m = candidates.shape[0]
    extra = _extra_rows(m, W)
    out = np.zeros((T, N + extra, W), dtype=transitions.dtype)
    out[:, :N, :] = transitions
    tail = np.zeros((T, extra * W), dtype=transitions.dtype)
    tail[:, :m] = phi
    out[:, N:, :] = tail.reshape(T, extra, W)
    return CoordinatedScores(out, candidates)


def is_coordinated(scores: object) -> bool:
    """Whether a sentence's scores carry the coordination factor."""
    return getattr(scores, "candidates", None) is not None


def coordination_parts(scores: np.ndarray) -> Tuple[np.ndarray, Optional[np.ndarray], Optional[np.ndarray]]:
    """(transitions, candidates, phi) of one sentence's scores: the plain
    (T, n+2, W) array (a view), and for `CoordinatedScores` the (m, 4)
    candidates and the (T, m) values of the factor (a view); None for a
    plain array."""
    candidates = getattr(scores, "candidates", None)
    plain = np.asarray(scores)
    if candidates is None:
        return plain, None, None
    T, R, W = plain.shape
    m = candidates.shape[0]
    rows = R - _extra_rows(m, W)
    if rows < 2 or W not in (rows, rows + 1):
        raise ValueError(
            f"scores: a coordinated score array of shape {plain.shape} cannot hold {m} candidates "
            f"after (T, n+2, n+2) or (T, n+2, n+3) transitions"
        )
    return plain[:, :rows, :], candidates, plain[:, rows:, :].reshape(T, -1)[:, :m]


def _word_terms(transitions: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(u, v, inside), each (T, n): a contiguous segment [s..e] scores
    u[s] + v[e] (u = start - inside, v = inside + end), and inside[e] -
    inside[s] is the sum of its next-word transitions."""
    n = transitions.shape[1] - 2
    inside = np.zeros((transitions.shape[0], n), dtype=transitions.dtype)
    if n > 1:
        nxt = np.arange(n - 1)
        np.cumsum(transitions[:, nxt + 1, nxt + 2], axis=1, out=inside[:, 1:])
    u = transitions[:, 0, 1:n + 1] - inside
    v = inside + transitions[:, 1:n + 1, n + 1]
    return u, v, inside


def fragment_paths(transitions: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """(T, len(first)) scores of the contiguous segments [first..last] (0-based
    words, inclusive): start, next-word transitions, end."""
    u, v, _ = _word_terms(transitions)
    return np.take(u, first, axis=1) + np.take(v, last, axis=1)


def coordination_paths(transitions: np.ndarray, candidates: np.ndarray) -> Tuple[np.ndarray, ...]:
    """(T, m) scores of each candidate's left fragment [a0..a1] alone, of its
    right fragment [b0..b1] alone, and of its own path f (`candidate_paths`),
    from one pass of gathers."""
    T, N, W = transitions.shape
    n = N - 2
    a0, a1, b0, b1 = candidates.T
    u, v, inside = _word_terms(transitions)
    u_a0, v_b1 = np.take(u, a0, axis=1), np.take(v, b1, axis=1)
    left = u_a0 + np.take(v, a1, axis=1)
    right = np.take(u, b0, axis=1) + v_b1
    skip = np.take(transitions.reshape(T, N * W), (a1 + 1) * W + b0 + 1, axis=1)
    path = u_a0 + np.take(inside, a1, axis=1) + skip - np.take(inside, b0, axis=1) + v_b1
    if W == n + 3:
        path += np.take(transitions[:, 1:n + 1, n + 2], b1, axis=1)
    return left, right, path


def candidate_paths(transitions: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """(T, m) path score f(c, t) of every candidate: start, the next-word
    transitions inside both fragments, the skip, the end, and with a gapped
    end (W = n+3) e(b1), as `segments` scores a segment."""
    T, N, W = transitions.shape
    n = N - 2
    a0, a1, b0, b1 = candidates.T
    u, v, inside = _word_terms(transitions)
    path = (np.take(u, a0, axis=1) + np.take(inside, a1, axis=1)
            + np.take(transitions.reshape(T, N * W), (a1 + 1) * W + b0 + 1, axis=1)
            - np.take(inside, b0, axis=1) + np.take(v, b1, axis=1))
    if W == n + 3:
        path += np.take(transitions[:, 1:n + 1, n + 2], b1, axis=1)
    return path


def add_candidate_paths(out: np.ndarray, candidates: np.ndarray, weights: np.ndarray) -> None:
    """Add weights[t, c] to every transition cell of `out` ((T, n+2, W),
    in place) that candidate c's path uses: the gradient of
    sum_c weights[t, c] * f(c, t)."""
    T, N, W = out.shape
    n = N - 2
    if candidates.shape[0] == 0:
        return
    a0, a1, b0, b1 = candidates.T
    weights = np.asarray(weights, np.float64)
    rows = [np.zeros_like(a0), a1 + 1, b1 + 1] + ([b1 + 1] if W == n + 3 else [])
    cols = [a0 + 1, b0 + 1, np.full_like(b1, n + 1)] + ([np.full_like(b1, n + 2)] if W == n + 3 else [])
    # one bincount over flat cell indices (np.add.at is slow on thousands)
    cells = np.concatenate([r * W + c for r, c in zip(rows, cols)])
    flat = (np.arange(T)[:, None] * (N * W) + cells[None, :]).ravel()
    out += np.bincount(flat, np.tile(weights, (1, len(rows))).ravel(), minlength=T * N * W).reshape(T, N, W)
    # inside the fragments: +w on next-word transitions s..e-1, as a
    # difference array over words, summed up
    marks = np.concatenate([a0, a1, b0, b1])
    signs = np.concatenate([weights, -weights, weights, -weights], axis=1)
    flat = (np.arange(T)[:, None] * (n + 1) + marks[None, :]).ravel()
    diff = np.bincount(flat, signs.ravel(), minlength=T * (n + 1)).reshape(T, n + 1)
    nxt = np.arange(n - 1)
    out[:, nxt + 1, nxt + 2] += np.cumsum(diff, axis=1)[:, :n - 1]


def find_candidate(candidates: np.ndarray, words: np.ndarray) -> int:
    """Index of the candidate with exactly these words (increasing, 0-based),
    or -1 when the segment is not a candidate."""
    words = np.asarray(words, np.int64)
    steps = np.diff(words)
    breaks = np.flatnonzero(steps > 1)
    if len(breaks) != 1 or np.any(steps < 1):
        return -1
    key = np.array([words[0], words[breaks[0]], words[breaks[0] + 1], words[-1]])
    # fragments must be contiguous runs; the rows are whole runs, so the key
    # identifies the segment exactly
    hit = np.flatnonzero((candidates == key).all(axis=1))
    return int(hit[0]) if len(hit) else -1


def _keys(a0, a1, b0, b1, n: int) -> np.ndarray:
    """One int per (a0, a1, b0, b1), increasing in their lexicographic order
    (the order of `coordination_candidates`)."""
    return ((a0 * n + a1) * n + b0) * n + b1


def candidate_index(offsets: np.ndarray, words: np.ndarray, candidates: np.ndarray, n: int) -> np.ndarray:
    """For segments in CSR form (`offsets`, `words`, 0-based words of an
    n-word sentence), the index of the candidate each one is, or -1: all at
    once (`find_candidate` is the one-segment version)."""
    count = len(offsets) - 1
    out = np.full(count, -1, np.int64)
    if count == 0 or len(candidates) == 0 or len(words) < 2:
        return out
    owner = np.repeat(np.arange(count), np.diff(offsets))
    # jump[i]: words i and i + 1 are of one segment, with a gap between them
    jump = np.zeros(len(words), bool)
    jump[:-1] = (owner[1:] == owner[:-1]) & (np.diff(words) > 1)
    where = np.flatnonzero(jump)
    one_gap = np.flatnonzero(np.bincount(owner[where], minlength=count) == 1)
    if len(one_gap) == 0:
        return out
    at = np.full(count, -1, np.int64)
    at[owner[where]] = where  # for a segment with one gap, its position
    p = at[one_gap]
    keys = _keys(words[offsets[one_gap]], words[p], words[p + 1], words[offsets[one_gap + 1] - 1], n)
    known = _keys(*candidates.T, n)
    index = np.minimum(np.searchsorted(known, keys), len(known) - 1)
    hit = known[index] == keys
    out[one_gap[hit]] = index[hit]
    return out


def candidate_words(candidates: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """(offsets, words): the candidates' words in CSR form."""
    a0, a1, b0, b1 = candidates.T
    left, right = a1 - a0 + 1, b1 - b0 + 1
    lengths = left + right
    offsets = np.zeros(len(candidates) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # word k of candidate c: a0 + k while k < |A|, then b0 + k - |A|
    rank = np.arange(offsets[-1]) - np.repeat(offsets[:-1], lengths)
    in_left = rank < np.repeat(left, lengths)
    words = np.where(in_left, np.repeat(a0, lengths) + rank, np.repeat(b0 - left, lengths) + rank)
    return offsets, words.astype(np.int64)
