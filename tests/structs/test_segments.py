"""Tests of the k-best gapped-segment decoder and the selection rule."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from spacy_struct.structs.reference.segments import kbest_segments as ref_kbest
from spacy_struct.structs.segments import Segments, kbest_segments, select_segments

from references.brute_force_segments import all_segments, is_legal, kbest_scores, segment_score

NEG = -np.inf


# ---------------------------------------------------------------- helpers


def check_result(res: Segments, scores: np.ndarray, k: int, max_gap) -> None:
    """Structural invariants plus: every segment legal, distinct, rescored."""
    T = scores.shape[0]
    m = len(res)
    assert res.types.dtype == np.int64 and res.types.shape == (m,)
    assert res.scores.dtype == np.float64 and res.scores.shape == (m,)
    assert res.offsets.dtype == np.int64 and res.offsets.shape == (m + 1,)
    assert res.words.dtype == np.int64 and res.words.shape == (res.offsets[-1],)
    assert res.offsets[0] == 0 and np.all(np.diff(res.offsets) >= 1)
    items = res.as_list()
    # ordered by type, then descending score
    assert [t for t, _, _ in items] == sorted(t for t, _, _ in items)
    for t in range(T):
        s = [sc for tt, _, sc in items if tt == t]
        assert s == sorted(s, reverse=True)
        assert len(s) <= k
    assert len({(t, w) for t, w, _ in items}) == m, "duplicate segments"
    for t, words, sc in items:
        assert is_legal(words, max_gap), words
        assert all(0 <= w < scores.shape[1] - 2 for w in words)
        assert sc > NEG
        assert sc == pytest.approx(segment_score(scores, t, words), rel=1e-9, abs=1e-9)


def scores_by_type(res: Segments, T: int):
    return [sorted(res.scores[res.types == t].tolist(), reverse=True) for t in range(T)]


def assert_same_scores(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-9)


GAPS = st.sampled_from([(None, False), (0, False), (1, False), (2, False), (None, True)])


@st.composite
def score_arrays(draw, max_n=6, max_t=3):
    n = draw(st.integers(0, max_n))
    T = draw(st.integers(1, max_t))
    # small integers give many ties; -inf forbids transitions
    elems = st.sampled_from([NEG, NEG, -2.0, -1.0, 0.0, 0.5, 1.0, 3.0]) | st.floats(
        -5, 5, allow_nan=False
    )
    return draw(hnp.arrays(np.float64, (T, n + 2, n + 2), elements=elems))


def effective_gap(max_gap, contiguous):
    return 0 if contiguous else max_gap


# ---------------------------------------------------------------- k-best


@settings(max_examples=500, deadline=None)
@given(scores=score_arrays(), k=st.integers(1, 12), gap=GAPS)
def test_kbest_matches_brute_force_and_reference(scores, k, gap):
    max_gap, contiguous = gap
    g = effective_gap(max_gap, contiguous)
    res = kbest_segments(scores, k, max_gap=max_gap, contiguous=contiguous)
    check_result(res, scores, k, g)
    expected = kbest_scores(scores, k, g)
    assert_same_scores(scores_by_type(res, scores.shape[0]), expected)
    ref = ref_kbest(scores, k, max_gap=max_gap, contiguous=contiguous)
    check_result(ref, scores, k, g)
    assert_same_scores(scores_by_type(ref, scores.shape[0]), expected)


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 7), T=st.integers(1, 3),
       k=st.integers(1, 20), gap=GAPS)
def test_kbest_exact_without_ties(seed, n, T, k, gap):
    """With continuous scores the k best are unique: identities must match."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=(T, n + 2, n + 2))
    scores[rng.random(scores.shape) < 0.15] = NEG
    max_gap, contiguous = gap
    g = effective_gap(max_gap, contiguous)
    res = kbest_segments(scores, k, max_gap=max_gap, contiguous=contiguous)
    ref = ref_kbest(scores, k, max_gap=max_gap, contiguous=contiguous)
    brute = all_segments(scores, g)
    expected = []
    for t in range(T):
        mine = sorted((x for x in brute if x[0] == t), key=lambda x: -x[2])[:k]
        expected.extend(mine)
    for got in (res, ref):
        lst = got.as_list()
        assert [(t, w) for t, w, _ in lst] == [(t, w) for t, w, _ in expected]
        np.testing.assert_allclose([s for *_, s in lst], [s for *_, s in expected])


def test_reference_equals_cython_on_longer_sentences():
    rng = np.random.default_rng(1)
    for n, k, gap in [(30, 20, None), (25, 7, 2), (40, 40, None), (20, 5, 0)]:
        scores = rng.normal(size=(3, n + 2, n + 2))
        scores[rng.random(scores.shape) < 0.1] = NEG
        a = kbest_segments(scores, k, max_gap=gap)
        b = ref_kbest(scores, k, max_gap=gap)
        check_result(a, scores, k, gap)
        assert [(t, w) for t, w, _ in a.as_list()] == [(t, w) for t, w, _ in b.as_list()]
        np.testing.assert_allclose(a.scores, b.scores)


# ---------------------------------------------------------------- edge cases


