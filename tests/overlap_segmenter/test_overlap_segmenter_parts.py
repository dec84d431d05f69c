"""The parts of overlap_segmenter: the segment lattice's partition function
and losses against brute force, the pair scorer's gradients, `doc._.segments`,
the scorer against a plain reimplementation, and the CRAFT converter."""
import gzip
import json
from itertools import combinations

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from references.brute_force_segments import all_segments, segment_score
from helpers.grad_check import check_input_gradient, check_param_gradient, head_objective, linear_objective
from spacy_struct import losses
from spacy_struct.convert.craft import CRAFTError, convert_file
from spacy_struct.models.batch import SentenceBatch
from spacy_struct.models.segment_scorer import build_segment_pair_scorer
from spacy_struct.overlap_segmenter import crossing_keys, score_segments
from spacy_struct.overlap_segmenter.component import runs
from spacy_struct.structs.segments import GappedSegments, Segments, kbest_segments, segment_marginals


# ------------------------------------------------------- lattice and losses
@pytest.mark.parametrize("max_gap", [None, 0, 1, 2])
@pytest.mark.parametrize("seed", range(3))
def test_segment_mass_and_shares_match_enumeration(max_gap, seed):
    rng = np.random.default_rng(seed)
    n, T = 5, 2
    S = rng.normal(size=(T, n + 2, n + 2)) * 2
    log_mass, shares = segment_marginals(S, max_gap=max_gap)
    segs = all_segments(S, max_gap)
    for t in range(T):
        weights = {w: np.exp(s) for tt, w, s in segs if tt == t}
        mass = sum(weights.values())
        assert log_mass[t] == pytest.approx(np.log(mass), rel=1e-10)
        expected = np.zeros((n + 2, n + 2))
        for words, w in weights.items():
            pos = [0] + [i + 1 for i in words] + [n + 1]
            for a, b in zip(pos, pos[1:]):
                expected[a, b] += w / mass
        np.testing.assert_allclose(shares[t], expected, atol=1e-12)


def test_segment_partition_of_a_long_sentence_stays_finite():
    rng = np.random.default_rng(0)
    S = rng.normal(size=(3, 302, 302)) * 20
    log_mass, shares = segment_marginals(S)
    assert np.isfinite(log_mass).all() and np.isfinite(shares).all()
    # every segment leaves the start once: the start's shares sum to 1
    np.testing.assert_allclose(shares[:, 0].sum(axis=1), 1.0)


def test_expected_uses_overflow_to_inf_not_nan():
    """A summed rate beyond float64 gives inf uses (caught as divergence by
    the component), never 0 * inf = NaN."""
    S = np.full((1, 402, 402), 2.0)
    mass, uses = GappedSegments().marginals([S])[0]
    assert mass == np.inf
    assert not np.isnan(uses).any() and np.isinf(uses).any()


@pytest.mark.parametrize("threshold,gapped_threshold",
                         [(-100.0, None), (-2.0, None), (0.0, None), (3.0, None), (0.0, -2.0), (-2.0, 3.0), (1e6, -1e6)])
def test_argmax_is_the_thresholded_k_best(threshold, gapped_threshold):
    """argmax decodes with short lists first and longer ones only when
    needed; the result must be exactly the k-best (k = n) above the threshold
    (the gapped threshold for a segment with a gap, when one is given)."""
    rng = np.random.default_rng(11)
    scores = [rng.normal(size=(3, n + 2, n + 2)) * 1.5 + 0.5 for n in (3, 8, 25, 40)]
    structure = GappedSegments(threshold=threshold, gapped_threshold=gapped_threshold)
    fast = structure.argmax(scores)
    gapped_at = threshold if gapped_threshold is None else gapped_threshold
    kinds = set()
    for S, seg in zip(scores, fast):
        n = S.shape[1] - 2
        every = kbest_segments(S, n)
        expected = sorted((t, w) for (t, w), s in zip(every.keys(), every.scores)
                          if s > (gapped_at if np.any(np.diff(w) > 1) else threshold))
        assert sorted(seg.keys()) == expected
        kinds |= {bool(np.any(np.diff(w) > 1)) for _, w in seg.keys()}
    assert threshold > 0 or kinds == {True, False}  # both kinds were decided on


@pytest.mark.parametrize("seed", range(4))
def test_the_decoder_returns_gold_gapped_segments_under_scores_that_favour_them(seed):
    """Scores made from a gold set (0 on every transition a gold segment
    uses, -20 elsewhere): argmax returns every gold segment, gapped ones
    included, and besides them exactly the segments brute-force enumeration
    finds made of gold transitions alone (a first-order score cannot tell
    them from the gold ones)."""
    rng = np.random.default_rng(seed)
    n, T = 8, 2
    gold = []
    while len(gold) < 4:
        words = tuple(sorted(rng.choice(n, size=int(rng.integers(2, 4)), replace=False).tolist()))
        if np.any(np.diff(words) > 1) or gold:
            gold.append((int(rng.integers(T)), words))
    structure = GappedSegments(threshold=float(np.log(0.5)))
    gold_set = Segments.from_list(sorted(set(gold)))
    S = np.full((T, n + 2, n + 2), -20.0)
    S[structure.indicator(S.shape, gold_set) > 0] = 0.0
    decoded = set(structure.argmax([S])[0].keys())
    assert set(gold_set.keys()) <= decoded
    assert any(np.any(np.diff(w) > 1) for _, w in gold_set.keys())
    made_of_gold = {(t, w) for t, w, score in all_segments(S) if score == 0.0}
    assert decoded == made_of_gold


