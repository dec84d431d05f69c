# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Trilinear scores of index triples: out[p] = sum_d A[h_p, d] B[s_p, d] C[m_p, d].

The second-order parser scores only the sibling parts of kept arcs; numpy
would gather three (parts, d) arrays to do it, which costs more than the
arithmetic. Arrays in, arrays out.
"""
from libc.stdint cimport int64_t
from libc.stdlib cimport free, malloc


def trilinear(const float[:, ::1] A, const float[:, ::1] B, const float[:, ::1] C,
              const int64_t[::1] h, const int64_t[::1] s, const int64_t[::1] m, float[::1] out):
    """Fill out[p] with sum_d A[h[p], d] * B[s[p], d] * C[m[p], d]; the
    caller checks that the indices are in range.

    The parts of one arc (h, m) usually come one after another (one per
    sibling), so the product A[h] * C[m] is made once per run of them; the
    sum runs in four interleaved partial sums, which the compiler can keep
    in one vector register."""
    cdef Py_ssize_t p, k
    cdef Py_ssize_t d = A.shape[1]
    cdef Py_ssize_t d4 = d - d % 4
    cdef int64_t last_h = -1, last_m = -1
    cdef float t0, t1, t2, t3
    cdef const float* a
    cdef const float* b
    cdef const float* c
    cdef float* ac = <float*> malloc(max(d, 1) * sizeof(float))
    if ac == NULL:
        raise MemoryError()
    with nogil:
        for p in range(h.shape[0]):
            if h[p] != last_h or m[p] != last_m:
                last_h, last_m = h[p], m[p]
                a = &A[last_h, 0]
                c = &C[last_m, 0]
                for k in range(d):
                    ac[k] = a[k] * c[k]
            b = &B[s[p], 0]
            t0 = t1 = t2 = t3 = 0.0
            for k in range(0, d4, 4):
                t0 = t0 + ac[k] * b[k]
                t1 = t1 + ac[k + 1] * b[k + 1]
                t2 = t2 + ac[k + 2] * b[k + 2]
                t3 = t3 + ac[k + 3] * b[k + 3]
            for k in range(d4, d):
                t0 = t0 + ac[k] * b[k]
            out[p] = (t0 + t1) + (t2 + t3)
    free(ac)
