# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Trilinear scores of index triples: out[p] = sum_d A[h_p, d] B[s_p, d] C[m_p, d].

The second-order parser scores only the sibling parts of kept arcs; numpy
would gather three (parts, d) arrays to do it, which costs more than the
arithmetic. Arrays in, arrays out.
"""
from libc.stdint cimport int64_t


def trilinear(const float[:, ::1] A, const float[:, ::1] B, const float[:, ::1] C,
              const int64_t[::1] h, const int64_t[::1] s, const int64_t[::1] m, float[::1] out):
    """Fill out[p] with sum_d A[h[p], d] * B[s[p], d] * C[m[p], d]; the
    caller checks that the indices are in range."""
    cdef Py_ssize_t p, k
    cdef Py_ssize_t d = A.shape[1]
    cdef float total
    cdef const float* a
    cdef const float* b
    cdef const float* c
    with nogil:
        for p in range(h.shape[0]):
            a = &A[h[p], 0]
            b = &B[s[p], 0]
            c = &C[m[p], 0]
            total = 0.0
            for k in range(d):
                total = total + a[k] * b[k] * c[k]
            out[p] = total
