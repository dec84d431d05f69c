# cython: language_level=3
"""Cython core of the k-best gapped-segment decoder (see segments.py).

One call decodes a whole batch with the GIL released. Per type, the DP keeps
at every position i the k best partial segments ending at i, as (score,
predecessor position j, rank r in j's list). The k best at i are a k-way
merge of the predecessors' sorted lists shifted by g(j, i); a binary heap over
the predecessors' heads gives them in O(P + k log P) for P predecessors.
"""
from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


cdef inline void _sift_down(double* hv, Py_ssize_t* hj, Py_ssize_t* hr,
                            Py_ssize_t size, Py_ssize_t pos) noexcept nogil:
    """Restore the max-heap property below `pos`."""
    cdef double v = hv[pos]
    cdef Py_ssize_t j = hj[pos], r = hr[pos], child
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and hv[child + 1] > hv[child]:
            child += 1
        if hv[child] <= v:
            break
        hv[pos] = hv[child]
        hj[pos] = hj[child]
        hr[pos] = hr[child]
        pos = child
    hv[pos] = v
    hj[pos] = j
    hr[pos] = r


cdef Py_ssize_t _decode_one(
    const double* g, Py_ssize_t n, Py_ssize_t n_types, Py_ssize_t k,
    Py_ssize_t max_gap,
    double* sc, Py_ssize_t* bj, Py_ssize_t* br, Py_ssize_t* cnt,
    double* hv, Py_ssize_t* hj, Py_ssize_t* hr,
    int64_t* out_types, double* out_scores, int64_t* out_offsets,
    int64_t* out_words, Py_ssize_t seg0,
) noexcept nogil:
    """Decode one sentence; write its segments from index seg0 on.

    `g` is the sentence's (T, n+2, n+2) score block, `out_offsets[seg0]` is
    already set. Returns the number of segments written.
    """
    cdef Py_ssize_t N = n + 2, NN = N * N
    cdef Py_ssize_t t, i, j, lo, r, c, size, p, length, pos, q
    cdef Py_ssize_t m = seg0
    cdef double w, v
    cdef const double* gt
    cdef int64_t wbase
    for t in range(n_types):
        gt = g + t * NN
        cnt[0] = 1
        sc[0] = 0.0
        bj[0] = -1
        br[0] = -1
        for i in range(1, N):
            # Predecessors of i: the start sentinel (never for the end: the
            # empty segment), then words within the gap limit (the end may
            # follow any word: start and end transitions are not gaps).
            size = 0
            if i < N - 1:
                w = gt[i]  # g(0, i)
                if w != -INFINITY:
                    hv[size] = w
                    hj[size] = 0
                    hr[size] = 0
                    size += 1
            lo = 1
            if max_gap >= 0 and i < N - 1 and i - 1 - max_gap > 1:
                lo = i - 1 - max_gap
            for j in range(lo, i):
                if cnt[j] == 0:
                    continue
                w = gt[j * N + i]
                if w == -INFINITY:
                    continue
                hv[size] = sc[j * k] + w
                hj[size] = j
                hr[size] = 0
                size += 1
            p = size // 2 - 1
            while p >= 0:
                _sift_down(hv, hj, hr, size, p)
                p -= 1
            c = 0
            while c < k and size > 0:
                v = hv[0]
                if v == -INFINITY:
                    break
                j = hj[0]
                r = hr[0]
                sc[i * k + c] = v
                bj[i * k + c] = j
                br[i * k + c] = r
                c += 1
                if r + 1 < cnt[j]:
                    # Next best of the same predecessor replaces the head.
                    hv[0] = sc[j * k + r + 1] + gt[j * N + i]
                    hr[0] = r + 1
                else:
                    size -= 1
                    hv[0] = hv[size]
                    hj[0] = hj[size]
                    hr[0] = hr[size]
                if size > 0:
                    _sift_down(hv, hj, hr, size, 0)
            cnt[i] = c
        # Trace back every complete segment (the lists at n+1), best first.
        i = N - 1
        for c in range(cnt[i]):
            length = 0
            j = bj[i * k + c]
            r = br[i * k + c]
            while j > 0:
                length += 1
                q = bj[j * k + r]
                r = br[j * k + r]
                j = q
            wbase = out_offsets[m]
            out_offsets[m + 1] = wbase + length
            out_types[m] = t
            out_scores[m] = sc[i * k + c]
            pos = length
            j = bj[i * k + c]
            r = br[i * k + c]
            while j > 0:
                pos -= 1
                out_words[wbase + pos] = j - 1
                q = bj[j * k + r]
                r = br[j * k + r]
                j = q
            m += 1
    return m - seg0


