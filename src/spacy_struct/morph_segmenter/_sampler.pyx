# cython: language_level=3
"""Collapsed, type-blocked Gibbs sampler of Lee, Haghighi & Barzilay (2011).

Every token of a word type shares the type's tag t and segmentation h; one
move resamples (t, h) of one type from its exact conditional, which is the
change of the collapsed joint log P(state) when the type is put back into
the state that lacks it. The joint (`log_joint`) is the product of

- the lexicon: each morph string in use (in any role) costs
  gamma_l (1 - gamma_l)^|string|, and each of the prefix, stem and suffix
  lexicons gamma_x (1 - gamma_x)^size (the minimal lexicons of the state);
- per type, a truncated geometric on its number of morphs;
- Dirichlet-multinomial marginals of the types' tags, of their stems (over
  the stem lexicon) and, per tag, of their prefixes and suffixes (over the
  prefix and suffix lexicons), counts incremented within a word;
- with `token_pos`: a tag HMM over the tokens, a tag emitting only the
  types that carry it (Dirichlet-multinomial emissions over those types,
  transitions over the tags and the sentence boundary);
- with `token_seg`: for each adjacent token pair, beta_1 when the words
  end alike and have the same final suffix, beta_2 when they end alike
  with different final suffixes, beta_3 otherwise (no suffix on either, or
  other endings); "alike" is over the longer of the two final suffixes.

The conditional is computed from counts in arrays; nothing of Python runs
per hypothesis. With the state held in arrays the sampler is exact: a test
checks every move's distribution against the joint recomputed from
scratch. Randomness is a seeded splitmix64, so a run is reproducible.
"""
import numpy as np

from libc.math cimport exp, lgamma, log, INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t


cdef inline uint64_t _next(uint64_t* state) noexcept nogil:
    """splitmix64."""
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline double _uniform(uint64_t* state) noexcept nogil:
    return (_next(state) >> 11) * (1.0 / 9007199254740992.0)