def test_kbest_of_a_sentence_does_not_depend_on_its_batch():
    rng = np.random.default_rng(5)
    short, long = rng.normal(size=(2, 5, 5)), rng.normal(size=(2, 12, 12))
    structure = GappedSegments(threshold=-100.0)
    alone = structure.argmax([short])[0].keys()
    batched = structure.argmax([short, long])[0].keys()
    assert alone == batched
    assert sum(1 for t, _ in alone if t == 0) == 3  # k = n = 3 per type


def _brute_nll(S, gold, max_gap=None):
    """-log P(gold set) when each segment is present independently with rate
    exp(score): the summed rates of all segments minus the gold scores."""
    rates = sum(np.exp(s) for _, _, s in all_segments(S, max_gap))
    return rates - sum(segment_score(S, t, w) for t, w in gold)


@pytest.mark.parametrize("gapped_end", [False, True])
@pytest.mark.parametrize("max_gap", [None, 1])
@pytest.mark.parametrize("seed", range(3))
def test_crf_loss_is_the_enumerated_negative_log_likelihood(seed, max_gap, gapped_end):
    """The loss against enumeration and its gradient against finite
    differences, with a gapped end too ((T, n+2, n+3) scores)."""
    rng = np.random.default_rng(seed)
    n = 5
    S = _gapped_end_scores(rng, n, 3, scale=1.0) if gapped_end else rng.normal(size=(3, n + 2, n + 2))
    gold_items = [(0, (0, 2)), (0, (1,)), (0, (3, 4)), (2, (2, 4))]  # type 1 has none; gaps of 1
    gold = Segments.from_list(gold_items)
    structure = GappedSegments(max_gap=max_gap)
    loss, grads = losses.crf_loss(structure, [S], [gold])
    assert loss == pytest.approx(_brute_nll(S, gold_items, max_gap), rel=1e-9)
    direction = rng.normal(size=S.shape)
    eps = 1e-6
    up = losses.crf_loss(structure, [S + eps * direction], [gold])[0]
    down = losses.crf_loss(structure, [S - eps * direction], [gold])[0]
    assert float((grads[0] * direction).sum()) == pytest.approx((up - down) / (2 * eps), rel=1e-5)
    if gapped_end:
        # the gold term reads the column at the gapped gold segments' last
        # words (row word + 1) only: -1 there, on top of the expected uses
        mass, uses = structure.marginals([S])[0]
        gold_term = uses[:, :, n + 2] - grads[0][:, :, n + 2]
        expected = np.zeros_like(gold_term)
        expected[0, 3] = expected[2, 5] = 1.0
        np.testing.assert_allclose(gold_term, expected, atol=1e-9)


# a gapped end: (T, n+2, n+3) scores, the last column added to the end of
# the segments with a gap (structs.segments.two_phase_lattice)
def _gapped_end_scores(rng, n, T, scale=1.5):
    S = rng.normal(size=(T, n + 2, n + 3)) * scale
    S[:, 1:n + 1, n + 2] += 2.0  # the column must matter: some gapped segments rise
    return S


@pytest.mark.parametrize("max_gap", [None, 0, 1])
@pytest.mark.parametrize("seed", range(3))
def test_a_gapped_end_decodes_and_normalizes_as_enumeration_scores_it(seed, max_gap):
    """k-best, argmax, the log mass and each cell's expected use (the last
    column included) against every segment enumerated and scored by its
    definition: transitions plus the gapped end of a segment with a gap."""
    rng = np.random.default_rng(seed)
    n, T = 5, 2
    S = _gapped_end_scores(rng, n, T)
    segs = all_segments(S, max_gap)
    structure = GappedSegments(max_gap=max_gap, k=7, threshold=-0.5)
    best = structure.kbest([S])[0]
    for t in range(T):
        expected = sorted((s for tt, _, s in segs if tt == t), reverse=True)[:7]
        got = [sc for tt, sc in zip(best.types, best.scores) if tt == t]
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    for t, words, sc in best.as_list():
        assert sc == pytest.approx(segment_score(S, t, words), rel=1e-12)
    kept = set(structure.argmax([S])[0].keys())
    top = {t: sorted((x for x in segs if x[0] == t), key=lambda x: -x[2])[:7] for t in range(T)}
    assert kept == {(t, w) for items in top.values() for t, w, sc in items if sc > -0.5}
    mass, uses = structure.marginals([S])[0]
    rates = {(t, w): np.exp(sc) for t, w, sc in segs}
    assert mass == pytest.approx(sum(rates.values()), rel=1e-10)
    expected_uses = np.zeros_like(S)
    for (t, w), rate in rates.items():
        one = structure.indicator(S.shape, Segments.from_list([(t, w)]))
        expected_uses += rate * one
    np.testing.assert_allclose(uses, expected_uses, rtol=1e-9, atol=1e-12)
    if max_gap == 0:
        assert not uses[:, :, n + 2].any()
    else:
        assert uses[:, 1:n + 1, n + 2].sum() > 0


