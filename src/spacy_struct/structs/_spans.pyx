# cython: language_level=3
"""Cython core of the span-tree decoders (see spans.py for the formulations).

Each entry point decodes a whole batch with the GIL released: `scores` is the
flat float64 concatenation of the sentences' (n, n, L) arrays (masks already
applied as -inf), `offsets` their start offsets, `lengths` and `nlabels` their
n and L. Scratch is allocated once, for the largest sentence.

Memory layout: per sentence, (i, j) tables are n*n row-major; the tables read
down a column in the O(n) inner loops (beta[k+1, j], A[k+1, j]) also keep a
transposed copy, so that every inner loop over split points is contiguous.
Marginals are the reverse-mode derivative of log Z: the adjoints are expected
counts (probabilities), pushed from parents to children, so they never need a
log-add and cannot overflow.
"""
from libc.math cimport INFINITY, exp, log, log1p
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memset

cdef double NEG_INF = -INFINITY


cdef inline double _softplus(double x) noexcept nogil:
    """log(1 + exp(x)) without overflow."""
    if x > 0:
        return x + log1p(exp(-x))
    return log1p(exp(x))


cdef inline double _sigmoid(double x) noexcept nogil:
    """exp(x) / (1 + exp(x)) without overflow."""
    cdef double z
    if x >= 0:
        return 1.0 / (1.0 + exp(-x))
    z = exp(x)
    return z / (1.0 + z)


cdef void _label_lse(const double* s, Py_ssize_t n, Py_ssize_t L,
                     double* u) noexcept nogil:
    """u[i, j] = logsumexp_l s[i, j, l] for i <= j: labels sum out first."""
    cdef Py_ssize_t i, j, l
    cdef const double* row
    cdef double mx, tot
    for i in range(n):
        for j in range(i, n):
            row = s + (i * n + j) * L
            mx = row[0]
            for l in range(1, L):
                if row[l] > mx:
                    mx = row[l]
            if mx == NEG_INF:
                u[i * n + j] = NEG_INF
                continue
            tot = 0.0
            for l in range(L):
                tot += exp(row[l] - mx)
            u[i * n + j] = mx + log(tot)


cdef void _label_marginals(const double* s, Py_ssize_t L, double g, double uij,
                           double* out) noexcept nogil:
    """Split a span's marginal g over its labels in proportion to exp(s)."""
    cdef Py_ssize_t l
    if g == 0.0 or uij == NEG_INF:
        return
    for l in range(L):
        out[l] = g * exp(s[l] - uij)


# ---------------------------------------------------------------- CKY trees

cdef double _cky_inside(const double* s, Py_ssize_t n, Py_ssize_t L,
                        double* u, double* beta, double* betaT, double* inner,
                        double* tmp) noexcept nogil:
    """Inside pass; returns log Z. beta = u + inner, inner = lse over splits."""
    cdef Py_ssize_t i, j, k
    cdef double uij, mx, t, tot, iv, b
    cdef double* left
    cdef double* right
    _label_lse(s, n, L, u)
    for i in range(n - 1, -1, -1):
        beta[i * n + i] = u[i * n + i]
        betaT[i * n + i] = u[i * n + i]
        inner[i * n + i] = 0.0
        left = beta + i * n
        for j in range(i + 1, n):
            uij = u[i * n + j]
            if uij == NEG_INF:
                iv = NEG_INF
            else:
                right = betaT + j * n + 1  # right[k] = beta[k + 1, j]
                mx = NEG_INF
                for k in range(i, j):
                    t = left[k] + right[k]
                    tmp[k] = t
                    if t > mx:
                        mx = t
                if mx == NEG_INF:
                    iv = NEG_INF
                else:
                    tot = 0.0
                    for k in range(i, j):
                        tot += exp(tmp[k] - mx)
                    iv = mx + log(tot)
            inner[i * n + j] = iv
            b = uij + iv
            beta[i * n + j] = b
            betaT[j * n + i] = b
    return beta[n - 1]


