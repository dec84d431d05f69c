"""mst_parser parts checked against brute force and finite differences."""
import itertools

import numpy as np
import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from references.brute_force_trees import _projective, all_trees, log_partition, marginals
from helpers.grad_check import check_param_gradient
from spacy_struct import losses
from spacy_struct.models._edge_features import edge_grads, edge_scores
from spacy_struct.models.arc_scorer import ParseScores, build_biaffine_arc_scorer
from spacy_struct.models.batch import SentenceBatch
from spacy_struct.models.edge_features import node_features
from spacy_struct.models.edge_labeler import build_edge_labeler
from spacy_struct.mst_parser.scoring import score_mst_parse
from spacy_struct.structs import dependency
from spacy_struct.structs.dependency import DependencyTrees, crossing_arcs


def random_tree(rng, n, projective=False, single_root=True):
    trees = all_trees(n, single_root=single_root, projective=projective)
    return trees[rng.integers(len(trees))]


def total(S, heads):
    return S[heads[1:], np.arange(1, len(heads))].sum()


@pytest.mark.parametrize("decoder,single_root", [("cle", True), ("cle", False), ("eisner", True), ("eisner", False)])
def test_margin_loss_is_the_cost_augmented_maximum(decoder, single_root):
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 4):
        S = rng.normal(size=(n + 1, n + 1))
        trees = all_trees(n, single_root=single_root, projective=decoder == "eisner")
        gold = trees[rng.integers(len(trees))]
        best = max(total(S, t) + (t[1:] != gold[1:]).sum() for t in trees) - total(S, gold)
        value, (G,) = losses.margin_loss(DependencyTrees(decoder == "eisner", single_root), [S], [gold])
        assert value == pytest.approx(best)
        if best > 0:    # gradient: predicted arcs minus gold arcs, a subgradient of the hinge
            assert G[:, 1:].sum(axis=0).tolist() == [0.0] * n
            assert np.all(G[gold[1:], np.arange(1, n + 1)] <= 0)
    # a gold tree that wins by more than the cost has no loss and no gradient
    S = np.full((4, 4), -5.0)
    gold = np.array([-1, 2, 0, 2])
    S[gold[1:], np.arange(1, 4)] = 5.0
    value, (G,) = losses.margin_loss(DependencyTrees(decoder == "eisner", single_root), [S], [gold])
    assert value == 0.0 and not G.any()


@pytest.mark.parametrize("decoder,single_root", [("cle", True), ("cle", False), ("eisner", True), ("eisner", False)])
def test_crf_loss_is_the_negative_log_likelihood_and_its_gradient(decoder, single_root):
    rng = np.random.default_rng(2)
    n = 4
    S = rng.normal(size=(n + 1, n + 1))
    projective = decoder == "eisner"
    gold = random_tree(rng, n, projective, single_root)
    value, (G,) = losses.crf_loss(DependencyTrees(decoder == "eisner", single_root), [S], [gold])
    assert value == pytest.approx(log_partition(S, single_root, projective) - total(S, gold))
    eps = 1e-6
    for h, d in itertools.product(range(n + 1), range(1, n + 1)):
        if h == d:
            continue
        Sp = S.copy()
        Sp[h, d] += eps
        numeric = (losses.crf_loss(DependencyTrees(decoder == "eisner", single_root), [Sp], [gold])[0] - value) / eps
        assert G[h, d] == pytest.approx(numeric, abs=1e-4)


def test_crf_loss_falls_back_to_the_best_tree_where_the_determinant_fails():
    rng = np.random.default_rng(4)
    n = 4
    ordinary = rng.normal(size=(n + 1, n + 1))
    # two pairs of words that head each other far more strongly than any tree
    # allows: the Laplacian cancels catastrophically and Matrix-Tree refuses it
    cycles = np.zeros((n + 1, n + 1))
    cycles[1, 2] = cycles[2, 1] = cycles[3, 4] = cycles[4, 3] = 60.0
    with pytest.raises(FloatingPointError):
        dependency.matrix_tree_marginals(cycles)
    golds = [random_tree(rng, n), random_tree(rng, n)]
    value, (G_ordinary, G_cycles) = losses.crf_loss(DependencyTrees(projective=False), [ordinary, cycles], golds)
    alone, (G_alone,) = losses.crf_loss(DependencyTrees(projective=False), [ordinary], golds[:1])
    np.testing.assert_allclose(G_ordinary, G_alone)
    best = max(total(cycles, t) for t in all_trees(n, single_root=True))
    assert value == pytest.approx(alone + best - total(cycles, golds[1]))
    # the gradient is a best tree's arcs minus the gold arcs
    predicted = G_cycles.copy()
    predicted[golds[1][1:], np.arange(1, n + 1)] += 1.0   # add the gold arcs back
    heads = np.array([-1] + [int(np.flatnonzero(predicted[:, d] == 1)[0]) for d in range(1, n + 1)])
    assert predicted[:, 1:].sum(axis=0).tolist() == [1.0] * n
    assert total(cycles, heads) == pytest.approx(best)


