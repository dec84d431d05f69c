# cython: language_level=3
"""Cython core of the Matrix-Tree marginals (see dependency.py).

The Matrix-Tree theorem needs two things of a sentence's Laplacian: its
log-determinant (log Z) and its inverse (the arc marginals). numpy gives
them from two LAPACK calls (slogdet, inv) that factorize every matrix
twice, and the Laplacian's construction and the marginals take a dozen
passes over (batch, n, n) arrays; at the sentence lengths of a parser (n =
10..80) those passes and calls cost more than the arithmetic. Here each
sentence is done whole while its matrix is in cache: weights, Laplacian,
one Gauss-Jordan elimination with partial pivoting (the inverse in place in
n^3 multiply-adds, the determinant in its pivots), marginals.
"""
from libc.math cimport INFINITY, exp, fabs, log
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc

from ._chart cimport largest


cdef int _invert_in_place(double* A, Py_ssize_t n, int64_t* swaps,
                          double* logabsdet) noexcept nogil:
    """Invert the row-major n x n matrix A in place; return the sign of its
    determinant (0 when it is singular, A then undefined) and set
    *logabsdet to log |det A|."""
    cdef Py_ssize_t i, j, k, p
    cdef double best, value, pivot, factor, tmp
    cdef double* row_k
    cdef double* row_i
    cdef int sign = 1
    logabsdet[0] = 0.0
    for k in range(n):
        # partial pivoting: the largest entry of column k at or below row k
        p = k
        best = fabs(A[k * n + k])
        for i in range(k + 1, n):
            value = fabs(A[i * n + k])
            if value > best:
                best = value
                p = i
        if best == 0.0:
            logabsdet[0] = -INFINITY
            return 0
        swaps[k] = p
        if p != k:
            sign = -sign
            for j in range(n):
                tmp = A[k * n + j]
                A[k * n + j] = A[p * n + j]
                A[p * n + j] = tmp
        row_k = A + k * n
        pivot = row_k[k]
        if pivot < 0:
            sign = -sign
        logabsdet[0] += log(fabs(pivot))
        # row k becomes row k of the inverse so far: its column k holds 1/pivot
        row_k[k] = 1.0
        factor = 1.0 / pivot
        for j in range(n):
            row_k[j] *= factor
        for i in range(n):
            if i == k:
                continue
            row_i = A + i * n
            factor = row_i[k]
            if factor == 0.0:
                continue
            row_i[k] = 0.0
            for j in range(n):
                row_i[j] -= factor * row_k[j]
    # the row swaps of the elimination are column swaps of the inverse,
    # undone in reverse order
    for k in range(n - 1, -1, -1):
        p = swaps[k]
        if p != k:
            for i in range(n):
                tmp = A[i * n + k]
                A[i * n + k] = A[i * n + p]
                A[i * n + p] = tmp
    return sign


def invert_with_logdet(double[:, :, ::1] matrices, double[::1] out_sign, double[::1] out_logabsdet):
    """Invert each matrix of a C-contiguous (B, n, n) float64 batch in place.

    out_sign[b] gets the sign of matrix b's determinant (0 if singular, when
    its entries are left undefined) and out_logabsdet[b] log |det|.
    """
    cdef Py_ssize_t B = matrices.shape[0]
    cdef Py_ssize_t n = matrices.shape[1]
    cdef Py_ssize_t b
    if matrices.shape[2] != n:
        raise ValueError(f"invert_with_logdet needs square matrices, got {n} x {matrices.shape[2]}")
    if out_sign.shape[0] != B or out_logabsdet.shape[0] != B:
        raise ValueError("invert_with_logdet: one sign and one log-determinant per matrix")
    if B == 0 or n == 0:
        for b in range(B):
            out_sign[b] = 1.0
            out_logabsdet[b] = 0.0
        return
    cdef int64_t* swaps = <int64_t*>malloc(n * sizeof(int64_t))
    if swaps == NULL:
        raise MemoryError()
    cdef double logabsdet
    try:
        with nogil:
            for b in range(B):
                out_sign[b] = _invert_in_place(&matrices[b, 0, 0], n, swaps, &logabsdet)
                out_logabsdet[b] = logabsdet
    finally:
        free(swaps)


