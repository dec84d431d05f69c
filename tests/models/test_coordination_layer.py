"""The coordination layer of the segment pair scorer: its scores by their
definition, its gradients by finite differences."""
from __future__ import annotations

import numpy as np
import pytest

from helpers.grad_check import check_input_gradient, check_param_gradient, head_objective
from spacy_struct.models.segment_scorer import segment_pair_head
from spacy_struct.structs.coordination import (
    candidate_paths, coordination_candidates, coordination_parts, fragment_paths,
)


def _head(seed, H=3, T=2, n_in=4, **kwargs):
    rng = np.random.default_rng(seed)
    head = segment_pair_head(5, 0.0, skip_width=2, coordination_width=H, coordination_fragment=2,
                             coordination_gap=3, **kwargs)
    head.set_dim("nI", n_in)
    head.set_dim("nO", T)
    head.initialize()
    for name in head.param_names:
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    return head, rng


@pytest.mark.parametrize("gap_end", [False, True])
def test_each_candidate_is_scored_by_its_definition(gap_end):
    """Recomputed candidate by candidate from the head's weights; the
    transitions are those of the head without the layer."""
    H, T, F, G = 3, 2, 2, 3
    head, rng = _head(1, H, T, n_in=5, gap_end=gap_end)
    X = [rng.normal(size=(n, 5)).astype(np.float32) for n in (0, 1, 3, 6, 9)]
    out = head.predict(X)
    W, b = head.get_param("coord_W"), head.get_param("coord_b")
    table, path_w, V = head.get_param("coord_table"), head.get_param("coord_paths"), head.get_param("coord_out")
    plain_head = segment_pair_head(5, 0.0, skip_width=2, gap_end=gap_end)
    plain_head.set_dim("nI", 5)
    plain_head.set_dim("nO", T)
    plain_head.initialize()
    for name in plain_head.param_names:
        plain_head.set_param(name, head.get_param(name))
    plain = plain_head.predict(X)
    for x, S, P in zip(X, out, plain):
        n = len(x)
        transitions, candidates, phi = coordination_parts(S)
        np.testing.assert_array_equal(transitions, P)
        np.testing.assert_array_equal(candidates, coordination_candidates(n, F, G))
        proj = x @ W + b
        term = [proj[:, k * H:(k + 1) * H] for k in range(5)]
        P64 = P.astype(np.float64)
        for c, (a0, a1, b0, b1) in enumerate(candidates.tolist()):
            la, lb, gap = a1 - a0, b1 - b0, b0 - a1 - 1
            rows = [la, F + lb, 2 * F + la - lb + F - 1, 4 * F - 1 + gap - 1]
            paths = np.concatenate([
                fragment_paths(P64, np.array([a0]), np.array([a1]))[:, 0],
                fragment_paths(P64, np.array([b0]), np.array([b1]))[:, 0],
                candidate_paths(P64, np.array([[a0, a1, b0, b1]]))[:, 0],
            ])
            pre = (term[0][a0] + term[1][a1] + term[2][b0] + term[3][b1] + term[4][a1 + 1:b0].mean(0)
                   + table[rows].sum(0) + (np.clip(paths, -30, 30) * 0.1) @ path_w)
            np.testing.assert_allclose(phi[:, c], np.maximum(pre, 0) @ V, rtol=1e-4, atol=1e-4)


def test_layer_gradients_match_finite_differences_of_the_head():
    """Backprop to the word vectors and every parameter against central
    differences of a linear objective of the head's output. The path
    features are a constant input (the gradient is stopped there), so
    their weights are 0 for the word-vector check; their own gradient is
    checked by perturbing them."""
    head, rng = _head(0)
    head.set_param("coord_paths", np.zeros_like(head.get_param("coord_paths")))
    X = [rng.normal(size=(n, 4)).astype(np.float32) for n in (7, 1, 3, 5)]
    f, dX = head_objective(head, X, rng)

    check_input_gradient(f, X, dX, rng)
    for name in head.param_names:
        check_param_gradient(head, name, f, rng, rel=5e-2)


def test_an_untrained_layer_changes_no_score():
    head = segment_pair_head(5, 0.0, skip_width=2, coordination_width=3)
    head.set_dim("nI", 4)
    head.set_dim("nO", 2)
    head.initialize()
    X = [np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)]
    _, _, phi = coordination_parts(head.predict(X)[0])
    assert phi.shape[1] > 0 and not phi.any()


@pytest.mark.parametrize("bad", [-1, 1.5, True])
def test_bad_widths_are_refused(bad):
    with pytest.raises(ValueError, match="coordination_width"):
        segment_pair_head(5, 0.0, coordination_width=bad)
