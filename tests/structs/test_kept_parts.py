"""Second-order decoding over pruned parts (`kept_arcs`, `kept_parts`,
`kept_argmax`) against enumeration and against the full-part decoders."""
from __future__ import annotations

import numpy as np
import pytest

from references.brute_force_siblings import best
from spacy_struct.structs import siblings as Sib


def _scores(rng, n):
    arcs = rng.normal(scale=2.0, size=(n + 1, n + 1))
    sibling = rng.normal(scale=2.0, size=(n + 1,) * 3)
    return arcs, sibling, arcs[:, None, :] + sibling


def _batch(rng, size):
    """Random sentences (`_scores`), their arc arrays, and one block of
    sibling scores indexed by batch node numbers (sentence i's node j is
    the sum of the earlier sentences' n+1, plus j)."""
    sentences = [_scores(rng, int(n)) for n in rng.integers(1, 15, size=size)]
    arcs = [a for a, _, _ in sentences]
    offsets = np.cumsum([0] + [len(a) for a in arcs])
    block = np.zeros((offsets[-1],) * 3)
    for (_, sibling, _), o in zip(sentences, offsets):
        block[o:o + len(sibling), o:o + len(sibling), o:o + len(sibling)] = sibling
    return sentences, arcs, block


@pytest.mark.parametrize("single_root", [True, False])
def test_with_every_head_kept_the_pruned_decoders_equal_the_full_ones(single_root):
    rng = np.random.default_rng(3)
    for _ in range(150):
        n = int(rng.integers(1, 12))
        arcs, sibling, parts = _scores(rng, n)
        kept = Sib.kept_parts([arcs], Sib.kept_arcs([arcs], n, single_root), lambda h, s, m: sibling[h, s, m],
                              single_root)
        projective = Sib.sibling_eisner(parts, single_root)
        assert np.array_equal(Sib.kept_argmax(kept, single_root, projective=True)[0], projective)
        searched = Sib.hill_climb(parts, projective, single_root)[0]
        assert np.array_equal(Sib.kept_argmax(kept, single_root, projective=False)[0], searched)


@pytest.mark.parametrize("single_root", [True, False])
def test_a_batch_is_decoded_as_its_sentences_one_by_one(single_root):
    sentences, arcs, block = _batch(np.random.default_rng(6), 12)
    masks = Sib.kept_arcs(arcs, 3, single_root)
    batch = Sib.kept_argmax(Sib.kept_parts(arcs, masks, lambda h, s, m: block[h, s, m], single_root), single_root)
    for a, (_, sibling, _), mask, heads in zip(arcs, sentences, masks, batch):
        alone = Sib.kept_parts([a], [mask], lambda h, s, m: sibling[h, s, m], single_root)
        assert np.array_equal(Sib.kept_argmax(alone, single_root)[0], heads)


@pytest.mark.parametrize("single_root", [True, False])
def test_the_pruned_argmax_is_the_best_projective_tree_over_kept_arcs(single_root):
    rng = np.random.default_rng(4)
    for _ in range(80):
        n = int(rng.integers(1, 6))
        k = int(rng.integers(1, 4))
        arcs, sibling, parts = _scores(rng, n)
        mask = Sib.kept_arcs([arcs], k, single_root)[0]
        # each word keeps its k best heads (ties aside) and the first-order tree's
        A = arcs.copy()
        np.fill_diagonal(A, -np.inf)
        for m in range(1, n + 1):
            assert mask[:, m].sum() >= min(k, n) and mask[np.argmax(A[:, m]), m]
        trees, values = best(np.where(mask[:, None, :], parts, -np.inf), single_root)
        kept = Sib.kept_parts([arcs], [mask], lambda h, s, m: sibling[h, s, m], single_root)
        heads = Sib.kept_argmax(kept, single_root, projective=True)[0]
        assert all(mask[heads[m], m] for m in range(1, n + 1))
        assert Sib.tree_part_score(parts, heads) == pytest.approx(values.max())
        searched = Sib.kept_argmax(kept, single_root, projective=False)[0]
        assert all(mask[searched[m], m] for m in range(1, n + 1))
        assert Sib.tree_part_score(parts, searched) >= Sib.tree_part_score(parts, heads) - 1e-9