cdef void _cky_outside(const double* s, Py_ssize_t n, Py_ssize_t L,
                       const double* u, const double* beta, const double* betaT,
                       const double* inner, double* g, double* gT,
                       double* marg) noexcept nogil:
    """Push span marginals from parents to children (reverse of the inside).

    The marginal of (i, j) is g[i, j] + gT[j, i]: left-child contributions
    land in row i, right-child ones in column j, both contiguous.
    """
    cdef Py_ssize_t i, j, k
    cdef double G, iv, t, p
    memset(g, 0, n * n * sizeof(double))
    memset(gT, 0, n * n * sizeof(double))
    g[n - 1] = 1.0
    for i in range(n):
        for j in range(n - 1, i - 1, -1):
            G = g[i * n + j] + gT[j * n + i]
            if G == 0.0:
                continue
            _label_marginals(s + (i * n + j) * L, L, G, u[i * n + j],
                             marg + (i * n + j) * L)
            if j == i:
                continue
            iv = inner[i * n + j]
            for k in range(i, j):
                t = beta[i * n + k] + betaT[j * n + k + 1] - iv
                if t != NEG_INF:
                    p = G * exp(t)
                    g[i * n + k] += p
                    gT[j * n + k + 1] += p


cdef Py_ssize_t _cky_argmax(const double* s, Py_ssize_t n, Py_ssize_t L,
                            bint null_label, double* m, int64_t* lab,
                            double* best, double* bestT, int64_t* split,
                            int64_t* stack, int64_t* out,
                            double* score) noexcept nogil:
    """Viterbi CKY; writes the tree's spans in preorder, returns their count.

    With `null_label`, a span may also stay unlabeled at score 0 (a label is
    kept only if it scores strictly more) and only labeled spans are written.
    Returns -1 if no tree has a finite score. Preorder with the left child
    first is exactly start ascending, end descending.
    """
    cdef Py_ssize_t i, j, k, l, bk, sp, c
    cdef const double* row
    cdef double mx, bv, t
    cdef int64_t lb
    for i in range(n):
        for j in range(i, n):
            row = s + (i * n + j) * L
            if null_label:
                mx = 0.0
            else:
                mx = NEG_INF
            lb = -1
            for l in range(L):
                if row[l] > mx:
                    mx = row[l]
                    lb = l
            m[i * n + j] = mx
            lab[i * n + j] = lb
    for i in range(n - 1, -1, -1):
        best[i * n + i] = m[i * n + i]
        bestT[i * n + i] = m[i * n + i]
        split[i * n + i] = -1
        for j in range(i + 1, n):
            bk = -1
            bv = NEG_INF
            if m[i * n + j] != NEG_INF:
                for k in range(i, j):
                    t = best[i * n + k] + bestT[j * n + k + 1]
                    if t > bv:
                        bv = t
                        bk = k
            split[i * n + j] = bk
            if bk == -1:
                bv = NEG_INF
            else:
                bv = bv + m[i * n + j]
            best[i * n + j] = bv
            bestT[j * n + i] = bv
    score[0] = best[n - 1]
    if best[n - 1] == NEG_INF:
        return -1
    sp = 0
    c = 0
    stack[0] = 0
    stack[1] = n - 1
    sp = 1
    while sp > 0:
        sp -= 1
        i = stack[2 * sp]
        j = stack[2 * sp + 1]
        if lab[i * n + j] >= 0:
            out[3 * c] = i
            out[3 * c + 1] = j
            out[3 * c + 2] = lab[i * n + j]
            c += 1
        if j > i:
            k = split[i * n + j]
            stack[2 * sp] = k + 1  # right child first: the left one pops first
            stack[2 * sp + 1] = j
            stack[2 * sp + 2] = i
            stack[2 * sp + 3] = k
            sp += 2
    return c


# --------------------------------------------------------- laminar span sets

cdef double _laminar_inside(const double* s, Py_ssize_t n, Py_ssize_t L,
                            double* u, double* nn, double* aT, double* c,
                            double* tmp) noexcept nogil:
    """Log-space inside of the unique decomposition; returns log Z.

    nn[i, j] = log N[i, j] (sets within i..j without span (i, j)),
    aT[j, i] = log A[i, j] (all sets within i..j), c[i, k] = u[i, k] + nn[i, k]
    (span (i, k) chosen as the outermost span starting at i).
    """
    cdef Py_ssize_t i, j, k
    cdef double t0, t, mx, tot, nv
    cdef double* crow
    cdef double* right
    _label_lse(s, n, L, u)
    for i in range(n - 1, -1, -1):
        nn[i * n + i] = 0.0
        aT[i * n + i] = _softplus(u[i * n + i])
        c[i * n + i] = u[i * n + i]
        crow = c + i * n
        for j in range(i + 1, n):
            right = aT + j * n + 1  # right[k] = log A[k + 1, j]
            t0 = right[i]  # word i covered by no chosen span
            mx = t0
            for k in range(i, j):
                t = crow[k] + right[k]
                tmp[k] = t
                if t > mx:
                    mx = t
            tot = exp(t0 - mx)
            for k in range(i, j):
                tot += exp(tmp[k] - mx)
            nv = mx + log(tot)
            nn[i * n + j] = nv
            aT[j * n + i] = nv + _softplus(u[i * n + j])
            crow[j] = u[i * n + j] + nv
    return aT[(n - 1) * n]


