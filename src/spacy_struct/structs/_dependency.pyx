# cython: language_level=3
"""Cython cores of the dependency-tree structures.

Input is always one flat float64 buffer with the (n+1) x (n+1) arc-score
matrices of a whole batch, `scores[h, d]` = score of the arc head h ->
dependent d, node 0 the root. Every function loops over the sentences with the
GIL released and allocates its scratch once, for the largest sentence. The
Python layer (`dependency.py`) validates the input; nothing here raises.
"""
from libc.math cimport INFINITY, exp, log
from libc.stdint cimport int64_t, uint8_t
from libc.stdlib cimport free, malloc

from ._chart cimport ix, largest

cdef double NEG_INF = -INFINITY


# --------------------------------------------------------------------------
# Chu-Liu-Edmonds, O(n^2) on dense graphs (Tarjan 1977 as organised by
# Gabow, Galil, Spencer & Tarjan 1986). Single root by reweighting the root
# arcs (Stanojevic & Cohen 2021), done exactly: an arc's weight is the pair
# (-[arc leaves the root], score), compared lexicographically. Edmonds'
# algorithm holds over any ordered abelian group, so the optimum first has
# the fewest root arcs (one, if any single-root tree is finite) and then the
# best score, with no large constant that could swamp the scores.
# --------------------------------------------------------------------------

cdef struct CLEScratch:
    # Working scores between *slots*. A slot holds one current super-node;
    # a contracted cycle takes over the slot of one of its members.
    double* w        # w[u * N + v]: best adjusted score of an edge slot u -> slot v
    double* r        # its adjusted root-arc count, compared before w (single root)
    int64_t* src     # real head of that edge
    int64_t* dst     # real dependent of that edge
    int64_t* slot_node   # super-node id held by a slot
    uint8_t* alive       # slot still holds a top-level super-node
    uint8_t* state       # 0 unvisited, 1 on the current path, 2 attached to the root
    int64_t* path
    # per super-node (ids 0..2N): contraction forest and chosen incoming edge
    int64_t* parent
    int64_t* in_head
    int64_t* in_dep
    double* in_score
    double* in_root
    uint8_t* removed


cdef int cle_alloc(CLEScratch* m, int64_t N) noexcept nogil:
    cdef int64_t M = 2 * N + 1
    m.w = <double*>malloc(N * N * sizeof(double))
    m.r = <double*>malloc(N * N * sizeof(double))
    m.src = <int64_t*>malloc(N * N * sizeof(int64_t))
    m.dst = <int64_t*>malloc(N * N * sizeof(int64_t))
    m.slot_node = <int64_t*>malloc(N * sizeof(int64_t))
    m.alive = <uint8_t*>malloc(N * sizeof(uint8_t))
    m.state = <uint8_t*>malloc(N * sizeof(uint8_t))
    m.path = <int64_t*>malloc(N * sizeof(int64_t))
    m.parent = <int64_t*>malloc(M * sizeof(int64_t))
    m.in_head = <int64_t*>malloc(M * sizeof(int64_t))
    m.in_dep = <int64_t*>malloc(M * sizeof(int64_t))
    m.in_score = <double*>malloc(M * sizeof(double))
    m.in_root = <double*>malloc(M * sizeof(double))
    m.removed = <uint8_t*>malloc(M * sizeof(uint8_t))
    if (m.w == NULL or m.r == NULL or m.in_root == NULL or m.src == NULL or m.dst == NULL or m.slot_node == NULL
            or m.alive == NULL or m.state == NULL or m.path == NULL
            or m.parent == NULL
            or m.in_head == NULL or m.in_dep == NULL or m.in_score == NULL
            or m.removed == NULL):
        return -1
    return 0


cdef void cle_free(CLEScratch* m) noexcept nogil:
    free(m.w); free(m.r); free(m.in_root); free(m.src); free(m.dst); free(m.slot_node); free(m.alive)
    free(m.state); free(m.path); free(m.parent); free(m.in_head); free(m.in_dep)
    free(m.in_score); free(m.removed)


cdef inline bint better(double r1, double w1, double r2, double w2) noexcept nogil:
    """(r1, w1) > (r2, w2) lexicographically; a -inf score never wins.

    Root counts differ rarely, so the common case is one comparison.
    """
    if r1 != r2 and w1 > NEG_INF and w2 > NEG_INF:
        return r1 > r2
    return w1 > w2


