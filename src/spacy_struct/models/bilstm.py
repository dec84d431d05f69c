"""A bidirectional LSTM over each doc's vectors, in numpy, with exact gradients.

The scorers use it to give every word the context of its whole sentence. It is
written here rather than taken from thinc because thinc's `LSTM` (8.3, CPU,
under `with_padded`) returns input gradients that disagree with finite
differences, and a scorer trained through a wrong gradient learns slowly or
not at all. tests/test_layers.py checks this one against finite differences.

Both directions run in one time loop: each doc is laid out forwards for one
direction and reversed for the other, so padding always sits after the last
word and never reaches a real word's state or gradient.
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ._lstm_step import add_inputs, update_cells
from .dropout import SCORER_DROPOUT, check_dropout, dropout as apply_dropout


@registry.layers("spacy_struct.BiLSTM.v1")
def BiLSTM(
    nO: int, nI: Optional[int] = None, depth: int = 1, dropout: float = 0.0
) -> Model[List[Floats2d], List[Floats2d]]:
    """A bidirectional LSTM over each sequence of a list.

    nO: output width (half per direction), a positive even number.
    nI: input width (inferred at initialization when None).
    depth: number of stacked layers.
    dropout: on each layer's input in training; the layer's own rate, which
        spaCy's `training.dropout` does not override.
    RETURNS: a Model from a list of (length, nI) arrays to a list of
        (length, nO) arrays.
    """
    if nO <= 0 or nO % 2:
        raise ValueError(f"BiLSTM width must be a positive even number, not {nO}")
    if depth < 1:
        raise ValueError(f"BiLSTM depth must be at least 1, not {depth}")
    check_dropout(dropout)
    params = {}
    for layer in range(depth):
        params.update({f"W{layer}": None, f"U{layer}": None, f"b{layer}": None})
    return Model(
        "bilstm",
        _forward,
        init=_init,
        dims={"nO": nO, "nI": nI},
        params=params,
        attrs={"depth": depth, SCORER_DROPOUT: dropout},
    )


def _init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if X is not None and len(X):
        model.set_dim("nI", int(X[0].shape[1]), force=True)
    n_in, n_out = model.get_dim("nI"), model.get_dim("nO")
    hidden = n_out // 2
    rng = np.random.default_rng(0)
    for layer in range(model.attrs["depth"]):
        width = n_in if layer == 0 else n_out
        limit_w = np.sqrt(6.0 / (width + 4 * hidden))
        limit_u = np.sqrt(6.0 / (hidden + 4 * hidden))
        model.set_param(f"W{layer}", rng.uniform(-limit_w, limit_w, (2, width, 4 * hidden)).astype(np.float32))
        model.set_param(f"U{layer}", rng.uniform(-limit_u, limit_u, (2, hidden, 4 * hidden)).astype(np.float32))
        b = np.zeros((2, 4 * hidden), dtype=np.float32)
        b[:, hidden:2 * hidden] = 1.0  # forget gate open at the start
        model.set_param(f"b{layer}", b)
    return model


def _time_layout(lengths: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Row of each (direction, time, doc) in the concatenated words, or N for
    padding, with the docs sorted longest first; and how many docs are still
    running at each time step, so that each step computes only those."""
    n_words = int(lengths.sum())
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    order = np.argsort(-lengths, kind="stable")
    lengths, starts = lengths[order], starts[order]
    steps = np.arange(int(lengths[0]))[:, None]
    valid = steps < lengths[None, :]
    forward = np.where(valid, starts[None, :] + steps, n_words)
    backward = np.where(valid, starts[None, :] + lengths[None, :] - 1 - steps, n_words)
    return np.stack([forward, backward]), valid.sum(1)