cdef void _laminar_outside(const double* s, Py_ssize_t n, Py_ssize_t L,
                           const double* u, const double* nn, const double* aT,
                           const double* c, double* gaT, double* gu, double* gn,
                           double* marg) noexcept nogil:
    """Reverse-mode derivative of the laminar inside, adjoints d logZ/d(log x).

    gaT[j, i] for log A[i, j], gn[i, j] for log N[i, j], gu[i, j] for u[i, j]
    (the marginal of span (i, j)). Spans are visited in reverse inside order,
    so each has received all its parents' contributions when it is reached.
    """
    cdef Py_ssize_t i, j, k
    cdef double G, GN, base, t, p, uij
    memset(gaT, 0, n * n * sizeof(double))
    memset(gu, 0, n * n * sizeof(double))
    memset(gn, 0, n * n * sizeof(double))
    gaT[(n - 1) * n] = 1.0
    for i in range(n):
        for j in range(n - 1, i - 1, -1):
            G = gaT[j * n + i]
            uij = u[i * n + j]
            if G != 0.0 and uij != NEG_INF:
                gu[i * n + j] += G * _sigmoid(uij)
            GN = gn[i * n + j] + G
            if j > i and GN != 0.0:
                base = nn[i * n + j]
                gaT[j * n + i + 1] += GN * exp(aT[j * n + i + 1] - base)
                for k in range(i, j):
                    t = c[i * n + k] + aT[j * n + k + 1] - base
                    if t != NEG_INF:
                        p = GN * exp(t)
                        gu[i * n + k] += p
                        gn[i * n + k] += p
                        gaT[j * n + k + 1] += p
            _label_marginals(s + (i * n + j) * L, L, gu[i * n + j], uij,
                             marg + (i * n + j) * L)


# ------------------------------------------------------------- entry points

cdef Py_ssize_t _check(const double[::1] scores, const int64_t[::1] offsets,
                       const int64_t[::1] lengths,
                       const int64_t[::1] nlabels) except -1:
    """Check the batch description is consistent; return the largest n."""
    cdef Py_ssize_t b, nb = lengths.shape[0], n, maxn = 0
    if offsets.shape[0] != nb + 1 or nlabels.shape[0] != nb:
        raise ValueError("offsets, lengths and nlabels disagree on batch size")
    if nb and offsets[nb] != scores.shape[0]:
        raise ValueError("offsets do not cover the score buffer")
    for b in range(nb):
        n = lengths[b]
        if n < 0 or nlabels[b] < 1:
            raise ValueError("bad sentence length or label count")
        if offsets[b + 1] - offsets[b] != n * n * nlabels[b]:
            raise ValueError("offsets do not match lengths * lengths * nlabels")
        if n > maxn:
            maxn = n
    return maxn


cdef double* _alloc(Py_ssize_t count) except NULL:
    cdef double* p = <double*> malloc((count if count > 0 else 1) * sizeof(double))
    if p == NULL:
        raise MemoryError()
    return p


def log_partition(const double[::1] scores, const int64_t[::1] offsets,
                  const int64_t[::1] lengths, const int64_t[::1] nlabels,
                  bint laminar, double[::1] log_z):
    """log Z of every sentence into log_z (CKY trees or laminar sets)."""
    cdef Py_ssize_t maxn = _check(scores, offsets, lengths, nlabels)
    cdef Py_ssize_t nb = lengths.shape[0], b, n, L, nn2 = maxn * maxn
    if log_z.shape[0] != nb:
        raise ValueError("log_z has the wrong size")
    cdef double* buf = _alloc(4 * nn2 + maxn)
    cdef const double* base = &scores[0] if scores.shape[0] else NULL
    try:
        with nogil:
            for b in range(nb):
                n = lengths[b]
                L = nlabels[b]
                if n == 0:
                    log_z[b] = 0.0
                elif laminar:
                    log_z[b] = _laminar_inside(
                        base + offsets[b], n, L, buf, buf + nn2, buf + 2 * nn2,
                        buf + 3 * nn2, buf + 4 * nn2)
                else:
                    log_z[b] = _cky_inside(
                        base + offsets[b], n, L, buf, buf + nn2, buf + 2 * nn2,
                        buf + 3 * nn2, buf + 4 * nn2)
    finally:
        free(buf)


