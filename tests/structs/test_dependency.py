"""Dependency-tree structures against brute-force enumeration and the reference."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from references.brute_force_trees import all_trees, log_partition, marginals, tree_scores
from spacy_struct.structs import dependency as D
from spacy_struct.structs.arrays import NoLegalStructureError
from spacy_struct.structs.reference import dependency as R


@st.composite
def arc_scores(draw, min_n=1, max_n=5, p_forbid=0.2, integer=None):
    n = draw(st.integers(min_n, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    s = rng.normal(scale=3.0, size=(n + 1, n + 1))
    if integer if integer is not None else draw(st.booleans()):
        s = np.round(s)          # many ties
    s[rng.random(s.shape) < draw(st.sampled_from([0.0, p_forbid]))] = -np.inf
    return s


def best_or_none(scores, single_root, projective=False):
    t = tree_scores(scores, all_trees(scores.shape[0] - 1, single_root, projective))
    return t.max() if np.isfinite(t.max()) else None


def assert_argmax(decode, scores, single_root, projective):
    best = best_or_none(scores, single_root, projective)
    if best is None:
        with pytest.raises(NoLegalStructureError):
            decode(scores, single_root=single_root)
        return
    heads = decode(scores, single_root=single_root)
    D.check_heads(heads, scores.shape[0] - 1)
    if single_root:
        assert (heads[1:] == 0).sum() == 1
    # the tree must be one of the legal ones, and the best
    legal = all_trees(scores.shape[0] - 1, single_root, projective)
    assert (legal == heads).all(axis=1).any()
    assert D.tree_score(scores, heads) == pytest.approx(best, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(arc_scores(max_n=6), st.booleans())
def test_chu_liu_edmonds_is_the_best_tree(scores, single_root):
    assert_argmax(D.chu_liu_edmonds, scores, single_root, projective=False)


@settings(max_examples=300, deadline=None)
@given(arc_scores(max_n=6), st.booleans())
def test_eisner_is_the_best_projective_tree(scores, single_root):
    assert_argmax(D.eisner, scores, single_root, projective=True)


def test_no_finite_tree_gives_minus_infinity_whatever_sign_the_singular_determinant_rounds_to():
    """With every root arc -inf there is no tree; the Laplacian is singular,
    and its determinant's rounding gives +1 as often as not (found by the
    enumeration test below)."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = int(rng.integers(2, 6))
        scores = rng.normal(0, 3, size=(n + 1, n + 1))
        scores[0, :] = -np.inf
        for single_root in (False, True):
            log_z, marg = D.matrix_tree_marginals(scores, single_root=single_root)
            assert log_z == -np.inf and not marg.any()
            assert D.matrix_tree_log_partition(scores, single_root) == -np.inf


