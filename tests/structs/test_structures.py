"""Every structure object, through the protocol the losses use, against
brute-force enumeration of its structures on small inputs; and the three
losses, written once over that protocol, against the same enumeration."""
import numpy as np
import pytest

from references.brute_force_spans import enumerate_structures
from references.brute_force_trees import all_trees
from spacy_struct import losses
from spacy_struct.structs import DependencyTrees, LaminarSpans, SpanTrees, Structure


def _dependency_case(projective, single_root):
    structure = DependencyTrees(projective=projective, single_root=single_root)

    def enumerate_(n, rng):
        shape = (n + 1, n + 1)
        ys = list(all_trees(n, single_root, projective))
        return shape, ys

    # words whose head differs; |y| = |gold| = n, so it is half the symmetric difference
    return structure, enumerate_, lambda y, g, shape: float(((y[1:] != g[1:])).sum())


def _span_case(structure, kind, max_width=0):
    L = 2

    def enumerate_(n, rng):
        shape = (n, n, L)
        ys = []
        for row in enumerate_structures(kind, n, L):
            spans = [(int(r) // L // n, int(r) // L % n, int(r) % L) for r in row if r != n * n * L]
            if max_width and any(e - s + 1 > max_width for s, e, _ in spans):
                continue
            ys.append(np.array(spans, dtype=np.int64).reshape(-1, 3))
        return shape, ys

    def hamming(y, g, shape):
        a = {tuple(map(int, r)) for r in y}
        b = {tuple(map(int, r)) for r in g}
        return float(len(a ^ b))

    return structure, enumerate_, hamming


CASES = {
    "cle single-root": _dependency_case(False, True),
    "cle multi-root": _dependency_case(False, False),
    "eisner single-root": _dependency_case(True, True),
    "eisner multi-root": _dependency_case(True, False),
    "laminar": _span_case(LaminarSpans(), "laminar"),
    "laminar, max_width 2": _span_case(LaminarSpans(max_width=2), "laminar", max_width=2),
    "binary trees": _span_case(SpanTrees(), "cky"),
}
SIZES = (1, 2, 3, 4)


def _logsumexp(x):
    m = np.max(x)
    return float(m + np.log(np.exp(x - m).sum()))


def _cases():
    return pytest.mark.parametrize("case", list(CASES), ids=list(CASES))


@_cases()
def test_argmax_log_partition_and_marginals_match_enumeration(case):
    structure, enumerate_, _ = CASES[case]
    assert isinstance(structure, Structure)
    rng = np.random.default_rng(0)
    for n in SIZES:
        shape, ys = enumerate_(n, rng)
        S = rng.normal(scale=2.0, size=shape)
        indicators = np.array([structure.indicator(shape, y) for y in ys])
        totals = np.array([structure.score(S, y) for y in ys])
        assert np.allclose(totals, (indicators * S).sum(axis=tuple(range(1, indicators.ndim))))
        (best,) = structure.argmax([S])
        assert structure.score(S, best) == pytest.approx(totals.max())
        assert any(structure.same(best, y) for y in ys)
        log_z = _logsumexp(totals)
        assert structure.log_partition([S])[0] == pytest.approx(log_z)
        (z, marginals), = structure.marginals([S])
        p = np.exp(totals - log_z)
        assert z == pytest.approx(log_z)
        np.testing.assert_allclose(marginals, np.tensordot(p, indicators, axes=1), atol=1e-9)


@_cases()
def test_cost_augmented_argmax_matches_enumeration(case):
    structure, enumerate_, hamming = CASES[case]
    rng = np.random.default_rng(1)
    for n in SIZES:
        shape, ys = enumerate_(n, rng)
        S = rng.normal(size=shape)
        gold = ys[rng.integers(len(ys))]
        for cost in (0.5, 2.0):
            (A,) = structure.add_hamming_cost([S], [gold], cost)
            (pred,) = structure.argmax([A])
            best = max(structure.score(S, y) + cost * hamming(y, gold, shape) for y in ys)
            assert structure.score(S, pred) + cost * hamming(pred, gold, shape) == pytest.approx(best)


@_cases()
def test_local_marginals_are_the_gradient_of_a_relaxation_that_holds_every_structure(case):
    structure, enumerate_, _ = CASES[case]
    rng = np.random.default_rng(2)
    for n in (2, 3):
        shape, ys = enumerate_(n, rng)
        S = rng.normal(size=shape)
        (log_z, marginals), = structure.local_marginals([S])
        # the relaxation sums over a superset of the structures
        assert log_z >= structure.log_partition([S])[0] - 1e-9
        direction = rng.normal(size=shape)
        eps = 1e-6
        up = structure.local_marginals([S + eps * direction])[0][0]
        down = structure.local_marginals([S - eps * direction])[0][0]
        assert float((marginals * direction).sum()) == pytest.approx((up - down) / (2 * eps), rel=1e-5)


@_cases()
def test_a_complete_gold_structure_is_its_own_target_and_score(case):
    structure, enumerate_, _ = CASES[case]
    rng = np.random.default_rng(3)
    shape, ys = enumerate_(3, rng)
    S = rng.normal(size=shape)
    y = ys[rng.integers(len(ys))]
    assert structure.same(structure.gold_target(S, y), y)
    value, grad = structure.gold_score(S, y)
    assert value == pytest.approx(structure.score(S, y))
    np.testing.assert_array_equal(grad, structure.indicator(shape, y))


@_cases()
def test_losses_match_enumeration_and_their_gradients(case):
    structure, enumerate_, hamming = CASES[case]
    rng = np.random.default_rng(4)
    for n in (2, 3):
        shape, ys = enumerate_(n, rng)
        S = rng.normal(size=shape)
        gold = ys[rng.integers(len(ys))]
        totals = np.array([structure.score(S, y) for y in ys])
        # crf: log Z - score(gold); gradient by finite differences
        value, (grad,) = losses.crf_loss(structure, [S], [gold])
        assert value == pytest.approx(_logsumexp(totals) - structure.score(S, gold))
        direction = rng.normal(size=shape)
        eps = 1e-6
        up = losses.crf_loss(structure, [S + eps * direction], [gold])[0]
        down = losses.crf_loss(structure, [S - eps * direction], [gold])[0]
        assert float((grad * direction).sum()) == pytest.approx((up - down) / (2 * eps), rel=1e-5)
        # margin: the cost-augmented maximum over every structure, minus the gold score
        value, (grad,) = losses.margin_loss(structure, [S], [gold], cost=1.0)
        best = max(structure.score(S, y) + hamming(y, gold, shape) for y in ys)
        assert value == pytest.approx(max(best - structure.score(S, gold), 0.0))
        if value > 0:
            assert (grad * structure.indicator(shape, gold)).sum() < 0
        # local: never below the crf loss of the same gold (its Z sums over more)
        local, _ = losses.local_loss(structure, [S], [gold])
        assert local >= losses.crf_loss(structure, [S], [gold])[0] - 1e-9


def test_margin_hinge_is_clamped_per_sentence():
    structure = LaminarSpans()
    gold = np.array([[0, 1, 0]])
    separated = np.full((2, 2, 1), -9.0)
    separated[0, 1, 0] = 9.0                # gold wins by far more than the cost
    violated = np.full((2, 2, 1), 0.0)
    violated[0, 0, 0] = 3.0                 # a wrong span beats the gold one
    alone, _ = losses.margin_loss(structure, [violated], [gold])
    both, grads = losses.margin_loss(structure, [separated, violated], [gold, gold])
    assert alone > 0 and both == pytest.approx(alone)
    assert not grads[0].any() and grads[1].any()


def test_partial_dependency_gold_is_completed_to_the_best_tree_and_lifted_when_projective():
    rng = np.random.default_rng(5)
    S = rng.normal(size=(5, 5))
    partial = np.array([-1, 2, -2, -2, -2])     # only word 1's head is known
    for projective in (False, True):
        structure = DependencyTrees(projective=projective)
        target = structure.gold_target(S, partial)
        trees = [t for t in all_trees(4, True, projective) if t[1] == 2]
        assert target[1] == 2
        assert structure.score(S, target) == pytest.approx(max(structure.score(S, t) for t in trees))
    crossing = np.array([-1, 3, 4, 0, 3])       # 1 <- 3 crosses 2 <- 4
    lifted = DependencyTrees(projective=True).gold_target(S, crossing)
    assert any(np.array_equal(lifted, t) for t in all_trees(4, True, True))


def test_unknown_loss_and_bad_width_are_named():
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        losses.get_loss("hinge")
    with pytest.raises(ValueError, match="max_width"):
        LaminarSpans(max_width=-1)
    assert set(losses.loss_names()) >= {"crf", "margin", "local"}