def test_local_loss_and_its_gradient():
    rng = np.random.default_rng(3)
    n = 5
    S = rng.normal(size=(n + 1, n + 1))
    gold = random_tree(rng, n)
    value, (G,) = losses.local_loss(DependencyTrees(projective=False), [S], [gold])
    expected = 0.0
    for d in range(1, n + 1):
        cands = [h for h in range(n + 1) if h != d]
        expected -= S[gold[d], d] - np.log(np.exp(S[cands, d]).sum())
    assert value == pytest.approx(expected)
    eps = 1e-6
    for h, d in [(0, 1), (2, 1), (3, 4), (5, 2)]:
        Sp = S.copy()
        Sp[h, d] += eps
        numeric = (losses.local_loss(DependencyTrees(projective=False), [Sp], [gold])[0] - value) / eps
        assert G[h, d] == pytest.approx(numeric, abs=1e-4)
    assert not G[:, 0].any() and not np.diag(G).any()


def test_unknown_loss_is_named():
    with pytest.raises(ValueError, match="unknown loss 'perceptron'; the registered losses are"):
        losses.get_loss("perceptron")


def test_crossing_arcs_match_projectivity_on_every_small_tree():
    for n in range(1, 6):
        for heads in all_trees(n, single_root=False):
            assert crossing_arcs(heads).any() == (not _projective(heads))


@pytest.mark.parametrize("single_root", [True, False])
def test_lifting_gives_a_projective_tree_of_ancestors_on_every_small_tree(single_root):
    lifted_some = 0
    for n in range(1, 7):
        for heads in all_trees(n, single_root=single_root):
            lifted = dependency.lift_to_projective(heads, single_root)
            dependency.check_heads(lifted, n)
            assert _projective(lifted)
            if _projective(heads):
                assert np.array_equal(lifted, heads)
                continue
            lifted_some += 1
            if single_root:
                assert (lifted[1:] == 0).sum() == 1
            for d in range(1, n + 1):  # the new head is the gold head or above it
                ancestors, x = [], heads[d]
                while x != -1:
                    ancestors.append(x)
                    x = heads[x]
                assert lifted[d] in ancestors
    assert lifted_some > 100


def test_projective_crf_loss_lifts_a_non_projective_gold_tree():
    """With Eisner the loss is log Z over projective trees minus the score of
    the lifted gold tree, so it is never negative; the gradient is the
    projective marginals minus the lifted tree's arcs."""
    rng = np.random.default_rng(11)
    gold = np.array([-1, 3, 4, 0, 3])  # 1 <- 3 crosses 2 <- 4
    assert crossing_arcs(gold).any()
    lifted = dependency.lift_to_projective(gold)
    assert _projective(lifted)
    for _ in range(5):
        S = rng.normal(size=(5, 5)) * 3
        S[gold[1:], np.arange(1, 5)] += 20.0  # the gold tree beats every projective one
        value, (G,) = losses.crf_loss(DependencyTrees(projective=True), [S], [gold])
        expected = log_partition(S, single_root=True, projective=True) - dependency.tree_score(S, lifted)
        assert value == pytest.approx(expected)
        assert value >= 0.0
        marg = marginals(S, single_root=True, projective=True)
        indicator = np.zeros_like(S)
        indicator[lifted[1:], np.arange(1, 5)] = 1.0
        np.testing.assert_allclose(G, marg - indicator, atol=1e-9)