@pytest.mark.parametrize("T", [1, 3])
def test_no_words(T):
    res = kbest_segments(np.zeros((T, 2, 2)), 5)
    assert len(res) == 0 and res.offsets.tolist() == [0] and res.words.size == 0
    assert res.as_list() == []


def test_one_word():
    s = np.zeros((2, 3, 3))
    s[0, 0, 1], s[0, 1, 2] = 1.5, 2.0
    s[1, 0, 1] = NEG
    res = kbest_segments(s, 4)
    assert res.as_list() == [(0, (0,), 3.5)]


@pytest.mark.parametrize("n", [1, 3, 5])
def test_k_larger_than_number_of_segments(n):
    rng = np.random.default_rng(n)
    s = rng.normal(size=(2, n + 2, n + 2))
    for k in (2**n + 5, 10**9):
        res = kbest_segments(s, k)
        check_result(res, s, k, None)
        for t in range(2):
            assert sorted(w for tt, w, _ in res.as_list() if tt == t) == sorted(
                w for tt, w, _ in all_segments(s) if tt == t
            )
            assert (res.types == t).sum() == 2**n - 1


def test_single_legal_path():
    n = 6
    s = np.full((2, n + 2, n + 2), NEG)
    path = [0, 2, 3, 6, 7]  # words 1, 2, 5
    for a, b in zip(path, path[1:]):
        s[1, a, b] = 1.0
    res = kbest_segments(s, 10)
    assert res.as_list() == [(1, (1, 2, 5), 4.0)]
    assert len(kbest_segments(s, 10, max_gap=1)) == 0
    assert len(kbest_segments(s, 10, max_gap=2)) == 1


def test_ties_all_zero_distinct():
    n = 5
    s = np.zeros((2, n + 2, n + 2))
    for k in (1, 7, 31):
        res = kbest_segments(s, k)
        check_result(res, s, k, None)
        assert len(res) == 2 * k
    res = kbest_segments(s, 100, contiguous=True)
    check_result(res, s, 100, 0)
    assert len(res) == 2 * n * (n + 1) // 2  # contiguous spans per type


def test_start_and_end_are_not_gaps():
    n = 6
    s = np.zeros((1, n + 2, n + 2))
    res = kbest_segments(s, 100, contiguous=True)
    assert (0, (5,), 0.0) in res.as_list() and (0, (0,), 0.0) in res.as_list()


def test_contiguous_equals_gap_zero():
    rng = np.random.default_rng(3)
    s = rng.normal(size=(2, 9, 9))
    a = kbest_segments(s, 6, contiguous=True)
    b = kbest_segments(s, 6, max_gap=0)
    c = kbest_segments(s, 6, max_gap=0, contiguous=True)
    assert a.as_list() == b.as_list() == c.as_list()


def test_ignored_entries():
    """Entries with i <= j and the (0, n+1) transition have no effect."""
    rng = np.random.default_rng(4)
    s = rng.normal(size=(2, 6, 6))
    t = s.copy()
    t[:, np.tril_indices(6)[0], np.tril_indices(6)[1]] = NEG
    t[:, 0, 5] = 1e6
    assert kbest_segments(s, 9).as_list() == kbest_segments(t, 9).as_list()


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(5)
    batch = []
    for n, T in [(3, 2), (0, 2), (7, 1), (1, 3), (0, 1), (5, 2)]:
        s = rng.normal(size=(T, n + 2, n + 2))
        s[rng.random(s.shape) < 0.1] = NEG
        batch.append(s)
    for kw in ({}, {"max_gap": 1}, {"contiguous": True}):
        got = kbest_segments(batch, 4, **kw)
        assert isinstance(got, list) and len(got) == len(batch)
        for s, r in zip(batch, got):
            single = kbest_segments(s, 4, **kw)
            assert r.as_list() == single.as_list()
            assert np.array_equal(r.offsets, single.offsets)
        got_t = kbest_segments(tuple(batch), 4, **kw)
        assert [r.as_list() for r in got_t] == [r.as_list() for r in got]
        assert [r.as_list() for r in ref_kbest(batch, 4, **kw)] == [
            r.as_list() for r in got
        ]
    assert kbest_segments([], 3) == []


def test_int_scores_and_noncontiguous_input():
    s = np.arange(2 * 6 * 6).reshape(2, 6, 6)
    a = kbest_segments(s, 5)
    b = kbest_segments(s.astype(float), 5)
    assert a.as_list() == b.as_list()
    big = np.random.default_rng(0).normal(size=(2, 12, 12))
    view = big[:, ::2, ::2]            # strided, not C-contiguous
    assert kbest_segments(view, 3).as_list() == kbest_segments(view.copy(), 3).as_list()
    fortran = np.asfortranarray(big)
    assert kbest_segments(fortran, 4).as_list() == kbest_segments(big, 4).as_list()


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "scores, exc, match",
    [
        (np.zeros((4, 4)), ValueError, "dimensions"),
        (np.zeros((1, 4, 5)), ValueError, "shape"),
        (np.zeros((1, 1, 1)), ValueError, "shape"),
        (np.zeros((0, 4, 4)), ValueError, "T = 0"),
        (np.full((1, 3, 3), np.nan), ValueError, "NaN"),
        (np.full((1, 3, 3), np.inf), ValueError, r"\+inf"),
        (np.zeros((1, 3, 3), dtype=object), TypeError, "dtype"),
        (np.zeros((1, 3, 3), dtype=complex), TypeError, "dtype"),
        (np.array(["a"] * 9).reshape(1, 3, 3), TypeError, "dtype"),
        ("scores", TypeError, "numpy array"),
    ],
)
def test_score_errors(scores, exc, match):
    with pytest.raises(exc, match=match):
        kbest_segments(scores, 2)


