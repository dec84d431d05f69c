"""Finite-difference check of one parameter's gradient, shared by the scorer tests."""
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