def kbest_segments_batch(
    const double[::1] flat,
    const int64_t[::1] offsets,
    const int64_t[::1] lengths,
    const int64_t[::1] n_types,
    Py_ssize_t k,
    Py_ssize_t max_gap,
    int64_t[::1] out_types,
    double[::1] out_scores,
    int64_t[::1] out_offsets,
    int64_t[::1] out_words,
    int64_t[::1] out_counts,
):
    """Decode every sentence of a packed batch; return the segment total.

    Sentence b has `lengths[b]` words and `n_types[b]` types, its scores are
    `flat[offsets[b]:offsets[b+1]]` as (T, n+2, n+2). `k` is the list size of
    the DP (already capped by the caller), `max_gap` < 0 means no limit.
    Segments are written one after another; out_counts[b] gets how many
    belong to sentence b. The outputs must be sized for the bound k*T per
    sentence (segments) and k*T*n (words); the caller trims them.
    """
    cdef Py_ssize_t n_sent = lengths.shape[0]
    cdef Py_ssize_t b, N, n_max = 0, m = 0, got
    for b in range(n_sent):
        if lengths[b] > n_max:
            n_max = lengths[b]
    N = n_max + 2
    if k < 1:
        k = 1
    if k > (<Py_ssize_t>1 << 58) // N:  # N * k * 8 bytes must not overflow
        raise MemoryError(f"k-best segment decoder: k={k} is too large")
    cdef double* sc = <double*>malloc(N * k * sizeof(double))
    cdef Py_ssize_t* bj = <Py_ssize_t*>malloc(N * k * sizeof(Py_ssize_t))
    cdef Py_ssize_t* br = <Py_ssize_t*>malloc(N * k * sizeof(Py_ssize_t))
    cdef Py_ssize_t* cnt = <Py_ssize_t*>malloc(N * sizeof(Py_ssize_t))
    cdef double* hv = <double*>malloc(N * sizeof(double))
    cdef Py_ssize_t* hj = <Py_ssize_t*>malloc(N * sizeof(Py_ssize_t))
    cdef Py_ssize_t* hr = <Py_ssize_t*>malloc(N * sizeof(Py_ssize_t))
    try:
        if (sc == NULL or bj == NULL or br == NULL or cnt == NULL
                or hv == NULL or hj == NULL or hr == NULL):
            raise MemoryError("k-best segment decoder: out of memory")
        if out_offsets.shape[0] > 0:
            out_offsets[0] = 0
        with nogil:
            for b in range(n_sent):
                got = _decode_one(
                    &flat[0] + offsets[b], lengths[b], n_types[b], k, max_gap,
                    sc, bj, br, cnt, hv, hj, hr,
                    &out_types[0], &out_scores[0], &out_offsets[0],
                    &out_words[0], m,
                )
                out_counts[b] = got
                m += got
    finally:
        free(sc)
        free(bj)
        free(br)
        free(cnt)
        free(hv)
        free(hj)
        free(hr)
    return m


# ------------------------------------------------------------------ marginals
from libc.math cimport exp, log


cdef inline bint _is_arc(Py_ssize_t j, Py_ssize_t i, Py_ssize_t N,
                         Py_ssize_t max_gap) noexcept nogil:
    """Whether j -> i is a transition of the lattice (0 <= j < i <= N - 1):
    start -> word, word -> end, or word -> later word within the gap limit."""
    if j == 0:
        return i < N - 1
    if i == N - 1:
        return True
    return max_gap < 0 or i - j - 1 <= max_gap


cdef void _marginals_one(
    const double* g, Py_ssize_t n, Py_ssize_t n_types, Py_ssize_t max_gap,
    double* alpha, double* beta, double* out_log_mass, double* out_marg,
) noexcept nogil:
    """Forward-backward per type over the lattice of one sentence.

    Writes per type the log mass, log of the sum over segments of
    exp(score), and for every transition j -> i the share of that mass held
    by the segments that use it (in (T, N, N); all 0 when no segment is legal).
    """
    cdef Py_ssize_t N = n + 2, NN = N * N
    cdef Py_ssize_t t, i, j
    cdef double m, s, v
    cdef const double* gt
    cdef double* mt
    for t in range(n_types):
        gt = g + t * NN
        mt = out_marg + t * NN
        for i in range(NN):
            mt[i] = 0.0
        alpha[0] = 0.0
        for i in range(1, N):
            m = -INFINITY
            for j in range(i):
                if _is_arc(j, i, N, max_gap) and alpha[j] != -INFINITY:
                    v = alpha[j] + gt[j * N + i]
                    if v > m:
                        m = v
            s = 0.0
            if m != -INFINITY:
                for j in range(i):
                    if _is_arc(j, i, N, max_gap) and alpha[j] != -INFINITY:
                        s += exp(alpha[j] + gt[j * N + i] - m)
                alpha[i] = m + log(s)
            else:
                alpha[i] = -INFINITY
        beta[N - 1] = 0.0
        for j in range(N - 2, -1, -1):
            m = -INFINITY
            for i in range(j + 1, N):
                if _is_arc(j, i, N, max_gap) and beta[i] != -INFINITY:
                    v = gt[j * N + i] + beta[i]
                    if v > m:
                        m = v
            s = 0.0
            if m != -INFINITY:
                for i in range(j + 1, N):
                    if _is_arc(j, i, N, max_gap) and beta[i] != -INFINITY:
                        s += exp(gt[j * N + i] + beta[i] - m)
                beta[j] = m + log(s)
            else:
                beta[j] = -INFINITY
        v = alpha[N - 1]
        out_log_mass[t] = v
        if v == -INFINITY:
            continue
        for j in range(N - 1):
            if alpha[j] == -INFINITY:
                continue
            for i in range(j + 1, N):
                if _is_arc(j, i, N, max_gap) and beta[i] != -INFINITY:
                    mt[j * N + i] = exp(alpha[j] + gt[j * N + i] + beta[i] - v)


