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


def _reference_lstm_direction(X, W, U, b):
    """One direction of an LSTM by its textbook definition, gates i, f, o, g."""
    hidden = U.shape[0]
    h = np.zeros(hidden)
    c = np.zeros(hidden)
    out = []
    for x in X:
        a = x @ W + h @ U + b
        sigmoid = 1.0 / (1.0 + np.exp(-a[:3 * hidden]))
        i, f, o = sigmoid[:hidden], sigmoid[hidden:2 * hidden], sigmoid[2 * hidden:]
        g = np.tanh(a[3 * hidden:])
        c = f * c + i * g
        h = o * np.tanh(c)
        out.append(h)
    return np.array(out).reshape(len(X), hidden)


def test_bilstm_output_is_the_lstm_definition_in_both_directions():
    model, X, _ = _model_and_inputs(depth=1, n_in=6, n_out=8)
    W, U, b = (model.get_param(f"{p}0").astype("d") for p in "WUb")
    Y, _ = model(X, is_train=False)
    for x, y in zip(X, Y):
        x = x.astype("d")
        forward = _reference_lstm_direction(x, W[0], U[0], b[0])
        backward = _reference_lstm_direction(x[::-1], W[1], U[1], b[1])[::-1]
        np.testing.assert_allclose(y, np.concatenate([forward, backward], axis=1), rtol=1e-4, atol=1e-5)


def test_bilstm_takes_float64_inputs():
    model, X, _ = _model_and_inputs(depth=1)
    Y, _ = model(X, is_train=False)
    Y64, _ = model([x.astype("d") for x in X], is_train=False)
    for y, y64 in zip(Y, Y64):
        np.testing.assert_allclose(y, y64, rtol=1e-5, atol=1e-6)
