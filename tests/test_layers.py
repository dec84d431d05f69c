"""The shared BiLSTM: exact gradients, and each direction sees only its side."""
import numpy as np
import pytest

from spacy_struct.models import BiLSTM

LENGTHS = (3, 5, 1, 4)


def _model_and_inputs(depth=2, n_in=6, n_out=4, seed=1):
    rng = np.random.default_rng(seed)
    X = [rng.standard_normal((n, n_in)).astype("f") for n in LENGTHS]
    model = BiLSTM(n_out, depth=depth)
    model.initialize(X=X)
    # move off the initial point so that no gate sits at a special value
    for name in model.param_names:
        param = model.get_param(name)
        model.set_param(name, param + 0.3 * rng.standard_normal(param.shape).astype("f"))
    R = [rng.standard_normal((n, n_out)) for n in LENGTHS]
    return model, X, R


def _objective(model, X, R):
    Y, _ = model(X, is_train=False)
    return sum(float((y.astype("d") * r).sum()) for y, r in zip(Y, R))


def test_bilstm_shapes_and_empty_batch():
    model, X, _ = _model_and_inputs()
    Y, _ = model(X, is_train=False)
    assert [y.shape for y in Y] == [(n, 4) for n in LENGTHS]
    assert model([], is_train=False)[0] == []


@pytest.mark.parametrize("depth", [1, 2])
def test_bilstm_input_gradient_matches_finite_differences(depth):
    model, X, R = _model_and_inputs(depth=depth)
    _, backprop = model(X, is_train=True)
    dX = backprop([r.astype("f") for r in R])
    eps = 1e-3
    for s, n in enumerate(LENGTHS):
        for j in range(n):
            for k in range(X[s].shape[1]):
                plus = [x.copy() for x in X]
                minus = [x.copy() for x in X]
                plus[s][j, k] += eps
                minus[s][j, k] -= eps
                numeric = (_objective(model, plus, R) - _objective(model, minus, R)) / (2 * eps)
                assert numeric == pytest.approx(dX[s][j, k], abs=5e-4)


def test_bilstm_parameter_gradients_match_finite_differences():
    model, X, R = _model_and_inputs()
    _, backprop = model(X, is_train=True)
    backprop([r.astype("f") for r in R])
    rng = np.random.default_rng(0)
    eps = 1e-3
    for name in model.param_names:
        param = model.get_param(name)
        grad = model.get_grad(name)
        for _ in range(8):
            index = tuple(int(rng.integers(0, d)) for d in param.shape)
            bumped = param.copy()
            bumped[index] += eps
            model.set_param(name, bumped)
            plus = _objective(model, X, R)
            bumped[index] -= 2 * eps
            model.set_param(name, bumped)
            minus = _objective(model, X, R)
            model.set_param(name, param)
            assert (plus - minus) / (2 * eps) == pytest.approx(grad[index], abs=5e-4), name


def test_bilstm_directions_see_only_their_side_and_docs_do_not_mix():
    model, X, _ = _model_and_inputs(depth=1)
    Y, _ = model(X, is_train=False)
    changed = [x.copy() for x in X]
    changed[1][2] += 1.0  # word 2 of the second doc
    Z, _ = model(changed, is_train=False)
    for s in (0, 2, 3):
        np.testing.assert_allclose(Y[s], Z[s])
    half = 2
    np.testing.assert_allclose(Y[1][:2, :half], Z[1][:2, :half])  # forward: words before
    np.testing.assert_allclose(Y[1][3:, half:], Z[1][3:, half:])  # backward: words after
    assert not np.allclose(Y[1][3:, :half], Z[1][3:, :half])
    assert not np.allclose(Y[1][:2, half:], Z[1][:2, half:])
    alone, _ = model([X[1]], is_train=False)
    np.testing.assert_allclose(alone[0], Y[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("width,depth", [(3, 1), (0, 1), (4, 0)])
def test_bilstm_rejects_bad_sizes(width, depth):
    with pytest.raises(ValueError):
        BiLSTM(width, depth=depth)


def _senter_pipeline(detached: bool):
    """tok2vec + senter, the senter reading the tok2vec through a listener,
    detached or not."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("tok2vec", config={"model": {
        "@architectures": "spacy.HashEmbedCNN.v2", "width": 16, "depth": 1,
        "embed_size": 200, "window_size": 1, "maxout_pieces": 2,
        "subword_features": False, "pretrained_vectors": None}})
    listener = {"@architectures": "spacy.Tok2VecListener.v1", "width": 16, "upstream": "*"}
    t2v = ({"@architectures": "spacy_struct.DetachedTok2Vec.v1", "width": 8, "tok2vec": listener}
           if detached else listener)
    nlp.add_pipe("senter", config={"model": {
        "@architectures": "spacy.Tagger.v2", "nO": None, "tok2vec": t2v}})
    return nlp


@pytest.mark.parametrize("detached", [False, True])
def test_detached_tok2vec_sends_no_gradient_to_the_shared_tok2vec(detached):
    """A senter on a DetachedTok2Vec trains its own layers and leaves the
    shared tok2vec as it was; on a plain listener it changes the tok2vec."""
    from spacy.tokens import Doc
    from spacy.training import Example
    from thinc.api import SGD, fix_random_seed

    fix_random_seed(0)
    nlp = _senter_pipeline(detached)
    words = "The cat sat . It slept . The dog ran away .".split()
    ref = Doc(nlp.vocab, words=words,
              sent_starts=[w in (0, 4, 7) for w in range(len(words))])
    examples = [Example(nlp.make_doc(ref.text), ref)]
    nlp.initialize(lambda: examples)

    def params(name):
        model = nlp.get_pipe(name).model
        return [node.get_param(p).copy() for node in model.walk()
                for p in node.param_names if node.has_param(p)]

    tok2vec_before, senter_before = params("tok2vec"), params("senter")
    optimizer = SGD(0.1, L2=0.0, grad_clip=0.0)
    for _ in range(3):
        nlp.update(examples, sgd=optimizer)
    tok2vec_moved = any(not np.array_equal(a, b) for a, b in zip(tok2vec_before, params("tok2vec")))
    senter_moved = any(not np.array_equal(a, b) for a, b in zip(senter_before, params("senter")))
    assert senter_moved
    assert tok2vec_moved is not detached
    # and it predicts through the stored tok2vec output, as a listener does
    doc = nlp("The cat sat. It slept.")
    assert doc.has_annotation("SENT_START")