def test_scores_are_perfect_for_the_gold_parse_and_match_spacys_own():
    from spacy.pipeline.dep_parser import parser_score

    nlp = spacy.blank("en")
    # "A hearing is scheduled on the issue today": nmod crosses the root arc
    words = ["A", "hearing", "is", "scheduled", "on", "the", "issue", "today", "."]
    heads = [1, 3, 3, 3, 6, 6, 1, 3, 3]
    deps = ["det", "nsubj:pass", "aux:pass", "ROOT", "case", "det", "nmod", "obl:tmod", "punct"]
    gold = Doc(nlp.vocab, words=words, heads=heads, deps=deps)
    perfect = score_mst_parse([Example(gold.copy(), gold)])
    assert perfect["dep_conll_las"] == perfect["dep_las"] == 1.0
    assert perfect["dep_nonproj_p"] == perfect["dep_nonproj_r"] == 1.0
    # attach "issue" to "scheduled": projective, wrong, and a wrong subtype on "today"
    pred = Doc(nlp.vocab, words=words, heads=[1, 3, 3, 3, 6, 6, 3, 3, 3],
               deps=deps[:7] + ["obl", "punct"])
    eg = Example(pred, gold)
    got = score_mst_parse([eg])
    spacy_scores = parser_score([eg])
    assert got["dep_uas"] == spacy_scores["dep_uas"] == pytest.approx(7 / 8)   # punct left out
    assert got["dep_conll_uas"] == pytest.approx(8 / 9)                       # punct counted
    assert got["dep_conll_las"] == pytest.approx(8 / 9)    # obl:tmod vs obl: same universal label
    # gold crossing arcs: nmod, and the root, obl:tmod and punct arcs it crosses;
    # the prediction gets three of their heads but crosses nothing: none found
    assert got["dep_nonproj_r"] == 0.0 and got["dep_nonproj_p"] == 0.0
    # with the nmod arc but "A" on "scheduled": all four found, and the wrong
    # det arc crosses too, so one of five predicted crossing arcs is not gold
    pred = Doc(nlp.vocab, words=words, heads=[3, 3, 3, 3, 6, 6, 1, 3, 3], deps=deps)
    got = score_mst_parse([Example(pred, gold)])
    assert got["dep_nonproj_r"] == 1.0
    assert got["dep_nonproj_p"] == pytest.approx(4 / 5)


def test_edge_feature_gradient_is_the_transpose_of_the_scores():
    rng = np.random.default_rng(4)
    nlp = spacy.blank("en")
    docs = [Doc(nlp.vocab, words=["Wonderful", "dogs", "bark", "at", "strangers", "."],
                tags=["JJ", "NNS", "VBP", "IN", "NNS", "."]),
            Doc(nlp.vocab, words=["Hi"], tags=["UH"])]
    batch = SentenceBatch(docs, [(0, 0, 6), (1, 0, 1), (0, 1, 4)])
    feats = node_features(batch)
    size = 1 << 12
    w = rng.normal(size=size).astype(np.float32)
    n_flat = sum((e - s + 1) ** 2 for _, s, e in batch.sents)
    scores = np.zeros(n_flat)
    edge_scores(*feats, w, scores)
    d = rng.normal(size=n_flat)
    grad = np.zeros(size, dtype=np.float32)
    edge_grads(*feats, d, grad)
    # scores are linear in w, so <d, scores(w)> = <grad(d), w>
    assert float(d @ scores) == pytest.approx(float(grad.astype(np.float64) @ w), rel=1e-4)
    with pytest.raises(ValueError, match="power of two"):
        edge_scores(*feats, np.zeros(100, dtype=np.float32), scores)


def test_in_between_pos_reaches_only_the_arcs_that_span_the_word():
    nlp = spacy.blank("en")
    words = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    tags = ["X"] * 10
    w = np.random.default_rng(5).normal(size=1 << 14).astype(np.float32)

    def arc_scores(tags):
        doc = Doc(nlp.vocab, words=words, tags=tags)
        feats = node_features(SentenceBatch([doc], [(0, 0, 10)]))
        out = np.zeros(121)
        edge_scores(*feats, w, out)
        return out.reshape(11, 11)

    before, after = arc_scores(tags), arc_scores(tags[:5] + ["Y"] + tags[6:])   # node 6
    changed = before != after
    assert changed[1, 9] and changed[9, 2]          # arcs over node 6
    assert not changed[1, 2] and not changed[9, 8]  # arcs far from node 6


