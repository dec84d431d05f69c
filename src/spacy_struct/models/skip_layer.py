"""A hidden layer that scores a skip by the words around and inside its gap.

A skip j -> i (words j < i - 1) of a gapped segment leaves out words
j+1 .. i-1. In the corpora the segmenter is for, what licenses it is a
coordination: "human and mouse CD19 genes" holds [human] + [CD19 genes],
where the skip human -> CD19 leaves out "and mouse". Whether a skip is
right depends on the four words at its edges *together* (the left conjunct
j, the coordinator j+1 that opens the gap, the other conjunct i-1 that
closes it, the shared head i) and on what lies between them (McDonald et
al.'s "words in between" features), which a biaffine form of j and i plus
separate linear terms of j+1 and i-1 cannot combine. So each skip gets

    z(j, i) = relu(L[j] + R[i] + O[j+1] + C[i-1] + mean(M[j+1 .. i-1]) + G[gap(j, i)]
                   [+ P[j] * Q[i-1]])
    score_t(j, i) += z(j, i) . V[:, t]

where L, R, O, C, M (and, with `parallel`, P and Q, whose elementwise
product says how alike the two conjuncts are) are affine maps (one
(nI, 5H) or (nI, 7H) matrix) of each word's vector from the sentence
encoder and G a bias per gap bucket: the hidden
layer of an MLP over the skip's edge words and the mean of its gap,
computed for every skip of a sentence at once from per-word terms
(O(n^2 H) per sentence, no per-pair matrix product but the last one).

The functions work on one sentence's block of skips: rows r = j for
j = 0 .. n-3, columns c = i - 2 for i = 2 .. n-1, a skip where c >= r, so
that row r reads O[r + 1] and column c reads C[c + 1] and R[c + 2].
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable, Dict, Tuple

import numpy as np

#: the per-word terms of a skip, in the order of their column blocks of skip_W
SKIP_TERMS = ("left", "right", "opens", "closes", "inside")
#: with `parallel`, two more whose elementwise product joins the hidden layer:
#: how alike the left conjunct j and the word that closes the gap, i-1, are
PARALLEL_TERMS = ("left_like", "closes_like")


@lru_cache(maxsize=512)
def skip_block_geometry(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """(inv_gap, mask) of a sentence of n > 2 words' skip block, float32 and
    read-only, cached per length: inv_gap[r, c] = 1 / (words left out by
    skip r -> c + 2, that is c + 1 - r) where that is a skip (1 elsewhere),
    mask 1.0 where c >= r."""
    r = np.arange(n - 2)[:, None]
    c = np.arange(n - 2)[None, :]
    inv_gap = (1.0 / np.maximum(c + 1 - r, 1)).astype(np.float32)
    mask = (c >= r).astype(np.float32)
    inv_gap.flags.writeable = mask.flags.writeable = False
    return inv_gap, mask


def skip_hidden(
    terms: Dict[str, np.ndarray], bias: np.ndarray, buckets: np.ndarray, inv_gap: np.ndarray, mask: np.ndarray
) -> Tuple[np.ndarray, np.ndarray]:
    """The pre-activation and hidden layer of every skip of one sentence.

    terms: the per-word terms (SKIP_TERMS, and PARALLEL_TERMS with
        `parallel`), each (n, H) float32.
    bias: (n_buckets, H), one row per gap bucket; buckets (n-2, n-2) the
        bucket of each skip of the block.
    RETURNS: (pre, z), both (n-2, n-2, H); z is 0 outside the skips.
    """
    n = len(terms["left"])
    inside_sum = np.zeros((n + 1, terms["inside"].shape[1]), dtype=np.float32)
    np.cumsum(terms["inside"], axis=0, out=inside_sum[1:])
    # words j+1 .. i-1 = r+1 .. c+1: prefix sums at c + 2 minus at r + 1
    # (built in place: this is the layer's cost, a few passes over n^2 H)
    pre = np.subtract(inside_sum[None, 2:n], inside_sum[1:n - 1, None])
    pre *= inv_gap[:, :, None]
    pre += (terms["left"][:n - 2] + terms["opens"][1:n - 1])[:, None, :]
    pre += (terms["right"][2:] + terms["closes"][1:n - 1])[None, :, :]
    pre += bias[buckets]
    if "left_like" in terms:
        pre += terms["left_like"][:n - 2][:, None, :] * terms["closes_like"][1:n - 1][None, :, :]
    z = np.maximum(pre, 0)
    z *= mask[:, :, None]
    return pre, z


def skip_hidden_backprop(
    d_z: np.ndarray, pre: np.ndarray, inv_gap: np.ndarray, mask: np.ndarray, buckets: np.ndarray, n_buckets: int,
    terms: Dict[str, np.ndarray],
) -> Tuple[Dict[str, np.ndarray], np.ndarray]:
    """Gradients of the per-word terms and of the bucket bias from the
    hidden layer's gradient d_z (n-2, n-2, H); `terms` as in the forward.

    RETURNS: ({term: (n, H)}, (n_buckets, H)).
    """
    n = d_z.shape[0] + 2
    H = d_z.shape[2]
    d_pre = d_z * ((pre > 0) * mask[:, :, None])
    rows, cols = d_pre.sum(1), d_pre.sum(0)                   # (n-2, H) each
    grads = {name: np.zeros((n, H), dtype=np.float32) for name in SKIP_TERMS}
    grads["left"][:n - 2] = rows
    grads["opens"][1:n - 1] = rows
    grads["right"][2:] = cols
    grads["closes"][1:n - 1] = cols
    # mean_inside = (S[c + 2] - S[r + 1]) / gap, S the prefix sums of "inside"
    d_mean = d_pre * inv_gap[:, :, None]
    d_sums = np.zeros((n + 1, H), dtype=np.float32)
    d_sums[2:n] += d_mean.sum(0)
    d_sums[1:n - 1] -= d_mean.sum(1)
    # S[k] = sum of inside[w] for w < k, so inside[w] gets every d_sums[k > w]
    grads["inside"] = np.cumsum(d_sums[::-1], axis=0)[::-1][1:].astype(np.float32)
    if "left_like" in terms:
        like_left, like_closes = terms["left_like"][:n - 2], terms["closes_like"][1:n - 1]
        grads["left_like"] = np.zeros((n, H), dtype=np.float32)
        grads["closes_like"] = np.zeros((n, H), dtype=np.float32)
        grads["left_like"][:n - 2] = np.einsum("rch,ch->rh", d_pre, like_closes)
        grads["closes_like"][1:n - 1] = np.einsum("rch,rh->ch", d_pre, like_left)
    flat = buckets.ravel()
    d_flat = d_pre.reshape(-1, H)
    d_bias = np.stack([np.bincount(flat, weights=d_flat[:, k], minlength=n_buckets) for k in range(H)],
                      axis=1).astype(np.float32)
    return grads, d_bias


def project_terms(
    X: np.ndarray, W: np.ndarray, b: np.ndarray, names=SKIP_TERMS,
) -> Tuple[Dict[str, np.ndarray], Callable[[Dict[str, np.ndarray]], Tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The per-word terms of every word: X @ W + b, cut into `names`.

    X: (N, nI) word vectors (the scorer's dropout already applied).
    W: (nI, len(names) H); b: (len(names) H,).
    RETURNS: ({term: (N, H)}, backprop from the terms' gradients to (the
        gradient of X, of W, of b)).
    """
    H = W.shape[1] // len(names)
    out = X @ W + b
    terms = {name: out[:, k * H:(k + 1) * H] for k, name in enumerate(names)}

    def backprop(d_terms: Dict[str, np.ndarray]):
        d_out = np.concatenate([d_terms[name] for name in names], axis=1)
        return d_out @ W.T, X.T @ d_out, d_out.sum(0)

    return terms, backprop
