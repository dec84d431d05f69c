"""The coordination factor of `GappedSegments`, checked against enumeration
of every segment on small sentences."""
from __future__ import annotations

import pickle
from itertools import combinations

import numpy as np
import pytest

from spacy_struct.structs.coordination import (
    candidate_paths, coordination_candidates, coordination_parts, pack_coordination,
)
from spacy_struct.structs.segments import GappedSegments, Segments

from references.brute_force_segments import all_segments, segment_score


def brute_candidates(n, max_fragment, max_gap):
    """Two runs of words, each of at most max_fragment, at most max_gap
    words apart, from every subset of the words."""
    out = []
    for m in range(2, n + 1):
        for words in combinations(range(n), m):
            breaks = [i for i in range(m - 1) if words[i + 1] - words[i] > 1]
            if len(breaks) != 1:
                continue
            b = breaks[0]
            if b + 1 <= max_fragment and m - b - 1 <= max_fragment and words[b + 1] - words[b] - 1 <= max_gap:
                out.append((words[0], words[b], words[b + 1], words[-1]))
    return sorted(out)


def make_scores(seed, n, T=2, gapped_end=False, max_fragment=2, max_gap=2):
    rng = np.random.default_rng(seed)
    transitions = rng.normal(size=(T, n + 2, n + 3 if gapped_end else n + 2)) - 0.5
    candidates = coordination_candidates(n, max_fragment, max_gap)
    phi = rng.normal(size=(T, len(candidates))) * 2.0
    return pack_coordination(transitions, candidates, phi), transitions, candidates, phi


def cells(n, words, width):
    """The transition cells a segment uses (as segment_score reads them)."""
    pos = [0] + [w + 1 for w in words] + [n + 1]
    used = list(zip(pos, pos[1:]))
    if width == n + 3 and any(b - a > 1 for a, b in zip(words, words[1:])):
        used.append((words[-1] + 1, n + 2))
    return used


def brute_segments(transitions, candidates, phi, max_gap):
    """Every legal segment as (type, words, score, candidate index or -1)."""
    index = {tuple(c): i for i, c in enumerate(candidates.tolist())}
    out = []
    for t, words, score in all_segments(transitions, max_gap):
        runs = [i for i in range(len(words) - 1) if words[i + 1] - words[i] > 1]
        c = index.get((words[0], words[runs[0]], words[runs[0] + 1], words[-1]), -1) if len(runs) == 1 else -1
        out.append((t, words, score + (phi[t, c] if c >= 0 else 0.0), c))
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 7])
@pytest.mark.parametrize("max_fragment,max_gap", [(1, 1), (2, 2), (4, 12)])
def test_candidates_are_every_two_run_segment_within_the_limits(n, max_fragment, max_gap):
    found = coordination_candidates(n, max_fragment, max_gap)
    assert [tuple(row) for row in found.tolist()] == brute_candidates(n, max_fragment, max_gap)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("n", [2, 4, 6])
