"""Tests of the partition structure (semi-Markov segmentation) against
enumeration of every partition."""
from __future__ import annotations

import numpy as np
import pytest

from spacy_struct.losses import get_loss
from spacy_struct.structs import NoLegalStructureError
from spacy_struct.structs.partitions import Partitions, partition_argmax, partition_marginals

from references.brute_force_partitions import all_partitions, enumerate_marginals, hamming, partition_score


def random_scores(rng, m, forbid=0.0):
    S = rng.normal(scale=2.0, size=(m + 1, m + 1))
    if forbid:
        S[rng.random(S.shape) < forbid] = -np.inf
    return S


@pytest.mark.parametrize("max_length", [None, 1, 2, 3])
def test_argmax_and_marginals_match_enumeration(max_length):
    rng = np.random.default_rng(0)
    for trial in range(150):
        m = int(rng.integers(1, 8))
        S = random_scores(rng, m, forbid=0.2 if trial % 3 == 0 else 0.0)
        log_z, marginals, best, best_score = enumerate_marginals(S, max_length)
        (got_z, got_marginals), = partition_marginals([S], max_length)
        if best is None:
            assert got_z == -np.inf
            assert not got_marginals.any()
            with pytest.raises(NoLegalStructureError, match="scores -inf"):
                partition_argmax(S, max_length)
            continue
        assert got_z == pytest.approx(log_z, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(got_marginals, marginals, atol=1e-9)
        cuts = partition_argmax(S, max_length)
        assert cuts.dtype == np.int64
        assert partition_score(S, tuple(cuts)) == pytest.approx(best_score, abs=1e-9)


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(1)
    batch = [random_scores(rng, m) for m in (1, 5, 3, 9, 2)]
    together = partition_argmax(batch)
    assert [c.tolist() for c in together] == [partition_argmax(S).tolist() for S in batch]
    for (z1, m1), S in zip(partition_marginals(batch), batch):
        z2, m2 = partition_marginals(S)
        assert z1 == z2
        np.testing.assert_array_equal(m1, m2)


def test_marginals_are_the_gradient_of_log_z():
    rng = np.random.default_rng(2)
    S = random_scores(rng, 6)
    log_z, marginals = partition_marginals(S)
    eps = 1e-6
    for i, j in [(0, 1), (0, 6), (2, 5), (3, 4)]:
        up = S.copy()
        up[i, j] += eps
        assert (partition_marginals(up)[0] - log_z) / eps == pytest.approx(marginals[i, j], abs=1e-5)


def test_hamming_cost_counts_wrong_cut_decisions():
    """The cost-augmented score of every partition is its score plus cost
    times its Hamming distance to the gold over the cut positions."""
    rng = np.random.default_rng(3)
    structure = Partitions()
    for _ in range(40):
        m = int(rng.integers(1, 8))
        S = random_scores(rng, m)
        gold = sorted(rng.choice(np.arange(1, m), size=int(rng.integers(0, m)), replace=False).tolist()) if m > 1 else []
        (A,) = structure.add_hamming_cost([S], [np.array(gold, np.int64)], 0.7)
        for cuts in all_partitions(m):
            assert partition_score(A, cuts) == pytest.approx(
                partition_score(S, cuts) + 0.7 * hamming(m, cuts, gold), abs=1e-9)


@pytest.mark.parametrize("loss", ["crf", "margin"])
def test_losses_on_partitions(loss):
    """The CRF loss is log Z minus the gold score, the margin loss the
    largest cost-augmented violation (both by enumeration); each gradient
    sums to zero over a partition's pieces only where it should."""
    rng = np.random.default_rng(4)
    structure = Partitions()
    for _ in range(30):
        m = int(rng.integers(2, 7))
        S = random_scores(rng, m)
        gold = np.array(sorted(rng.choice(np.arange(1, m), size=int(rng.integers(0, m)), replace=False)), np.int64)
        value, (grad,) = get_loss(loss)(structure, [S], [gold], cost=1.0)
        if loss == "crf":
            log_z, marginals, _, _ = enumerate_marginals(S)
            assert value == pytest.approx(log_z - partition_score(S, tuple(gold)), abs=1e-9)
            np.testing.assert_allclose(grad, marginals - structure.indicator(S.shape, gold), atol=1e-9)
        else:
            worst = max(partition_score(S, c) + hamming(m, c, gold) for c in all_partitions(m))
            assert value == pytest.approx(max(0.0, worst - partition_score(S, tuple(gold))), abs=1e-9)


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match=r"shape \(m\+1, m\+1\)"):
        partition_argmax(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="m >= 1"):
        partition_argmax(np.zeros((1, 1)))
    with pytest.raises(ValueError, match="NaN"):
        partition_marginals(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="max_length must be at least 1"):
        Partitions(max_length=0)
    with pytest.raises(ValueError, match="'local' loss is not defined"):
        get_loss("local")(Partitions(), [np.zeros((3, 3))], [np.zeros(0, np.int64)])