def _grad_check(model: Model, batch, seed=0, names=("W", "U", "u", "root", "distance"), eps=1e-3):
    """Directional derivative of a random linear function of the outputs.

    names: parameters of `model`, or (node, name) pairs of its sublayers.
    eps: the finite-difference step (smaller where more ReLU units can
    cross their kink within it)."""
    rng = np.random.default_rng(seed)
    out, _ = model(batch, is_train=True)
    R = ParseScores([rng.normal(size=a.shape) for a in out.arcs],
                    [rng.normal(size=a.shape).astype(np.float32) for a in out.label_dep],
                    [rng.normal(size=a.shape).astype(np.float32) for a in out.label_head],
                    None if out.siblings is None else [rng.normal(size=a.shape) for a in out.siblings])

    def f():
        o, _ = model(batch, is_train=False)
        return (sum(float((a * r).sum()) for a, r in zip(o.arcs, R.arcs))
                + sum(float((a * r).sum()) for a, r in zip(o.label_dep, R.label_dep))
                + sum(float((a * r).sum()) for a, r in zip(o.label_head, R.label_head))
                + sum(float((a * r).sum()) for a, r in zip(o.siblings or [], R.siblings or [])))

    _, backprop = model(batch, is_train=True)
    for node in model.walk():
        for name in node.param_names:
            if node.has_grad(name):
                node.set_grad(name, np.zeros_like(node.get_grad(name)))
    backprop(R)
    checked = 0
    for name in names:
        node, name = name if isinstance(name, tuple) else (model.get_ref("head"), name)
        if not node.has_param(name):
            continue
        check_param_gradient(node, name, f, rng, rel=2e-2, eps=eps)
        checked += 1
    return checked


def _small_tok2vec():
    from spacy.ml.models.tok2vec import build_hash_embed_cnn_tok2vec

    return build_hash_embed_cnn_tok2vec(
        pretrained_vectors=None, width=16, depth=1, embed_size=100, window_size=1,
        maxout_pieces=2, subword_features=False)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_biaffine_scorer_gradients_match_finite_differences(seed):
    from thinc.api import fix_random_seed

    fix_random_seed(seed)
    nlp = spacy.blank("en")
    tok2vec = _small_tok2vec()
    model = build_biaffine_arc_scorer(tok2vec, arc_width=8, label_width=4, dropout=0.0, context_width=0)
    docs = [Doc(nlp.vocab, words="the dog saw a cat".split()), Doc(nlp.vocab, words=["hi", "there"])]
    batch = SentenceBatch(docs, [(0, 0, 5), (1, 0, 2), (0, 2, 4)])
    model.initialize(X=batch)
    rng = np.random.default_rng(seed)
    for name in ("U", "u", "distance"):      # zero-initialised: make them matter
        head = model.get_ref("head")
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    assert _grad_check(model, batch, seed) == 5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_biaffine_scorer_with_context_layer_gradients_match_finite_differences(seed):
    from thinc.api import fix_random_seed

    fix_random_seed(seed)
    nlp = spacy.blank("en")
    tok2vec = _small_tok2vec()
    model = build_biaffine_arc_scorer(tok2vec, arc_width=8, label_width=4, dropout=0.0,
                                      context_width=6, context_depth=2)
    docs = [Doc(nlp.vocab, words="the dog saw a cat".split()), Doc(nlp.vocab, words=["hi", "there"])]
    batch = SentenceBatch(docs, [(0, 0, 5), (1, 0, 2), (0, 2, 4)])
    model.initialize(X=batch)
    rng = np.random.default_rng(seed)
    for name in ("U", "u", "distance"):
        head = model.get_ref("head")
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    lstm = next(node for node in model.walk() if node.name == "bilstm")
    assert lstm.get_dim("nI") == 16 and model.get_ref("head").get_dim("nI") == 6
    names = ["W", "U", "u", "root", "distance"] + [(lstm, p) for p in lstm.param_names]
    assert _grad_check(model, batch, seed, names) == 11


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_second_order_scorer_gradients_match_finite_differences(seed):
    from thinc.api import fix_random_seed

    from spacy_struct.models.arc_scorer import sibling_scores

    fix_random_seed(seed)
    nlp = spacy.blank("en")
    model = build_biaffine_arc_scorer(_small_tok2vec(), arc_width=8, label_width=4, dropout=0.0,
                                      context_width=0, order=2, sibling_width=5)
    docs = [Doc(nlp.vocab, words="the dog saw a cat".split()), Doc(nlp.vocab, words=["hi", "there"])]
    batch = SentenceBatch(docs, [(0, 0, 5), (1, 0, 2), (0, 2, 4)])
    model.initialize(X=batch)
    rng = np.random.default_rng(seed)
    head = model.get_ref("head")
    for name in ("U", "u", "distance", "v"):
        head.set_param(name, rng.normal(size=head.get_param(name).shape).astype(np.float32))
    out, _ = model(batch, is_train=False)
    assert [s.shape for s in out.siblings] == [(6, 6, 6), (3, 3, 3), (3, 3, 3)]
    # the trilinear form, entry by entry
    views = rng.normal(size=(4, 15)).astype(np.float32)
    v = head.get_param("v")
    S = sibling_scores(views, v)
    h, s_, m = 3, 1, 2
    assert S[h, s_, m] == pytest.approx(float((v * views[h, :5] * views[s_, 5:10] * views[m, 10:]).sum()), rel=1e-4)
    # three more views per word put more ReLU kinks within a step of 1e-3
    assert _grad_check(model, batch, seed, ("W", "U", "u", "root", "distance", "v"), eps=1e-4) == 6