def test_batch_error_names_item():
    with pytest.raises(ValueError, match="batch item 1"):
        kbest_segments([np.zeros((1, 3, 3)), np.zeros((1, 3, 4))], 2)
    with pytest.raises(ValueError, match="batch item 0"):
        kbest_segments([np.full((1, 3, 3), np.nan)], 2)
    with pytest.raises(TypeError, match="batch item 2"):
        kbest_segments([np.zeros((1, 3, 3))] * 2 + [[1.0]], 2)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"k": 0}, ValueError, "k must be at least 1"),
        ({"k": -3}, ValueError, "k must be at least 1"),
        ({"k": 2.0}, TypeError, "k must be an int"),
        ({"k": True}, TypeError, "k must be an int"),
        ({"k": 2, "max_gap": -1}, ValueError, "max_gap"),
        ({"k": 2, "max_gap": 1.5}, TypeError, "max_gap"),
        ({"k": 2, "max_gap": 2, "contiguous": True}, ValueError, "contradicts"),
    ],
)
def test_argument_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        kbest_segments(np.zeros((1, 4, 4)), **kwargs)


def test_numpy_int_k():
    assert len(kbest_segments(np.zeros((1, 4, 4)), np.int64(2), max_gap=np.int32(1))) == 2


# ---------------------------------------------------------------- selection


def check_selection(seg: Segments, out: Segments, threshold, allow_overlap, allow_embedding):
    cands = seg.as_list()
    kept = out.as_list()
    # result is a sub-list of the input in the same order (type, desc score)
    it = iter(cands)
    assert all(any(c == x for c in it) for x in kept)
    assert all(s > threshold for _, _, s in kept)

    def conflict(a, b):
        wa, wb = set(a[1]), set(b[1])
        if not allow_overlap and wa & wb:
            return True
        if not allow_embedding and (wa <= wb or wb <= wa):
            return True
        return False

    for i, a in enumerate(kept):
        for b in kept[i + 1 :]:
            assert not conflict(a, b), (a, b)
    kept_set = set((t, w) for t, w, _ in kept)
    for c in cands:
        if (c[0], c[1]) in kept_set:
            continue
        if c[2] <= threshold:
            continue
        # dropped above threshold: blocked by a kept one at least as good
        assert any(conflict(c, x) and x[2] >= c[2] for x in kept), c
    if allow_overlap and allow_embedding:
        assert kept == [c for c in cands if c[2] > threshold]


@settings(max_examples=300, deadline=None)
@given(scores=score_arrays(max_n=7), k=st.integers(1, 15),
       threshold=st.sampled_from([-np.inf, -3.0, -1.0, 0.0, 0.5, 2.0]),
       allow_overlap=st.booleans(), allow_embedding=st.booleans(), gap=GAPS)
def test_select_segments(scores, k, threshold, allow_overlap, allow_embedding, gap):
    max_gap, contiguous = gap
    seg = kbest_segments(scores, k, max_gap=max_gap, contiguous=contiguous)
    out = select_segments(seg, threshold, allow_overlap, allow_embedding)
    assert isinstance(out, Segments)
    check_selection(seg, out, threshold, allow_overlap, allow_embedding)


def test_select_segments_examples():
    seg = Segments(
        np.array([0, 0, 1, 1], np.int64),
        np.array([3.0, 1.0, 2.0, -1.0]),
        np.array([0, 2, 3, 5, 6], np.int64),
        np.array([0, 1, 1, 0, 1, 4], np.int64),
    )
    # (0,(0,1),3) (0,(1,),1) (1,(0,1),2) (1,(4,),-1)
    assert select_segments(seg).as_list() == [
        (0, (0, 1), 3.0), (0, (1,), 1.0), (1, (0, 1), 2.0)]
    assert select_segments(seg, allow_embedding=False).as_list() == [(0, (0, 1), 3.0)]
    assert select_segments(seg, threshold=-2, allow_overlap=False).as_list() == [
        (0, (0, 1), 3.0), (1, (4,), -1.0)]
    assert select_segments(seg, threshold=1.0).as_list() == [
        (0, (0, 1), 3.0), (1, (0, 1), 2.0)]
    batch = select_segments([seg, Segments.empty()], allow_overlap=False)
    assert [b.as_list() for b in batch] == [[(0, (0, 1), 3.0)], []]
    with pytest.raises(TypeError):
        select_segments(np.zeros(3))
    with pytest.raises(TypeError, match="batch item 1"):
        select_segments([seg, 3])