cdef inline int64_t best_incoming(CLEScratch* m, int64_t N, int64_t a) noexcept nogil:
    """Slot with the best edge into slot `a`, or -1 if every edge is -inf."""
    cdef int64_t u, best_u = -1
    cdef double best_w = NEG_INF, best_r = 0.0
    for u in range(N):
        if m.alive[u] and u != a and better(m.r[u * N + a], m.w[u * N + a], best_r, best_w):
            best_u = u
            best_w = m.w[u * N + a]
            best_r = m.r[u * N + a]
    return best_u


cdef inline void choose_incoming(CLEScratch* m, int64_t N, int64_t a, int64_t u) noexcept nogil:
    cdef int64_t c = m.slot_node[a]
    m.in_head[c] = m.src[u * N + a]
    m.in_dep[c] = m.dst[u * N + a]
    m.in_score[c] = m.w[u * N + a]
    m.in_root[c] = m.r[u * N + a]


cdef int64_t contract(CLEScratch* m, int64_t N, int64_t* cycle, int64_t size,
                      int64_t* next_id) noexcept nogil:
    """Merge the slots of `cycle` into one new super-node; return its slot.

    Edges into the cycle are re-scored relative to the cycle edge they would
    replace (Edmonds' adjustment); edges out of it keep the best member's
    score. O(size * N), and the sizes of all cycles add up to < 2N, which is
    what makes the whole algorithm O(N^2).
    """
    cdef int64_t keep = cycle[0], c = next_id[0]
    cdef int64_t i, u, v, best_v
    cdef double best, val, best_r, val_r
    next_id[0] += 1
    for i in range(size):
        m.parent[m.slot_node[cycle[i]]] = c
        m.state[cycle[i]] = 3       # marks membership while merging
    for u in range(N):
        if not m.alive[u] or m.state[u] == 3:
            continue
        # edges u -> cycle, relative to the cycle edge each would replace
        best = NEG_INF
        best_r = 0.0
        best_v = keep
        for i in range(size):
            v = cycle[i]
            val = m.w[u * N + v]
            if val > NEG_INF:
                val = val - m.in_score[m.slot_node[v]]
                val_r = m.r[u * N + v] - m.in_root[m.slot_node[v]]
                if better(val_r, val, best_r, best):
                    best = val
                    best_r = val_r
                    best_v = v
        m.src[u * N + keep] = m.src[u * N + best_v]
        m.dst[u * N + keep] = m.dst[u * N + best_v]
        m.w[u * N + keep] = best
        m.r[u * N + keep] = best_r
        # edges cycle -> u
        best = NEG_INF
        best_r = 0.0
        best_v = keep
        for i in range(size):
            v = cycle[i]
            if better(m.r[v * N + u], m.w[v * N + u], best_r, best):
                best = m.w[v * N + u]
                best_r = m.r[v * N + u]
                best_v = v
        m.src[keep * N + u] = m.src[best_v * N + u]
        m.dst[keep * N + u] = m.dst[best_v * N + u]
        m.w[keep * N + u] = best
        m.r[keep * N + u] = best_r
    m.w[keep * N + keep] = NEG_INF
    for i in range(1, size):
        v = cycle[i]
        m.alive[v] = 0
    for i in range(size):
        m.state[cycle[i]] = 0
    m.slot_node[keep] = c
    return keep


cdef int cle_one(const double* s, int64_t N, bint single_root, CLEScratch* m,
                 int64_t* heads) noexcept nogil:
    """Maximum spanning arborescence of one sentence; 0 on success, 1 if none."""
    cdef int64_t u, v, a, b, top, i, c, x, cycle_start, next_id = N
    cdef int64_t root_children = 0
    heads[0] = -1
    if N == 1:
        return 0
    for u in range(N):
        for v in range(N):
            m.w[u * N + v] = NEG_INF if (v == 0 or u == v) else s[u * N + v]
            m.r[u * N + v] = -1.0 if (single_root and u == 0) else 0.0
            m.src[u * N + v] = u
            m.dst[u * N + v] = v
        m.slot_node[u] = u
        m.alive[u] = 1
        m.state[u] = 0
    for u in range(2 * N + 1):
        m.parent[u] = -1
        m.removed[u] = 0
    m.state[0] = 2

    # Grow paths of best incoming edges, contracting each cycle they close.
    for a in range(1, N):
        if not m.alive[a] or m.state[a] != 0:
            continue
        top = 0
        m.path[0] = a
        m.state[a] = 1
        while top >= 0:
            x = m.path[top]
            b = best_incoming(m, N, x)
            if b < 0:
                return 1
            choose_incoming(m, N, x, b)
            if m.state[b] == 2:
                for i in range(top + 1):
                    m.state[m.path[i]] = 2
                top = -1
            elif m.state[b] == 0:
                top += 1
                m.path[top] = b
                m.state[b] = 1
            else:
                cycle_start = top
                while m.path[cycle_start] != b:
                    cycle_start -= 1
                x = contract(m, N, m.path + cycle_start, top - cycle_start + 1, &next_id)
                top = cycle_start
                m.path[top] = x
                m.state[x] = 1

    # Expansion: a super-node's incoming edge enters one member; every
    # super-node on the way from that member up to it loses its own edge.
    for c in range(next_id - 1, 0, -1):
        if m.removed[c]:
            continue
        heads[m.in_dep[c]] = m.in_head[c]
        x = m.in_dep[c]
        while x != c:
            m.removed[x] = 1
            x = m.parent[x]
    if single_root:
        # more than one root arc survives only if no single-root tree is finite
        for v in range(1, N):
            if heads[v] == 0:
                root_children += 1
        if root_children != 1:
            return 1
    return 0