@pytest.mark.parametrize("n", [0, 1, 2, 3])
@pytest.mark.parametrize("max_gap", [None, 0, 1])
def test_a_gapped_end_on_short_sentences_is_every_segment_once(n, max_gap):
    """Every segment of the two-phase lattice, k-best with k far above their
    number, is a legal segment with its enumerated score, and there are
    exactly as many as enumeration finds."""
    S = _gapped_end_scores(np.random.default_rng(n), n, 2)
    best = GappedSegments(max_gap=max_gap, k=64).kbest([S])[0]
    enumerated = {(t, w): sc for t, w, sc in all_segments(S, max_gap)}
    assert len(best) == len(enumerated)
    for t, words, sc in best.as_list():
        assert sc == pytest.approx(enumerated[(t, words)], rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 4])
@pytest.mark.parametrize("max_gap", [None, 0, 1])
def test_folding_is_the_adjoint_of_the_two_phase_lattice(n, max_gap):
    """sum(D * lattice) over the lattice's cells equals sum(fold(D) * S) for
    any D: the fold sends each cell's quantity to exactly the score cells
    the lattice cell was built from, and nothing from the -inf cells."""
    from spacy_struct.structs.segments import fold_two_phase, two_phase_lattice

    rng = np.random.default_rng(n)
    S = rng.normal(size=(2, n + 2, n + 3))
    A = two_phase_lattice(S, max_gap)
    D = rng.normal(size=A.shape)
    live = np.isfinite(A)
    assert float((D[live] * A[live]).sum()) == pytest.approx(float((fold_two_phase(D, n, max_gap) * S).sum()))
    assert not fold_two_phase(np.where(live, 0.0, D), n, max_gap).any()


def test_argmax_with_a_gapped_end_decodes_again_when_a_short_list_fills():
    """argmax decodes with lists of 8 first; a sentence of 12 words whose
    every segment passes the threshold fills them and is decoded again: the
    result is still the thresholded k-best (k = n)."""
    rng = np.random.default_rng(4)
    n = 12
    S = _gapped_end_scores(rng, n, 2) + 3.0
    structure = GappedSegments(threshold=-100.0)
    found = structure.argmax([S])[0]
    assert len(found) == 2 * n
    expected = structure.kbest([S])[0]
    assert sorted(found.keys()) == sorted(expected.keys())
    assert any(np.any(np.diff(w) > 1) for _, w in found.keys())


def test_a_gapped_end_refuses_a_batch_mixing_the_two_shapes():
    with pytest.raises(ValueError, match="mixes arrays with a gapped-end column"):
        GappedSegments().argmax([np.zeros((1, 5, 6)), np.zeros((1, 5, 5))])
    with pytest.raises(ValueError, match="NaN"):
        GappedSegments().argmax([np.full((1, 5, 6), np.nan)])
    with pytest.raises(ValueError, match="no segment types"):
        GappedSegments().argmax([np.zeros((0, 5, 6))])
    from spacy_struct.structs._segments import two_phase_fill
    with pytest.raises(ValueError, match="out must be"):
        two_phase_fill(np.zeros((1, 5, 6)), -1, np.zeros((1, 7, 7)))


def test_multilabel_margin_loss_follows_its_definition():
    rng = np.random.default_rng(3)
    n = 4
    S = rng.normal(size=(2, n + 2, n + 2))
    gold_items = [(0, (0, 1)), (1, (2,))]
    gold = Segments.from_list(gold_items)
    structure = GappedSegments(k=3)
    loss, grads = losses.multilabel_margin_loss(structure, [S], [gold], cost=1.0)
    expected, grad = 0.0, np.zeros_like(S)
    top = {t: sorted(((s, w) for tt, w, s in all_segments(S) if tt == t), reverse=True)[:3] for t in (0, 1)}
    for t, w in gold_items:
        s = segment_score(S, t, w)
        if s < 1:
            expected += 1 - s
            grad -= structure.candidate_indicator(S.shape, (t, w))
    for t, items in top.items():
        for s, w in items:
            if (t, w) not in gold_items and s > -1:
                expected += 1 + s
                grad += structure.candidate_indicator(S.shape, (t, w))
    assert loss == pytest.approx(expected, rel=1e-9)
    np.testing.assert_allclose(grads[0], grad)


def test_segments_refuse_the_losses_made_for_one_structure():
    S = np.zeros((1, 4, 4))
    gold = Segments.from_list([(0, (0,))])
    for loss in (losses.margin_loss, losses.local_loss):
        with pytest.raises(ValueError, match="multilabel_margin"):
            loss(GappedSegments(), [S], [gold])


