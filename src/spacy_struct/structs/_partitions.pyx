# cython: language_level=3
"""Cython core of the partition structure (see partitions.py).

A sequence of m items (a word's characters) cut into contiguous pieces; a
piece [i, j) scores S[i, j], read from the sequence's (m+1, m+1) block,
row-major. One call handles a whole batch with the GIL released: the
semi-Markov Viterbi (argmax) and forward-backward (log Z and the piece
marginals), O(m L) per sequence for pieces of at most L items.
"""
from libc.math cimport INFINITY, exp, log
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

from ._chart cimport largest


cdef inline double _logaddexp(double a, double b) noexcept nogil:
    if a == -INFINITY:
        return b
    if b == -INFINITY:
        return a
    if a > b:
        return a + log(1.0 + exp(b - a))
    return b + log(1.0 + exp(a - b))


cdef inline Py_ssize_t _first_start(Py_ssize_t j, Py_ssize_t max_len) noexcept nogil:
    """The first start i of a piece [i, j) no longer than max_len (< 0: any)."""
    if max_len < 0 or j - max_len < 0:
        return 0
    return j - max_len


def partition_argmax_batch(
    const double[::1] flat,
    const int64_t[::1] offsets,
    const int64_t[::1] lengths,
    Py_ssize_t max_len,
    int64_t[::1] out_cuts,
    int64_t[::1] out_counts,
    double[::1] out_scores,
):
    """Best partition of each sequence.

    Writes each sequence's cuts (interior offsets, increasing) to out_cuts
    from position sum of the previous lengths, their number to out_counts
    and the best score to out_scores (-inf when no partition is finite:
    then no cut is written).
    """
    cdef Py_ssize_t B = lengths.shape[0], b, m, N, i, j, lo, at, n_cuts, cut0 = 0
    cdef Py_ssize_t longest = largest(lengths)  # the DP arrays' size - 1
    cdef double v, w
    cdef const double* S
    cdef double* best = <double*>malloc((longest + 1) * sizeof(double))
    cdef Py_ssize_t* back = <Py_ssize_t*>malloc((longest + 1) * sizeof(Py_ssize_t))
    if best == NULL or back == NULL:
        free(best)
        free(back)
        raise MemoryError()
    with nogil:
        for b in range(B):
            m = lengths[b]
            N = m + 1
            S = &flat[offsets[b]]
            best[0] = 0.0
            back[0] = -1
            for j in range(1, N):
                best[j] = -INFINITY
                back[j] = -1
                lo = _first_start(j, max_len)
                for i in range(lo, j):
                    if best[i] == -INFINITY:
                        continue
                    w = S[i * N + j]
                    if w == -INFINITY:
                        continue
                    v = best[i] + w
                    if v > best[j]:
                        best[j] = v
                        back[j] = i
            out_scores[b] = best[m]
            n_cuts = 0
            if best[m] != -INFINITY:
                at = back[m]
                while at > 0:
                    n_cuts += 1
                    at = back[at]
                at = back[m]
                i = n_cuts
                while at > 0:
                    i -= 1
                    out_cuts[cut0 + i] = at
                    at = back[at]
            out_counts[b] = n_cuts
            cut0 += m
    free(best)
    free(back)


def partition_marginals_batch(
    const double[::1] flat,
    const int64_t[::1] offsets,
    const int64_t[::1] lengths,
    Py_ssize_t max_len,
    double[::1] out_log_z,
    double[::1] out_marginals,
):
    """log Z of each sequence and each piece's marginal probability.

    out_marginals has the layout of flat; entries that are no piece
    (i >= j, too long, score -inf) get 0. A sequence with no finite
    partition gets log Z = -inf and all-zero marginals.
    """
    cdef Py_ssize_t B = lengths.shape[0], b, m, N, i, j, lo
    cdef Py_ssize_t longest = largest(lengths)  # the DP arrays' size - 1
    cdef double w, log_z
    cdef const double* S
    cdef double* M
    cdef double* alpha = <double*>malloc((longest + 1) * sizeof(double))
    cdef double* beta = <double*>malloc((longest + 1) * sizeof(double))
    if alpha == NULL or beta == NULL:
        free(alpha)
        free(beta)
        raise MemoryError()
    with nogil:
        for b in range(B):
            m = lengths[b]
            N = m + 1
            S = &flat[offsets[b]]
            M = &out_marginals[offsets[b]]
            for i in range(N * N):
                M[i] = 0.0
            alpha[0] = 0.0
            for j in range(1, N):
                alpha[j] = -INFINITY
                lo = _first_start(j, max_len)
                for i in range(lo, j):
                    w = S[i * N + j]
                    if w != -INFINITY and alpha[i] != -INFINITY:
                        alpha[j] = _logaddexp(alpha[j], alpha[i] + w)
            beta[m] = 0.0
            for i in range(m - 1, -1, -1):
                beta[i] = -INFINITY
                for j in range(i + 1, N):
                    if max_len >= 0 and j - i > max_len:
                        break
                    w = S[i * N + j]
                    if w != -INFINITY and beta[j] != -INFINITY:
                        beta[i] = _logaddexp(beta[i], w + beta[j])
            log_z = alpha[m]
            out_log_z[b] = log_z
            if log_z == -INFINITY:
                continue
            for j in range(1, N):
                lo = _first_start(j, max_len)
                for i in range(lo, j):
                    w = S[i * N + j]
                    if w != -INFINITY and alpha[i] != -INFINITY and beta[j] != -INFINITY:
                        M[i * N + j] = exp(alpha[i] + w + beta[j] - log_z)
    free(alpha)
    free(beta)