def segment_marginals_batch(
    const double[::1] flat,
    const int64_t[::1] offsets,
    const int64_t[::1] lengths,
    const int64_t[::1] n_types,
    Py_ssize_t max_gap,
    double[::1] out_log_mass,
    double[::1] out_marginals,
):
    """Log mass per type and transition shares of every sentence of a batch.

    Layout as `kbest_segments_batch`; sentence b's log masses go to
    out_log_mass[sum of n_types before b : ... + n_types[b]] and its shares
    to out_marginals[offsets[b]:offsets[b+1]], shaped (T, n+2, n+2).
    """
    cdef Py_ssize_t n_sent = lengths.shape[0]
    cdef Py_ssize_t b, n_max = 0, z0 = 0
    for b in range(n_sent):
        if lengths[b] > n_max:
            n_max = lengths[b]
    cdef double* alpha = <double*>malloc((n_max + 2) * sizeof(double))
    cdef double* beta = <double*>malloc((n_max + 2) * sizeof(double))
    try:
        if alpha == NULL or beta == NULL:
            raise MemoryError("segment marginals: out of memory")
        with nogil:
            for b in range(n_sent):
                _marginals_one(
                    &flat[0] + offsets[b], lengths[b], n_types[b], max_gap,
                    alpha, beta, &out_log_mass[0] + z0, &out_marginals[0] + offsets[b],
                )
                z0 += n_types[b]
    finally:
        free(alpha)
        free(beta)


# ------------------------------------------------------ two-phase lattice
def two_phase_fill(const double[:, :, ::1] scores, Py_ssize_t max_gap, double[:, :, ::1] out):
    """Fill `out`, (T, 2n+2, 2n+2) and all -inf, with the two-phase lattice
    of `scores`, (T, n+2, n+3) (the layout of `segments.two_phase_lattice`):
    start -> word in phase one, next word within phase one, a skip from
    phase one to phase two, any later word within phase two (skips within
    `max_gap` words, < 0: any), and the end from either phase, plus the
    gapped end column from phase two."""
    cdef Py_ssize_t T = scores.shape[0], n = scores.shape[1] - 2
    cdef Py_ssize_t t, j, i, E = 2 * n + 1
    if n < 0 or scores.shape[2] != n + 3:
        raise ValueError(f"two_phase_fill: scores must be (T, n+2, n+3), got {tuple(scores.shape)[:3]}")
    if out.shape[0] != T or out.shape[1] != 2 * n + 2 or out.shape[2] != 2 * n + 2:
        raise ValueError(f"two_phase_fill: out must be (T, 2n+2, 2n+2) = ({T}, {2 * n + 2}, {2 * n + 2}), "
                         f"got {tuple(out.shape)[:3]}")
    with nogil:
        for t in range(T):
            for i in range(n):
                out[t, 0, i + 1] = scores[t, 0, i + 1]
                out[t, i + 1, E] = scores[t, i + 1, n + 1]
                out[t, n + 1 + i, E] = scores[t, i + 1, n + 1] + scores[t, i + 1, n + 2]
                if i + 1 < n:
                    out[t, i + 1, i + 2] = scores[t, i + 1, i + 2]
            for j in range(n):
                for i in range(j + 1, n):
                    if max_gap >= 0 and i - j - 1 > max_gap:
                        break
                    out[t, n + 1 + j, n + 1 + i] = scores[t, j + 1, i + 1]
                    if i > j + 1:
                        out[t, j + 1, n + 1 + i] = scores[t, j + 1, i + 1]