@pytest.mark.parametrize("gapped_end", [False, True])
@pytest.mark.parametrize("max_gap", [None, 1])
def test_marginals_match_enumeration(seed, n, gapped_end, max_gap):
    S, transitions, candidates, phi = make_scores(seed, n, gapped_end=gapped_end)
    structure = GappedSegments(max_gap=max_gap)
    (mass, uses), = structure.marginals([S])
    width = transitions.shape[2]
    want, want_phi = np.zeros(transitions.shape), np.zeros(phi.shape)
    total = 0.0
    for t, words, score, c in brute_segments(transitions, candidates, phi, max_gap):
        rate = np.exp(score)
        total += rate
        for a, b in cells(n, words, width):
            want[t, a, b] += rate
        if c >= 0:
            want_phi[t, c] += rate
    assert mass == pytest.approx(total, rel=1e-9)
    assert uses.shape == S.shape
    np.testing.assert_allclose(uses, pack_coordination(want, candidates, want_phi), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gapped_end", [False, True])
@pytest.mark.parametrize("max_gap", [None, 1])
def test_argmax_is_every_segment_above_its_threshold(seed, gapped_end, max_gap):
    n = 6
    S, transitions, candidates, phi = make_scores(seed, n, gapped_end=gapped_end)
    structure = GappedSegments(max_gap=max_gap, threshold=0.5, gapped_threshold=-0.5, k=64)
    got = {(t, w): sc for t, w, sc in structure.argmax([S])[0].as_list()}
    want = {}
    for t, words, score, _ in brute_segments(transitions, candidates, phi, max_gap):
        gapped = any(b - a > 1 for a, b in zip(words, words[1:]))
        if score > (-0.5 if gapped else 0.5):
            want[(t, words)] = score
    assert got.keys() == want.keys()
    for key, score in want.items():
        assert got[key] == pytest.approx(score)


@pytest.mark.parametrize("weight", [1.0, 3.0])
def test_gold_score_adds_phi_of_gold_candidates(weight):
    n = 6
    S, transitions, candidates, phi = make_scores(0, n)
    structure = GappedSegments(gapped_weight=weight)
    gold = [(0, (0, 3)), (1, (0, 1, 4, 5)), (1, (2,)), (0, (0, 2, 5))]  # the last is no candidate
    value, grad = structure.gold_score(S, Segments.from_list(gold))
    by_words = {(t, w): (score, c) for t, w, score, c in brute_segments(transitions, candidates, phi, None)}
    width = transitions.shape[2]
    want_value, want_grad, want_phi = 0.0, np.zeros(transitions.shape), np.zeros(phi.shape)
    for t, words in gold:
        score, c = by_words[(t, words)]
        w = weight if any(b - a > 1 for a, b in zip(words, words[1:])) else 1.0
        want_value += w * score
        for a, b in cells(n, words, width):
            want_grad[t, a, b] += w
        if c >= 0:
            want_phi[t, c] += w
    assert value == pytest.approx(want_value)
    np.testing.assert_allclose(grad, pack_coordination(want_grad, candidates, want_phi))
    assert structure.score(S, Segments.from_list(gold)) == pytest.approx(
        sum(by_words[key][0] for key in gold))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("k", [0, 2, 4])
def test_argmax_with_short_lists_is_the_k_best_above_the_threshold(seed, k):
    """With k-best lists shorter than the segments above the threshold, the
    answer is still the k best of each type by f + phi, whatever phi does
    to the candidates the lattice ranks first."""
    n = 6
    rng = np.random.default_rng(seed)
    _, transitions, candidates, phi = make_scores(seed, n)
    transitions[:, :, :] = rng.normal(size=transitions.shape) * 0.3 + 0.5  # many segments above
    if seed % 2:
        phi[:] = -20.0  # every candidate out, after the lattice ranked them by f
    S = pack_coordination(transitions, candidates, phi)
    structure = GappedSegments(k=k, threshold=0.0)
    got = structure.argmax([S])[0].as_list()
    limit = k or n
    for t in range(transitions.shape[0]):
        scores = sorted((score for tt, _, score, _ in brute_segments(transitions, candidates, phi, None)
                         if tt == t and score > 0.0), reverse=True)[:limit]
        mine = sorted((score for tt, _, score in got if tt == t), reverse=True)
        np.testing.assert_allclose(mine, scores)


def test_argmax_keeps_at_most_k_per_type():
    n = 6
    _, transitions, candidates, phi = make_scores(3, n)
    S = pack_coordination(transitions, candidates, np.full_like(phi, 5.0))  # every candidate far above
    found = GappedSegments(threshold=-5.0).argmax([S])[0]
    assert np.bincount(found.types).max() == n


def test_zero_phi_changes_nothing():
    n = 6
    _, transitions, candidates, phi = make_scores(1, n, gapped_end=True)
    S = pack_coordination(transitions, candidates, np.zeros_like(phi))
    structure = GappedSegments(threshold=-1.0)
    (mass, uses), = structure.marginals([S])
    (plain_mass, plain_uses), = structure.marginals([transitions])
    assert mass == pytest.approx(plain_mass)
    np.testing.assert_allclose(uses[:, :transitions.shape[1]], plain_uses, atol=1e-12)
    assert structure.argmax([S])[0].keys() == structure.argmax([transitions])[0].keys()


def test_the_candidates_travel_with_the_array():
    S, transitions, candidates, phi = make_scores(2, 4)
    for copy in (S.astype(np.float32), S * 1.0, pickle.loads(pickle.dumps(S)), S.copy()):
        plain, found, found_phi = coordination_parts(copy)
        np.testing.assert_array_equal(found, candidates)
        np.testing.assert_allclose(found_phi, phi, rtol=1e-6)
        np.testing.assert_allclose(plain, transitions, rtol=1e-6)
    assert S.shape[1] < transitions.shape[1] + len(candidates)  # rows for phi, not columns per row
    np.testing.assert_allclose(candidate_paths(transitions, candidates)[:, 0],
                               [segment_score(transitions, t, (0, 2)) for t in range(2)])


def test_kbest_refuses_the_factor():
    S, *_ = make_scores(0, 4)
    with pytest.raises(ValueError, match="coordination factor"):
        GappedSegments().kbest([S])


@pytest.mark.parametrize("seed", range(3))
def test_candidate_index_finds_each_candidate_among_segments(seed):
    from spacy_struct.structs.coordination import candidate_index, candidate_words, find_candidate

    rng = np.random.default_rng(seed)
    n = 7
    candidates = coordination_candidates(n, 2, 3)
    offsets, words = candidate_words(candidates)
    as_words = [tuple(words[offsets[c]:offsets[c + 1]]) for c in range(len(candidates))]
    assert as_words == [tuple(range(a0, a1 + 1)) + tuple(range(b0, b1 + 1))
                        for a0, a1, b0, b1 in candidates.tolist()]
    segments = [w for m in range(1, n + 1) for w in combinations(range(n), m)]
    picked = [segments[i] for i in rng.choice(len(segments), 40, replace=False)] + as_words[:5]
    seg = Segments.from_list([(0, w) for w in picked])
    got = candidate_index(seg.offsets, seg.words, candidates, n)
    assert got.tolist() == [find_candidate(candidates, np.array(w)) for w in picked]
    assert got[-5:].tolist() == [0, 1, 2, 3, 4]


def test_an_array_that_lost_its_candidates_is_refused_not_misread():
    """np.asarray drops the candidates; the extra rows (at least two) then
    fit no plain layout, whatever the sentence length."""
    for n in (3, 4, 5, 8):
        for gapped_end in (False, True):
            S, *_ = make_scores(0, n, gapped_end=gapped_end, max_fragment=1, max_gap=1)
            with pytest.raises(ValueError, match="shape"):
                GappedSegments().argmax([np.asarray(S)])


def test_candidates_must_be_distinct_and_in_order():
    from spacy_struct.structs.coordination import CoordinatedScores

    candidates = coordination_candidates(5, 2, 2)
    with pytest.raises(ValueError, match="increasing order"):
        CoordinatedScores(np.zeros((1, 9, 7)), candidates[::-1])