def test_parts_are_made_for_kept_arcs_only_and_a_long_sentence_needs_no_cube():
    rng = np.random.default_rng(5)
    n = 400
    arcs = rng.normal(size=(n + 1, n + 1))
    asked = []

    def sibling(h, s, m):
        asked.append(len(h))
        return np.zeros(len(h))

    kept = Sib.kept_parts([arcs], Sib.kept_arcs([arcs], 4, True), sibling, True)
    assert asked == [kept.n_parts] and kept.n_parts < 0.01 * (n + 1) ** 3
    heads = Sib.kept_argmax(kept, True, projective=False)[0]
    assert len(heads) == n + 1 and (heads[1:] == 0).sum() == 1


def _kept_reference(arcs, k, single_root):
    """kept_arcs as defined: each word's k best finite heads (the first of
    equal scores), no arc into the root or from a word to itself, and the
    arcs of the best first-order projective tree."""
    from spacy_struct.structs.dependency import eisner

    A = np.array(arcs, dtype=np.float64)
    A[:, 0] = -np.inf
    np.fill_diagonal(A, -np.inf)
    N = len(A)
    mask = np.zeros((N, N), dtype=bool)
    tree = eisner(A, single_root=single_root)
    for m in range(1, N):
        finite = [h for h in range(N) if np.isfinite(A[h, m])]
        ranked = sorted(finite, key=lambda h: (-A[h, m], h))
        mask[ranked[:k], m] = True
        if np.isfinite(A[tree[m], m]):
            mask[tree[m], m] = True
    return mask


@pytest.mark.parametrize("single_root", [True, False])
def test_kept_arcs_are_the_k_best_heads_and_the_first_order_tree(single_root):
    rng = np.random.default_rng(12)
    for _ in range(60):
        batch = []
        for n in rng.integers(1, 14, size=4):
            # few distinct values, so that equal scores are common, and some -inf
            arcs = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(np.float64)
            arcs[rng.random(arcs.shape) < 0.15] = -np.inf
            arcs[1:, 1:][np.eye(n, dtype=bool)] = 0.0
            arcs[0, 1:] = np.maximum(arcs[0, 1:], 0.0)  # every word can hang from the root
            batch.append(arcs)
        for k in (1, 2, 3, 20):
            masks = Sib.kept_arcs(batch, k, single_root)
            for arcs, mask in zip(batch, masks):
                assert np.array_equal(mask, _kept_reference(arcs, k, single_root))
    inputs = [rng.normal(size=(4, 4)).astype(np.float32)]
    assert Sib.kept_arcs(inputs, 2)[0].dtype == bool
    bad = rng.normal(size=(4, 4))
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Sib.kept_arcs([inputs[0], bad], 2)
    with pytest.raises(ValueError, match="at least 1"):
        Sib.kept_arcs(inputs, 0)


@pytest.mark.parametrize("single_root", [True, False])
def test_pruned_parts_are_the_kept_parts_of_the_kept_arcs(single_root):
    _, arcs, block = _batch(np.random.default_rng(13), 10)

    def sibling(h, s, m):
        return block[h, s, m]
    for k in (1, 3, 20):
        one_pass = Sib.pruned_parts(arcs, k, sibling, single_root)
        two_steps = Sib.kept_parts(arcs, Sib.kept_arcs(arcs, k, single_root), sibling, single_root)
        for field in ("sizes", "offsets", "arc_index", "part_start", "part_sibling", "part_score",
                      "head_start", "head_list"):
            assert np.array_equal(getattr(one_pass, field), getattr(two_steps, field)), field
    empty = Sib.pruned_parts([], 2, sibling, single_root)
    assert empty.n_parts == 0 and Sib.kept_argmax(empty, single_root) == []


def test_masks_that_keep_impossible_arcs_and_scores_that_are_nan_where_no_arc_is():
    rng = np.random.default_rng(14)
    _, arcs, block = _batch(rng, 4)
    def sibling(h, s, m):
        return block[h, s, m]
    masks = Sib.kept_arcs(arcs, 3)
    # arcs into the root and from a word to itself are dropped from any mask
    loose = [m.copy() for m in masks]
    for m in loose:
        m[:, 0] = True
        np.fill_diagonal(m, True)
    a, b = Sib.kept_parts(arcs, loose, sibling), Sib.kept_parts(arcs, masks, sibling)
    assert np.array_equal(a.part_score, b.part_score) and np.array_equal(a.arc_index, b.arc_index)
    # NaN where no tree reads the score is not an error; where one can, it is
    odd = [A.copy() for A in arcs]
    odd[0][1, 1] = np.nan
    odd[0][2, 0] = np.inf
    assert all(np.array_equal(x, y) for x, y in zip(Sib.kept_arcs(odd, 3), masks))
    odd[0][0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Sib.kept_arcs(odd, 3)
