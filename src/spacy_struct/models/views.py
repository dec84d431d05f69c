"""What the biaffine heads (spans, segment transitions) do alike.

A head reads the word vectors of every sentence of the batch as one stacked
(N, width) array, maps each word to a few ReLU "views" with one affine layer
(a start and an end view for spans; from, to, start and end views for
segment transitions), each with a 1 appended so a biaffine form over two
views also holds a linear term per side and a bias, and learns one bias per
label and bucket of a pair's distance (span width, gap length).
"""
from __future__ import annotations

from typing import Callable, List, Tuple

import numpy as np
from thinc.api import Model
from thinc.types import Floats2d

from .dropout import SCORER_DROPOUT, dropout as apply_dropout


def stack_sentences(model: Model, sent_vecs: List[Floats2d]) -> Tuple[List[int], np.ndarray, np.ndarray]:
    """(sizes, offsets, X): the sentences' lengths, where each starts in X
    (len + 1), and their word vectors stacked as one float32 (N, nI) array."""
    sizes = [len(x) for x in sent_vecs]
    offsets = np.cumsum([0] + sizes)
    if offsets[-1] == 0:
        X = np.zeros((0, model.get_dim("nI")), dtype=np.float32)
    else:
        X = np.concatenate(sent_vecs).astype(np.float32, copy=False)
    return sizes, offsets, X


def relu_views(
    model: Model, X: np.ndarray, n_views: int, is_train: bool
) -> Tuple[List[np.ndarray], Callable[[List[np.ndarray]], np.ndarray]]:
    """`n_views` views of width h = the model's "hidden_width" from the
    params "W" (nI, n_views * h) and "b", with the scorer's dropout.

    RETURNS: the views, each (N, h + 1) with a last column of ones, and a
    backprop from their gradients ((N, h + 1) or (N, h) each; the ones
    column is ignored) to the gradient of X, which also adds W's and b's.
    """
    h = model.get_dim("hidden_width")
    W, b = model.get_param("W"), model.get_param("b")
    pre = X @ W + b
    act, bp_dropout = apply_dropout(np.maximum(pre, 0), model.attrs[SCORER_DROPOUT], is_train)
    ones = np.ones((len(X), 1), dtype=np.float32)
    views = [np.concatenate([act[:, v * h:(v + 1) * h], ones], axis=1) for v in range(n_views)]

    def backprop(d_views: List[np.ndarray]) -> np.ndarray:
        d_act = bp_dropout(np.concatenate([d[:, :h] for d in d_views], axis=1))
        d_pre = d_act * (pre > 0)
        model.inc_grad("W", X.T @ d_pre)
        model.inc_grad("b", d_pre.sum(0))
        return d_pre @ W.T

    return views, backprop


def bucket_gradient(buckets: np.ndarray, d: np.ndarray, n_buckets: int) -> np.ndarray:
    """Gradient of a (n_buckets, L) bias table read as table[buckets]:
    `d` is (L, n, n) and `buckets` (n, n); RETURNS (n_buckets, L) float32."""
    flat = buckets.ravel()
    return np.stack(
        [np.bincount(flat, weights=d[l].ravel(), minlength=n_buckets) for l in range(d.shape[0])],
        axis=1,
    ).astype(np.float32)