def cle_batch(const double[::1] flat, const int64_t[::1] offsets,
              const int64_t[::1] sizes, bint single_root,
              int64_t[::1] heads, const int64_t[::1] head_offsets,
              uint8_t[::1] failed):
    """Decode every sentence of a packed batch; `failed[i]` = no legal tree."""
    cdef Py_ssize_t i
    cdef CLEScratch m
    cdef int status = 0
    with nogil:
        status = cle_alloc(&m, largest(sizes))
        if status == 0:
            for i in range(sizes.shape[0]):
                failed[i] = cle_one(&flat[offsets[i]], sizes[i], single_root, &m,
                                    &heads[head_offsets[i]])
        cle_free(&m)
    if status != 0:
        raise MemoryError()


# --------------------------------------------------------------------------
# Eisner's projective algorithm, O(n^3): argmax, and inside/outside in log
# space. Items over nodes s < t: C[s,t,0] complete with head t, C[s,t,1]
# complete with head s, I[s,t,0] incomplete with the arc t -> s, I[s,t,1]
# incomplete with the arc s -> t. Single root: the root's incomplete items
# may not take a left part, so exactly one word hangs from the root.
# --------------------------------------------------------------------------

cdef int eisner_argmax_one(const double* sc, int64_t N, bint single_root,
                           double* C, double* I, int64_t* bC, int64_t* bI,
                           int64_t* stack, int64_t* heads) noexcept nogil:
    cdef int64_t w, s, t, r, d, r_hi, top, kind
    cdef double best, val
    heads[0] = -1
    if N == 1:
        return 0
    for s in range(N):
        C[ix(s, s, 0, N)] = 0.0
        C[ix(s, s, 1, N)] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            # incomplete items: split r, left part complete-right, right part complete-left
            r_hi = s if (single_root and s == 0) else t - 1
            best = NEG_INF
            bI[ix(s, t, 0, N)] = s
            for r in range(s, r_hi + 1):
                val = C[ix(s, r, 1, N)] + C[ix(r + 1, t, 0, N)]
                if val > best:
                    best = val
                    bI[ix(s, t, 0, N)] = r
            bI[ix(s, t, 1, N)] = bI[ix(s, t, 0, N)]
            I[ix(s, t, 0, N)] = NEG_INF if s == 0 else best + sc[t * N + s]
            I[ix(s, t, 1, N)] = best + sc[s * N + t]
            # complete items
            best = NEG_INF
            bC[ix(s, t, 0, N)] = s
            for r in range(s, t):
                val = C[ix(s, r, 0, N)] + I[ix(r, t, 0, N)]
                if val > best:
                    best = val
                    bC[ix(s, t, 0, N)] = r
            C[ix(s, t, 0, N)] = best
            best = NEG_INF
            bC[ix(s, t, 1, N)] = t
            for r in range(s + 1, t + 1):
                val = I[ix(s, r, 1, N)] + C[ix(r, t, 1, N)]
                if val > best:
                    best = val
                    bC[ix(s, t, 1, N)] = r
            C[ix(s, t, 1, N)] = best
    if C[ix(0, N - 1, 1, N)] == NEG_INF:
        return 1
    # backtrack with an explicit stack of (kind, s, t, d); kind 0 = C, 1 = I
    top = 0
    stack[0] = 0; stack[1] = 0; stack[2] = N - 1; stack[3] = 1
    while top >= 0:
        kind = stack[4 * top]; s = stack[4 * top + 1]
        t = stack[4 * top + 2]; d = stack[4 * top + 3]
        top -= 1
        if s == t:
            continue
        if kind == 1:
            if d == 0:
                heads[s] = t
            else:
                heads[t] = s
            r = bI[ix(s, t, d, N)]
            top += 1
            stack[4 * top] = 0; stack[4 * top + 1] = s; stack[4 * top + 2] = r; stack[4 * top + 3] = 1
            top += 1
            stack[4 * top] = 0; stack[4 * top + 1] = r + 1; stack[4 * top + 2] = t; stack[4 * top + 3] = 0
        else:
            r = bC[ix(s, t, d, N)]
            if d == 0:
                top += 1
                stack[4 * top] = 0; stack[4 * top + 1] = s; stack[4 * top + 2] = r; stack[4 * top + 3] = 0
                top += 1
                stack[4 * top] = 1; stack[4 * top + 1] = r; stack[4 * top + 2] = t; stack[4 * top + 3] = 0
            else:
                top += 1
                stack[4 * top] = 1; stack[4 * top + 1] = s; stack[4 * top + 2] = r; stack[4 * top + 3] = 1
                top += 1
                stack[4 * top] = 0; stack[4 * top + 1] = r; stack[4 * top + 2] = t; stack[4 * top + 3] = 1
    return 0