def marginals(const double[::1] scores, const int64_t[::1] offsets,
              const int64_t[::1] lengths, const int64_t[::1] nlabels,
              bint laminar, double[::1] log_z, double[::1] marg):
    """log Z and span marginals; `marg` (like `scores`) must be zero-filled."""
    cdef Py_ssize_t maxn = _check(scores, offsets, lengths, nlabels)
    cdef Py_ssize_t nb = lengths.shape[0], b, n, L, nn2 = maxn * maxn
    if log_z.shape[0] != nb or marg.shape[0] != scores.shape[0]:
        raise ValueError("log_z or marginals has the wrong size")
    cdef double* buf = _alloc(7 * nn2 + maxn)
    cdef const double* base = &scores[0] if scores.shape[0] else NULL
    cdef double* mbase = &marg[0] if marg.shape[0] else NULL
    cdef const double* s
    cdef double lz
    try:
        with nogil:
            for b in range(nb):
                n = lengths[b]
                L = nlabels[b]
                if n == 0:
                    log_z[b] = 0.0
                    continue
                s = base + offsets[b]
                if laminar:
                    lz = _laminar_inside(s, n, L, buf, buf + nn2, buf + 2 * nn2,
                                         buf + 3 * nn2, buf + 7 * nn2)
                    _laminar_outside(s, n, L, buf, buf + nn2, buf + 2 * nn2,
                                     buf + 3 * nn2, buf + 4 * nn2, buf + 5 * nn2,
                                     buf + 6 * nn2, mbase + offsets[b])
                else:
                    lz = _cky_inside(s, n, L, buf, buf + nn2, buf + 2 * nn2,
                                     buf + 3 * nn2, buf + 7 * nn2)
                    if lz != NEG_INF:
                        _cky_outside(s, n, L, buf, buf + nn2, buf + 2 * nn2,
                                     buf + 3 * nn2, buf + 4 * nn2, buf + 5 * nn2,
                                     mbase + offsets[b])
                log_z[b] = lz
    finally:
        free(buf)


def argmax(const double[::1] scores, const int64_t[::1] offsets,
           const int64_t[::1] lengths, const int64_t[::1] nlabels,
           bint null_label, int64_t[::1] spans, const int64_t[::1] span_offsets,
           int64_t[::1] counts, double[::1] best):
    """Best tree of every sentence: spans from 3 * span_offsets[b] on.

    counts[b] is the number of spans written, -1 if no tree is legal;
    span_offsets[b + 1] - span_offsets[b] must be at least 2n - 1.
    """
    cdef Py_ssize_t maxn = _check(scores, offsets, lengths, nlabels)
    cdef Py_ssize_t nb = lengths.shape[0], b, n, L, nn2 = maxn * maxn
    if (counts.shape[0] != nb or best.shape[0] != nb
            or span_offsets.shape[0] != nb + 1
            or spans.shape[0] < 3 * span_offsets[nb]):
        raise ValueError("output buffers have the wrong size")
    for b in range(nb):
        if lengths[b] and span_offsets[b + 1] - span_offsets[b] < 2 * lengths[b] - 1:
            raise ValueError("span_offsets leave too little room")
    cdef double* buf = _alloc(3 * nn2)
    cdef int64_t* ibuf = <int64_t*> malloc((2 * nn2 + 4 * maxn + 4) * sizeof(int64_t))
    if ibuf == NULL:
        free(buf)
        raise MemoryError()
    cdef const double* base = &scores[0] if scores.shape[0] else NULL
    cdef int64_t* obase = &spans[0] if spans.shape[0] else NULL
    try:
        with nogil:
            for b in range(nb):
                n = lengths[b]
                L = nlabels[b]
                if n == 0:
                    best[b] = 0.0
                    counts[b] = 0
                    continue
                counts[b] = _cky_argmax(
                    base + offsets[b], n, L, null_label, buf, ibuf,
                    buf + nn2, buf + 2 * nn2, ibuf + nn2, ibuf + 2 * nn2,
                    obase + 3 * span_offsets[b], &best[b])
    finally:
        free(buf)
        free(ibuf)