def test_argmax_keeps_segments_above_the_threshold_under_the_restrictions():
    n = 4
    S = np.full((1, n + 2, n + 2), -5.0)
    S[0, 0, 1] = S[0, 1, 2] = S[0, 2, n + 1] = 3.0  # words 0-1: 9
    S[0, 0, 2] = 2.0                                # word 1 alone: 2 + 3 = 5
    found = GappedSegments(threshold=0.0).argmax([S])[0].keys()
    assert set(found) == {(0, (0, 1)), (0, (1,))}
    assert GappedSegments(allow_embedding=False).argmax([S])[0].keys() == [(0, (0, 1))]
    assert GappedSegments(threshold=6.0).argmax([S])[0].keys() == [(0, (0, 1))]


# ---------------------------------------------------------------- pair scorer
def _small_tok2vec():
    from spacy.ml.models.tok2vec import build_hash_embed_cnn_tok2vec

    return build_hash_embed_cnn_tok2vec(
        pretrained_vectors=None, width=16, depth=1, embed_size=100, window_size=1,
        maxout_pieces=2, subword_features=False)


@pytest.mark.parametrize("context_width, gap_words, skip_form, skip_width, gap_end",
                         [(0, False, False, 0, False), (6, False, False, 0, False), (6, True, False, 0, False),
                          (0, True, True, 0, False), (6, True, True, 4, False), (6, False, False, 4, True)])
def test_pair_scorer_gradients_match_finite_differences(context_width, gap_words, skip_form, skip_width,
                                                         gap_end):
    from thinc.api import fix_random_seed

    fix_random_seed(1)
    nlp = spacy.blank("en")
    model = build_segment_pair_scorer(_small_tok2vec(), hidden_width=5, dropout=0.0,
                                      context_width=context_width, gap_words=gap_words,
                                      skip_form=skip_form, skip_width=skip_width, gap_end=gap_end)
    model.get_ref("output").set_dim("nO", 3)
    docs = [Doc(nlp.vocab, words="BMP2 and BMP4 genes are expressed".split()),
            Doc(nlp.vocab, words=["limb"])]
    batch = SentenceBatch(docs, [(0, 0, 6), (1, 0, 1), (0, 2, 4)])
    model.initialize(X=batch)
    rng = np.random.default_rng(2)
    head = model.get_ref("head")
    edge_params = ("gap_opens", "gap_closes") if gap_words else ()
    edge_params += ("U_skip",) if skip_form else ()
    edge_params += ("skip_W", "skip_b", "skip_gap", "skip_out") if skip_width else ()
    edge_params += ("gapped_end",) if gap_end else ()
    for name in ("U", "gap", "start", "end") + edge_params:
        # smaller skip weights keep the skip layer's ReLU from dominating
        scale = 0.3 if name.startswith("skip_") else 1.0
        head.set_param(name, scale * rng.normal(size=head.get_param(name).shape).astype(np.float32))
    out, backprop = model(batch, is_train=True)
    extra = int(gap_end)  # the gapped end's column
    assert [o.shape for o in out] == [(3, 8, 8 + extra), (3, 3, 3 + extra), (3, 4, 4 + extra)]
    # nothing outside the lattice: no j -> i with i <= j, no start -> end,
    # and a gapped end on words only
    for o in out:
        N = o.shape[1]
        assert not np.tril(o[0, :, :N]).any() and not o[:, 0, N - 1].any()
        if gap_end:
            assert not o[:, 0, N].any() and not o[:, N - 1, N].any() and o[:, 1:N - 1, N].all()
    R = [rng.normal(size=o.shape) for o in out]
    f = linear_objective(model, batch, backprop, R)

    names = [(head, n) for n in ("W", "b", "U", "gap", "start", "end") + edge_params]
    if context_width:
        lstm = next(node for node in model.walk() if node.name == "bilstm")
        names += [(lstm, p) for p in lstm.param_names]
    for node, name in names:
        # the skip layer is a second ReLU on the views' path: a smaller step stays off its kinks
        check_param_gradient(node, name, f, rng, rel=5e-2, eps=1e-4 if skip_width else 1e-3)


@pytest.mark.parametrize("parallel", [False, True])
def test_skip_layer_gradients_match_finite_differences_of_the_head(parallel):
    """The skip layer's backprop, to the word vectors and to every head
    parameter, against central differences of the head alone (a linear
    objective of its scores), over sentences of 1 to 7 words."""
    from spacy_struct.models.segment_scorer import segment_pair_head

    rng = np.random.default_rng(0)
    head = segment_pair_head(5, 0.0, skip_width=3, skip_parallel=parallel)
    head.set_dim("nI", 4)
    head.set_dim("nO", 2)
    head.initialize()
    for name in head.param_names:
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    X = [rng.normal(size=(n, 4)).astype(np.float32) for n in (7, 1, 3, 4)]
    f, dX = head_objective(head, X, rng)

    eps = 1e-3
    # two ReLU layers (and a product) lie between the words and the scores
    check_input_gradient(f, X, dX, rng, rel=5e-2, eps=eps)
    for name in head.param_names:
        check_param_gradient(head, name, f, rng, rel=5e-2, eps=eps)


