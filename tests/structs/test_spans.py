"""Span trees and laminar span sets: Cython against brute force and reference."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_struct.structs import spans as S
from spacy_struct.structs.arrays import NoLegalStructureError
from spacy_struct.structs.reference import spans as R

from references import brute_force_spans as B

# (n, L) small enough to enumerate every structure quickly
SIZES = {
    "cky": [(0, 1), (1, 1), (1, 3), (2, 2), (3, 3), (4, 2), (4, 3), (5, 1), (5, 2)],
    "laminar": [(0, 2), (1, 1), (1, 3), (2, 3), (3, 2), (3, 3), (4, 1), (4, 2), (5, 1)],
}
FUNCS = {
    "cky": (S.cky_argmax, S.cky_log_partition, S.cky_marginals),
    "laminar": (S.laminar_argmax, S.laminar_log_partition, S.laminar_marginals),
}
REF = {
    "cky": (R.cky_argmax, R.cky_log_partition, R.cky_marginals),
    "laminar": (R.laminar_argmax, R.laminar_log_partition, R.laminar_marginals),
}
LEGAL = {"cky": B.is_cky_tree, "laminar": B.is_laminar}
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_case(seed: int, n: int, L: int, p_inf: float, mask_kind: str, integer: bool):
    """(scores, mask, masked scores) from a seed: the knobs stay shrinkable."""
    rng = np.random.default_rng(seed)
    if integer:
        s = rng.integers(-2, 3, size=(n, n, L)).astype(np.float64)
    else:
        s = rng.normal(scale=2.0, size=(n, n, L))
    s[rng.random((n, n, L)) < p_inf] = -np.inf
    mask = None
    if mask_kind == "span":
        mask = rng.random((n, n)) > 0.2
    elif mask_kind == "label":
        mask = rng.random((n, n, L)) > 0.2
    masked = s if mask is None else np.where(mask if mask.ndim == 3 else mask[:, :, None], s, -np.inf)
    return s, mask, masked


@st.composite
def cases(draw, kind):
    n, L = draw(st.sampled_from(SIZES[kind]))
    return random_case(
        draw(st.integers(0, 2**32 - 1)),
        n,
        L,
        draw(st.sampled_from([0.0, 0.0, 0.15, 0.4])),
        draw(st.sampled_from(["none", "none", "span", "label"])),
        draw(st.booleans()),
    )


def check_sorted(spans: np.ndarray) -> None:
    keys = [(int(i), -int(j)) for i, j, _ in spans]
    assert keys == sorted(keys)


# ------------------------------------------------------------- brute force

@pytest.mark.parametrize("kind", ["cky", "laminar"])
@FAST
@given(data=st.data())
def test_argmax_matches_brute_force(kind, data):
    s, mask, masked = data.draw(cases(kind))
    n, _, L = s.shape
    best = B.brute_best(masked, kind)
    argmax = FUNCS[kind][0]
    if best == -np.inf:
        with pytest.raises(NoLegalStructureError):
            argmax(s, mask)
        return
    spans, score = argmax(s, mask)
    assert spans.dtype == np.int64 and spans.shape[1] == 3
    assert LEGAL[kind](spans, n, L)
    check_sorted(spans)
    assert score == pytest.approx(best, abs=1e-9)
    assert B.span_score(masked, spans) == pytest.approx(score, abs=1e-9)
    if kind == "laminar":  # a span enters only if it strictly helps
        assert all(masked[i, j, l] > 0 for i, j, l in spans)


@pytest.mark.parametrize("kind", ["cky", "laminar"])
@FAST
@given(data=st.data())
def test_log_partition_and_marginals_match_brute_force(kind, data):
    s, mask, masked = data.draw(cases(kind))
    n, _, L = s.shape
    _, log_partition, marginals = FUNCS[kind]
    want_z = B.brute_log_partition(masked, kind)
    want_m = B.brute_marginals(masked, kind)
    log_z = log_partition(s, mask)
    log_z2, marg = marginals(s, mask)
    if want_z == -np.inf:
        assert log_z == -np.inf and log_z2 == -np.inf
        assert not marg.any()
        return
    assert log_z == pytest.approx(want_z, abs=1e-9)
    assert log_z2 == pytest.approx(want_z, abs=1e-9)
    assert marg.shape == (n, n, L)
    np.testing.assert_allclose(marg, want_m, atol=1e-9)
    assert not marg[np.tril_indices(n, -1)].any()
    if kind == "cky":
        assert marg.sum() == pytest.approx(max(2 * n - 1, 0))
        for i in range(n):
            assert marg[i, i].sum() == pytest.approx(1.0)
    else:
        idx, tot = B.structure_scores(masked, kind)
        sizes = (idx != n * n * L).sum(axis=1)
        expected = float(np.sum(np.exp(tot - want_z) * sizes))
        assert marg.sum() == pytest.approx(expected)


@pytest.mark.parametrize("kind", ["cky", "laminar"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 7), L=st.integers(1, 3))
def test_marginals_are_gradient_of_log_z(kind, seed, n, L):
    s, _, _ = random_case(seed, n, L, 0.1, "none", False)
    _, log_partition, marginals = FUNCS[kind]
    log_z, marg = marginals(s)
    if log_z == -np.inf:
        return
    rng = np.random.default_rng(seed)
    coords = [c for c in zip(*np.nonzero(np.isfinite(s))) if c[0] <= c[1]]
    eps = 1e-5
    for t in rng.permutation(len(coords))[:4]:
        c = coords[t]
        up, down = s.copy(), s.copy()
        up[c] += eps
        down[c] -= eps
        fd = (log_partition(up) - log_partition(down)) / (2 * eps)
        assert fd == pytest.approx(marg[c], abs=1e-6)


@pytest.mark.parametrize("kind", ["cky", "laminar"])
@settings(max_examples=100, deadline=None)
@given(data=st.data(), cost=st.sampled_from([0.5, 1.0, 2.5]))
def test_cost_augmented_argmax_matches_brute_force(kind, data, cost):
    s, _, _ = data.draw(cases(kind))
    n, _, L = s.shape
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    m = int(rng.integers(0, 2 * n + 1))
    starts = rng.integers(0, max(n, 1), size=m)
    ends = np.array([rng.integers(a, n) for a in starts], dtype=np.int64)
    gold = np.stack([starts, ends, rng.integers(0, L, size=m)], axis=1) if n else np.zeros((0, 3), np.int64)
    aug = S.add_hamming_cost(s, gold, cost)
    np.testing.assert_array_equal(aug, R.add_hamming_cost(s, gold, cost))
    best = B.brute_best_cost_augmented(s, gold, kind, cost)
    if best == -np.inf:
        with pytest.raises(NoLegalStructureError):
            FUNCS[kind][0](aug)
        return
    spans, _ = FUNCS[kind][0](aug)
    assert LEGAL[kind](spans, n, L)
    got = B.span_score(s, spans) + cost * B.hamming(spans, gold)
    assert got == pytest.approx(best, abs=1e-9)


# ------------------------------------------------------------- reference

@pytest.mark.parametrize("kind", ["cky", "laminar"])
@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(8, 14),
    L=st.integers(1, 4),
    p_inf=st.sampled_from([0.0, 0.3]),
    mask_kind=st.sampled_from(["none", "span", "label"]),
)
def test_matches_numpy_reference_on_longer_sentences(kind, seed, n, L, p_inf, mask_kind):
    s, mask, _ = random_case(seed, n, L, p_inf, mask_kind, False)
    for fast, ref in zip(FUNCS[kind], REF[kind]):
        try:
            want = ref(s, mask)
        except NoLegalStructureError:
            with pytest.raises(NoLegalStructureError):
                fast(s, mask)
            continue
        got = fast(s, mask)
        if isinstance(want, tuple):
            if np.ndim(want[0]) == 0:  # (log_z, marginals)
                assert got[0] == pytest.approx(want[0], abs=1e-9)
                np.testing.assert_allclose(got[1], want[1], atol=1e-9)
            else:  # (spans, score): continuous scores, so no ties
                np.testing.assert_array_equal(got[0], want[0])
                assert got[1] == pytest.approx(want[1], abs=1e-9)
        else:
            assert got == pytest.approx(want, abs=1e-9)


def test_large_scores_are_stable():
    rng = np.random.default_rng(3)
    s = rng.normal(scale=500.0, size=(30, 30, 3))
    for kind in ("cky", "laminar"):
        _, score = FUNCS[kind][0](s)
        log_z, marg = FUNCS[kind][2](s)
        assert np.isfinite(log_z) and log_z >= score - 1e-6
        assert np.isfinite(marg).all() and (marg >= 0).all() and (marg <= 1 + 1e-9).all()
    _, marg = S.cky_marginals(s)
    assert marg.sum() == pytest.approx(59)


# ------------------------------------------------------------- edge cases

def test_empty_sentence():
    s = np.zeros((0, 0, 2))
    for kind in ("cky", "laminar"):
        argmax, log_partition, marginals = FUNCS[kind]
        spans, score = argmax(s)
        assert spans.shape == (0, 3) and spans.dtype == np.int64 and score == 0.0
        assert log_partition(s) == 0.0
        log_z, marg = marginals(s)
        assert log_z == 0.0 and marg.shape == (0, 0, 2)


def test_one_word():
    s = np.array([[[0.5, -1.0]]])
    spans, score = S.cky_argmax(s)
    assert spans.tolist() == [[0, 0, 0]] and score == 0.5
    assert S.cky_log_partition(s) == pytest.approx(np.logaddexp(0.5, -1.0))
    spans, score = S.laminar_argmax(s)
    assert spans.tolist() == [[0, 0, 0]] and score == 0.5
    assert S.laminar_log_partition(s) == pytest.approx(np.log(1 + np.exp(0.5) + np.exp(-1.0)))
    spans, score = S.laminar_argmax(-s - 2)
    assert spans.shape == (0, 3) and score == 0.0


@pytest.mark.parametrize("n", [1, 3, 6])
def test_ties_all_zero(n):
    s = np.zeros((n, n, 2))
    spans, score = S.cky_argmax(s)
    assert score == 0.0 and B.is_cky_tree(spans, n, 2)
    check_sorted(spans)
    spans, score = S.laminar_argmax(s)
    assert score == 0.0 and spans.shape == (0, 3)  # ties leave spans unlabeled


def test_mask_with_one_legal_tree_gives_exact_marginals():
    n, L = 5, 3
    rng = np.random.default_rng(0)
    s = rng.normal(size=(n, n, L))
    mask = np.zeros((n, n, L), dtype=bool)
    right = [(i, n - 1) for i in range(n)] + [(i, i) for i in range(n)]
    for i, j in right:
        mask[i, j, 1] = True
    spans, score = S.cky_argmax(s, mask)
    want = sorted({(i, j, 1) for i, j in right}, key=lambda t: (t[0], -t[1]))
    assert [tuple(r) for r in spans.tolist()] == want
    assert score == pytest.approx(sum(s[i, j, 1] for i, j in set(right)))
    log_z, marg = S.cky_marginals(s, mask)
    assert log_z == pytest.approx(score)
    assert set(np.unique(marg)) <= {0.0, 1.0}
    assert np.array_equal(marg != 0, mask & (np.arange(n)[:, None] <= np.arange(n))[:, :, None])
    # laminar: everything masked leaves only the empty set
    log_z, marg = S.laminar_marginals(s, np.zeros((n, n), dtype=bool))
    assert log_z == 0.0 and not marg.any()
    spans, score = S.laminar_argmax(s, np.zeros((n, n), dtype=bool))
    assert spans.shape == (0, 3) and score == 0.0


def test_no_legal_tree():
    s = np.zeros((4, 4, 2))
    mask = np.ones((4, 4), dtype=bool)
    mask[0, 3] = False  # the whole sentence is a span of every tree
    with pytest.raises(NoLegalStructureError):
        S.cky_argmax(s, mask)
    with pytest.raises(NoLegalStructureError, match="batch item 1"):
        S.cky_argmax([s, s], [None, mask])
    assert S.cky_log_partition(s, mask) == -np.inf
    log_z, marg = S.cky_marginals(s, mask)
    assert log_z == -np.inf and not marg.any()


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(1)
    sents = [rng.normal(size=(n, n, 3)) for n in (4, 0, 1, 9, 0, 6)]
    masks = [None if n % 2 else rng.random((n, n, 3)) > 0.3 for n in (4, 0, 1, 9, 0, 6)]
    for m in masks:
        if m is not None:
            m[:, :, 2] = True  # keep every span legal
    for kind in ("cky", "laminar"):
        for fn in FUNCS[kind]:
            batch = fn(sents, masks)
            assert isinstance(batch, list) and len(batch) == len(sents)
            for b, (x, m) in enumerate(zip(sents, masks)):
                one = fn(x, m)
                if isinstance(one, tuple):
                    for u, v in zip(batch[b], one):
                        np.testing.assert_array_equal(u, v)
                else:
                    assert batch[b] == one
        assert FUNCS[kind][0]([]) == []
    golds = [np.array([[0, 1, 2]]), np.zeros((0, 3), np.int64), np.array([[0, 0, 0]])] + [
        np.zeros((0, 3), np.int64)
    ] * 3
    batch = S.add_hamming_cost(sents, golds, 2.0)
    for b in range(len(sents)):
        np.testing.assert_array_equal(batch[b], S.add_hamming_cost(sents[b], golds[b], 2.0))


def test_integer_and_float32_scores_accepted():
    s = np.arange(18, dtype=np.int32).reshape(3, 3, 2)
    assert S.cky_argmax(s)[1] == S.cky_argmax(s.astype(np.float32))[1]


# ------------------------------------------------------------- errors

@pytest.mark.parametrize(
    "bad, exc, match",
    [
        (np.zeros((3, 3)), ValueError, "3 dimensions"),
        (np.zeros((3, 4, 2)), ValueError, r"\(n, n, L\)"),
        (np.zeros((3, 3, 0)), ValueError, "L must be at least 1"),
        (np.full((2, 2, 1), np.nan), ValueError, "NaN"),
        (np.full((2, 2, 1), np.inf), ValueError, r"\+inf"),
        (np.zeros((2, 2, 1), dtype=object), TypeError, "real numbers"),
        (np.array([[["a"]]]), TypeError, "real numbers"),
        ([[[0.0]]], TypeError, "numpy array"),
    ],
)
@pytest.mark.parametrize("kind", ["cky", "laminar"])
def test_bad_scores(kind, bad, exc, match):
    for fn in FUNCS[kind]:
        with pytest.raises(exc, match=match):
            fn(bad)
    with pytest.raises(exc, match=match):
        S.add_hamming_cost(bad, np.zeros((0, 3), np.int64))


def test_bad_scores_in_batch_names_item():
    with pytest.raises(ValueError, match="batch item 1"):
        S.cky_marginals([np.zeros((2, 2, 1)), np.full((2, 2, 1), np.nan)])


def test_bad_masks():
    s = np.zeros((3, 3, 2))
    with pytest.raises(ValueError, match="must be"):
        S.cky_argmax(s, np.ones((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="must be"):
        S.laminar_marginals(s, np.ones((3, 3, 3), dtype=bool))
    # shapes that numpy would broadcast are refused, not guessed at
    for shape in [(3,), (), (1,), (3, 1), (1, 3, 2)]:
        with pytest.raises(ValueError, match="must be"):
            S.laminar_argmax(s, np.ones(shape, dtype=bool))
    with pytest.raises(TypeError, match="boolean"):
        S.cky_argmax(s, np.ones((3, 3), dtype=float))
    with pytest.raises(ValueError, match="mask has 1 items but scores has 2"):
        S.laminar_argmax([s, s], [None])
    with pytest.raises(TypeError, match="list/tuple"):
        S.laminar_argmax([s, s], np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="batch item 1"):
        S.cky_log_partition([s, s], [None, np.ones((2, 2), dtype=bool)])


@pytest.mark.parametrize(
    "gold, exc, match",
    [
        (np.array([[0, 3, 0]]), ValueError, "outside"),
        (np.array([[-1, 1, 0]]), ValueError, "outside"),
        (np.array([[2, 1, 0]]), ValueError, "outside"),
        (np.array([[0, 1, 2]]), ValueError, "outside"),
        (np.array([[0, 1]]), ValueError, r"\(m, 3\)"),
        (np.array([[0.0, 1.0, 0.0]]), TypeError, "integers"),
    ],
)
def test_bad_gold_spans(gold, exc, match):
    with pytest.raises(exc, match=match):
        S.add_hamming_cost(np.zeros((3, 3, 2)), gold)


def test_bad_cost_and_gold_batch():
    s = np.zeros((3, 3, 2))
    with pytest.raises(ValueError, match="cost"):
        S.add_hamming_cost(s, np.zeros((0, 3), np.int64), np.nan)
    with pytest.raises(ValueError, match="gold_spans has 1 items"):
        S.add_hamming_cost([s, s], [np.zeros((0, 3), np.int64)])
    with pytest.raises(ValueError, match=r"batch item 1"):
        S.add_hamming_cost([s, s], [np.zeros((0, 3), np.int64), np.array([[0, 5, 0]])])
