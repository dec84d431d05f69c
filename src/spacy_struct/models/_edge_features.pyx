# cython: language_level=3
"""Hashed first-order edge features of McDonald, Crammer & Pereira (2005).

For every arc (p -> c) of every sentence, the feature templates of the
paper's Table 1 are hashed into a weight vector of 2^n_bits entries:

- unigram: p-word,p-pos / p-word / p-pos / c-word,c-pos / c-word / c-pos
- bigram: the seven word/POS conjunctions of parent and child
- in-between: p-pos, b-pos, c-pos for every word b strictly between them
- surrounding: the four p-pos+-1 / c-pos+-1 4-grams and the eight trigrams
  that drop one context tag

Templates with a word are repeated with the 5-character prefix in its place
when the word is longer than 5 characters. Every feature is emitted twice,
alone and conjoined with the attachment direction and the bucketed distance
(1, 2, 3, 4, 5-10 -> "5", >10 -> "10", as in MSTParser).

Inputs are per-node ids (node 0 is the root) as int64 arrays; no spaCy
types. `edge_scores` sums the weights of each arc's features;
`edge_grads` adds d_score[arc] to the gradient of each of its features, the
same traversal in reverse.
"""
import numpy as np
cimport numpy as cnp
from libc.stdint cimport int64_t, uint64_t

cnp.import_array()

cdef uint64_t START = 0x5354415254ULL
cdef uint64_t END = 0x454e44ULL


cdef inline uint64_t mix(uint64_t x) noexcept nogil:
    x ^= x >> 30
    x *= 0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= 0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef inline uint64_t comb(uint64_t h, uint64_t v) noexcept nogil:
    return mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)))


cdef inline double emit(uint64_t key, uint64_t conj, uint64_t mask, const float* w,
                        float* g, double dscore) noexcept nogil:
    """Score (forward) or scatter the gradient (g != NULL) of a feature, alone
    and with the direction/distance conjunction."""
    cdef uint64_t a = mix(key) & mask
    cdef uint64_t b = comb(key, conj) & mask
    if g != NULL:
        g[a] += <float>dscore
        g[b] += <float>dscore
        return 0.0
    return w[a] + w[b]


cdef double arc(const int64_t* word, const int64_t* pos, const int64_t* pre,
                const unsigned char* long_word, int n1, int p, int c,
                uint64_t mask, const float* w, float* g, double dscore) noexcept nogil:
    cdef double s = 0.0
    cdef int dist = p - c if p > c else c - p
    cdef uint64_t bucket = 10 if dist > 10 else (5 if dist > 5 else <uint64_t>(dist - 1))
    cdef uint64_t conj = (1 if p < c else 2) * 16 + bucket
    cdef uint64_t pw = <uint64_t>word[p], pp = <uint64_t>pos[p]
    cdef uint64_t cw = <uint64_t>word[c], cp = <uint64_t>pos[c]
    cdef uint64_t ppm = <uint64_t>pos[p - 1] if p > 0 else START
    cdef uint64_t ppp = <uint64_t>pos[p + 1] if p + 1 < n1 else END
    cdef uint64_t cpm = <uint64_t>pos[c - 1] if c > 0 else START
    cdef uint64_t cpp = <uint64_t>pos[c + 1] if c + 1 < n1 else END
    cdef int variant, b, lo, hi
    cdef uint64_t t
    for variant in range(2):
        if variant == 1:
            if not (long_word[p] or long_word[c]):
                break
            pw = <uint64_t>pre[p]
            cw = <uint64_t>pre[c]
        t = <uint64_t>(variant * 100)
        s += emit(comb(comb(t + 1, pw), pp), conj, mask, w, g, dscore)
        s += emit(comb(t + 2, pw), conj, mask, w, g, dscore)
        s += emit(comb(t + 4, cw), conj, mask, w, g, dscore)
        s += emit(comb(comb(t + 5, cw), cp), conj, mask, w, g, dscore)
        s += emit(comb(comb(comb(comb(t + 7, pw), pp), cw), cp), conj, mask, w, g, dscore)
        s += emit(comb(comb(comb(t + 8, pp), cw), cp), conj, mask, w, g, dscore)
        s += emit(comb(comb(comb(t + 9, pw), cw), cp), conj, mask, w, g, dscore)
        s += emit(comb(comb(comb(t + 10, pw), pp), cp), conj, mask, w, g, dscore)
        s += emit(comb(comb(comb(t + 11, pw), pp), cw), conj, mask, w, g, dscore)
        s += emit(comb(comb(t + 12, pw), cw), conj, mask, w, g, dscore)
    s += emit(comb(3, pp), conj, mask, w, g, dscore)
    s += emit(comb(6, cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(13, pp), cp), conj, mask, w, g, dscore)
    # surrounding POS: four 4-grams and the trigrams that drop one context tag
    s += emit(comb(comb(comb(comb(20, pp), ppp), cpm), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(21, pp), cpm), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(22, pp), ppp), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(comb(23, ppm), pp), cpm), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(24, ppm), pp), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(25, pp), cpm), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(comb(26, pp), ppp), cp), cpp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(27, pp), cp), cpp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(28, pp), ppp), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(comb(29, ppm), pp), cp), cpp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(30, ppm), pp), cp), conj, mask, w, g, dscore)
    s += emit(comb(comb(comb(31, pp), cp), cpp), conj, mask, w, g, dscore)
    # in-between POS
    lo = p if p < c else c
    hi = c if p < c else p
    for b in range(lo + 1, hi):
        s += emit(comb(comb(comb(40, pp), <uint64_t>pos[b]), cp), conj, mask, w, g, dscore)
    return s