@pytest.mark.parametrize("parallel", [False, True])
def test_the_skip_layer_scores_each_skip_by_its_definition(parallel):
    """Recomputed word by word from the head's weights: skip j -> i (i > j + 1)
    gains relu(L[j] + R[i] + O[j+1] + C[i-1] + mean(M[j+1..i-1]) + G[bucket]
    [+ P[j] * Q[i-1]]) . V; next transitions, starts and ends do not move."""
    from spacy_struct.models.segment_scorer import N_GAP_BUCKETS, _pair_grid, segment_pair_head

    rng = np.random.default_rng(3)
    H, T = 3, 2
    head = segment_pair_head(4, 0.0, skip_width=H, skip_parallel=parallel)
    head.set_dim("nI", 5)
    head.set_dim("nO", T)
    head.initialize()
    for name in head.param_names:
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    X = [rng.normal(size=(n, 5)).astype(np.float32) for n in (0, 1, 2, 3, 7, 12)]
    with_layer = head.predict(X)
    V = head.get_param("skip_out")
    head.set_param("skip_out", np.zeros_like(V))
    without = head.predict(X)
    names = ["left", "right", "opens", "closes", "inside"] + (["left_like", "closes_like"] if parallel else [])
    assert head.get_param("skip_W").shape == (5, len(names) * H)
    for x, a, b in zip(X, with_layer, without):
        n = len(x)
        out = x @ head.get_param("skip_W") + head.get_param("skip_b")
        term = {name: out[:, k * H:(k + 1) * H] for k, name in enumerate(names)}
        buckets, _ = _pair_grid(n) if n else (None, None)
        expected = np.zeros_like(a)
        for j in range(n):
            for i in range(j + 2, n):
                pre = (term["left"][j] + term["right"][i] + term["opens"][j + 1] + term["closes"][i - 1]
                       + term["inside"][j + 1:i].mean(0) + head.get_param("skip_gap")[buckets[j, i]])
                if parallel:
                    pre = pre + term["left_like"][j] * term["closes_like"][i - 1]
                expected[:, j + 1, i + 1] = np.maximum(pre, 0) @ V
        np.testing.assert_allclose(a - b, expected, rtol=1e-4, atol=1e-4)
    assert N_GAP_BUCKETS == head.get_param("skip_gap").shape[0]


def test_skip_layer_gradients_hold_under_dropout():
    """The same mask in forward and backward: the gradient of a linear
    objective of one dropped-out forward pass against central differences
    that redraw the same mask (numpy's generator re-seeded each time)."""
    from spacy_struct.models.segment_scorer import segment_pair_head

    rng = np.random.default_rng(4)
    head = segment_pair_head(4, 0.3, skip_width=3)
    head.set_dim("nI", 5)
    head.set_dim("nO", 2)
    head.initialize()
    for name in head.param_names:
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    X = [rng.normal(size=(n, 5)).astype(np.float32) for n in (6, 4)]

    def run(xs):
        np.random.seed(7)
        return head(xs, is_train=True)

    out, backprop = run(X)
    R = [rng.normal(size=o.shape).astype(np.float32) for o in out]
    for name in head.param_names:
        head.set_grad(name, np.zeros_like(head.get_param(name)))
    dX = backprop(R)

    def f(xs=X):
        scores, _ = run(xs)
        return sum(float((a * r).sum()) for a, r in zip(scores, R))

    # a small step: with weights of unit scale a larger one crosses ReLU kinks
    check_input_gradient(f, X, dX, rng, rel=2e-2, eps=1e-4)
    for name in ("skip_W", "skip_b", "skip_out"):
        check_param_gradient(head, name, f, rng, rel=5e-2)


def test_gap_words_score_each_skip_by_the_words_it_skips():
    """With gap_words, transition j -> i (0-based words, i > j + 1) gains
    exactly opens(word j+1) + closes(word i-1), recomputed here from the
    encoder's vectors and the head's weights; next transitions, starts and
    ends are unchanged."""
    nlp = spacy.blank("en")
    model = build_segment_pair_scorer(_small_tok2vec(), hidden_width=4, dropout=0.0,
                                      gap_words=True)
    model.get_ref("output").set_dim("nO", 2)
    docs = [Doc(nlp.vocab, words="digits of the forelimb and hindlimb".split())]
    batch = SentenceBatch(docs, [(0, 0, 6)])
    model.initialize(X=batch)
    head = model.get_ref("head")
    rng = np.random.default_rng(0)
    for name in ("U", "gap", "start", "end"):
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    shape = head.get_param("gap_opens").shape
    head.set_param("gap_opens", np.zeros(shape, np.float32))
    head.set_param("gap_closes", np.zeros(shape, np.float32))
    before = model.predict(batch)[0]
    Wo, Wc = (rng.normal(size=shape).astype(np.float32) for _ in range(2))
    head.set_param("gap_opens", Wo)
    head.set_param("gap_closes", Wc)
    delta = model.predict(batch)[0] - before

    X = model.get_ref("encoder").predict(batch)[0]
    h = head.get_dim("hidden_width")
    act = np.maximum(X @ head.get_param("W") + head.get_param("b"), 0)
    view = lambda v: np.concatenate([act[:, v * h:(v + 1) * h], np.ones((len(X), 1))], axis=1)
    opens, closes = view(4) @ Wo, view(5) @ Wc          # (n, T)
    n = len(X)
    expected = np.zeros_like(delta)
    for j in range(n):
        for i in range(j + 2, n):
            expected[:, j + 1, i + 1] = opens[j + 1] + closes[i - 1]
    np.testing.assert_allclose(delta, expected, atol=1e-4)