cdef struct EisnerTables:
    # chart of the largest sentence in the batch, reused for every sentence
    double* C
    double* I
    double* gC       # adjoints (inside/outside) or NULL
    double* gI
    int64_t* bC      # back-pointers (argmax) or NULL
    int64_t* bI
    int64_t* stack


cdef int eisner_alloc(EisnerTables* t, int64_t N, bint argmax) noexcept nogil:
    cdef size_t cells = N * N * 2
    t.C = <double*>malloc(cells * sizeof(double))
    t.I = <double*>malloc(cells * sizeof(double))
    t.gC = t.gI = NULL
    t.bC = t.bI = t.stack = NULL
    if argmax:
        t.bC = <int64_t*>malloc(cells * sizeof(int64_t))
        t.bI = <int64_t*>malloc(cells * sizeof(int64_t))
        t.stack = <int64_t*>malloc(4 * (2 * N + 2) * sizeof(int64_t))
        if t.bC == NULL or t.bI == NULL or t.stack == NULL:
            return -1
    else:
        t.gC = <double*>malloc(cells * sizeof(double))
        t.gI = <double*>malloc(cells * sizeof(double))
        if t.gC == NULL or t.gI == NULL:
            return -1
    return 0 if (t.C != NULL and t.I != NULL) else -1


cdef void eisner_free(EisnerTables* t) noexcept nogil:
    free(t.C); free(t.I); free(t.gC); free(t.gI); free(t.bC); free(t.bI); free(t.stack)


def eisner_batch(const double[::1] flat, const int64_t[::1] offsets,
                 const int64_t[::1] sizes, bint single_root,
                 int64_t[::1] heads, const int64_t[::1] head_offsets,
                 uint8_t[::1] failed):
    """Projective argmax of every sentence of a packed batch."""
    cdef Py_ssize_t i
    cdef int status
    cdef EisnerTables t
    with nogil:
        status = eisner_alloc(&t, largest(sizes), True)
        if status == 0:
            for i in range(sizes.shape[0]):
                failed[i] = eisner_argmax_one(&flat[offsets[i]], sizes[i], single_root,
                                              t.C, t.I, t.bC, t.bI, t.stack,
                                              &heads[head_offsets[i]])
        eisner_free(&t)
    if status != 0:
        raise MemoryError()


cdef inline double lse_terms(const double* a, const double* b, int64_t stride_b,
                            int64_t count) noexcept nogil:
    """log sum_k exp(a[2k] + b[stride_b * k]): the terms of one chart item.

    The chart stores the split points of an item at fixed strides, so one
    max pass and one exp per term replace a pairwise log-add-exp per term.
    """
    cdef int64_t k
    cdef double m = NEG_INF, v, total = 0.0
    for k in range(count):
        v = a[2 * k] + b[stride_b * k]
        if v > m:
            m = v
    if m == NEG_INF:
        return m
    for k in range(count):
        total += exp(a[2 * k] + b[stride_b * k] - m)
    return m + log(total)