def _check(word, pos, pre, long_word, node_offsets, table, table_name, arcs, arcs_name):
    """Validate the shapes the nogil loops rely on; return the hash mask."""
    n = node_offsets[len(node_offsets) - 1]
    if not (len(word) == len(pos) == len(pre) == len(long_word) == n):
        raise ValueError("word, pos, prefix and long_word must have one entry per node")
    sizes = np.diff(np.asarray(node_offsets))
    if len(arcs) != int((sizes * sizes).sum()):
        raise ValueError(f"{arcs_name} must hold the (n+1) x (n+1) arcs of every sentence")
    size = len(table)
    if size == 0 or (size & (size - 1)) != 0:
        raise ValueError(f"the {table_name} vector size must be a power of two")
    return size - 1


def edge_scores(const int64_t[::1] word, const int64_t[::1] pos, const int64_t[::1] pre,
                const unsigned char[::1] long_word, const int64_t[::1] node_offsets,
                const float[::1] weights, double[::1] out):
    """Fill `out` with the flattened (n+1) x (n+1) arc scores of each sentence."""
    cdef uint64_t mask = _check(word, pos, pre, long_word, node_offsets,
                                weights, "weight", out, "out")
    cdef Py_ssize_t n_sents = node_offsets.shape[0] - 1
    cdef Py_ssize_t s, base, flat = 0
    cdef int n1, p, c
    with nogil:
        for s in range(n_sents):
            base = node_offsets[s]
            n1 = <int>(node_offsets[s + 1] - base)
            for p in range(n1):
                for c in range(n1):
                    if c == 0 or c == p:
                        out[flat + p * n1 + c] = 0.0
                    else:
                        out[flat + p * n1 + c] = arc(&word[base], &pos[base], &pre[base],
                                                     &long_word[base], n1, p, c, mask,
                                                     &weights[0], NULL, 0.0)
            flat += n1 * n1


def edge_grads(const int64_t[::1] word, const int64_t[::1] pos, const int64_t[::1] pre,
               const unsigned char[::1] long_word, const int64_t[::1] node_offsets,
               const double[::1] d_scores, float[::1] grad):
    """Add each arc's score gradient to the gradient of each of its features."""
    cdef uint64_t mask = _check(word, pos, pre, long_word, node_offsets,
                                grad, "gradient", d_scores, "d_scores")
    cdef Py_ssize_t n_sents = node_offsets.shape[0] - 1
    cdef Py_ssize_t s, base, flat = 0
    cdef int n1, p, c
    cdef double ds
    with nogil:
        for s in range(n_sents):
            base = node_offsets[s]
            n1 = <int>(node_offsets[s + 1] - base)
            for p in range(n1):
                for c in range(1, n1):
                    ds = d_scores[flat + p * n1 + c]
                    if c != p and ds != 0.0:
                        arc(&word[base], &pos[base], &pre[base], &long_word[base], n1, p, c,
                            mask, NULL, &grad[0], ds)
            flat += n1 * n1