def test_skip_form_moves_only_skips_by_its_own_biaffine_form():
    """With skip_form, changing U_skip by D adds exactly
    [f_j; 1]^T D_t [o_i; 1] to each skip j -> i (i > j + 1), recomputed from
    the encoder's vectors; next transitions, starts and ends are unchanged."""
    nlp = spacy.blank("en")
    model = build_segment_pair_scorer(_small_tok2vec(), hidden_width=4, dropout=0.0,
                                      skip_form=True)
    model.get_ref("output").set_dim("nO", 2)
    batch = SentenceBatch([Doc(nlp.vocab, words="digits of the forelimb and hindlimb".split())],
                          [(0, 0, 6)])
    model.initialize(X=batch)
    head = model.get_ref("head")
    rng = np.random.default_rng(0)
    for name in ("U", "gap", "start", "end"):
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    before = model.predict(batch)[0]
    D = rng.normal(size=head.get_param("U_skip").shape).astype(np.float32)
    head.set_param("U_skip", head.get_param("U_skip") + D)
    delta = model.predict(batch)[0] - before

    X = model.get_ref("encoder").predict(batch)[0]
    h = head.get_dim("hidden_width")
    act = np.maximum(X @ head.get_param("W") + head.get_param("b"), 0)
    view = lambda v: np.concatenate([act[:, v * h:(v + 1) * h], np.ones((len(X), 1))], axis=1)
    F, O = view(0), view(1)
    n = len(X)
    expected = np.zeros_like(delta)
    for j in range(n):
        for i in range(j + 2, n):
            expected[:, j + 1, i + 1] = np.einsum("a,atb,b->t", F[j], D, O[i])
    np.testing.assert_allclose(delta, expected, atol=1e-4)


# ---------------------------------------------------------------- doc._.segments
def test_segments_are_checked_and_survive_docbin_and_bytes():
    nlp = spacy.blank("en")
    doc = Doc(nlp.vocab, words="BMP2 and BMP4 genes".split())
    doc._.segments = [("SO", [(0, 1), (3, 4)]), ("PR", [(0, 1)]), ("SO", [(2, 3), (3, 4)])]
    segs = doc._.segments
    assert [s.text for s in segs] == ["BMP2 ... genes", "BMP2", "BMP4 genes"]
    assert segs[0].is_discontinuous and not segs[2].is_discontinuous  # touching fragments merge
    assert [f.text for f in segs[0].fragments] == ["BMP2", "genes"]
    db = DocBin(store_user_data=True)
    db.add(doc)
    back = list(DocBin().from_bytes(db.to_bytes()).get_docs(nlp.vocab))[0]
    assert back._.segments == segs
    assert Doc(nlp.vocab).from_bytes(doc.to_bytes())._.segments == segs
    for bad, message in [
        ([("SO", [(3, 4), (0, 1)])], "in order"),
        ([("SO", [(0, 2), (1, 3)])], "in order"),
        ([("SO", [(0, 9)])], "outside"),
        ([("SO", [])], "at least one fragment"),
        ([("", [(0, 1)])], "label"),
        ([("SO",)], "expected"),
    ]:
        with pytest.raises(ValueError, match=message):
            doc._.segments = bad


def test_runs_cut_word_indices_into_fragments():
    assert runs([0, 1, 3, 5, 6]) == [(0, 2), (3, 4), (5, 7)]


# ---------------------------------------------------------------- scorer
def _plain_prf(pairs):
    tp = sum(len(g & p) for g, p in pairs)
    n_pred = sum(len(p) for _, p in pairs)
    n_gold = sum(len(g) for g, _ in pairs)
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def test_crossing_scores_cannot_be_raised_by_a_wrong_segment():
    nlp = spacy.blank("en")
    ref = Doc(nlp.vocab, words="a b c d".split())
    ref._.segments = [("X", [(0, 2)]), ("X", [(1, 3)])]
    only_right = Doc(nlp.vocab, words="a b c d".split())
    only_right._.segments = [("X", [(0, 2)])]
    with_wrong = Doc(nlp.vocab, words="a b c d".split())
    with_wrong._.segments = [("X", [(0, 2)]), ("X", [(1, 4)])]
    a = score_segments([Example(only_right, ref)], spans_key=None)
    b = score_segments([Example(with_wrong, ref)], spans_key=None)
    assert a["segments_crossing_r"] == b["segments_crossing_r"] == 0.5
    assert b["segments_crossing_p"] == 0.5  # of the two crossing predictions one is gold


