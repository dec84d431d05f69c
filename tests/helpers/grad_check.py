"""Finite-difference checks of gradients (of a parameter, of the inputs), shared by the scorer tests."""
import numpy as np
import pytest


def check_param_gradient(node, name, f, rng, rel, abs_=1e-2, eps=1e-3):
    """Compare the stored gradient of `node`'s parameter `name` with the
    central difference of the scalar `f()` along a random direction."""
    p = node.get_param(name)
    g = node.get_grad(name)
    direction = rng.normal(size=p.shape).astype(np.float32)
    node.set_param(name, (p + eps * direction).astype(np.float32))
    up = f()
    node.set_param(name, (p - eps * direction).astype(np.float32))
    down = f()
    node.set_param(name, p)
    numeric = (up - down) / (2 * eps)
    assert float((g * direction).sum()) == pytest.approx(numeric, rel=rel, abs=abs_), name


def linear_objective(model, X, backprop, R):
    """Store in every parameter of `model` the gradient of sum(output * R)
    (zeroing what was there, then running `backprop`, the one of
    `model(X, is_train=True)`), and RETURN that objective as a function of
    the current parameters, for `check_param_gradient`."""
    for node in model.walk():
        for name in node.param_names:
            if node.has_grad(name):
                node.set_grad(name, np.zeros_like(node.get_grad(name)))
    backprop([np.asarray(r, dtype=np.float32) for r in R])

    def f():
        out, _ = model(X, is_train=False)
        return sum(float((a * r).sum()) for a, r in zip(out, R))

    return f


def check_input_gradient(f, X, dX, rng, rel=5e-2, abs_=1e-2, eps=1e-3, directions=3):
    """Compare the gradient `dX` of the scalar `f(X)` with respect to the
    list of arrays `X` with central differences along random directions.
    A direction may cross a ReLU kink between the inputs and `f`, hence
    the tolerance."""
    for _ in range(directions):
        direction = [rng.normal(size=x.shape).astype(np.float32) for x in X]
        analytic = sum(float((g * d).sum()) for g, d in zip(dX, direction))
        numeric = (f([x + eps * d for x, d in zip(X, direction)])
                   - f([x - eps * d for x, d in zip(X, direction)])) / (2 * eps)
        assert analytic == pytest.approx(numeric, rel=rel, abs=abs_)


def head_objective(head, X, rng):
    """A random linear objective of a head's per-sentence outputs and its
    gradient: zero the head's parameter gradients, run it on `X` in
    training, backprop R (random, the outputs' shapes).

    RETURNS: (f, dX): f(xs) = sum(head(xs) * R) with the current
    parameters, and the gradient of f with respect to `X`, with the
    parameters' gradients stored in `head`.
    """
    out, backprop = head(X, is_train=True)
    R = [rng.normal(size=o.shape).astype(np.float32) for o in out]
    for name in head.param_names:
        head.set_grad(name, np.zeros_like(head.get_param(name)))
    dX = backprop(R)

    def f(xs=X):
        scores, _ = head(xs, is_train=False)
        return sum(float((np.asarray(a) * r).sum()) for a, r in zip(scores, R))

    return f, dX
