# cython: language_level=3
"""What the chart kernels share (cimported by _dependency.pyx, _siblings.pyx, _partitions.pyx and _matrix_tree.pyx).

Inline functions only, so this needs no module of its own at run time.
"""
from libc.stdint cimport int64_t


cdef inline int64_t ix(int64_t s, int64_t t, int64_t d, int64_t N) noexcept nogil:
    """Index of Eisner's item over nodes s < t in an (N, N, 2) chart: d = 0
    for the item headed by t, d = 1 for the one headed by s."""
    return (s * N + t) * 2 + d


cdef inline int64_t largest(const int64_t[::1] sizes) noexcept nogil:
    """The largest size of a batch (at least 1): what a chart reused for
    every sentence of the batch is allocated for."""
    cdef Py_ssize_t i
    cdef int64_t best = 1
    for i in range(sizes.shape[0]):
        if sizes[i] > best:
            best = sizes[i]
    return best