@pytest.mark.parametrize("width,depth", [(5, 1), (-2, 1), (4, 0)])
def test_biaffine_scorer_rejects_bad_context_sizes(width, depth):

    tok2vec = _small_tok2vec()
    with pytest.raises(ValueError, match="context_"):
        build_biaffine_arc_scorer(tok2vec, context_width=width, context_depth=depth)


def _random_labeler(rng, width: int, n_labels: int, distance: bool = False):
    """An edge labeler with a random bilinear form and distance biases (they
    start at zero)."""
    labeler = build_edge_labeler(distance=distance)
    labeler.set_dim("nI", width)
    labeler.set_dim("nO", n_labels)
    labeler.initialize()
    labeler.set_param("V", rng.normal(size=labeler.get_param("V").shape).astype(np.float32))
    if distance:
        labeler.set_param("E", rng.normal(size=labeler.get_param("E").shape).astype(np.float32))
    return labeler


@pytest.mark.parametrize("distance", [False, True])
def test_edge_labeler_prediction_contracted_per_head_equals_the_training_form(distance):
    """At prediction the bilinear form is contracted once per distinct head;
    the scores are those of the per-word form training uses."""
    rng = np.random.default_rng(8)
    labeler = _random_labeler(rng, 5, 6, distance)
    sizes = (6, 1, 9, 0)
    deps = [rng.normal(size=(n + 1, 5)).astype(np.float32) for n in sizes]
    heads_side = [rng.normal(size=(n + 1, 5)).astype(np.float32) for n in sizes]
    heads = [np.concatenate([[-1], rng.integers(0, n + 1, size=n)]) for n in sizes]
    predicted = labeler.predict((deps, heads_side, heads))
    trained, _ = labeler.begin_update((deps, heads_side, heads))
    for a, b, n in zip(predicted, trained, sizes):
        assert a.shape == (n, 6)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("distance", [False, True])
def test_edge_labeler_gradients_match_finite_differences(distance):
    rng = np.random.default_rng(7)
    labeler = _random_labeler(rng, 3, 4, distance)
    deps = [rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)]
    heads_side = [rng.normal(size=(4, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)]
    heads = [np.array([-1, 2, 0, 2]), np.array([-1, 0])]
    R = [rng.normal(size=(3, 4)), rng.normal(size=(1, 4))]

    def f(deps, heads_side):
        out, _ = labeler((deps, heads_side, heads), is_train=False)
        return sum(float((o * r).sum()) for o, r in zip(out, R))

    _, backprop = labeler((deps, heads_side, heads), is_train=True)
    d_deps, d_heads, _ = backprop([r.astype(np.float32) for r in R])
    eps = 1e-3
    for arrays, grads, which in ((deps, d_deps, 0), (heads_side, d_heads, 1)):
        for i in range(2):
            direction = rng.normal(size=arrays[i].shape).astype(np.float32)
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i] += eps * direction
            minus[i] -= eps * direction
            args_p = (plus, heads_side) if which == 0 else (deps, plus)
            args_m = (minus, heads_side) if which == 0 else (deps, minus)
            numeric = (f(*args_p) - f(*args_m)) / (2 * eps)
            assert float((grads[i] * direction).sum()) == pytest.approx(numeric, rel=2e-2, abs=1e-2)
    for name in labeler.param_names:
        labeler.set_grad(name, np.zeros_like(labeler.get_param(name)))
    _, backprop = labeler((deps, heads_side, heads), is_train=True)
    backprop([r.astype(np.float32) for r in R])
    for name in ("V", "W", "b") + (("E",) if distance else ()):
        check_param_gradient(labeler, name, lambda: f(deps, heads_side), rng, rel=2e-2)