cdef void _sentence(const double* S, Py_ssize_t N, bint single_root, double* L, int64_t* swaps,
                    double* shift, double* root, double* log_z, double* marg,
                    double* worst) noexcept nogil:
    """log Z and marginals of one sentence: S and marg are row-major N x N
    (N = n + 1, row/column 0 the root, [h, d] the arc h -> d); *worst gets
    the largest distance of a word's head marginals from summing to one (a
    tree gives every word one head), which tells lost precision; L (n x n),
    swaps, shift and root (n each) are work space."""
    cdef Py_ssize_t n = N - 1
    cdef Py_ssize_t h, i, j
    cdef double best, value, row_shift = 0.0, total = 0.0, logabsdet
    cdef int sign
    # Column shifts: every tree has one arc per column (the word's head), so
    # shifting a column by its largest score moves log Z by that shift and
    # no marginal; the root row, a row of its own with one root, is rescaled
    # by its own largest entry.
    for j in range(n):
        best = -INFINITY
        for h in range(N):
            if h != j + 1 and S[h * N + j + 1] > best:
                best = S[h * N + j + 1]
        shift[j] = best if best > -INFINITY else 0.0
        total += shift[j]
    for j in range(n):
        root[j] = S[j + 1] - shift[j]          # log weight of root -> word j+1
    if single_root:
        best = -INFINITY
        for j in range(n):
            if root[j] > best:
                best = root[j]
        row_shift = best if best > -INFINITY else 0.0
    for j in range(n):
        root[j] = exp(root[j] - row_shift)
    # Laplacian: L[i, j] = -A[i, j] off the diagonal (A the word -> word
    # weights), the column sums of A on it (+ the root weight with several
    # roots); with one root, row 0 is the root weights (Koo et al. 2007).
    # marg holds the word -> word weights until they become marginals
    for i in range(N * N):
        marg[i] = 0.0
    for j in range(n):
        L[j * n + j] = 0.0
    for i in range(n):
        for j in range(n):
            if i != j:
                value = exp(S[(i + 1) * N + j + 1] - shift[j])
                marg[(i + 1) * N + j + 1] = value
                L[i * n + j] = -value
                L[j * n + j] += value
    if single_root:
        for j in range(n):
            L[j] = root[j]
    else:
        for j in range(n):
            L[j * n + j] += root[j]
    sign = _invert_in_place(L, n, swaps, &logabsdet)
    worst[0] = 0.0
    if sign <= 0:
        log_z[0] = -INFINITY
        worst[0] = INFINITY                            # for the caller to tell why
        for i in range(N * N):
            marg[i] = 0.0
        return
    log_z[0] = logabsdet + total + row_shift
    # d log det / d L[i, j] = inv[j, i]. The arc h -> d (words i = h-1,
    # j = d-1) enters L[j, j] with +A and L[i, j] with -A, except in the
    # single-root matrix, where row 0 holds root weights instead.
    for j in range(n):
        if single_root:
            marg[j + 1] = root[j] * L[j * n]               # inv[j, 0]
            value = 0.0 if j == 0 else L[j * n + j]       # inv[j, j] counts only below row 0
        else:
            value = L[j * n + j]
            marg[j + 1] = root[j] * value
        for i in range(n):
            if i == j:
                continue
            if single_root and i == 0:
                best = value
            else:
                best = value - L[j * n + i]                # inv[j, j] - inv[j, i]
            marg[(i + 1) * N + j + 1] *= best
        value = -1.0
        for h in range(N):
            value += marg[h * N + j + 1]
        if fabs(value) > worst[0] or value != value:
            worst[0] = INFINITY if value != value else fabs(value)


def matrix_tree_batch(
    const double[::1] flat,
    const int64_t[::1] offsets,
    const int64_t[::1] sizes,
    bint single_root,
    double[::1] out_log_z,
    double[::1] out_marginals,
    double[::1] out_worst,
):
    """log Z and arc marginals of every sentence of a packed batch.

    flat: the (n+1) x (n+1) score matrices, row-major, one after another;
    offsets: where each starts (B + 1); sizes: n + 1 per sentence.
    out_log_z (B) gets log Z, -inf where the determinant is not positive
    (no tree, or a precision loss that the caller tells apart);
    out_marginals (like flat) the marginals, 0 there; out_worst (B) the
    largest distance of a word's head marginals from summing to one, +inf
    where the determinant is not positive.
    """
    cdef Py_ssize_t B = sizes.shape[0]
    cdef Py_ssize_t b, N
    cdef Py_ssize_t largest_n = max(largest(sizes) - 1, 1)     # words in the longest sentence
    cdef double* L = <double*>malloc(largest_n * largest_n * sizeof(double))
    cdef double* work = <double*>malloc(2 * largest_n * sizeof(double))
    cdef int64_t* swaps = <int64_t*>malloc(largest_n * sizeof(int64_t))
    if L == NULL or work == NULL or swaps == NULL:
        free(L)
        free(work)
        free(swaps)
        raise MemoryError()
    try:
        with nogil:
            for b in range(B):
                N = sizes[b]
                out_worst[b] = 0.0
                if N <= 1:
                    out_log_z[b] = 0.0
                    if N == 1:
                        out_marginals[offsets[b]] = 0.0
                    continue
                _sentence(&flat[offsets[b]], N, single_root, L, swaps, work, work + largest_n,
                          &out_log_z[b], &out_marginals[offsets[b]], &out_worst[b])
    finally:
        free(L)
        free(work)
        free(swaps)