def _per_direction(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A[d] @ B[d] for the two directions: two BLAS calls, which numpy runs
    about twice as fast as one stacked matmul of the same shapes."""
    return np.stack([A[0] @ B[0], A[1] @ B[1]])


def _forward(model: Model, Xs: List[Floats2d], is_train: bool):
    if not len(Xs):
        return [], lambda dYs: []
    lengths = np.array([len(x) for x in Xs], dtype=np.int64)
    n_out = model.get_dim("nO")
    if not lengths.sum():
        return [np.zeros((0, n_out), dtype=np.float32) for _ in Xs], lambda dYs: [
            np.zeros((0, model.get_dim("nI")), dtype=np.float32) for _ in Xs
        ]
    rows, running = _time_layout(lengths)
    X = np.concatenate([np.asarray(x, dtype=np.float32) for x in Xs])
    rate = model.attrs[SCORER_DROPOUT]
    backprops = []
    for layer in range(model.attrs["depth"]):
        X, bp = _layer_forward(model, layer, X, rows, running, rate, is_train)
        backprops.append(bp)
    splits = np.cumsum(lengths)[:-1]

    def backprop(dYs: List[Floats2d]) -> List[Floats2d]:
        dX = np.concatenate([np.asarray(d, dtype=np.float32) for d in dYs])
        for bp in reversed(backprops):
            dX = bp(dX)
        return np.split(dX, splits)

    return np.split(X, splits), backprop


def _layer_forward(
    model: Model, layer: int, X: np.ndarray, rows: np.ndarray, running: np.ndarray,
    rate: float, is_train: bool,
):
    W, U, b = (model.get_param(f"{p}{layer}") for p in "WUb")
    hidden = U.shape[1]
    n_words = X.shape[0]
    X, bp_dropout = apply_dropout(X, rate, is_train)
    n_steps = len(running)
    # Time-major layout: the words each step reads, in step order, so that
    # step t's inputs and outputs are one contiguous block per direction
    # (rows starts[t]:starts[t+1]) and the loop gathers and scatters nothing.
    starts = np.concatenate([[0], np.cumsum(running)])
    order = [np.concatenate([rows[d, t, :running[t]] for t in range(n_steps)]) for d in (0, 1)]
    # The sigmoid gates' weights halved: sigmoid(x) = (1 + tanh(x / 2)) / 2,
    # and halving is exact in floating point, so the loop saves a pass.
    half = np.ones(4 * hidden, dtype=np.float32)
    half[:3 * hidden] = 0.5
    # input projection of each direction, without its bias (the step adds
    # it): XW[d][starts[t]:starts[t+1]] is step t's input to direction d's gates
    XW = [np.ascontiguousarray(X[order[d]] @ (W[d] * half), dtype=np.float32) for d in (0, 1)]
    b_half = np.ascontiguousarray(b * half, dtype=np.float32)
    U_half = (U * half).astype(np.float32, copy=False)
    Y_steps = np.empty((2, n_words, hidden), dtype=np.float32)
    steps = []  # (rows, gates, cell) per time step, for the backward pass
    h = np.zeros((2, running[0], hidden), dtype=np.float32)
    c = np.zeros((2, running[0], hidden), dtype=np.float32)
    for t in range(n_steps):
        k = running[t]  # docs still running: a prefix, as they are sorted
        lo, hi = starts[t], starts[t + 1]
        a = np.empty((2, k, 4 * hidden), dtype=np.float32)
        np.matmul(h[0, :k], U_half[0], out=a[0])
        np.matmul(h[1, :k], U_half[1], out=a[1])
        add_inputs(a, XW[0][lo:hi], XW[1][lo:hi], b_half)
        np.tanh(a, out=a)
        # i, f, o = sigmoids, c = f * c + i * g, in one kernel call
        new_c = np.empty((2, k, hidden), dtype=np.float32)
        update_cells(a, c, new_c)
        c = new_c
        h = np.tanh(c, out=Y_steps[:, lo:hi])
        h *= a[..., 2 * hidden:3 * hidden]
        if is_train:
            steps.append((rows[0, t, :k], rows[1, t, :k], a, c, h))
    Y = np.empty((n_words, 2 * hidden), dtype=np.float32)
    Y[order[0], :hidden] = Y_steps[0]
    Y[order[1], hidden:] = Y_steps[1]

    def backprop(dY: np.ndarray) -> np.ndarray:
        dXW = np.empty((2, n_words, 4 * hidden), dtype=np.float32)
        dU = np.zeros_like(U)
        dh_next = np.zeros((2, running[0], hidden), dtype=np.float32)
        dc_next = np.zeros((2, running[0], hidden), dtype=np.float32)
        for t in range(n_steps - 1, -1, -1):
            fwd, bwd, a, c, _ = steps[t]
            k = len(fwd)
            i, f, o, g = (a[..., j * hidden:(j + 1) * hidden] for j in range(4))
            if t:
                c_prev, h_prev = steps[t - 1][3][:, :k], steps[t - 1][4][:, :k]
            else:
                c_prev = h_prev = np.zeros_like(c)
            tanh_c = np.tanh(c)
            dh = np.stack([dY[fwd, :hidden], dY[bwd, hidden:]]) + dh_next[:, :k]
            dc = dc_next[:, :k] + dh * o * (1.0 - tanh_c ** 2)
            da = np.empty_like(a)
            da[..., :hidden] = dc * g * i * (1.0 - i)
            da[..., hidden:2 * hidden] = dc * c_prev * f * (1.0 - f)
            da[..., 2 * hidden:3 * hidden] = dh * tanh_c * o * (1.0 - o)
            da[..., 3 * hidden:] = dc * i * (1.0 - g ** 2)
            dU += _per_direction(h_prev.transpose(0, 2, 1), da)
            dh_next[:, :k] = _per_direction(da, U.transpose(0, 2, 1))
            dc_next[:, :k] = dc * f
            dXW[0][fwd] = da[0]
            dXW[1][bwd] = da[1]
        model.inc_grad(f"W{layer}", np.stack([X.T @ dXW[0], X.T @ dXW[1]]))
        model.inc_grad(f"U{layer}", dU)
        model.inc_grad(f"b{layer}", dXW.sum(1))
        return bp_dropout(dXW[0] @ W[0].T + dXW[1] @ W[1].T)

    return Y, backprop
