"""`spacy_struct.BiaffineArcScorer.v1`: arc scores from a tok2vec layer.

Every word vector (and a learned root vector) goes through one ReLU layer that
gives four views: the word as a dependent and as a head for arcs, and the same
two for labels. The arc score is biaffine (Dozat & Manning 2017),
score(h, d) = head_h^T U dep_d + u . head_h + distance(h, d), where the last
term is a learned bias per signed, bucketed distance: the tok2vec encoders
spaCy trains on CPU see only a few words around each token, so the scorer
gets the distance explicitly, as the feature models of McDonald et al. do.

A first-order score sees only its two words, so those encoders leave it short
of the sentence context a transition parser reads off its stack and buffer.
`context_width` adds a bidirectional LSTM over each sentence, between the
tok2vec output and the views. It lives inside the scorer: a shared
`tok2vec` component stays exactly what the other components (and a
baseline parser) see.

In an inflected language a word's function is written in its ending (case
decides subject, object or oblique), and a shared tok2vec sees only a few
hashed affixes. `characters` adds a character encoder of the scorer's own
next to the tok2vec vectors, again leaving the shared component as it is.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np
from spacy.util import registry
from thinc.api import Model

from ..layers import BiLSTM, initialize_encoder, with_characters
from .batch import ParseBatch, ParseScores, gather_nodes, scatter_nodes
from .edge_labeler import build_edge_labeler, size_edge_labeler

# |distance| 1..10 get a bucket each, then wider ones; h = 0 (root) its own.
_DISTANCE_EDGES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 20, 30, 50], dtype=np.int64)
N_DISTANCE_BUCKETS = 2 * len(_DISTANCE_EDGES) + 1
_bucket_cache: Dict[int, np.ndarray] = {}


def distance_buckets(n_nodes: int) -> np.ndarray:
    """(n+1) x (n+1) bucket ids: left/right attachment x distance, root row last."""
    got = _bucket_cache.get(n_nodes)
    if got is None:
        h = np.arange(n_nodes)[:, None]
        d = np.arange(n_nodes)[None, :]
        dist = d - h
        mag = np.digitize(np.abs(dist), _DISTANCE_EDGES) - 1
        mag = np.maximum(mag, 0)
        got = np.where(dist > 0, mag, len(_DISTANCE_EDGES) + mag)
        got[0, :] = N_DISTANCE_BUCKETS - 1
        got = got.astype(np.int64)
        if n_nodes <= 256:
            _bucket_cache[n_nodes] = got
    return got


@registry.architectures("spacy_struct.BiaffineArcScorer.v1")
def build_biaffine_arc_scorer(
    tok2vec: Model,
    arc_width: int = 256,
    label_width: int = 64,
    dropout: float = 0.33,
    context_width: int = 512,
    context_depth: int = 1,
    characters: int = 0,
) -> Model[ParseBatch, ParseScores]:
    """Biaffine arc scores over a tok2vec sublayer, with an edge labeler.

    tok2vec: docs to one vector per token (a listener to share a `tok2vec`
        component, or a layer of its own).
    arc_width: size of the head and dependent vectors that arcs are scored from.
    label_width: size of the vectors the edge labeler uses.
    dropout: in training, on the LSTM's inputs and on the views. It is the
        scorer's own rate: spaCy's `training.dropout` (which the shared
        tok2vec gets) does not override it.
    context_width: output width of a BiLSTM (half per direction) run over
        the tok2vec vectors of each sentence before scoring; 0 for none.
    context_depth: its number of layers.
    characters: width of a character encoder of the scorer's own (spaCy's
        CharacterEmbed: the first and last four bytes of each word and its
        lowercase form), concatenated to the tok2vec vectors; 0 for none.
    """
    if context_width < 0 or context_width % 2:
        raise ValueError(f"context_width must be 0 or a positive even number, not {context_width}")
    if context_width and context_depth < 1:
        raise ValueError(f"context_depth must be at least 1, not {context_depth}")
    tok2vec = with_characters(tok2vec, characters)
    refs = {"tok2vec": tok2vec}
    layers = [tok2vec]
    if context_width:
        refs["context"] = BiLSTM(context_width, depth=context_depth, dropout=dropout)
        layers.append(refs["context"])
    labeler = build_edge_labeler()
    return Model(
        "biaffine_arc_scorer",
        _forward,
        init=_init,
        layers=[*layers, labeler],
        refs={**refs, "labeler": labeler},
        dims={"nI": None, "arc_width": arc_width, "label_width": label_width},
        params={"root": None, "W": None, "b": None, "U": None, "u": None, "distance": None},
        attrs={"scorer_dropout": dropout, "needs_tags": False},
    )


def _init(model: Model, X: ParseBatch | None = None, Y=None) -> Model:
    width = initialize_encoder(model, X.docs if X is not None else None)
    a, k = model.get_dim("arc_width"), model.get_dim("label_width")
    rng = np.random.default_rng(0)
    n_out = 2 * a + 2 * k
    limit = np.sqrt(6.0 / (width + n_out))
    model.set_param("W", rng.uniform(-limit, limit, (width, n_out)).astype(np.float32))
    model.set_param("b", np.zeros((n_out,), dtype=np.float32))
    model.set_param("root", (rng.standard_normal(width) * 0.1).astype(np.float32))
    model.set_param("U", np.zeros((a, a), dtype=np.float32))
    model.set_param("u", np.zeros((a,), dtype=np.float32))
    model.set_param("distance", np.zeros((N_DISTANCE_BUCKETS,), dtype=np.float32))
    size_edge_labeler(model, k)
    return model


def _forward(model: Model, batch: ParseBatch, is_train: bool):
    tok2vec = model.get_ref("tok2vec")
    rate = model.attrs["scorer_dropout"] if is_train else 0.0
    tokvecs, bp_tok2vec = tok2vec(batch.docs, is_train)
    tokvecs = [np.asarray(t, dtype=np.float32) for t in tokvecs]
    root, W, b = model.get_param("root"), model.get_param("W"), model.get_param("b")
    U, u, dist = model.get_param("U"), model.get_param("u"), model.get_param("distance")
    a, k = model.get_dim("arc_width"), model.get_dim("label_width")

    if model.has_ref("context"):
        # the LSTM runs over each sentence: trees never cross sentences, and
        # many short sequences batch far better than a few long docs
        context = model.get_ref("context")
        context.attrs["dropout_rate"] = rate  # training.dropout reaches it too; keep ours
        sentvecs, bp_context = context([tokvecs[d][s:e] for d, s, e in batch.sents], is_train)
        node_vecs, node_sents = sentvecs, [(i, 0, e - s) for i, (_, s, e) in enumerate(batch.sents)]
    else:
        node_vecs, node_sents = tokvecs, batch.sents
    X, offsets = gather_nodes(node_vecs, root, node_sents)
    pre = X @ W + b
    act = np.maximum(pre, 0)
    if rate:
        keep = (np.random.random_sample(act.shape) >= rate).astype(np.float32) / (1.0 - rate)
        act = act * keep
    arc_dep, arc_head = act[:, :a], act[:, a:2 * a]
    lab_dep, lab_head = act[:, 2 * a:2 * a + k], act[:, 2 * a + k:]

    arcs, label_dep, label_head, cached = [], [], [], []
    for i in range(len(batch.sents)):
        lo, hi = offsets[i], offsets[i + 1]
        H, D = arc_head[lo:hi], arc_dep[lo:hi]
        HU = H @ U
        buckets = distance_buckets(hi - lo)
        S = HU @ D.T + (H @ u)[:, None] + dist[buckets]
        arcs.append(S)
        cached.append((HU, buckets))
        label_dep.append(lab_dep[lo:hi])
        label_head.append(lab_head[lo:hi])

    def backprop(d_scores: ParseScores):
        d_act = np.zeros_like(act)
        dU = np.zeros_like(U)
        du = np.zeros_like(u)
        d_dist = np.zeros_like(dist)
        for i, dS in enumerate(d_scores.arcs):
            lo, hi = offsets[i], offsets[i + 1]
            dS = dS.astype(np.float32, copy=False)
            H, D = arc_head[lo:hi], arc_dep[lo:hi]
            HU, buckets = cached[i]
            dHU = dS @ D
            d_act[lo:hi, :a] += dS.T @ HU
            dU += H.T @ dHU
            rows = dS.sum(1)
            du += H.T @ rows
            d_act[lo:hi, a:2 * a] += dHU @ U.T + np.outer(rows, u)
            d_dist += np.bincount(buckets.ravel(), weights=dS.ravel(), minlength=len(dist)).astype(np.float32)
            d_act[lo:hi, 2 * a:2 * a + k] += d_scores.label_dep[i]
            d_act[lo:hi, 2 * a + k:] += d_scores.label_head[i]
        if rate:
            d_act *= keep
        d_pre = d_act * (pre > 0)
        model.inc_grad("W", X.T @ d_pre)
        model.inc_grad("b", d_pre.sum(0))
        model.inc_grad("U", dU)
        model.inc_grad("u", du)
        model.inc_grad("distance", d_dist)
        d_nodes, d_root = scatter_nodes(d_pre @ W.T, offsets, node_vecs, node_sents)
        model.inc_grad("root", d_root)
        if model.has_ref("context"):
            d_tokvecs = [np.zeros_like(t) for t in tokvecs]
            for (d, s, e), d_sent in zip(batch.sents, bp_context(d_nodes)):
                d_tokvecs[d][s:e] += d_sent
        else:
            d_tokvecs = d_nodes
        bp_tok2vec([tok2vec.ops.asarray(t) for t in d_tokvecs])
        return batch

    return ParseScores(arcs, label_dep, label_head), backprop
