"""Tests of the second-order (sibling) tree structure against enumeration
of every tree."""
from __future__ import annotations

import numpy as np
import pytest

from references.brute_force_siblings import best, log_partition, marginals, parts_of
from references.brute_force_trees import _reaches_root, all_trees
from spacy_struct.losses import get_loss
from spacy_struct.structs import dependency as D
from spacy_struct.structs import siblings as Sib
from spacy_struct.structs.arrays import NoLegalStructureError


def random_parts(rng, n, forbid=0.0, scale=2.0):
    P = rng.normal(scale=scale, size=(n + 1,) * 3)
    if forbid:
        P[rng.random(P.shape) < forbid] = -np.inf
    return P


@pytest.mark.parametrize("single_root", [True, False])
def test_argmax_log_z_and_marginals_match_enumeration(single_root):
    rng = np.random.default_rng(1)
    for trial in range(120):
        n = int(rng.integers(1, 6))
        P = random_parts(rng, n, forbid=0.3 if trial % 4 == 0 else 0.0)
        trees, values = best(P, single_root)
        if not np.isfinite(values.max()):
            with pytest.raises(NoLegalStructureError):
                Sib.sibling_eisner(P, single_root)
            assert Sib.sibling_log_partition(P, single_root) == -np.inf
            continue
        heads = Sib.sibling_eisner(P, single_root)
        assert Sib.tree_part_score(P, heads) == pytest.approx(values.max())
        assert any(np.array_equal(heads, t) for t in trees)
        log_z, marg = Sib.sibling_marginals(P, single_root)
        assert log_z == pytest.approx(log_partition(P, single_root))
        np.testing.assert_allclose(marg, marginals(P, single_root), atol=1e-9)


def test_tree_parts_follow_the_definition():
    for n in range(1, 6):
        for heads in all_trees(n, False):
            rows = Sib.tree_parts(heads)
            assert sorted(map(tuple, rows.tolist())) == sorted(parts_of(heads))


def test_first_order_parts_give_eisner():
    rng = np.random.default_rng(2)
    for _ in range(30):
        n = int(rng.integers(1, 9))
        A = rng.normal(size=(n + 1, n + 1))
        P = Sib.parts_from_arcs(A)
        for single_root in (True, False):
            got = Sib.sibling_eisner(P, single_root)
            want = D.eisner(A, single_root)
            assert D.tree_score(A, got) == pytest.approx(D.tree_score(A, want))
            assert Sib.sibling_log_partition(P, single_root) == pytest.approx(D.eisner_log_partition(A, single_root))
            arc_marginals = Sib.sibling_marginals(P, single_root)[1].sum(axis=1)
            np.testing.assert_allclose(arc_marginals, D.eisner_marginals(A, single_root)[1], atol=1e-9)


def test_a_batch_of_lengths_equals_one_at_a_time():
    rng = np.random.default_rng(3)
    batch = [random_parts(rng, n) for n in (4, 1, 7, 3)]
    heads = Sib.sibling_eisner(batch)
    for P, h in zip(batch, heads):
        np.testing.assert_array_equal(h, Sib.sibling_eisner(P))
    for P, (z, m) in zip(batch, Sib.sibling_marginals(batch)):
        z1, m1 = Sib.sibling_marginals(P)
        assert z == pytest.approx(z1)
        np.testing.assert_allclose(m, m1)


def _hill_climb_reference(P, heads, single_root):
    """The search of McDonald & Pereira (2006, Fig. 4) over explicit trees."""
    heads = heads.copy()
    n = len(heads) - 1
    moves = 0
    current = Sib.tree_part_score(P, heads)
    while True:
        best_gain, best_move = 1e-12 * (1 + abs(current)), None
        for m in range(1, n + 1):
            for h in range(n + 1):
                if h in (m, heads[m]) or (single_root and 0 in (h, heads[m])):
                    continue
                y = heads.copy()
                y[m] = h
                if _has_cycle(y):
                    continue
                gain = Sib.tree_part_score(P, y) - current
                if gain > best_gain:
                    best_gain, best_move = gain, (m, h)
        if best_move is None:
            return heads, moves
        heads[best_move[0]] = best_move[1]
        moves += 1
        current = Sib.tree_part_score(P, heads)


def _has_cycle(heads):
    return not _reaches_root(heads)


