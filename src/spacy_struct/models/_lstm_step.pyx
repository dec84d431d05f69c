# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The elementwise part of one BiLSTM time step, in one pass.

numpy makes each step's gate arithmetic in about ten passes over small
arrays (add the inputs, scale the sigmoid gates, the cell's two products and
their sum), and at a few hundred sentences a step the calls cost more than
the arithmetic. The matrix products and the tanh stay in numpy (BLAS and
numpy's vectorized tanh are faster than anything written here). The
operations are numpy's, in the same order, so the output is the same.
Arrays in, arrays out.
"""


def add_inputs(float[:, :, ::1] gates, const float[:, ::1] forward, const float[:, ::1] backward,
               const float[:, ::1] bias):
    """gates[0] += forward + bias[0]; gates[1] += backward + bias[1] (each
    (k, 4 hidden), the bias (2, 4 hidden)); the input and its bias are summed
    first, as when the bias is added to the whole input projection."""
    cdef Py_ssize_t r, j
    cdef Py_ssize_t k = forward.shape[0], width = forward.shape[1]
    cdef float* a
    cdef float* b
    cdef const float* x
    cdef const float* y
    cdef const float* bx = &bias[0, 0]
    cdef const float* by = &bias[1, 0]
    if k == 0:
        return
    with nogil:
        for r in range(k):
            a = &gates[0, r, 0]
            x = &forward[r, 0]
            for j in range(width):
                a[j] = a[j] + (x[j] + bx[j])
        for r in range(k):
            b = &gates[1, r, 0]
            y = &backward[r, 0]
            for j in range(width):
                b[j] = b[j] + (y[j] + by[j])


def update_cells(float[:, :, ::1] gates, const float[:, :, ::1] cells, float[:, :, ::1] new_cells):
    """From gates holding tanh of the halved sigmoid inputs (i, f, o) and of
    g: i, f, o become their sigmoids in place, (1 + t) / 2 as 0.5 t + 0.5,
    and new_cells = f * cells + i * g. cells: (2, >= k, hidden), the
    previous step's, of which the first k rows are read; new_cells
    (2, k, hidden) may not overlap it."""
    cdef Py_ssize_t d, r, j
    cdef Py_ssize_t k = gates.shape[1], hidden = gates.shape[2] // 4
    cdef float* i
    cdef float* f
    cdef const float* g
    cdef const float* c
    cdef float* out
    if k == 0:
        return
    with nogil:
        for d in range(2):
            for r in range(k):
                i = &gates[d, r, 0]
                f = i + hidden
                g = i + 3 * hidden
                c = &cells[d, r, 0]
                out = &new_cells[d, r, 0]
                # two loops of one kind each, which the compiler vectorizes
                for j in range(3 * hidden):
                    i[j] = i[j] * 0.5 + 0.5
                for j in range(hidden):
                    out[j] = f[j] * c[j] + i[j] * g[j]
