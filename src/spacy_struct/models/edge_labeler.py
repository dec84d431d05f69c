"""Second-stage arc labeler (McDonald, Lerman & Pereira 2006).

Labels each arc of a tree from a dependent-side and a head-side vector of its
two words: score(l) = dep^T V_l head + W_l [dep; head] + b_l, and with
`distance` + E_l[bucket(h - m)], a bias per label and signed, bucketed
distance (`distance.py`): which side of its head a word is on says much of
its label (a subject before its verb, an object after it). It is trained
on the gold arcs and applied to the predicted ones, so the tree is decided
first and the labels cannot make it worse.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
from thinc.api import Model

from ._label_forms import scores_from_forms
from .distance import N_DISTANCE_BUCKETS, arc_buckets

LabelerInput = Tuple[List[np.ndarray], List[np.ndarray], List[np.ndarray]]


def build_edge_labeler(distance: bool = False) -> Model[LabelerInput, List[np.ndarray]]:
    """Input: per sentence the (n+1) x k dependent-side and head-side vectors
    and the heads (int array of length n+1). Output: per sentence an n x L
    array of label scores for the arcs into words 1..n. `distance`: add a
    bias per label and bucket of the arc's signed distance (param "E")."""
    return Model(
        "edge_labeler",
        _forward,
        init=_init,
        dims={"nI": None, "nO": None},
        params={"V": None, "W": None, "b": None, **({"E": None} if distance else {})},
        attrs={"distance": bool(distance)},
    )


def _init(model: Model, X=None, Y=None) -> Model:
    k, n_labels = model.get_dim("nI"), model.get_dim("nO")
    rng = np.random.default_rng(0)
    scale = np.sqrt(1.0 / k)
    model.set_param("V", np.zeros((k, n_labels * k), dtype=np.float32))
    model.set_param("W", (rng.standard_normal((2 * k, n_labels)) * scale).astype(np.float32))
    model.set_param("b", np.zeros((n_labels,), dtype=np.float32))
    if model.attrs.get("distance"):
        model.set_param("E", np.zeros((N_DISTANCE_BUCKETS, n_labels), dtype=np.float32))
    return model


def _forward(model: Model, inputs: LabelerInput, is_train: bool):
    deps, heads_side, heads = inputs
    k, n_labels = model.get_dim("nI"), model.get_dim("nO")
    V, W, b = model.get_param("V"), model.get_param("W"), model.get_param("b")
    sizes = [len(h) - 1 for h in heads]
    if sum(sizes) == 0:
        return [np.zeros((0, n_labels), dtype=np.float32) for _ in sizes], lambda d: (
            [np.zeros_like(x) for x in deps], [np.zeros_like(x) for x in heads_side], heads
        )
    D = np.concatenate([d[1:] for d in deps])
    # the head-side vectors of all sentences' nodes, and each word's head among them
    nodes = np.concatenate(heads_side)
    node_offsets = np.cumsum([0] + [len(hs) for hs in heads_side])
    head_rows = np.concatenate([node_offsets[i] + h[1:] for i, h in enumerate(heads)])
    H = nodes[head_rows]
    offsets = np.cumsum([0] + sizes)
    linear = np.concatenate([D, H], axis=1) @ W + b
    buckets = None
    if model.attrs.get("distance"):
        buckets = np.concatenate([arc_buckets(h) for h in heads])
        linear += model.get_param("E")[buckets]
    if not is_train:
        # A head has several dependents: contract V with each distinct head
        # once (about half the words) instead of with every dependent.
        scores = _bilinear_by_head(D, nodes, head_rows, V, n_labels, k) + linear
        return [scores[offsets[i]:offsets[i + 1]] for i in range(len(sizes))], None
    T = (D @ V).reshape(len(D), n_labels, k)
    scores = np.einsum("mlk,mk->ml", T, H) + linear
    out = [scores[offsets[i]:offsets[i + 1]] for i in range(len(sizes))]

    def backprop(d_out: List[np.ndarray]):
        dS = np.concatenate(d_out).astype(np.float32)
        dT = dS[:, :, None] * H[:, None, :]
        dH = np.einsum("ml,mlk->mk", dS, T)
        DH = np.concatenate([D, H], axis=1)
        model.inc_grad("V", D.T @ dT.reshape(len(D), -1))
        model.inc_grad("W", DH.T @ dS)
        model.inc_grad("b", dS.sum(0))
        if buckets is not None:
            dE = np.zeros((N_DISTANCE_BUCKETS, n_labels), dtype=np.float32)
            np.add.at(dE, buckets, dS)
            model.inc_grad("E", dE)
        dDH = dS @ W.T
        dD = dT.reshape(len(D), -1) @ V.T + dDH[:, :k]
        dH += dDH[:, k:]
        d_deps, d_heads = [], []
        for i, (d, hs, h) in enumerate(zip(deps, heads_side, heads)):
            dd = np.zeros_like(d)
            dd[1:] = dD[offsets[i]:offsets[i + 1]]
            dh = np.zeros_like(hs)
            np.add.at(dh, h[1:], dH[offsets[i]:offsets[i + 1]])
            d_deps.append(dd)
            d_heads.append(dh)
        return d_deps, d_heads, heads

    return out, backprop


