# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Each word's label scores from its head's contracted bilinear form.

The edge labeler contracts its (k, labels, k) tensor with each distinct head
once, giving a (k, labels) form per head; a word's bilinear label scores are
its dependent vector times its head's form. Done per head in numpy that is
one small product per head, and the Python loop around them costs more than
their arithmetic. Arrays in, arrays out.
"""
from libc.stdint cimport int64_t


def scores_from_forms(const float[:, :, ::1] forms, const float[:, ::1] D, const int64_t[::1] form_of,
                      float[:, ::1] out):
    """out[w, l] = sum_a D[w, a] * forms[form_of[w], a, l] for every word w;
    the caller checks the shapes and that form_of indexes forms."""
    cdef Py_ssize_t w, a, l
    cdef Py_ssize_t n_labels = forms.shape[2]
    cdef Py_ssize_t k = forms.shape[1]
    cdef float x
    cdef const float* row
    cdef float* o
    with nogil:
        for w in range(D.shape[0]):
            o = &out[w, 0]
            for l in range(n_labels):
                o[l] = 0.0
            for a in range(k):
                x = D[w, a]
                row = &forms[form_of[w], a, 0]
                for l in range(n_labels):
                    o[l] = o[l] + x * row[l]