@settings(max_examples=150, deadline=None)
@given(arc_scores(max_n=5, integer=False), st.booleans())
def test_log_partitions_and_marginals_equal_enumeration(scores, single_root):
    for projective, fn in ((True, D.eisner_marginals), (False, D.matrix_tree_marginals)):
        want = log_partition(scores, single_root, projective)
        log_z, marg = fn(scores, single_root=single_root)
        if want == -np.inf:
            assert log_z == -np.inf
            assert not marg.any()
            continue
        assert log_z == pytest.approx(want, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(marg, marginals(scores, single_root, projective), atol=1e-7)
        # every word has exactly one head
        np.testing.assert_allclose(marg[:, 1:].sum(axis=0), 1.0, atol=1e-7)
        if single_root:
            assert marg[0].sum() == pytest.approx(1.0, abs=1e-7)
    assert D.eisner_log_partition(scores, single_root) == D.eisner_marginals(scores, single_root)[0]
    assert D.matrix_tree_log_partition(scores, single_root) == pytest.approx(
        D.matrix_tree_marginals(scores, single_root)[0])


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("fn", [D.eisner_marginals, D.matrix_tree_marginals])
def test_marginals_are_finite_differences_of_log_z(fn, single_root):
    rng = np.random.default_rng(7)
    eps = 1e-5
    for n in (2, 4, 7):
        s = rng.normal(scale=2.0, size=(n + 1, n + 1))
        _, marg = fn(s, single_root=single_root)
        for _ in range(8):
            h, d = rng.integers(0, n + 1), rng.integers(1, n + 1)
            if h == d:
                continue
            up, down = s.copy(), s.copy()
            up[h, d] += eps
            down[h, d] -= eps
            fd = (fn(up, single_root=single_root)[0] - fn(down, single_root=single_root)[0]) / (2 * eps)
            assert marg[h, d] == pytest.approx(fd, abs=1e-6)


def test_matrix_tree_is_stable_for_large_scores():
    rng = np.random.default_rng(3)
    s = rng.normal(scale=2.0, size=(6, 6))
    log_z, marg = D.matrix_tree_marginals(s)
    log_z_big, marg_big = D.matrix_tree_marginals(s + 800.0)   # exp(800) overflows
    assert np.isfinite(log_z_big)
    assert log_z_big == pytest.approx(log_z + 5 * 800.0)
    np.testing.assert_allclose(marg_big, marg, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(arc_scores(min_n=8, max_n=25, integer=False), st.booleans())
def test_cython_matches_numpy_reference_on_longer_sentences(scores, single_root):
    for fast, slow in ((D.chu_liu_edmonds, R.chu_liu_edmonds), (D.eisner, R.eisner)):
        try:
            want = D.tree_score(scores, slow(scores, single_root=single_root))
        except NoLegalStructureError:
            with pytest.raises(NoLegalStructureError):
                fast(scores, single_root=single_root)
            continue
        got = D.tree_score(scores, fast(scores, single_root=single_root))
        assert got == pytest.approx(want, abs=1e-9)
    want = R.eisner_log_partition(scores, single_root)
    assert D.eisner_log_partition(scores, single_root) == pytest.approx(want, abs=1e-8)
    if np.isfinite(scores).all():
        want = R.matrix_tree_log_partition(scores, single_root)
        assert D.matrix_tree_log_partition(scores, single_root) == pytest.approx(want, rel=1e-8)


def test_cle_beats_eisner_only_where_the_best_tree_crosses():
    # arcs 1->3 and 2->4 cross: only the non-projective decoder can take both
    s = np.full((5, 5), -5.0)
    s[0, 1] = 5
    s[1, 3] = s[2, 4] = s[1, 2] = 5
    assert D.tree_score(s, D.chu_liu_edmonds(s)) > D.tree_score(s, D.eisner(s))


@settings(max_examples=150, deadline=None)
@given(arc_scores(max_n=5), st.booleans(), st.data())
def test_cost_augmented_argmax_maximises_score_plus_hamming(scores, single_root, data):
    n = scores.shape[0] - 1
    legal = all_trees(n, single_root)
    gold = legal[data.draw(st.integers(0, len(legal) - 1))]
    cost = data.draw(st.sampled_from([0.5, 1.0, 3.0]))
    aug = D.add_hamming_cost(scores, gold, cost)
    totals = tree_scores(scores, legal) + cost * (legal[:, 1:] != gold[1:]).sum(axis=1)
    if not np.isfinite(totals.max()):
        return
    heads = D.chu_liu_edmonds(aug, single_root=single_root)
    got = D.tree_score(scores, heads) + cost * (heads[1:] != gold[1:]).sum()
    assert got == pytest.approx(totals.max(), abs=1e-9)


def test_mcdonald_worked_example():
    # "John saw Mary", McDonald et al. (2005), Figure 3: root, John, saw, Mary
    s = np.full((4, 4), -np.inf)
    s[0, 2], s[0, 1], s[0, 3] = 10, 9, 9
    s[2, 1], s[1, 2], s[2, 3], s[1, 3], s[3, 2], s[3, 1] = 30, 20, 30, 3, 0, 11
    heads = D.chu_liu_edmonds(s, single_root=False)
    assert heads.tolist() == [-1, 2, 0, 2]
    assert D.tree_score(s, heads) == 70


@pytest.mark.parametrize("fn", [D.chu_liu_edmonds, D.eisner])
@pytest.mark.parametrize("single_root", [True, False])
def test_sizes_zero_and_one(fn, single_root):
    assert fn(np.zeros((1, 1)), single_root=single_root).tolist() == [-1]
    assert fn(np.zeros((2, 2)), single_root=single_root).tolist() == [-1, 0]
    with pytest.raises(NoLegalStructureError):
        fn(np.array([[0.0, -np.inf], [0.0, 0.0]]), single_root=single_root)
    assert D.eisner_log_partition(np.zeros((1, 1))) == 0.0
    assert D.matrix_tree_log_partition(np.zeros((1, 1))) == 0.0
    assert D.matrix_tree_marginals(np.zeros((2, 2)))[1].tolist() == [[0, 1], [0, 0]]


@pytest.mark.parametrize("fn", [D.chu_liu_edmonds, D.eisner])
def test_mask_leaving_one_tree(fn):
    # only the chain root -> 1 -> 2 -> ... -> 5 is allowed
    n = 5
    s = np.full((n + 1, n + 1), -np.inf)
    for d in range(1, n + 1):
        s[d - 1, d] = -3.0
    assert fn(s).tolist() == [-1, 0, 1, 2, 3, 4]
    for marg_fn in (D.eisner_marginals, D.matrix_tree_marginals):
        log_z, marg = marg_fn(s)
        assert log_z == pytest.approx(-15.0)
        assert set(np.unique(marg)) <= {0.0, 1.0}


def test_single_root_is_forced_even_against_strong_root_arcs():
    s = np.zeros((5, 5))
    s[0, 1:] = 100.0
    heads = D.chu_liu_edmonds(s)
    assert (heads[1:] == 0).sum() == 1
    assert (D.chu_liu_edmonds(s, single_root=False)[1:] == 0).all()
    heads = D.eisner(s)
    assert (heads[1:] == 0).sum() == 1


def test_no_single_root_tree():
    s = np.full((3, 3), -np.inf)
    s[0, 1] = s[0, 2] = 1.0        # words can only attach to the root
    assert D.chu_liu_edmonds(s, single_root=False).tolist() == [-1, 0, 0]
    for fn in (D.chu_liu_edmonds, D.eisner):
        with pytest.raises(NoLegalStructureError, match="one root child"):
            fn(s)
    assert D.matrix_tree_log_partition(s) == -np.inf
    assert D.eisner_log_partition(s) == -np.inf


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(11)
    batch = [rng.normal(size=(n + 1, n + 1)) for n in (0, 5, 1, 12, 3, 30)]
    for fn in (D.chu_liu_edmonds, D.eisner):
        for single_root in (True, False):
            out = fn(batch, single_root=single_root)
            assert isinstance(out, list) and len(out) == len(batch)
            for s, h in zip(batch, out):
                np.testing.assert_array_equal(h, fn(s, single_root=single_root))
    for fn in (D.eisner_marginals, D.matrix_tree_marginals):
        out = fn(batch)
        for s, (z, m) in zip(batch, out):
            z1, m1 = fn(s)
            assert z == pytest.approx(z1)
            np.testing.assert_allclose(m, m1, atol=1e-10)
    assert D.chu_liu_edmonds([]) == []


def test_integer_scores_are_accepted():
    s = np.array([[0, 3, 1], [0, 0, 2], [0, 1, 0]])
    assert D.chu_liu_edmonds(s).tolist() == [-1, 0, 1]


@pytest.mark.parametrize("bad, error, match", [
    (np.zeros((3, 4)), ValueError, "square"),
    (np.zeros((0, 0)), ValueError, "no root row"),
    (np.zeros(3), ValueError, "2 dimensions"),
    (np.array([[0, np.nan], [0, 0]]), ValueError, "NaN"),
    (np.array([[0, np.inf], [0, 0]]), ValueError, r"\+inf"),
    (np.array([["a", "b"], ["c", "d"]]), TypeError, "dtype"),
    (np.zeros((2, 2), dtype=complex), TypeError, "dtype"),
    ([[0.0, 1.0], [0.0, 0.0]], TypeError, "numpy array"),
    ("scores", TypeError, "numpy array"),
])
def test_bad_input_gets_a_clear_error(bad, error, match):
    for fn in (D.chu_liu_edmonds, D.eisner, D.eisner_marginals, D.matrix_tree_marginals):
        with pytest.raises(error, match=match):
            fn(bad)


def test_bad_batch_item_is_named():
    with pytest.raises(ValueError, match="batch item 1"):
        D.chu_liu_edmonds([np.zeros((3, 3)), np.array([[0, np.nan], [0, 0]])])


@pytest.mark.parametrize("heads, match", [
    ([-1, 2, 1], "cycle"),
    ([-1, 0, 5], "outside"),
    ([-1, 1], "own head"),
    ([0, 0], "root"),
])
def test_check_heads_names_the_problem(heads, match):
    with pytest.raises(ValueError, match=match):
        D.check_heads(np.array(heads))
    with pytest.raises(ValueError, match=match):
        D.add_hamming_cost(np.zeros((len(heads), len(heads))), np.array(heads))


def test_matrix_tree_reference_agrees():
    rng = np.random.default_rng(5)
    for single_root in (True, False):
        s = rng.normal(size=(7, 7))
        z, m = D.matrix_tree_marginals(s, single_root=single_root)
        rz, rm = R.matrix_tree_marginals(s, single_root=single_root)
        assert z == pytest.approx(rz)
        np.testing.assert_allclose(m, rm, atol=1e-10)


@settings(max_examples=200, deadline=None)
@given(arc_scores(max_n=5, integer=False), st.booleans(), st.data())
def test_argmax_is_exact_with_huge_finite_scores(scores, single_root, data):
    # soft masks (-1e30) and forcing values must not swamp the other scores
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    big = data.draw(st.sampled_from([-1e30, -1e15, -1e9, 1e9]))
    scores = scores.copy()
    scores[rng.random(scores.shape) < 0.3] = big
    assert_argmax(D.chu_liu_edmonds, scores, single_root, projective=False)
    assert_argmax(D.eisner, scores, single_root, projective=True)


@pytest.mark.parametrize("gap", [0.0, 30.0, 800.0])
def test_single_root_matrix_tree_survives_weak_root_arcs(gap):
    rng = np.random.default_rng(int(gap))
    s = rng.normal(size=(6, 6))
    s[0, 1:] -= gap               # root arcs far below the word arcs
    log_z, marg = D.matrix_tree_marginals(s)
    assert log_z == pytest.approx(log_partition(s, True), rel=1e-12)
    np.testing.assert_allclose(marg, marginals(s, True), atol=1e-9)
    s = np.array([[0, 0, 0], [0, 0, 800.0], [0, 800.0, 0]])
    assert D.matrix_tree_log_partition(s) == pytest.approx(log_partition(s, True))


def test_multi_root_matrix_tree_refuses_a_lost_determinant():
    rng = np.random.default_rng(2)
    s = rng.normal(size=(6, 6))
    s[0, 1:] -= 15.0
    log_z, marg = D.matrix_tree_marginals(s, single_root=False)
    assert log_z == pytest.approx(log_partition(s, False), rel=1e-9)
    np.testing.assert_allclose(marg, marginals(s, False), atol=1e-6)
    s[0, 1:] -= 25.0              # now exp(-40): LU cancels, the answer would be wrong
    with pytest.raises(FloatingPointError, match="single_root=True"):
        D.matrix_tree_marginals(s, single_root=False)


def test_matrix_tree_batch_of_mixed_lengths_is_not_padded():
    rng = np.random.default_rng(4)
    batch = [rng.normal(size=(n + 1, n + 1)) for n in (5, 5, 300, 0, 5)]
    out = D.matrix_tree_marginals(batch)
    for s, (z, m) in zip(batch, out):
        z1, m1 = D.matrix_tree_marginals(s)
        assert z == pytest.approx(z1)
        assert m.shape == s.shape


def test_tree_score_and_cost_check_their_arguments():
    with pytest.raises(ValueError, match="outside"):
        D.tree_score(np.zeros((3, 3)), np.array([-1, 0, -1]))
    with pytest.raises(ValueError, match="finite number"):
        D.add_hamming_cost(np.zeros((3, 3)), np.array([-1, 0, 1]), cost=True)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 33])