def _plain_crossing(keys):
    words = {k: {i for s, e in k[1] for i in range(s, e)} for k in keys}
    return {a for a, b in combinations(keys, 2) if words[a] & words[b]
            and not (words[a] <= words[b] or words[b] <= words[a])} | {
            b for a, b in combinations(keys, 2) if words[a] & words[b]
            and not (words[a] <= words[b] or words[b] <= words[a])}


def test_scorer_matches_a_plain_reimplementation():
    rng = np.random.default_rng(0)
    nlp = spacy.blank("en")
    examples, pairs = [], {"all": [], "disc": [], "cross": []}
    for _ in range(30):
        n = int(rng.integers(3, 9))
        words = [f"w{i}" for i in range(n)]

        def draw():
            out = set()
            for _ in range(int(rng.integers(0, 5))):
                picked = sorted(rng.choice(n, size=int(rng.integers(1, 4)), replace=False).tolist())
                out.add((str(rng.choice(["A", "B"])), tuple((s, s + 1) for s in picked)))
            return {(label, tuple(runs([i for s, e in fr for i in range(s, e)]))) for label, fr in out}

        gold, pred = draw(), draw()
        ref, hyp = Doc(nlp.vocab, words=words), Doc(nlp.vocab, words=words)
        ref._.segments = sorted(gold)
        hyp._.segments = sorted(pred)
        examples.append(Example(hyp, ref))
        pairs["all"].append((gold, pred))
        pairs["disc"].append(({k for k in gold if len(k[1]) > 1}, {k for k in pred if len(k[1]) > 1}))
        pairs["cross"].append((gold, pred, _plain_crossing(gold), _plain_crossing(pred)))
        assert crossing_keys(gold) == _plain_crossing(gold)
    scores = score_segments(examples, spans_key=None)
    # crossing: recall of crossing gold among all predictions, precision of
    # crossing predictions against all gold
    tp_p = sum(len(cp & g) for g, _, _, cp in pairs["cross"])
    n_p = sum(len(cp) for *_, cp in pairs["cross"])
    tp_r = sum(len(cg & p) for _, p, cg, _ in pairs["cross"])
    n_r = sum(len(cg) for _, _, cg, _ in pairs["cross"])
    assert scores["segments_crossing_p"] == pytest.approx(tp_p / n_p)
    assert scores["segments_crossing_r"] == pytest.approx(tp_r / n_r)
    assert n_p and n_r and tp_p and tp_r  # the random draws exercise the subset
    for name, prefix in (("all", "segments"), ("disc", "segments_discontinuous")):
        p, r, f = _plain_prf(pairs[name])
        assert scores[f"{prefix}_p"] == pytest.approx(p)
        assert scores[f"{prefix}_r"] == pytest.approx(r)
        assert scores[f"{prefix}_f"] == pytest.approx(f)


def test_scorer_maps_predictions_on_other_tokens_by_characters():
    nlp = spacy.blank("en")
    ref = Doc(nlp.vocab, words=["NF-kappa", "B", "binds"], spaces=[True, True, False])
    ref._.segments = [("PR", [(0, 2)])]
    hyp = Doc(nlp.vocab, words=["NF", "-", "kappa", "B", "binds"], spaces=[False, False, True, True, False])
    hyp._.segments = [("PR", [(0, 4)]), ("PR", [(1, 3)])]  # the second does not map
    scores = score_segments([Example(hyp, ref)], spans_key=None)
    assert scores["segments_r"] == 1.0 and scores["segments_p"] == 0.5


# ---------------------------------------------------------------- converter
def _write(path, records, gz=False):
    text = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf8") as f:
            f.write(text)
    else:
        path.write_text(text, encoding="utf8")


CRAFT_RECORD = {
    "id": "1-0", "doc_id": "1", "tokens": ["BMP2", "and", "BMP4", "genes", "."],
    "tags": ["NN", "CC", "NN", "NNS", "."],
    "char_offsets": [[0, 4], [5, 8], [9, 13], [14, 19], [19, 20]],
    "spans": [
        {"fragments": [[0, 1], [3, 4]], "label": "SO", "concept_id": "SO:1"},
        {"fragments": [[2, 4]], "label": "SO", "concept_id": "SO:1"},
        {"fragments": [[0, 1]], "label": "PR", "concept_id": "PR:1"},
        {"fragments": [[0, 1]], "label": "PR", "concept_id": "PR:2"},   # exact duplicate
        {"fragments": [[2, 3], [3, 4]], "label": "SO", "concept_id": "SO:2"},  # touching: = [2, 4]
        {"fragments": [[1, 3]], "label": "CHEBI", "concept_id": "C:1"},  # crosses [2, 4]
    ],
}