cdef class MorphSampler:
    """The sampler's state and counts over a fixed set of types.

    Built from the hypothesis table (hypotheses.py), the context arrays
    (context.py) and the settings; `tags` and `hyps` hold the state (one
    tag and one hypothesis id per type), which `sweep` changes.
    """
    # hypotheses
    cdef int32_t[:, ::1] morphs
    cdef int32_t[::1] n_morphs, stem_pos, morph_length, final_suffix
    cdef int64_t[::1] type_start
    # context
    cdef int64_t[::1] type_count, in_start, in_count, out_start, out_count, self_count
    cdef int32_t[::1] in_type, in_ending, out_type, out_ending, word_length
    cdef double[::1] extra_cost
    # state
    cdef public object tags_array, hyps_array
    cdef int32_t[::1] tags, hyps
    # counts
    cdef int64_t[::1] n_tag, stem_count, occ_pre, occ_stem, occ_suf, pre_total, suf_total, tag_tokens
    cdef int64_t[:, ::1] pre_count, suf_count, trans
    cdef int64_t[::1] trans_total
    cdef int64_t n_in, L_pre, L_stem, L_suf, L_any
    # settings
    cdef public int n_tags, active_tags
    cdef public bint token_pos, token_seg
    cdef double log_gl, log_1m_gl, log_gs, log_1m_gs, log_seg_norm
    cdef double log_g[3]
    cdef double log_1m_g[3]
    cdef double alpha, alpha_emit, alpha_trans
    cdef double log_beta[3]
    cdef uint64_t rng
    # scratch
    cdef double[::1] weights, pre_size_delta, suf_size_delta
    cdef int64_t[::1] in_by, out_by
    cdef int64_t n_types, n_strings

    def __init__(self, table, context, int n_tags, dict settings, uint64_t seed):
        """table: a HypothesisTable; context: a Context over the same types;
        n_tags: the number of tags of the full model; settings: gamma_length,
        gamma_segments, gamma_prefix, gamma_stem, gamma_suffix, alpha,
        alpha_emission, alpha_transition, betas (3); seed: of the random
        stream. The state starts at each type's first hypothesis (the
        unsegmented word, or its clamped segmentation), tag 0, stage basic."""
        self.morphs = table.morphs
        self.n_morphs = table.n_morphs
        self.stem_pos = table.stem_pos
        self.morph_length = table.morph_length
        self.type_start = table.type_start
        self.n_types = table.n_types
        self.n_strings = len(table.morph_strings)
        self.extra_cost = np.zeros(0, dtype=np.float64)
        rows = np.arange(len(table.n_morphs))
        last = np.asarray(table.morphs)[rows, np.asarray(table.n_morphs) - 1]
        self.final_suffix = np.where(np.asarray(table.stem_pos) < np.asarray(table.n_morphs) - 1,
                                     np.asarray(table.morph_length)[last], 0).astype(np.int32)
        first = np.asarray(table.morphs)[np.asarray(table.type_start, dtype=np.int64)[:table.n_types]]
        self.word_length = np.where(first >= 0, np.asarray(table.morph_length)[np.maximum(first, 0)], 0
                                    ).sum(axis=1).astype(np.int32)
        self.type_count = context.type_count
        self.in_start, self.in_type = context.in_start, context.in_type
        self.in_count, self.in_ending = context.in_count, context.in_ending
        self.out_start, self.out_type = context.out_start, context.out_type
        self.out_count, self.out_ending = context.out_count, context.out_ending
        self.self_count = context.self_count

        self.n_tags = n_tags
        self.active_tags = 1
        self.token_pos = False
        self.token_seg = False
        gl, gs = settings["gamma_length"], settings["gamma_segments"]
        self.log_gl, self.log_1m_gl = log(gl), log(1 - gl)
        self.log_gs, self.log_1m_gs = log(gs), log(1 - gs)
        # the number of morphs is geometric, truncated at the most a hypothesis has
        most = int(np.max(np.asarray(table.n_morphs))) if len(table.n_morphs) else 1
        self.log_seg_norm = log(sum(gs * (1 - gs) ** j for j in range(1, most + 1)))
        for x, key in enumerate(("gamma_prefix", "gamma_stem", "gamma_suffix")):
            self.log_g[x] = log(settings[key])
            self.log_1m_g[x] = log(1 - settings[key])
        self.alpha = settings["alpha"]
        self.alpha_emit = settings["alpha_emission"]
        self.alpha_trans = settings["alpha_transition"]
        for k in range(3):
            self.log_beta[k] = log(settings["betas"][k])
        self.rng = seed * 0x9E3779B97F4A7C15ULL + 1

        S, K = self.n_strings, n_tags
        self.n_tag = np.zeros(K, dtype=np.int64)
        self.stem_count = np.zeros(S, dtype=np.int64)
        self.occ_pre = np.zeros(S, dtype=np.int64)
        self.occ_stem = np.zeros(S, dtype=np.int64)
        self.occ_suf = np.zeros(S, dtype=np.int64)
        self.pre_count = np.zeros((K, S), dtype=np.int64)
        self.suf_count = np.zeros((K, S), dtype=np.int64)
        self.pre_total = np.zeros(K, dtype=np.int64)
        self.suf_total = np.zeros(K, dtype=np.int64)
        self.tag_tokens = np.zeros(K, dtype=np.int64)
        self.trans = np.zeros((K + 1, K + 1), dtype=np.int64)
        self.trans_total = np.zeros(K + 1, dtype=np.int64)
        self.in_by = np.zeros(K + 1, dtype=np.int64)
        self.out_by = np.zeros(K + 1, dtype=np.int64)
        width = int(np.max(np.diff(table.type_start))) if self.n_types else 1
        self.weights = np.zeros(width * K, dtype=np.float64)
        self.pre_size_delta = np.zeros(table.morphs.shape[1] + 1, dtype=np.float64)
        self.suf_size_delta = np.zeros(table.morphs.shape[1] + 1, dtype=np.float64)
        # the first hypothesis of every type (the unsegmented word, or its
        # clamped segmentation) and tag 0
        self.tags_array = np.zeros(self.n_types, dtype=np.int32)
        self.hyps_array = np.asarray(table.type_start, dtype=np.int32)[:table.n_types].copy()
        self.tags, self.hyps = self.tags_array, self.hyps_array
        self.n_in = 0
        self.L_pre = self.L_stem = self.L_suf = self.L_any = 0
        self._rebuild_counts()

    # ------------------------------------------------------------- counts
    cdef inline int64_t _occ(self, int32_t s) noexcept nogil:
        return self.occ_pre[s] + self.occ_stem[s] + self.occ_suf[s]

    cdef void _change_lexicon(self, int32_t h, int t, int sign) noexcept nogil:
        """Add (sign 1) or take away (-1) the morphs of hypothesis h with tag t."""
        cdef int k, n = self.n_morphs[h], stem = self.stem_pos[h]
        cdef int32_t s
        cdef int64_t before
        for k in range(n):
            s = self.morphs[h, k]
            before = self._occ(s)
            if k < stem:
                if self.occ_pre[s] == 0 and sign > 0:
                    self.L_pre += 1
                self.occ_pre[s] += sign
                if self.occ_pre[s] == 0:
                    self.L_pre -= 1
                self.pre_count[t, s] += sign
                self.pre_total[t] += sign
            elif k == stem:
                if self.occ_stem[s] == 0 and sign > 0:
                    self.L_stem += 1
                self.occ_stem[s] += sign
                if self.occ_stem[s] == 0:
                    self.L_stem -= 1
                self.stem_count[s] += sign
            else:
                if self.occ_suf[s] == 0 and sign > 0:
                    self.L_suf += 1
                self.occ_suf[s] += sign
                if self.occ_suf[s] == 0:
                    self.L_suf -= 1
                self.suf_count[t, s] += sign
                self.suf_total[t] += sign
            if before == 0 and sign > 0:
                self.L_any += 1
            elif before > 0 and self._occ(s) == 0:
                self.L_any -= 1

    cdef inline int _tag_or_boundary(self, int32_t j) noexcept nogil:
        return self.n_tags if j < 0 else self.tags[j]

    cdef void _change_tokens(self, int64_t i, int t, int sign) noexcept nogil:
        """Add or take away the tokens of type i (tag t) in the HMM counts."""
        cdef int64_t e, c
        cdef int a
        self.tag_tokens[t] += sign * self.type_count[i]
        for e in range(self.in_start[i], self.in_start[i + 1]):
            a = self._tag_or_boundary(self.in_type[e])
            c = self.in_count[e]
            self.trans[a, t] += sign * c
            self.trans_total[a] += sign * c
        for e in range(self.out_start[i], self.out_start[i + 1]):
            a = self._tag_or_boundary(self.out_type[e])
            c = self.out_count[e]
            self.trans[t, a] += sign * c
            self.trans_total[t] += sign * c
        self.trans[t, t] += sign * self.self_count[i]
        self.trans_total[t] += sign * self.self_count[i]

    cdef void _change(self, int64_t i, int t, int32_t h, int sign) noexcept nogil:
        self.n_tag[t] += sign
        self.n_in += sign
        self._change_lexicon(h, t, sign)
        self._change_tokens(i, t, sign)

    def _rebuild_counts(self):
        """Recount everything from the state (tags, hyps)."""
        cdef int64_t i
        self.n_tag[:] = 0
        self.stem_count[:] = 0
        self.occ_pre[:] = 0
        self.occ_stem[:] = 0
        self.occ_suf[:] = 0
        self.pre_total[:] = 0
        self.suf_total[:] = 0
        self.tag_tokens[:] = 0
        self.trans_total[:] = 0
        self.pre_count[:, :] = 0
        self.suf_count[:, :] = 0
        self.trans[:, :] = 0
        self.n_in = 0
        self.L_pre = self.L_stem = self.L_suf = self.L_any = 0
        # type-level counts first; the HMM needs every type's tag in place
        for i in range(self.n_types):
            self.n_tag[self.tags[i]] += 1
            self.n_in += 1
            self._change_lexicon(self.hyps[i], self.tags[i], 1)
        for i in range(self.n_types):
            self.tag_tokens[self.tags[i]] += self.type_count[i]
            for e in range(self.out_start[i], self.out_start[i + 1]):
                a = self._tag_or_boundary(self.out_type[e])
                self.trans[self.tags[i], a] += self.out_count[e]
                self.trans_total[self.tags[i]] += self.out_count[e]
            for e in range(self.in_start[i], self.in_start[i + 1]):
                if self.in_type[e] < 0:  # sentence-initial: from the boundary
                    self.trans[self.n_tags, self.tags[i]] += self.in_count[e]
                    self.trans_total[self.n_tags] += self.in_count[e]
            self.trans[self.tags[i], self.tags[i]] += self.self_count[i]
            self.trans_total[self.tags[i]] += self.self_count[i]

    # ------------------------------------------------------------ weights
    cdef double _dm_sizes(self, int64_t[::1] totals, int64_t size) noexcept nogil:
        """Sum over the active tags of the size term of a Dirichlet-
        multinomial over `size` outcomes (see _size)."""
        cdef double out = 0.0
        cdef int t
        for t in range(self.active_tags):
            out += _size(self.alpha, size, totals[t])
        return out

    cdef void _prepare_sizes(self, int most) noexcept nogil:
        """The change of the affix size terms when d = 0..most new strings
        join the prefix (suffix) lexicon, for the counts as they stand."""
        cdef int d
        cdef double base_pre = self._dm_sizes(self.pre_total, self.L_pre)
        cdef double base_suf = self._dm_sizes(self.suf_total, self.L_suf)
        for d in range(most + 1):
            self.pre_size_delta[d] = self._dm_sizes(self.pre_total, self.L_pre + d) - base_pre
            self.suf_size_delta[d] = self._dm_sizes(self.suf_total, self.L_suf + d) - base_suf

    cdef double _lexicon_weight(self, int32_t[:, ::1] morphs, int32_t[::1] n_morphs,
                                int32_t[::1] stem_pos, int32_t h, int t) noexcept nogil:
        """Change of the log joint's type-level part (lexicon, number of
        morphs, stem, affixes given t) when hypothesis h of `morphs` with
        tag t is added to the state without its type. Morph ids at or past
        the known strings are strings the state has never held."""
        cdef int k, k2, n = n_morphs[h], stem = stem_pos[h], role, role2
        cdef int32_t s
        cdef int new_pre = 0, new_stem = 0, new_suf = 0, n_pre = 0, n_suf = 0
        cdef bint seen_any, seen_role, known
        cdef int64_t c, extra
        cdef double a = self.alpha
        cdef double w = n * self.log_1m_gs
        for k in range(n):
            s = morphs[h, k]
            known = s < self.n_strings
            role = 0 if k < stem else (1 if k == stem else 2)
            seen_any = False
            seen_role = False
            for k2 in range(k):
                if morphs[h, k2] == s:
                    seen_any = True
                    role2 = 0 if k2 < stem else (1 if k2 == stem else 2)
                    if role2 == role:
                        seen_role = True
            if not seen_any and (not known or self._occ(s) == 0):
                # a string new to the master lexicon: its geometric length
                # (Lee et al.), or for a new word's strings the price given
                if known:
                    w += self.log_gl + self.morph_length[s] * self.log_1m_gl
                else:
                    w += self.extra_cost[s - self.n_strings]
            if not seen_role:
                if role == 0 and (not known or self.occ_pre[s] == 0):
                    new_pre += 1
                elif role == 1 and (not known or self.occ_stem[s] == 0):
                    new_stem += 1
                elif role == 2 and (not known or self.occ_suf[s] == 0):
                    new_suf += 1
        w += new_pre * self.log_1m_g[0] + new_stem * self.log_1m_g[1] + new_suf * self.log_1m_g[2]
        # the stem: one more draw of the stem Dirichlet-multinomial, over the
        # stem lexicon as the move leaves it
        s = morphs[h, stem]
        c = self.stem_count[s] if s < self.n_strings else 0
        w += (_size(a, self.L_stem + new_stem, self.n_in + 1) - _size(a, self.L_stem, self.n_in)
              + log(c + a))
        # the affixes given t, over the prefix and suffix lexicons after the move
        w += self.pre_size_delta[new_pre] + self.suf_size_delta[new_suf]
        for k in range(n):
            if k == stem:
                continue
            s = morphs[h, k]
            extra = 0  # the same affix earlier in this word, same side
            for k2 in range(k):
                if morphs[h, k2] == s and k2 != stem and (k2 < stem) == (k < stem):
                    extra += 1
            if k < stem:
                c = self.pre_count[t, s] if s < self.n_strings else 0
                w += log(c + extra + a) - log(self.pre_total[t] + n_pre + a * (self.L_pre + new_pre))
                n_pre += 1
            else:
                c = self.suf_count[t, s] if s < self.n_strings else 0
                w += log(c + extra + a) - log(self.suf_total[t] + n_suf + a * (self.L_suf + new_suf))
                n_suf += 1
        return w

    cdef double _tag_weight(self, int64_t i, int t) noexcept nogil:
        """Change of the tag prior and, with token_pos, of the HMM, when
        type i (taken out) gets tag t."""
        cdef double w = log(self.n_tag[t] + self.alpha) - log(self.n_in + self.alpha * self.active_tags)
        cdef double a = self.alpha_trans, outcomes = self.active_tags + 1, ae = self.alpha_emit
        cdef int64_t m, W, M, add, row_add
        cdef int b, B = self.n_tags
        if not self.token_pos:
            return w
        m = self.type_count[i]
        W = self.n_tag[t]
        M = self.tag_tokens[t]
        w += (lgamma(ae * (W + 1)) - lgamma(M + m + ae * (W + 1))
              - (lgamma(ae * W) - lgamma(M + ae * W) if W else 0.0)
              + lgamma(m + ae) - lgamma(ae))
        # column t of every other row (the tags before i's tokens, and the boundary)
        for b in range(self.active_tags):
            if b != t and self.in_by[b]:
                w += (lgamma(self.trans[b, t] + a + self.in_by[b]) - lgamma(self.trans[b, t] + a)
                      - lgamma(self.trans_total[b] + a * outcomes + self.in_by[b]) + lgamma(self.trans_total[b] + a * outcomes))
        if self.in_by[B]:
            w += (lgamma(self.trans[B, t] + a + self.in_by[B]) - lgamma(self.trans[B, t] + a)
                  - lgamma(self.trans_total[B] + a * outcomes + self.in_by[B]) + lgamma(self.trans_total[B] + a * outcomes))
        # row t
        row_add = 0
        for b in range(self.active_tags):
            add = self.out_by[b] + ((self.in_by[t] + self.self_count[i]) if b == t else 0)
            if add:
                w += lgamma(self.trans[t, b] + a + add) - lgamma(self.trans[t, b] + a)
                row_add += add
        if self.out_by[B]:
            w += lgamma(self.trans[t, B] + a + self.out_by[B]) - lgamma(self.trans[t, B] + a)
            row_add += self.out_by[B]
        if row_add:
            w += -lgamma(self.trans_total[t] + a * outcomes + row_add) + lgamma(self.trans_total[t] + a * outcomes)
        return w

    cdef inline double _agreement(self, int32_t h1, int32_t h2, int32_t ending) noexcept nogil:
        cdef int32_t s1 = self.final_suffix[h1], s2 = self.final_suffix[h2]
        cdef int32_t longer = s1 if s1 > s2 else s2
        if longer == 0 or ending < longer:
            return self.log_beta[2]
        return self.log_beta[0] if s1 == s2 else self.log_beta[1]

    cdef double _agreement_weight(self, int64_t i, int32_t h) noexcept nogil:
        """log of the beta factors of the token pairs that involve type i."""
        cdef double w = 0.0
        cdef int64_t e
        cdef int32_t j
        for e in range(self.in_start[i], self.in_start[i + 1]):
            j = self.in_type[e]
            if j >= 0:
                w += self.in_count[e] * self._agreement(self.hyps[j], h, self.in_ending[e])
        for e in range(self.out_start[i], self.out_start[i + 1]):
            j = self.out_type[e]
            if j >= 0:
                w += self.out_count[e] * self._agreement(h, self.hyps[j], self.out_ending[e])
        w += self.self_count[i] * self._agreement(h, h, self.word_length[i])
        return w

    cdef void _context_by_tag(self, int64_t i) noexcept nogil:
        cdef int64_t e
        cdef int b
        for b in range(self.n_tags + 1):
            self.in_by[b] = 0
            self.out_by[b] = 0
        for e in range(self.in_start[i], self.in_start[i + 1]):
            self.in_by[self._tag_or_boundary(self.in_type[e])] += self.in_count[e]
        for e in range(self.out_start[i], self.out_start[i + 1]):
            self.out_by[self._tag_or_boundary(self.out_type[e])] += self.out_count[e]

    cdef int64_t _fill_weights(self, int64_t i) noexcept nogil:
        """Log weights of every (tag, hypothesis) of type i (taken out of
        the counts) into self.weights, tag-major; RETURNS their number."""
        cdef int64_t h0 = self.type_start[i], nh = self.type_start[i + 1] - h0, k
        cdef int t
        cdef double tag_w
        self._prepare_sizes(<int>(self.pre_size_delta.shape[0] - 1))
        if self.token_pos:
            self._context_by_tag(i)
        for t in range(self.active_tags):
            tag_w = self._tag_weight(i, t)
            for k in range(nh):
                self.weights[t * nh + k] = tag_w + self._lexicon_weight(
                    self.morphs, self.n_morphs, self.stem_pos, <int32_t>(h0 + k), t)
        if self.token_seg:
            for k in range(nh):
                tag_w = self._agreement_weight(i, <int32_t>(h0 + k))
                for t in range(self.active_tags):
                    self.weights[t * nh + k] += tag_w
        return self.active_tags * nh

    def conditional(self, int64_t i):
        """The log weights of type i's (tag, hypothesis) moves, shape
        (active tags, hypotheses of i), up to a constant (for tests)."""
        cdef int64_t n
        cdef int t = self.tags[i]
        cdef int32_t h = self.hyps[i]
        self._change(i, t, h, -1)
        n = self._fill_weights(i)
        self._change(i, t, h, 1)
        nh = self.type_start[i + 1] - self.type_start[i]
        return np.asarray(self.weights[:n]).reshape(self.active_tags, nh).copy()

    # ------------------------------------------------------------ sampling
    def sweep(self, double temperature=1.0):
        """Resample every type once, in a random order; RETURNS the number
        of types whose (tag, segmentation) changed."""
        cdef int64_t n = self.n_types, i, k, r, count, changed = 0
        cdef int64_t[::1] order = np.arange(n, dtype=np.int64)
        cdef double total, u, top, inv = 1.0 / temperature
        cdef int t, nh
        cdef int32_t h
        with nogil:
            for k in range(n - 1, 0, -1):  # Fisher-Yates
                r = <int64_t>(_uniform(&self.rng) * (k + 1))
                i = order[k]
                order[k] = order[r]
                order[r] = i
            for k in range(n):
                i = order[k]
                nh = <int>(self.type_start[i + 1] - self.type_start[i])
                if nh == 1 and self.active_tags == 1:
                    continue
                t = self.tags[i]
                h = self.hyps[i]
                self._change(i, t, h, -1)
                count = self._fill_weights(i)
                top = -INFINITY
                for r in range(count):
                    if self.weights[r] > top:
                        top = self.weights[r]
                total = 0.0
                for r in range(count):
                    self.weights[r] = exp((self.weights[r] - top) * inv)
                    total += self.weights[r]
                u = _uniform(&self.rng) * total
                r = 0
                while r < count - 1 and u >= self.weights[r]:
                    u -= self.weights[r]
                    r += 1
                if r // nh != t or self.type_start[i] + r % nh != h:
                    changed += 1
                t = <int>(r // nh)
                h = <int32_t>(self.type_start[i] + r % nh)
                self.tags[i] = t
                self.hyps[i] = h
                self._change(i, t, h, 1)
        return changed

    def set_stage(self, int active_tags, bint token_pos, bint token_seg, bint keep_tags=False):
        """Enter a model stage. When it has more tags than the last, the
        tags are drawn uniformly at random among them (as the paper
        introduces tags), unless `keep_tags` (a state set from outside)."""
        cdef int64_t i
        if keep_tags:
            pass
        elif active_tags > self.active_tags:
            for i in range(self.n_types):
                self.tags[i] = <int32_t>(_uniform(&self.rng) * active_tags)
        elif active_tags < self.active_tags:
            for i in range(self.n_types):
                self.tags[i] = 0
        self.active_tags = active_tags
        self.token_pos = token_pos
        self.token_seg = token_seg
        self._rebuild_counts()

    # ------------------------------------------------------- the joint
    def log_joint(self):
        """log P(state) of the current stage, from the counts."""
        cdef double total = 0.0, a
        cdef int64_t s, i, e
        cdef int t, b, outcomes
        for s in range(self.n_strings):
            if self._occ(s) > 0:
                total += self.log_gl + self.morph_length[s] * self.log_1m_gl
        total += self.log_g[0] + self.L_pre * self.log_1m_g[0]
        total += self.log_g[1] + self.L_stem * self.log_1m_g[1]
        total += self.log_g[2] + self.L_suf * self.log_1m_g[2]
        for i in range(self.n_types):
            total += self.log_gs + self.n_morphs[self.hyps[i]] * self.log_1m_gs - self.log_seg_norm
        total += _dm(self.n_tag, self.alpha, self.active_tags)
        total += _dm(self.stem_count, self.alpha, self.L_stem)
        for t in range(self.active_tags):
            total += _dm(self.pre_count[t], self.alpha, self.L_pre)
            total += _dm(self.suf_count[t], self.alpha, self.L_suf)
        if self.token_pos:
            a = self.alpha_emit
            for t in range(self.active_tags):
                if self.n_tag[t]:
                    total += lgamma(a * self.n_tag[t]) - lgamma(self.tag_tokens[t] + a * self.n_tag[t])
            for i in range(self.n_types):
                total += lgamma(self.type_count[i] + a) - lgamma(a)
            outcomes = self.active_tags + 1
            for t in list(range(self.active_tags)) + [self.n_tags]:
                row = np.concatenate([np.asarray(self.trans[t, :self.active_tags]), np.asarray(self.trans[t, self.n_tags:])])
                total += _dm(row, self.alpha_trans, outcomes)
        if self.token_seg:
            for i in range(self.n_types):
                for e in range(self.out_start[i], self.out_start[i + 1]):
                    if self.out_type[e] >= 0:
                        total += self.out_count[e] * self._agreement(self.hyps[i], self.hyps[self.out_type[e]], self.out_ending[e])
                total += self.self_count[i] * self._agreement(self.hyps[i], self.hyps[i], self.word_length[i])
        return total

    # ------------------------------------------------- words never sampled
    def best_new(self, int32_t[:, ::1] morphs, int32_t[::1] n_morphs, int32_t[::1] stem_pos,
                 double[::1] new_costs, double[::1] hyp_costs=None):
        """The best (tag, hypothesis) of a word outside the sampled types.

        morphs, n_morphs, stem_pos: its hypotheses (as in the table); ids
        at or past the known strings are strings the lexicon lacks, and
        `new_costs[id - known]` is the log price of spelling each (Lee et
        al.'s geometric length prior, log gl + length log(1 - gl), or a
        character model's log probability). A string the table holds but
        no type uses keeps the geometric price (in a frozen sampler every
        string is used). Scored by the type-level part of the model (tag
        prior, lexicon, morphs) with the counts as they stand, plus
        `hyp_costs[h]` (a log factor per hypothesis) when given.
        RETURNS: (tag, index of the hypothesis).
        """
        cdef int t, best_t = 0
        cdef int32_t h, best_h = 0
        cdef double w, best = -INFINITY, tag_w
        newest = int(np.max(np.asarray(morphs))) if morphs.shape[0] else -1
        if hyp_costs is not None and hyp_costs.shape[0] != morphs.shape[0]:
            raise ValueError(f"best_new: {hyp_costs.shape[0]} hypothesis costs for {morphs.shape[0]} hypotheses")
        if newest - self.n_strings >= new_costs.shape[0]:
            raise ValueError(f"best_new: {new_costs.shape[0]} prices for the new strings, but the hypotheses "
                             f"use {newest - self.n_strings + 1}")
        self.extra_cost = new_costs
        if morphs.shape[1] + 1 > self.pre_size_delta.shape[0]:
            self.pre_size_delta = np.zeros(morphs.shape[1] + 1, dtype=np.float64)
            self.suf_size_delta = np.zeros(morphs.shape[1] + 1, dtype=np.float64)
        self._prepare_sizes(<int>morphs.shape[1])
        for t in range(self.active_tags):
            tag_w = log(self.n_tag[t] + self.alpha)
            for h in range(morphs.shape[0]):
                w = tag_w + self._lexicon_weight(morphs, n_morphs, stem_pos, h, t)
                if hyp_costs is not None:
                    w += hyp_costs[h]
                if w > best:
                    best, best_t, best_h = w, t, h
        return best_t, best_h


cdef inline double _size(double alpha, int64_t size, int64_t total) noexcept nogil:
    """lgamma(alpha size) - lgamma(total + alpha size): the part of a
    Dirichlet-multinomial's log marginal that depends on the number of
    outcomes (0 over no outcomes)."""
    if size == 0:
        return 0.0
    return lgamma(alpha * size) - lgamma(total + alpha * size)


def _dm(counts, double alpha, int64_t size):
    """log Dirichlet-multinomial marginal of `counts` under a symmetric
    Dirichlet of `alpha` over `size` outcomes (the nonzero counts' outcomes
    among them)."""
    cdef double out
    c = np.asarray(counts)
    if size == 0:
        return 0.0
    nz = c[c > 0]
    out = lgamma(alpha * size) - lgamma(c.sum() + alpha * size)
    for x in nz:
        out += lgamma(x + alpha) - lgamma(alpha)
    return out