def test_edge_labeler_distance_bias_is_that_of_each_arcs_side_and_length():
    """With `distance`, an arc's label scores move by E[bucket] of its own
    signed distance: the same two vectors score differently as a left and a
    right dependent, and an arc from the root reads the root's bucket."""
    from spacy_struct.models.distance import N_DISTANCE_BUCKETS, distance_buckets

    rng = np.random.default_rng(9)
    plain = _random_labeler(rng, 3, 2)
    with_distance = build_edge_labeler(distance=True)
    with_distance.set_dim("nI", 3)
    with_distance.set_dim("nO", 2)
    with_distance.initialize()
    for name in ("V", "W", "b"):
        with_distance.set_param(name, plain.get_param(name))
    E = rng.normal(size=(N_DISTANCE_BUCKETS, 2)).astype(np.float32)
    with_distance.set_param("E", E)
    vectors = rng.normal(size=(5, 3)).astype(np.float32)
    heads = np.array([-1, 3, 3, 0, 1])  # 1 <- 3 (left of its head), 2 <- 3, 3 <- root, 4 <- 1 (right, 3 away)
    base = plain.predict(([vectors], [vectors], [heads]))[0]
    moved = with_distance.predict(([vectors], [vectors], [heads]))[0]
    buckets = distance_buckets(5)
    expected = [buckets[heads[m], m] for m in range(1, 5)]
    np.testing.assert_allclose(moved - base, E[expected], rtol=1e-5, atol=1e-5)
    assert expected[2] == N_DISTANCE_BUCKETS - 1  # from the root
    assert len({expected[0], expected[3]}) == 2  # a left arc of 2 and a right arc of 3 differ


def test_scorer_dropout_is_its_own_and_training_dropout_does_not_override_it():
    from thinc.api import set_dropout_rate

    nlp = spacy.blank("en")
    tok2vec = _small_tok2vec()
    docs = [Doc(nlp.vocab, words="the dog saw a cat".split())]
    batch = SentenceBatch(docs, [(0, 0, 5)])
    for rate, context in ((0.5, 8), (0.5, 0), (0.0, 8)):
        model = build_biaffine_arc_scorer(tok2vec, arc_width=8, label_width=4, dropout=rate,
                                          context_width=context)
        model.initialize(X=batch)
        model.get_ref("head").set_param("u", np.ones_like(model.get_ref("head").get_param("u")))
        set_dropout_rate(model, 0.0)
        clean, _ = model(batch, is_train=False)
        noisy, _ = model(batch, is_train=True)
        assert np.allclose(clean.arcs[0], noisy.arcs[0]) == (rate == 0.0)


def test_the_part_scorer_gives_the_full_sibling_scores_of_the_parts_asked_for():
    from spacy_struct.models.arc_scorer import LazySiblingScores, sibling_scores

    rng = np.random.default_rng(9)
    views = [rng.normal(size=(n, 3 * 7)).astype(np.float32) for n in (4, 1, 6)]
    v = rng.normal(size=7).astype(np.float32)
    score = LazySiblingScores(views, v).part_scorer()
    offsets = np.cumsum([0] + [len(x) for x in views])
    triples = [(i, int(a), int(b), int(c)) for i, x in enumerate(views) for a, b, c in rng.integers(0, len(x), size=(5, 3))]
    h, s, m = (np.array([offsets[i] + t[k] for i, *t in triples]) for k in range(3))
    expected = [sibling_scores(views[i], v)[a, b, c] for i, a, b, c in triples]
    np.testing.assert_allclose(score(h, s, m), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(IndexError, match="out of range"):
        score(np.array([offsets[-1]]), np.array([0]), np.array([0]))


def test_the_part_scorer_is_exact_over_runs_of_one_arc_and_any_view_width():
    """The kernel makes A[h] * C[m] once per run of parts of one arc: runs,
    single parts and returns to an earlier arc must all score as defined."""
    from spacy_struct.models.arc_scorer import LazySiblingScores, sibling_scores

    rng = np.random.default_rng(10)
    for d in (1, 4, 7, 100):
        views = [rng.normal(size=(n, 3 * d)).astype(np.float32) for n in (5, 3)]
        v = rng.normal(size=d).astype(np.float32)
        score = LazySiblingScores(views, v).part_scorer()
        full = sibling_scores(np.concatenate(views), v)
        arcs = rng.integers(0, 8, size=(12, 2))
        runs = rng.integers(1, 5, size=12)
        h, m = np.repeat(arcs[:, 0], runs), np.repeat(arcs[:, 1], runs)
        s = rng.integers(0, 8, size=len(h))
        np.testing.assert_allclose(score(h, s, m), full[h, s, m], rtol=1e-4, atol=1e-4)
