# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Cython cores of the second-order (sibling) dependency-tree structure.

Input is one flat float64 buffer with the (n+1)^3 part-score arrays of a
whole batch, `parts[h, s, m]` = score of the arc h -> m when s is the
previous dependent of h on m's side (the next one closer to h), or s == h
when m is h's closest dependent on that side (McDonald & Pereira 2006's
s(h, -, m)). Node 0 is the root. Every function loops over the sentences with
the GIL released and allocates its scratch once, for the largest sentence.
The Python layer (`siblings.py`) validates the input; nothing here raises but
MemoryError.

Second-order Eisner (McDonald & Pereira 2006, Fig. 3), items over nodes
s < t:
  C[s,t,0] complete, head t;  C[s,t,1] complete, head s;
  I[s,t,0] incomplete, arc t -> s;  I[s,t,1] incomplete, arc s -> t;
  S[s,t]   sibling: s's right subtree next to t's left subtree, both
           dependents of a head outside [s, t] on the same side.
  I[s,t,1] = C[s+1,t,0] + parts[s,s,t]                    (t is s's first right dependent)
           | I[s,r,1] + S[r,t] + parts[s,r,t],  s < r < t (r is the one before t)
  I[s,t,0] = C[s,t-1,1] + parts[t,t,s]                    (s is t's first left dependent)
           | S[s,r] + I[r,t,0] + parts[t,r,s],  s < r < t
  S[s,t]   = C[s,r,1] + C[r+1,t,0],  s <= r < t
  C[s,t,0] = C[s,r,0] + I[r,t,0],  s <= r < t;   C[s,t,1] = I[s,r,1] + C[r,t,1],  s < r <= t
Every projective tree has exactly one derivation, so the same recursion
with log-sum-exp gives log Z, and its reverse pass the part marginals. Single
root: the root's incomplete items take only the first-dependent rule, so
exactly one word hangs from the root. All O(n^3).
"""
from libc.math cimport INFINITY, exp, fabs, log
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from ._chart cimport ix, largest

cdef double NEG_INF = -INFINITY


cdef inline int64_t part(int64_t h, int64_t s, int64_t m, int64_t N) noexcept nogil:
    return (h * N + s) * N + m


cdef struct Chart:
    # the chart of the largest sentence of the batch, reused for every sentence
    double* C
    double* I
    double* S        # S[s * N + t]
    double* terms    # the terms of one item (inside pass), N of them at most
    double* gC       # adjoints (inside/outside) or NULL
    double* gI
    double* gS
    int64_t* bC      # back-pointers (argmax) or NULL
    int64_t* bI
    int64_t* bS
    int64_t* stack


cdef int chart_alloc(Chart* c, int64_t N, bint argmax) noexcept nogil:
    cdef size_t cells = N * N * 2
    c.C = <double*>malloc(cells * sizeof(double))
    c.I = <double*>malloc(cells * sizeof(double))
    c.S = <double*>malloc(N * N * sizeof(double))
    c.terms = <double*>malloc((N + 1) * sizeof(double))
    c.gC = c.gI = c.gS = NULL
    c.bC = c.bI = c.bS = c.stack = NULL
    if argmax:
        c.bC = <int64_t*>malloc(cells * sizeof(int64_t))
        c.bI = <int64_t*>malloc(cells * sizeof(int64_t))
        c.bS = <int64_t*>malloc(N * N * sizeof(int64_t))
        c.stack = <int64_t*>malloc(4 * (3 * N + 3) * sizeof(int64_t))
        if c.bC == NULL or c.bI == NULL or c.bS == NULL or c.stack == NULL:
            return -1
    else:
        c.gC = <double*>malloc(cells * sizeof(double))
        c.gI = <double*>malloc(cells * sizeof(double))
        c.gS = <double*>malloc(N * N * sizeof(double))
        if c.gC == NULL or c.gI == NULL or c.gS == NULL:
            return -1
    return 0 if (c.C != NULL and c.I != NULL and c.S != NULL and c.terms != NULL) else -1


cdef void chart_free(Chart* c) noexcept nogil:
    free(c.C); free(c.I); free(c.S); free(c.terms); free(c.gC); free(c.gI); free(c.gS)
    free(c.bC); free(c.bI); free(c.bS); free(c.stack)


# --------------------------------------------------------------------------
# One term of an item: the value of its r-th way of being built. The argmax,
# the inside and the outside pass all read the terms through these, so the
# three passes cannot disagree on the recursion.
# --------------------------------------------------------------------------

cdef inline double sibling_term(const double* C, int64_t N, int64_t s, int64_t t, int64_t r) noexcept nogil:
    return C[ix(s, r, 1, N)] + C[ix(r + 1, t, 0, N)]


cdef inline double right_term(const double* sc, const double* C, const double* I, const double* S,
                              int64_t N, int64_t s, int64_t t, int64_t r) noexcept nogil:
    """I[s,t,1] built with r the dependent of s before t (r == s: none)."""
    if r == s:
        return C[ix(s + 1, t, 0, N)] + sc[part(s, s, t, N)]
    return I[ix(s, r, 1, N)] + S[r * N + t] + sc[part(s, r, t, N)]


cdef inline double left_term(const double* sc, const double* C, const double* I, const double* S,
                             int64_t N, int64_t s, int64_t t, int64_t r) noexcept nogil:
    """I[s,t,0] built with r the dependent of t before s (r == t: none)."""
    if r == t:
        return C[ix(s, t - 1, 1, N)] + sc[part(t, t, s, N)]
    return S[s * N + r] + I[ix(r, t, 0, N)] + sc[part(t, r, s, N)]


cdef inline double left_complete_term(const double* C, const double* I, int64_t N,
                                      int64_t s, int64_t t, int64_t r) noexcept nogil:
    return C[ix(s, r, 0, N)] + I[ix(r, t, 0, N)]


cdef inline double right_complete_term(const double* C, const double* I, int64_t N,
                                       int64_t s, int64_t t, int64_t r) noexcept nogil:
    return I[ix(s, r, 1, N)] + C[ix(r, t, 1, N)]


cdef inline bint root_alone(bint single_root, int64_t s) noexcept nogil:
    """Whether the root's incomplete item may only take its first dependent."""
    return single_root and s == 0


# --------------------------------------------------------------------------
# How the argmax and the search read the parts: all of them, from the
# (n+1)^3 array, or only the kept ones (pruned by first-order score, see
# siblings.kept_parts):
#   arc_index[h * N + m]  the kept arc's number a, or -1 (arc pruned);
#   part_start[a] .. part_start[a + 1]  its parts, whose previous siblings
#       are part_sibling[j] (h first, for "no sibling", then ascending) and
#       scores part_score[j];
#   head_start[m] .. head_start[m + 1]  m's kept heads, head_list[j], ascending.
# A part not kept scores -inf, and an item's ways of being built are read
# in the same order either way (the first-dependent term first, then
# siblings ascending), so with every part kept both give the same trees;
# pruned, they touch only kept parts and O(N^2) chart cells.
# --------------------------------------------------------------------------

cdef struct Parts:
    int64_t N
    const double* full          # the (N, N, N) array, or NULL when pruned
    const int64_t* arc_index
    const int64_t* part_start
    const int64_t* part_sibling
    const double* part_score
    const int64_t* head_start
    const int64_t* head_list


cdef inline void full_parts(Parts* p, const double* sc, int64_t N) noexcept nogil:
    p.N = N
    p.full = sc


cdef inline double part_score(const Parts* p, int64_t h, int64_t s, int64_t m) noexcept nogil:
    cdef int64_t a, j
    if p.full != NULL:
        return p.full[part(h, s, m, p.N)]
    a = p.arc_index[h * p.N + m]
    if a < 0:
        return NEG_INF
    for j in range(p.part_start[a], p.part_start[a + 1]):
        if p.part_sibling[j] == s:
            return p.part_score[j]
    return NEG_INF


cdef inline int64_t sibling_count(const Parts* p, int64_t h, int64_t m) noexcept nogil:
    """How many previous siblings the arc h -> m can have (h itself included)."""
    cdef int64_t a
    if p.full != NULL:
        return h - m if h > m else m - h
    a = p.arc_index[h * p.N + m]
    return 0 if a < 0 else p.part_start[a + 1] - p.part_start[a]


cdef inline int64_t sibling_at(const Parts* p, int64_t h, int64_t m, int64_t j, double* score) noexcept nogil:
    """The j-th previous sibling of the arc h -> m (j = 0: h, none) and its part's score."""
    cdef int64_t r, k
    if p.full != NULL:
        r = h if j == 0 else (m if m < h else h) + j
        score[0] = p.full[part(h, r, m, p.N)]
        return r
    k = p.part_start[p.arc_index[h * p.N + m]] + j
    score[0] = p.part_score[k]
    return p.part_sibling[k]


cdef inline int64_t head_count(const Parts* p, int64_t m) noexcept nogil:
    if p.full != NULL:
        return p.N
    return p.head_start[m + 1] - p.head_start[m]


cdef inline int64_t head_at(const Parts* p, int64_t m, int64_t j) noexcept nogil:
    if p.full != NULL:
        return j
    return p.head_list[p.head_start[m] + j]


# --------------------------------------------------------------------------
# argmax
# --------------------------------------------------------------------------

cdef inline void push(int64_t* stack, int64_t* top, int64_t kind, int64_t s, int64_t t,
                      int64_t d) noexcept nogil:
    top[0] += 1
    stack[4 * top[0]] = kind; stack[4 * top[0] + 1] = s
    stack[4 * top[0] + 2] = t; stack[4 * top[0] + 3] = d


cdef int argmax_one(const Parts* p, bint single_root, Chart* c,
                    int64_t* heads) noexcept nogil:
    cdef int64_t N = p.N
    cdef int64_t w, s, t, r, d, top, kind, j
    cdef double best, val, sc
    cdef double* C = c.C
    cdef double* I = c.I
    cdef double* S = c.S
    heads[0] = -1
    if N == 1:
        return 0
    for s in range(N):
        C[ix(s, s, 0, N)] = 0.0
        C[ix(s, s, 1, N)] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            best = NEG_INF
            c.bS[s * N + t] = s
            for r in range(s, t):
                val = sibling_term(C, N, s, t, r)
                if val > best:
                    best = val
                    c.bS[s * N + t] = r
            S[s * N + t] = best
            # arc s -> t: r the dependent of s before t (r == s: none)
            best = NEG_INF
            c.bI[ix(s, t, 1, N)] = s
            for j in range(1 if root_alone(single_root, s) and sibling_count(p, s, t) else sibling_count(p, s, t)):
                r = sibling_at(p, s, t, j, &sc)
                if r == s:
                    val = C[ix(s + 1, t, 0, N)] + sc
                else:
                    val = I[ix(s, r, 1, N)] + S[r * N + t] + sc
                if val > best:
                    best = val
                    c.bI[ix(s, t, 1, N)] = r
            I[ix(s, t, 1, N)] = best
            # arc t -> s (none into the root): r the dependent of t before s (r == t: none)
            best = NEG_INF
            c.bI[ix(s, t, 0, N)] = t
            if s > 0:
                for j in range(sibling_count(p, t, s)):
                    r = sibling_at(p, t, s, j, &sc)
                    if r == t:
                        val = C[ix(s, t - 1, 1, N)] + sc
                    else:
                        val = S[s * N + r] + I[ix(r, t, 0, N)] + sc
                    if val > best:
                        best = val
                        c.bI[ix(s, t, 0, N)] = r
            I[ix(s, t, 0, N)] = best
            best = NEG_INF
            c.bC[ix(s, t, 0, N)] = s
            for r in range(s, t):
                val = left_complete_term(C, I, N, s, t, r)
                if val > best:
                    best = val
                    c.bC[ix(s, t, 0, N)] = r
            C[ix(s, t, 0, N)] = best
            best = NEG_INF
            c.bC[ix(s, t, 1, N)] = t
            for r in range(s + 1, t + 1):
                val = right_complete_term(C, I, N, s, t, r)
                if val > best:
                    best = val
                    c.bC[ix(s, t, 1, N)] = r
            C[ix(s, t, 1, N)] = best
    if C[ix(0, N - 1, 1, N)] == NEG_INF:
        return 1
    # backtrack; kind 0 = C, 1 = I, 2 = S
    top = -1
    push(c.stack, &top, 0, 0, N - 1, 1)
    while top >= 0:
        kind = c.stack[4 * top]; s = c.stack[4 * top + 1]
        t = c.stack[4 * top + 2]; d = c.stack[4 * top + 3]
        top -= 1
        if s == t:
            continue
        if kind == 2:
            r = c.bS[s * N + t]
            push(c.stack, &top, 0, s, r, 1)
            push(c.stack, &top, 0, r + 1, t, 0)
        elif kind == 1:
            r = c.bI[ix(s, t, d, N)]
            if d == 1:
                heads[t] = s
                if r == s:
                    push(c.stack, &top, 0, s + 1, t, 0)
                else:
                    push(c.stack, &top, 1, s, r, 1)
                    push(c.stack, &top, 2, r, t, 0)
            else:
                heads[s] = t
                if r == t:
                    push(c.stack, &top, 0, s, t - 1, 1)
                else:
                    push(c.stack, &top, 2, s, r, 0)
                    push(c.stack, &top, 1, r, t, 0)
        else:
            r = c.bC[ix(s, t, d, N)]
            if d == 0:
                push(c.stack, &top, 0, s, r, 0)
                push(c.stack, &top, 1, r, t, 0)
            else:
                push(c.stack, &top, 1, s, r, 1)
                push(c.stack, &top, 0, r, t, 1)
    return 0


cdef int argmax_all(const Parts* ps, Py_ssize_t count, int64_t biggest, bint single_root, int64_t* heads,
                    const int64_t* head_offsets, uint8_t* failed) noexcept nogil:
    """argmax_one for every sentence, one chart for all; -1 when out of memory."""
    cdef Py_ssize_t i
    cdef Chart c
    cdef int status = chart_alloc(&c, biggest, True)
    if status == 0:
        for i in range(count):
            failed[i] = argmax_one(&ps[i], single_root, &c, &heads[head_offsets[i]])
    chart_free(&c)
    return status


cdef Parts* full_parts_of_batch(const double[::1] flat, const int64_t[::1] offsets,
                                const int64_t[::1] sizes) noexcept nogil:
    cdef Py_ssize_t i
    cdef Parts* ps = <Parts*>malloc((sizes.shape[0] + 1) * sizeof(Parts))
    if ps != NULL:
        for i in range(sizes.shape[0]):
            full_parts(&ps[i], &flat[offsets[i]], sizes[i])
    return ps


def sibling_eisner_batch(const double[::1] flat, const int64_t[::1] offsets,
                         const int64_t[::1] sizes, bint single_root,
                         int64_t[::1] heads, const int64_t[::1] head_offsets,
                         uint8_t[::1] failed):
    """Best projective tree under the part scores, every sentence of a packed batch."""
    cdef int status = -1
    cdef Parts* ps
    with nogil:
        ps = full_parts_of_batch(flat, offsets, sizes)
        if ps != NULL:
            status = argmax_all(ps, sizes.shape[0], largest(sizes), single_root, &heads[0], &head_offsets[0],
                                &failed[0])
        free(ps)
    if status != 0:
        raise MemoryError()


# --------------------------------------------------------------------------
# inside (log Z) and its reverse pass (part marginals)
# --------------------------------------------------------------------------

cdef inline double lse(const double* x, int64_t count) noexcept nogil:
    """log sum_k exp(x[k]): one max pass, then one exp per term."""
    cdef int64_t k
    cdef double m = NEG_INF, total = 0.0
    for k in range(count):
        if x[k] > m:
            m = x[k]
    if m == NEG_INF:
        return m
    for k in range(count):
        total += exp(x[k] - m)
    return m + log(total)


cdef double inside_one(const double* sc, int64_t N, bint single_root, Chart* c) noexcept nogil:
    cdef int64_t w, s, t, r, k
    cdef double* C = c.C
    cdef double* I = c.I
    cdef double* S = c.S
    cdef double* x = c.terms
    if N == 1:
        return 0.0
    for s in range(N):
        C[ix(s, s, 0, N)] = 0.0
        C[ix(s, s, 1, N)] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            k = 0
            for r in range(s, t):
                x[k] = sibling_term(C, N, s, t, r); k += 1
            S[s * N + t] = lse(x, k)
            x[0] = right_term(sc, C, I, S, N, s, t, s)
            k = 1
            if not root_alone(single_root, s):
                for r in range(s + 1, t):
                    x[k] = right_term(sc, C, I, S, N, s, t, r); k += 1
            I[ix(s, t, 1, N)] = lse(x, k)
            I[ix(s, t, 0, N)] = NEG_INF
            if s > 0:
                x[0] = left_term(sc, C, I, S, N, s, t, t)
                k = 1
                for r in range(s + 1, t):
                    x[k] = left_term(sc, C, I, S, N, s, t, r); k += 1
                I[ix(s, t, 0, N)] = lse(x, k)
            k = 0
            for r in range(s, t):
                x[k] = left_complete_term(C, I, N, s, t, r); k += 1
            C[ix(s, t, 0, N)] = lse(x, k)
            k = 0
            for r in range(s + 1, t + 1):
                x[k] = right_complete_term(C, I, N, s, t, r); k += 1
            C[ix(s, t, 1, N)] = lse(x, k)
    return C[ix(0, N - 1, 1, N)]


cdef inline double share(double g, double total, double term) noexcept nogil:
    """The part of the adjoint g of a log-sum-exp item that one term receives."""
    if term == NEG_INF:
        return 0.0
    return g * exp(term - total)


cdef void outside_one(const double* sc, int64_t N, bint single_root, Chart* c,
                      double* marg) noexcept nogil:
    """Reverse-mode pass through the inside recursion: d log Z / d parts.

    A part score enters exactly one term of one incomplete item, so its
    marginal is the share of that item's adjoint the term receives.
    """
    cdef int64_t w, s, t, r, k
    cdef double g, total, p
    cdef double* C = c.C
    cdef double* I = c.I
    cdef double* S = c.S
    cdef double* gC = c.gC
    cdef double* gI = c.gI
    cdef double* gS = c.gS
    for k in range(N * N * 2):
        gC[k] = 0.0
        gI[k] = 0.0
    for k in range(N * N):
        gS[k] = 0.0
    for k in range(N * N * N):
        marg[k] = 0.0
    if N == 1 or C[ix(0, N - 1, 1, N)] == NEG_INF:
        return
    gC[ix(0, N - 1, 1, N)] = 1.0
    for w in range(N - 1, 0, -1):
        for s in range(N - w):
            t = s + w
            # in the reverse order of the inside pass: C, then I, then S
            g = gC[ix(s, t, 1, N)]
            total = C[ix(s, t, 1, N)]
            if g != 0.0 and total > NEG_INF:
                for r in range(s + 1, t + 1):
                    p = share(g, total, right_complete_term(C, I, N, s, t, r))
                    gI[ix(s, r, 1, N)] += p
                    gC[ix(r, t, 1, N)] += p
            g = gC[ix(s, t, 0, N)]
            total = C[ix(s, t, 0, N)]
            if g != 0.0 and total > NEG_INF:
                for r in range(s, t):
                    p = share(g, total, left_complete_term(C, I, N, s, t, r))
                    gC[ix(s, r, 0, N)] += p
                    gI[ix(r, t, 0, N)] += p
            g = gI[ix(s, t, 1, N)]
            total = I[ix(s, t, 1, N)]
            if g != 0.0 and total > NEG_INF:
                p = share(g, total, right_term(sc, C, I, S, N, s, t, s))
                marg[part(s, s, t, N)] = p
                gC[ix(s + 1, t, 0, N)] += p
                if not root_alone(single_root, s):
                    for r in range(s + 1, t):
                        p = share(g, total, right_term(sc, C, I, S, N, s, t, r))
                        marg[part(s, r, t, N)] = p
                        gI[ix(s, r, 1, N)] += p
                        gS[r * N + t] += p
            g = gI[ix(s, t, 0, N)]
            total = I[ix(s, t, 0, N)]
            if g != 0.0 and total > NEG_INF:
                p = share(g, total, left_term(sc, C, I, S, N, s, t, t))
                marg[part(t, t, s, N)] = p
                gC[ix(s, t - 1, 1, N)] += p
                for r in range(s + 1, t):
                    p = share(g, total, left_term(sc, C, I, S, N, s, t, r))
                    marg[part(t, r, s, N)] = p
                    gS[s * N + r] += p
                    gI[ix(r, t, 0, N)] += p
            g = gS[s * N + t]
            total = S[s * N + t]
            if g != 0.0 and total > NEG_INF:
                for r in range(s, t):
                    p = share(g, total, sibling_term(C, N, s, t, r))
                    gC[ix(s, r, 1, N)] += p
                    gC[ix(r + 1, t, 0, N)] += p


def sibling_inside_outside_batch(const double[::1] flat, const int64_t[::1] offsets,
                                 const int64_t[::1] sizes, bint single_root,
                                 double[::1] log_z, double[::1] marginals,
                                 bint want_marginals):
    """log Z (and part marginals, laid out like the scores) of every sentence."""
    cdef Py_ssize_t i
    cdef int status
    cdef Chart c
    with nogil:
        status = chart_alloc(&c, largest(sizes), False)
        if status == 0:
            for i in range(sizes.shape[0]):
                log_z[i] = inside_one(&flat[offsets[i]], sizes[i], single_root, &c)
                if want_marginals:
                    outside_one(&flat[offsets[i]], sizes[i], single_root, &c,
                                &marginals[offsets[i]])
        chart_free(&c)
    if status != 0:
        raise MemoryError()


# --------------------------------------------------------------------------
# Approximate non-projective search (McDonald & Pereira 2006, Fig. 4): from a
# tree, take the single head change that raises the second-order score most,
# as long as one does. A change of m's head from o to h touches at most three
# parts on each side (m's own, and the part of the sibling after m, which
# gets a new previous sibling), so each candidate's gain costs the scan of
# h's dependents, and a round O(n^2); the descendants of m (which may not
# become its head) come from one depth-first numbering of the tree per round.
# --------------------------------------------------------------------------

cdef double tree_score(const Parts* p, const int64_t* heads,
                       int64_t* last_left, int64_t* last_right) noexcept nogil:
    """Sum of the part scores of the tree `heads`. Dependents of each head
    are visited outward from it on each side, so the part of m names the
    previous dependent on its side (or the head)."""
    cdef int64_t N = p.N
    cdef int64_t h, m
    cdef double total = 0.0
    for h in range(N):
        last_left[h] = h
        last_right[h] = h
    # right dependents, nearest first: m ascending
    for m in range(1, N):
        h = heads[m]
        if h < m:
            total += part_score(p, h, last_right[h], m)
            last_right[h] = m
    # left dependents, nearest first: m descending
    for m in range(N - 1, 0, -1):
        h = heads[m]
        if h > m:
            total += part_score(p, h, last_left[h], m)
            last_left[h] = m
    return total


cdef struct TreeView:
    # the current tree, rebuilt after each change
    int64_t* inner      # previous sibling of m on its side (its head when none)
    int64_t* outer      # next sibling of m further out on its side, or -1
    int64_t* kid_start  # dependents of h: kids[kid_start[h] : kid_start[h + 1]], ascending
    int64_t* kids
    int64_t* fill
    int64_t* tin        # depth-first numbering: x is below m iff tin[m] <= tin[x] < tout[m]
    int64_t* tout
    int64_t* stack
    int64_t* cursor


cdef void view_tree(const int64_t* y, int64_t N, TreeView* v) noexcept nogil:
    cdef int64_t h, m, k, top, clock, node
    for h in range(N + 1):
        v.kid_start[h] = 0
    for m in range(1, N):
        v.kid_start[y[m] + 1] += 1
    for h in range(N):
        v.kid_start[h + 1] += v.kid_start[h]
        v.fill[h] = v.kid_start[h]
    for m in range(1, N):
        v.kids[v.fill[y[m]]] = m
        v.fill[y[m]] += 1
    for m in range(N):
        v.outer[m] = -1
    # siblings, walking outward from each head; the stack and cursor arrays
    # hold the last right and left dependent so far until the walk below
    for h in range(N):
        v.stack[h] = h
        v.cursor[h] = h
    for m in range(1, N):
        h = y[m]
        if h < m:
            v.inner[m] = v.stack[h]
            if v.stack[h] != h:
                v.outer[v.stack[h]] = m
            v.stack[h] = m
    for m in range(N - 1, 0, -1):
        h = y[m]
        if h > m:
            v.inner[m] = v.cursor[h]
            if v.cursor[h] != h:
                v.outer[v.cursor[h]] = m
            v.cursor[h] = m
    # depth-first numbering from the root
    top = 0
    clock = 0
    v.stack[0] = 0
    v.cursor[0] = v.kid_start[0]
    v.tin[0] = clock
    clock += 1
    while top >= 0:
        node = v.stack[top]
        k = v.cursor[top]
        if k < v.kid_start[node + 1]:
            v.cursor[top] = k + 1
            m = v.kids[k]
            top += 1
            v.stack[top] = m
            v.cursor[top] = v.kid_start[m]
            v.tin[m] = clock
            clock += 1
        else:
            v.tout[node] = clock
            top -= 1


cdef double move_gain(const Parts* p, const int64_t* y, const TreeView* v,
                      int64_t m, int64_t h, double removal) noexcept nogil:
    """Score change of giving m the head h, given `removal`, the change of
    taking m away from its current head."""
    cdef int64_t k, c, prev = h, nxt = -1
    if m > h:  # m becomes a right dependent of h
        for k in range(v.kid_start[h], v.kid_start[h + 1]):
            c = v.kids[k]
            if c > m:
                nxt = c
                break
            if c > h:
                prev = c
    else:      # a left dependent
        for k in range(v.kid_start[h], v.kid_start[h + 1]):
            c = v.kids[k]
            if c < m:
                nxt = c
            elif c < h:
                prev = c
                break
    removal += part_score(p, h, prev, m)
    if nxt >= 0:
        removal += part_score(p, h, m, nxt) - part_score(p, h, prev, nxt)
    return removal


cdef void climb_one(const Parts* p, bint single_root, int64_t* y, TreeView* v, int64_t max_moves,
                    int64_t* moves) noexcept nogil:
    """Improve the tree y in place by single head changes; each word tries
    its kept heads (every node with the full parts)."""
    cdef int64_t N = p.N
    cdef int64_t m, h, j, old, best_m, best_h, done = 0
    cdef double current, value, best, removal
    current = tree_score(p, y, v.tin, v.tout)
    while max_moves < 0 or done < max_moves:
        view_tree(y, N, v)
        # a gain must beat rounding, or two trees of equal score could alternate
        best = 1e-12 * (1.0 + fabs(current))
        best_m = -1
        best_h = -1
        for m in range(1, N):
            old = y[m]
            if single_root and old == 0:
                continue  # the root keeps its one dependent
            removal = -part_score(p, old, v.inner[m], m)
            if v.outer[m] >= 0:
                removal += (part_score(p, old, v.inner[m], v.outer[m])
                            - part_score(p, old, m, v.outer[m]))
            for j in range(head_count(p, m)):
                h = head_at(p, m, j)
                if h == m or h == old or (single_root and h == 0):
                    continue
                if v.tin[m] <= v.tin[h] < v.tout[m]:
                    continue  # h is below m: a cycle
                value = move_gain(p, y, v, m, h, removal)
                if value > best:
                    best = value
                    best_m = m
                    best_h = h
        if best_m < 0:
            break
        y[best_m] = best_h
        current = tree_score(p, y, v.tin, v.tout)
        done += 1
    moves[0] = done


cdef int climb_all(const Parts* ps, Py_ssize_t count, int64_t biggest, bint single_root, int64_t* heads,
                   const int64_t* head_offsets, int64_t max_moves, int64_t* moves) noexcept nogil:
    """climb_one for every sentence, one tree view for all; -1 when out of memory."""
    cdef Py_ssize_t i
    cdef TreeView v
    cdef int64_t big = biggest + 1
    cdef int64_t* block = <int64_t*>malloc(9 * big * sizeof(int64_t))
    if block == NULL:
        return -1
    v.inner = block; v.outer = block + big; v.kid_start = block + 2 * big
    v.kids = block + 3 * big; v.fill = block + 4 * big; v.tin = block + 5 * big
    v.tout = block + 6 * big; v.stack = block + 7 * big; v.cursor = block + 8 * big
    for i in range(count):
        climb_one(&ps[i], single_root, &heads[head_offsets[i]], &v, max_moves, &moves[i])
    free(block)
    return 0


def hill_climb_batch(const double[::1] flat, const int64_t[::1] offsets,
                     const int64_t[::1] sizes, bint single_root,
                     int64_t[::1] heads, const int64_t[::1] head_offsets,
                     int64_t max_moves, int64_t[::1] moves):
    """Improve every tree of a packed batch in place by single head changes.

    `heads` holds a tree per sentence on entry (the projective argmax) and
    the improved tree on exit; `moves` receives the changes made. At most
    `max_moves` per sentence (< 0: no bound).
    """
    cdef int status = -1
    cdef Parts* ps
    with nogil:
        ps = full_parts_of_batch(flat, offsets, sizes)
        if ps != NULL:
            status = climb_all(ps, sizes.shape[0], largest(sizes), single_root, &heads[0], &head_offsets[0],
                               max_moves, &moves[0])
        free(ps)
    if status != 0:
        raise MemoryError()


# --------------------------------------------------------------------------
# The same argmax and search over kept parts only, packed per batch
# (siblings.kept_parts): sentence i's blocks start at offsets[5 i .. 5 i + 4]
# in arc_index, part_start, part_sibling / part_score, head_start, head_list.
# --------------------------------------------------------------------------

cdef Parts* kept_parts_of_batch(const int64_t[::1] sizes, const int64_t[::1] offsets,
                                const int64_t[::1] arc_index, const int64_t[::1] part_start,
                                const int64_t[::1] part_sibling, const double[::1] part_score,
                                const int64_t[::1] head_start, const int64_t[::1] head_list) noexcept nogil:
    cdef Py_ssize_t i
    cdef Parts* ps = <Parts*>malloc((sizes.shape[0] + 1) * sizeof(Parts))
    if ps != NULL:
        for i in range(sizes.shape[0]):
            ps[i].N = sizes[i]
            ps[i].full = NULL
            ps[i].arc_index = &arc_index[offsets[5 * i]]
            ps[i].part_start = &part_start[offsets[5 * i + 1]]
            ps[i].part_sibling = &part_sibling[offsets[5 * i + 2]]
            ps[i].part_score = &part_score[offsets[5 * i + 2]]
            ps[i].head_start = &head_start[offsets[5 * i + 3]]
            ps[i].head_list = &head_list[offsets[5 * i + 4]]
    return ps


def sparse_sibling_eisner_batch(const int64_t[::1] sizes, const int64_t[::1] offsets,
                                const int64_t[::1] arc_index, const int64_t[::1] part_start,
                                const int64_t[::1] part_sibling, const double[::1] part_score,
                                const int64_t[::1] head_start, const int64_t[::1] head_list,
                                bint single_root, int64_t[::1] heads, const int64_t[::1] head_offsets,
                                uint8_t[::1] failed):
    """Best projective tree over the kept parts, every sentence of a packed batch."""
    cdef int status = -1
    cdef Parts* ps
    with nogil:
        ps = kept_parts_of_batch(sizes, offsets, arc_index, part_start, part_sibling, part_score,
                                 head_start, head_list)
        if ps != NULL:
            status = argmax_all(ps, sizes.shape[0], largest(sizes), single_root, &heads[0], &head_offsets[0],
                                &failed[0])
        free(ps)
    if status != 0:
        raise MemoryError()


def sparse_hill_climb_batch(const int64_t[::1] sizes, const int64_t[::1] offsets,
                            const int64_t[::1] arc_index, const int64_t[::1] part_start,
                            const int64_t[::1] part_sibling, const double[::1] part_score,
                            const int64_t[::1] head_start, const int64_t[::1] head_list,
                            bint single_root, int64_t[::1] heads, const int64_t[::1] head_offsets,
                            int64_t max_moves, int64_t[::1] moves):
    """`hill_climb_batch` over the kept parts: each word tries its kept heads only."""
    cdef int status = -1
    cdef Parts* ps
    with nogil:
        ps = kept_parts_of_batch(sizes, offsets, arc_index, part_start, part_sibling, part_score,
                                 head_start, head_list)
        if ps != NULL:
            status = climb_all(ps, sizes.shape[0], largest(sizes), single_root, &heads[0], &head_offsets[0],
                               max_moves, &moves[0])
        free(ps)
    if status != 0:
        raise MemoryError()


def kept_arc_masks_batch(const double[::1] flat, const int64_t[::1] offsets, const int64_t[::1] sizes,
                         int64_t k, const int64_t[::1] tree_heads, const int64_t[::1] head_offsets,
                         uint8_t[::1] mask):
    """The arcs the pruned decoders keep, every sentence of a packed batch of
    (n+1) x (n+1) first-order arc scores (row head, column dependent): in
    `mask` (laid out as `flat`), 1 for each word's k best finite heads (the
    first of equal scores) and for its head in `tree_heads` when that arc is
    finite, 0 elsewhere and in column 0. k >= 1."""
    cdef Py_ssize_t i, h, m, j, N, keep, filled
    cdef const double* A
    cdef uint8_t* out
    cdef double x
    # no sentence keeps more heads per word than it has nodes
    cdef int64_t* best = <int64_t*> malloc(max(min(k, largest(sizes)), 1) * sizeof(int64_t))
    if best == NULL:
        raise MemoryError()
    with nogil:
        for i in range(sizes.shape[0]):
            N = sizes[i]
            A = &flat[offsets[i]]
            out = &mask[offsets[i]]
            for j in range(N * N):
                out[j] = 0
            if N < 2:
                continue
            keep = k if k < N - 1 else N - 1
            for m in range(1, N):
                # the keep best heads of m so far, best first
                filled = 0
                for h in range(N):
                    x = A[h * N + m]
                    if x == -INFINITY:
                        continue
                    if filled == keep and x <= A[best[keep - 1] * N + m]:
                        continue
                    j = filled if filled < keep else keep - 1
                    while j > 0 and A[best[j - 1] * N + m] < x:
                        best[j] = best[j - 1]
                        j -= 1
                    best[j] = h
                    if filled < keep:
                        filled += 1
                for j in range(filled):
                    out[best[j] * N + m] = 1
                h = tree_heads[head_offsets[i] + m]
                if 0 <= h < N and A[h * N + m] != -INFINITY:
                    out[h * N + m] = 1
    free(best)


def count_kept_parts(const uint8_t[::1] mask, const int64_t[::1] flat_start, const int64_t[::1] sizes,
                     bint single_root, int64_t[::1] arcs_per, int64_t[::1] parts_per):
    """Kept arcs and parts of every sentence of a packed batch of arc masks
    (laid out as the arc scores, row head, column dependent): an arc h -> m
    has a part with no sibling and one per kept dependent of h between h
    and m (none for the root's arcs with `single_root`)."""
    cdef Py_ssize_t i, h, m, N, left, right
    cdef const uint8_t* M
    with nogil:
        for i in range(sizes.shape[0]):
            N = sizes[i]
            M = &mask[flat_start[i]]
            arcs_per[i] = 0
            parts_per[i] = 0
            for h in range(N):
                left = 0
                for m in range(h):
                    if M[h * N + m]:
                        left += 1
                right = 0
                for m in range(N):
                    if not M[h * N + m]:
                        continue
                    arcs_per[i] += 1
                    parts_per[i] += 1
                    if single_root and h == 0:
                        continue
                    if m < h:
                        left -= 1          # the kept left dependents after m
                        parts_per[i] += left
                    else:
                        parts_per[i] += right
                        right += 1         # the kept right dependents before m


def pack_kept_parts(const uint8_t[::1] mask, const double[::1] arc_scores, const int64_t[::1] flat_start,
                    const int64_t[::1] sizes, const int64_t[::1] offsets, bint single_root,
                    int64_t[::1] arc_index, int64_t[::1] part_start, int64_t[::1] part_sibling,
                    double[::1] part_score, int64_t[::1] part_h, int64_t[::1] part_s, int64_t[::1] part_m,
                    int64_t[::1] head_start, int64_t[::1] head_list):
    """Fill the layout of `siblings.PackedParts` from the kept-arc masks:
    arcs numbered by (head, dependent), each arc's parts with no sibling
    first and then its siblings ascending, scored by the arc alone (the
    caller adds the sibling term); part_h, part_s, part_m are the parts'
    nodes in batch numbering (sentence i's first node is the sum of the
    earlier sizes). offsets: as PackedParts.offsets, from the counts of
    `count_kept_parts`."""
    cdef Py_ssize_t i, h, m, x, y, lo, hi, N, a, p, n_left, j, q, node0 = 0
    cdef const uint8_t* M
    cdef const double* S
    cdef int64_t* index
    cdef int64_t* starts
    cdef int64_t* sib
    cdef double* score
    cdef int64_t* hs
    cdef int64_t* heads
    cdef int64_t* deps = <int64_t*> malloc(max(largest(sizes), 1) * sizeof(int64_t))
    if deps == NULL:
        raise MemoryError()
    with nogil:
        for i in range(sizes.shape[0]):
            N = sizes[i]
            M = &mask[flat_start[i]]
            S = &arc_scores[flat_start[i]]
            index = &arc_index[offsets[5 * i]]
            starts = &part_start[offsets[5 * i + 1]]
            q = offsets[5 * i + 2]
            sib = &part_sibling[q]
            score = &part_score[q]
            hs = &head_start[offsets[5 * i + 3]]
            heads = &head_list[offsets[5 * i + 4]]
            a = 0
            p = 0
            for h in range(N):
                n_left = 0
                j = 0
                for m in range(N):
                    index[h * N + m] = -1
                    if M[h * N + m]:
                        deps[j] = m
                        j += 1
                        if m < h:
                            n_left += 1
                for x in range(j):
                    m = deps[x]
                    index[h * N + m] = a
                    starts[a] = p
                    a += 1
                    sib[p] = h
                    score[p] = S[h * N + m]
                    part_h[q + p] = node0 + h
                    part_s[q + p] = node0 + h
                    part_m[q + p] = node0 + m
                    p += 1
                    if single_root and h == 0:
                        continue
                    # the kept dependents of h between h and m, ascending:
                    # left of h, those after m; right of h, those before m
                    if m < h:
                        lo, hi = x + 1, n_left
                    else:
                        lo, hi = n_left, x
                    for y in range(lo, hi):
                        sib[p] = deps[y]
                        score[p] = S[h * N + m]
                        part_h[q + p] = node0 + h
                        part_s[q + p] = node0 + deps[y]
                        part_m[q + p] = node0 + m
                        p += 1
            starts[a] = p
            hs[0] = 0
            j = 0
            for m in range(N):
                for h in range(N):
                    if M[h * N + m]:
                        heads[j] = h
                        j += 1
                hs[m + 1] = j
            node0 += N
    free(deps)