@pytest.mark.parametrize("single_root", [True, False])
def test_hill_climb_matches_the_search_over_explicit_trees(single_root):
    rng = np.random.default_rng(4)
    for trial in range(44):
        n = int(rng.integers(2, 9)) if trial < 40 else 14
        P = random_parts(rng, n)
        start = Sib.sibling_eisner(P, single_root)
        got, moves = Sib.hill_climb(P, start, single_root)
        want, want_moves = _hill_climb_reference(P, start, single_root)
        np.testing.assert_array_equal(got, want)
        assert moves == want_moves
        assert Sib.tree_part_score(P, got) >= Sib.tree_part_score(P, start)
        assert not _has_cycle(got)
        if single_root:
            assert (got[1:] == 0).sum() == 1


def test_hill_climb_reaches_the_non_projective_optimum_of_a_first_order_model():
    """With first-order parts, single changes from the projective tree reach
    a tree at least as good, and on small inputs usually the Chu-Liu-Edmonds
    optimum; it never overshoots it."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        n = int(rng.integers(2, 7))
        A = rng.normal(size=(n + 1, n + 1))
        P = Sib.parts_from_arcs(A)
        got, _ = Sib.hill_climb(P, Sib.sibling_eisner(P, False), False)
        optimum = D.tree_score(A, D.chu_liu_edmonds(A, False))
        assert D.tree_score(A, got) <= optimum + 1e-9
        assert D.tree_score(A, got) >= D.tree_score(A, D.eisner(A, False)) - 1e-9


def test_cost_augmented_argmax_adds_the_hamming_distance():
    rng = np.random.default_rng(6)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        P = random_parts(rng, n)
        gold = all_trees(n, True, True)[rng.integers(len(all_trees(n, True, True)))]
        A = Sib.add_hamming_cost(P, gold, cost=1.5)
        trees = all_trees(n, True, True)
        augmented = [Sib.tree_part_score(P, t) + 1.5 * int((t[1:] != gold[1:]).sum()) for t in trees]
        got = Sib.sibling_eisner(A)
        assert Sib.tree_part_score(P, got) + 1.5 * int((got[1:] != gold[1:]).sum()) == pytest.approx(max(augmented))


@pytest.mark.parametrize("loss", ["crf", "margin", "local"])
def test_losses_give_the_gradient_of_their_value(loss):
    """Finite differences of each loss against its gradient, on random parts."""
    rng = np.random.default_rng(7)
    structure = Sib.SiblingTrees(projective=True)
    fn = get_loss(loss)
    n = 4
    gold = np.array([-1, 2, 0, 2, 3])
    P = random_parts(rng, n, scale=1.0)
    value, (grad,) = fn(structure, [P], [gold])
    assert value >= -1e-9
    mask = Sib.part_mask(n + 1)
    for index in zip(*np.nonzero(mask)):
        if loss == "margin":
            break  # piecewise linear; checked by its value below
        step = np.zeros_like(P)
        step[index] = 1e-6
        up, _ = fn(structure, [P + step], [gold])
        down, _ = fn(structure, [P - step], [gold])
        assert (up - down) / 2e-6 == pytest.approx(grad[index], abs=1e-5)
    if loss == "margin":
        pred = Sib.sibling_eisner(Sib.add_hamming_cost(P, gold, 1.0))
        want = max(0.0, Sib.tree_part_score(P, pred) + int((pred[1:] != gold[1:]).sum())
                   - Sib.tree_part_score(P, gold))
        assert value == pytest.approx(want)


def test_non_projective_gold_is_lifted_for_the_likelihood():
    rng = np.random.default_rng(8)
    structure = Sib.SiblingTrees(projective=False)
    gold = np.array([-1, 3, 4, 0, 3])  # 1 <- 3 crosses 2 <- 4
    assert D.crossing_arcs(gold).any()
    P = random_parts(rng, 4)
    value, _ = get_loss("crf")(structure, [P], [gold])
    lifted = D.lift_to_projective(gold, True)
    assert value == pytest.approx(Sib.sibling_log_partition(P) - Sib.tree_part_score(P, lifted))
    assert np.array_equal(structure.gold_target(P, gold), gold)  # the margin loss keeps it


@pytest.mark.parametrize("loss", ["crf", "margin", "local"])
def test_parts_no_tree_uses_get_no_gradient(loss):
    rng = np.random.default_rng(13)
    for single_root in (True, False):
        structure = Sib.SiblingTrees(projective=True, single_root=single_root)
        P = random_parts(rng, 5)
        gold = np.array([-1, 2, 0, 2, 5, 3])
        _, (grad,) = get_loss(loss)(structure, [P], [gold])
        assert (grad[~Sib.part_mask(6)] == 0).all()
        if single_root and loss != "local":
            assert (grad[0, 1:, :] == 0).all()  # the root has one dependent: no sibling


def test_partial_gold_with_crossing_known_arcs_is_completed_without_projectivity():
    rng = np.random.default_rng(14)
    P = random_parts(rng, 4)
    gold = np.array([-1, 3, 4, 0, -2])  # 1 <- 3 and 2 <- 4 cross
    target = Sib.SiblingTrees(projective=False).gold_target(P, gold)
    assert target[1] == 3 and target[2] == 4 and target[3] == 0
    assert target[4] in (1, 2, 3)  # 0 would be a second root
    with pytest.raises(NoLegalStructureError):
        Sib.SiblingTrees(projective=True).complete(P, gold)


def test_the_search_checks_its_start_and_stops_at_max_moves():
    rng = np.random.default_rng(15)
    P = random_parts(rng, 6)
    with pytest.raises(ValueError, match="2 root dependents"):
        Sib.hill_climb(P, np.array([-1, 0, 0, 1, 1, 2, 2]))
    blocked = P.copy()
    blocked[2, :, 1] = -np.inf
    with pytest.raises(ValueError, match="-inf"):
        Sib.hill_climb(blocked, np.array([-1, 2, 0, 2, 2, 2, 2]))
    start = Sib.sibling_eisner(P, False)
    _, free_moves = Sib.hill_climb(P, start, False)
    _, moves = Sib.hill_climb(P, start, False, max_moves=0)
    assert moves == 0
    if free_moves > 1:
        assert Sib.hill_climb(P, start, False, max_moves=1)[1] == 1


def test_the_local_relaxation_of_a_word_without_a_head_is_no_structure():
    P = np.zeros((4, 4, 4))
    P[:, :, 2] = -np.inf
    (log_z, marg), = Sib.SiblingTrees().local_marginals([P])
    assert log_z == -np.inf and np.isfinite(marg).all()


def test_partial_gold_is_completed_around_the_known_arcs():
    rng = np.random.default_rng(9)
    structure = Sib.SiblingTrees(projective=True)
    P = random_parts(rng, 5)
    gold = np.array([-1, 2, 0, -2, -2, 4])
    target = structure.gold_target(P, gold)
    assert target[1] == 2 and target[2] == 0 and target[5] == 4
    candidates = [t for t in all_trees(5, True, True) if t[1] == 2 and t[2] == 0 and t[5] == 4]
    assert Sib.tree_part_score(P, target) == pytest.approx(max(Sib.tree_part_score(P, t) for t in candidates))


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="3 dimensions"):
        Sib.sibling_eisner(np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"batch item 1\) must be \(n\+1, n\+1, n\+1\)"):
        Sib.sibling_eisner([np.zeros((3, 3, 3)), np.zeros((3, 3, 2))])
    with pytest.raises(ValueError, match="NaN"):
        Sib.sibling_marginals(np.full((3, 3, 3), np.nan))
    with pytest.raises(TypeError, match="max_moves"):
        Sib.hill_climb(np.zeros((3, 3, 3)), np.array([-1, 0, 1]), max_moves=1.5)


@pytest.mark.parametrize("single_root", [True, False])
def test_longer_sentences_match_the_numpy_reference(single_root):
    from spacy_struct.structs.reference import siblings as reference

    rng = np.random.default_rng(11)
    for n in (9, 17, 30):
        P = random_parts(rng, n)
        heads = Sib.sibling_eisner(P, single_root)
        want = reference.sibling_eisner(P, single_root)
        assert Sib.tree_part_score(P, heads) == pytest.approx(Sib.tree_part_score(P, want))
        assert Sib.sibling_log_partition(P, single_root) == pytest.approx(
            reference.sibling_log_partition(P, single_root))


@pytest.mark.parametrize("single_root", [True, False])
def test_the_numpy_reference_matches_enumeration(single_root):
    from spacy_struct.structs.reference import siblings as reference

    rng = np.random.default_rng(12)
    for _ in range(40):
        n = int(rng.integers(1, 6))
        P = random_parts(rng, n)
        trees, values = best(P, single_root)
        assert Sib.tree_part_score(P, reference.sibling_eisner(P, single_root)) == pytest.approx(values.max())
        assert reference.sibling_log_partition(P, single_root) == pytest.approx(log_partition(P, single_root))