def test_one_elimination_gives_numpys_inverse_and_log_determinant(n):
    from spacy_struct.structs._matrix_tree import invert_with_logdet

    rng = np.random.default_rng(n)
    L = rng.normal(0, 1, (6, n, n)) + 2 * np.eye(n)
    L[1] = -L[1]                                    # a negative determinant for odd n
    if n > 1:
        L[2, 0, 0] = 0.0                            # needs a row swap to start
        L[3, :, 0] = 0.0                            # singular
    A = L.copy()
    sign, logdet = np.empty(6), np.empty(6)
    invert_with_logdet(A, sign, logdet)
    want_sign, want_logdet = np.linalg.slogdet(L)
    np.testing.assert_array_equal(sign, want_sign)
    ok = want_sign != 0
    np.testing.assert_allclose(logdet[ok], want_logdet[ok], rtol=1e-10, atol=1e-10)
    assert (logdet[~ok] == -np.inf).all()
    np.testing.assert_allclose(A[ok], np.linalg.inv(L[ok]), rtol=1e-8, atol=1e-10)


def test_the_elimination_refuses_a_batch_that_is_not_square():
    from spacy_struct.structs._matrix_tree import invert_with_logdet

    with pytest.raises(ValueError, match="square"):
        invert_with_logdet(np.zeros((2, 3, 4)), np.empty(2), np.empty(2))