cdef double eisner_inside_one(const double* sc, int64_t N, bint single_root,
                              double* C, double* I) noexcept nogil:
    cdef int64_t w, s, t, r_hi
    cdef double acc
    for s in range(N):
        C[ix(s, s, 0, N)] = 0.0
        C[ix(s, s, 1, N)] = 0.0
    for w in range(1, N):
        for s in range(N - w):
            t = s + w
            r_hi = s if (single_root and s == 0) else t - 1
            # I[s,t]: C[s,r,1] + C[r+1,t,0] for r = s..r_hi
            acc = lse_terms(&C[ix(s, s, 1, N)], &C[ix(s + 1, t, 0, N)], 2 * N, r_hi - s + 1)
            I[ix(s, t, 0, N)] = NEG_INF if (s == 0 or acc == NEG_INF) else acc + sc[t * N + s]
            I[ix(s, t, 1, N)] = NEG_INF if acc == NEG_INF else acc + sc[s * N + t]
            # C[s,t,0]: C[s,r,0] + I[r,t,0] for r = s..t-1
            C[ix(s, t, 0, N)] = lse_terms(&C[ix(s, s, 0, N)], &I[ix(s, t, 0, N)], 2 * N, t - s)
            # C[s,t,1]: I[s,r,1] + C[r,t,1] for r = s+1..t
            C[ix(s, t, 1, N)] = lse_terms(&I[ix(s, s + 1, 1, N)], &C[ix(s + 1, t, 1, N)], 2 * N, t - s)
    return C[ix(0, N - 1, 1, N)] if N > 1 else 0.0


cdef inline void pass_down(double g, double total, double part,
                           double* ga, double* gb) noexcept nogil:
    """Share the adjoint g of a log-sum-exp among one of its terms."""
    cdef double p
    if part == NEG_INF:
        return
    p = g * exp(part - total)
    ga[0] += p
    gb[0] += p


cdef void eisner_outside_one(const double* sc, int64_t N, bint single_root,
                             const double* C, const double* I, double* gC,
                             double* gI, double* marg) noexcept nogil:
    """Reverse-mode pass through the inside recursion: d log Z / d score.

    The adjoint of an incomplete item is the marginal of its arc, because the
    arc score enters every term of that item with coefficient one.
    """
    cdef int64_t w, s, t, r, r_hi, k
    cdef double g, total, base
    for k in range(N * N * 2):
        gC[k] = 0.0
        gI[k] = 0.0
    for k in range(N * N):
        marg[k] = 0.0
    if N == 1 or C[ix(0, N - 1, 1, N)] == NEG_INF:
        return
    gC[ix(0, N - 1, 1, N)] = 1.0
    for w in range(N - 1, 0, -1):
        for s in range(N - w):
            t = s + w
            # complete items first: they were built after the incomplete ones
            g = gC[ix(s, t, 1, N)]
            total = C[ix(s, t, 1, N)]
            if g != 0.0 and total > NEG_INF:
                for r in range(s + 1, t + 1):
                    pass_down(g, total, I[ix(s, r, 1, N)] + C[ix(r, t, 1, N)],
                              &gI[ix(s, r, 1, N)], &gC[ix(r, t, 1, N)])
            g = gC[ix(s, t, 0, N)]
            total = C[ix(s, t, 0, N)]
            if g != 0.0 and total > NEG_INF:
                for r in range(s, t):
                    pass_down(g, total, C[ix(s, r, 0, N)] + I[ix(r, t, 0, N)],
                              &gC[ix(s, r, 0, N)], &gI[ix(r, t, 0, N)])
            r_hi = s if (single_root and s == 0) else t - 1
            for k in range(2):
                g = gI[ix(s, t, k, N)]
                total = I[ix(s, t, k, N)]
                if g == 0.0 or total == NEG_INF:
                    continue
                if k == 0:
                    marg[t * N + s] = g
                    base = sc[t * N + s]
                else:
                    marg[s * N + t] = g
                    base = sc[s * N + t]
                for r in range(s, r_hi + 1):
                    pass_down(g, total, C[ix(s, r, 1, N)] + C[ix(r + 1, t, 0, N)] + base,
                              &gC[ix(s, r, 1, N)], &gC[ix(r + 1, t, 0, N)])


def eisner_inside_outside_batch(const double[::1] flat, const int64_t[::1] offsets,
                                const int64_t[::1] sizes, bint single_root,
                                double[::1] log_z, double[::1] marginals,
                                bint want_marginals):
    """log Z (and arc marginals, laid out like the scores) of every sentence."""
    cdef Py_ssize_t i
    cdef int status
    cdef EisnerTables t
    with nogil:
        status = eisner_alloc(&t, largest(sizes), False)
        if status == 0:
            for i in range(sizes.shape[0]):
                log_z[i] = eisner_inside_one(&flat[offsets[i]], sizes[i], single_root, t.C, t.I)
                if want_marginals:
                    eisner_outside_one(&flat[offsets[i]], sizes[i], single_root, t.C, t.I,
                                       t.gC, t.gI, &marginals[offsets[i]])
        eisner_free(&t)
    if status != 0:
        raise MemoryError()