#: distinct heads whose contracted forms are made at once: few enough that
#: the kernel reads them from the cache they were written to (3 MB at k = 64
#: and 50 labels)
HEADS_PER_CHUNK = 256


def _bilinear_by_head(D: np.ndarray, nodes: np.ndarray, rows: np.ndarray,
                      V: np.ndarray, n_labels: int, k: int) -> np.ndarray:
    """dep_m^T V_l head_h for every word m and its head h = nodes[rows[m]],
    V contracted once per distinct head: (words, labels). Each distinct head's (k, labels)
    form is made in one product per chunk of heads; a kernel then scores
    every word against its head's form."""
    # the words grouped by head, so a chunk of heads scores a run of words
    order = np.argsort(rows, kind="stable")
    sorted_rows = rows[order]
    # each run of one head in the sorted rows is one form
    new_head = np.empty(len(sorted_rows), dtype=bool)
    new_head[:1] = True
    np.not_equal(sorted_rows[1:], sorted_rows[:-1], out=new_head[1:])
    distinct = sorted_rows[new_head]
    form_of = np.cumsum(new_head, dtype=np.int64) - 1
    # V[a, l k + b] -> V_head[b, a labels + l]: the head side first, and
    # each form laid out (dependent side, label) for the kernel
    V_head = np.ascontiguousarray(V.reshape(k, n_labels, k).transpose(2, 0, 1).reshape(k, k * n_labels))
    D_sorted = np.ascontiguousarray(D[order], dtype=np.float32)
    out = np.empty((len(D), n_labels), dtype=np.float32)
    bounds = np.searchsorted(form_of, np.arange(0, len(distinct) + HEADS_PER_CHUNK, HEADS_PER_CHUNK))
    for c, first in enumerate(range(0, len(distinct), HEADS_PER_CHUNK)):
        forms = np.ascontiguousarray(nodes[distinct[first:first + HEADS_PER_CHUNK]] @ V_head,
                                     dtype=np.float32).reshape(-1, k, n_labels)
        a, b = bounds[c], bounds[c + 1]
        scores_from_forms(forms, D_sorted[a:b], form_of[a:b] - first, out[a:b])
    scores = np.empty_like(out)
    scores[order] = out
    return scores


def size_edge_labeler(scorer: Model, width: int) -> None:
    """Give a scorer's labeler its input width; initialize it once the label
    count is known too (the component sets that from the data)."""
    labeler = scorer.get_ref("labeler")
    labeler.set_dim("nI", width)
    if labeler.has_dim("nO"):
        labeler.initialize()