@pytest.mark.parametrize("gz", [False, True])
def test_craft_converter_keeps_every_mention_and_counts_what_it_merges(tmp_path, gz):
    src = tmp_path / ("in.jsonl.gz" if gz else "in.jsonl")
    _write(src, [CRAFT_RECORD, {"tokens": ["Abstract"], "spans": []}], gz)
    report = convert_file(src, tmp_path / "out.spacy")
    docs = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(spacy.blank("en").vocab))
    assert docs[0].text == "BMP2 and BMP4 genes."
    assert [t.tag_ for t in docs[0]] == CRAFT_RECORD["tags"]
    got = {(s.label_, s.offsets) for s in docs[0]._.segments}
    assert got == {("SO", ((0, 1), (3, 4))), ("SO", ((2, 4),)), ("PR", ((0, 1),)), ("CHEBI", ((1, 3),))}
    # the covering span of the discontinuous mention goes to doc.spans for spancat
    assert {(s.start, s.end, s.label_) for s in docs[0].spans["sc"]} == {
        (0, 4, "SO"), (2, 4, "SO"), (0, 1, "PR"), (1, 3, "CHEBI")}
    assert docs[1]._.segments == ()
    assert (report.mentions, report.kept, report.duplicates) == (6, 4, 2)
    assert (report.discontinuous, report.crossing, report.crossing_pairs) == (1, 3, 2)
    assert report.touching_fragments == 1
    assert (report.nested, report.in_nested_pair, report.nested_pairs) == (1, 2, 1)
    assert any("exact duplicates" in line for line in report.lines())


def test_craft_converter_says_when_lines_have_no_spans_field(tmp_path):
    src = tmp_path / "in.jsonl"
    _write(src, [{"tokens": ["IL-2", "binds"], "entities": [[0, 1, "protein"]]}, CRAFT_RECORD], False)
    report = convert_file(src, tmp_path / "out.spacy")
    assert report.without_spans == 1
    assert any("1 lines have no 'spans' field" in line and "entities (1)" in line for line in report.lines())


def test_craft_converter_can_leave_discontinuous_mentions_out_of_the_spans(tmp_path):
    """For a tagger of contiguous spans trained beside the segmenter:
    doc.spans holds the contiguous mentions alone, the rest are counted and
    kept in doc._.segments."""
    src = tmp_path / "in.jsonl"
    _write(src, [CRAFT_RECORD], False)
    report = convert_file(src, tmp_path / "out.spacy", discontinuous="leave_out")
    doc = next(DocBin().from_disk(tmp_path / "out.spacy").get_docs(spacy.blank("en").vocab))
    assert {(s.start, s.end, s.label_) for s in doc.spans["sc"]} == {(2, 4, "SO"), (0, 1, "PR"), (1, 3, "CHEBI")}
    assert ("SO", ((0, 1), (3, 4))) in {(s.label_, s.offsets) for s in doc._.segments}
    assert report.left_out_of_spans == 1 and report.covering_spans_merged == 0
    assert any("1 discontinuous mentions left out of doc.spans" in line for line in report.lines())
    with pytest.raises(ValueError, match="discontinuous must be one of"):
        convert_file(src, tmp_path / "out.spacy", discontinuous="drop")


@pytest.mark.parametrize("record, message", [
    ({"spans": []}, "tokens"),
    ({"tokens": ["a"], "spans": [{"fragments": [[0, 2]], "label": "X"}]}, "line 1, mention 0"),
    ({"tokens": ["a", "b"], "spans": [{"fragments": [[1, 2], [0, 1]], "label": "X"}]}, "in order"),
    ({"tokens": ["a"], "spans": [{"fragments": [[0, 1]]}]}, "label"),
    ({"tokens": ["a", "b"], "char_offsets": [[0, 1]], "spans": []}, "char_offsets"),
])
def test_craft_converter_names_the_line_of_bad_input(tmp_path, record, message):
    _write(tmp_path / "bad.jsonl", [record])
    with pytest.raises(CRAFTError, match=message):
        convert_file(tmp_path / "bad.jsonl", tmp_path / "out.spacy")


def test_a_gapped_weight_counts_gapped_gold_segments_that_many_times_in_the_crf_loss():
    from spacy_struct.losses import get_loss
    from spacy_struct.structs.segments import GappedSegments, Segments

    rng = np.random.default_rng(0)
    S = rng.normal(size=(2, 7, 7))
    gapped = Segments.from_list([(0, (0, 2))])
    gold = Segments.from_list([(0, (0, 2)), (0, (3,)), (1, (1, 2, 3))])
    plain, heavy = GappedSegments(), GappedSegments(gapped_weight=4.0)
    value, grad = plain.gold_score(S, gold)
    heavy_value, heavy_grad = heavy.gold_score(S, gold)
    assert heavy_value == pytest.approx(value + 3 * plain.score(S, gapped))
    assert np.allclose(heavy_grad - grad, 3 * plain.indicator(S.shape, gapped))
    # the weighted loss and its gradient agree, on the gapped segment's skip 1 -> 3 too
    crf = get_loss("crf")
    loss, (gradient,) = crf(heavy, [S], [gold])
    for index in [(0, 1, 3), (1, 2, 3), (0, 0, 4)]:
        moved = S.copy()
        moved[index] += 1e-6
        assert (crf(heavy, [moved], [gold])[0] - loss) / 1e-6 == pytest.approx(gradient[index], abs=1e-4)
    with pytest.raises(ValueError, match="gapped_weight"):
        GappedSegments(gapped_weight=0)
