"""`spacy_struct.BiaffineArcScorer.v1`: arc scores from a tok2vec layer.

Every word vector (and a learned root vector) goes through one ReLU layer that
gives four views: the word as a dependent and as a head for arcs, and the same
two for labels. The arc score is biaffine (Dozat & Manning 2017),
score(h, d) = head_h^T U dep_d + u . head_h + distance(h, d), where the last
term is a learned bias per signed, bucketed distance: the tok2vec encoders
spaCy trains on CPU see only a few words around each token, so the scorer
gets the distance explicitly, as the feature models of McDonald et al. do.

The word vectors come from the shared sentence encoder (`encoder.py`:
tok2vec, characters, BiLSTM); this module is the head on top of it:
`chain(encoder, biaffine arc head)`. A first-order score sees only its two
words, so the BiLSTM (`context_width`) is what gives it the sentence context
a transition parser reads off its stack and buffer.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import List, Optional

import numpy as np
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .batch import SentenceBatch, with_root, without_root
from .dropout import SCORER_DROPOUT, check_dropout, dropout as apply_dropout
from .edge_labeler import build_edge_labeler, size_edge_labeler
from .encoder import build_sentence_encoder
from .scorer import encoder_and_head

# |distance| 1..10 get a bucket each, then wider ones; h = 0 (root) its own.
_DISTANCE_EDGES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 20, 30, 50], dtype=np.int64)
N_DISTANCE_BUCKETS = 2 * len(_DISTANCE_EDGES) + 1


@dataclass
class ParseScores:
    """Output of an arc scorer, one entry per sentence.

    `arcs[i]` is the (n+1) x (n+1) arc score matrix of sentence i, row/column
    0 the root. `label_dep[i]` and `label_head[i]` are (n+1) x k
    representations of each node as a dependent and as a head, which the
    edge labeler combines for the arcs of a tree.
    """

    arcs: List[np.ndarray]
    label_dep: List[np.ndarray]
    label_head: List[np.ndarray]


@lru_cache(maxsize=512)
def distance_buckets(n_nodes: int) -> np.ndarray:
    """(n+1) x (n+1) bucket ids: left/right attachment x distance, root row
    last. Cached per length; read-only."""
    h = np.arange(n_nodes)[:, None]
    d = np.arange(n_nodes)[None, :]
    dist = d - h
    mag = np.maximum(np.digitize(np.abs(dist), _DISTANCE_EDGES) - 1, 0)
    buckets = np.where(dist > 0, mag, len(_DISTANCE_EDGES) + mag)
    buckets[0, :] = N_DISTANCE_BUCKETS - 1
    buckets = buckets.astype(np.int64)
    buckets.flags.writeable = False
    return buckets


@registry.architectures("spacy_struct.BiaffineArcScorer.v1")
def build_biaffine_arc_scorer(
    tok2vec: Model,
    arc_width: int = 256,
    label_width: int = 64,
    dropout: float = 0.33,
    context_width: int = 512,
    context_depth: int = 1,
    characters: int = 0,
) -> Model[SentenceBatch, ParseScores]:
    """Biaffine arc scores over the sentence encoder, with an edge labeler.

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
    characters: width of a character encoder of the scorer's own,
        concatenated to the tok2vec vectors; 0 for none.
    RETURNS: a Model from a SentenceBatch to ParseScores, with refs
        "tok2vec", "context" (with a BiLSTM), "labeler" and "output" (the
        labeler, whose nO is the number of labels).
    """
    encoder = build_sentence_encoder(tok2vec, characters, context_width, context_depth, dropout)
    return encoder_and_head(encoder, biaffine_arc_head(arc_width, label_width, dropout))


def biaffine_arc_head(
    arc_width: int, label_width: int, dropout: float
) -> Model[List[Floats2d], ParseScores]:
    """The head alone: per-sentence word vectors to ParseScores."""
    check_dropout(dropout)
    labeler = build_edge_labeler()
    return Model(
        "biaffine_arcs",
        _forward,
        init=_init,
        layers=[labeler],
        refs={"labeler": labeler, "output": labeler},
        dims={"nI": None, "arc_width": arc_width, "label_width": label_width},
        params={"root": None, "W": None, "b": None, "U": None, "u": None, "distance": None},
        attrs={SCORER_DROPOUT: dropout, "needs_tags": False},
    )


def _init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    width = model.get_dim("nI")
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


def _forward(model: Model, sent_vecs: List[Floats2d], is_train: bool):
    root, W, b = model.get_param("root"), model.get_param("W"), model.get_param("b")
    U, u, dist = model.get_param("U"), model.get_param("u"), model.get_param("distance")
    a, k = model.get_dim("arc_width"), model.get_dim("label_width")

    X, offsets = with_root(sent_vecs, root)
    pre = X @ W + b
    act, bp_dropout = apply_dropout(np.maximum(pre, 0), model.attrs[SCORER_DROPOUT], is_train)
    arc_dep, arc_head = act[:, :a], act[:, a:2 * a]
    lab_dep, lab_head = act[:, 2 * a:2 * a + k], act[:, 2 * a + k:]

    arcs, label_dep, label_head, cached = [], [], [], []
    for i in range(len(sent_vecs)):
        lo, hi = offsets[i], offsets[i + 1]
        H, D = arc_head[lo:hi], arc_dep[lo:hi]
        HU = H @ U
        buckets = distance_buckets(hi - lo)
        arcs.append(HU @ D.T + (H @ u)[:, None] + dist[buckets])
        cached.append((HU, buckets))
        label_dep.append(lab_dep[lo:hi])
        label_head.append(lab_head[lo:hi])

    def backprop(d_scores: ParseScores) -> List[Floats2d]:
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
        d_pre = bp_dropout(d_act) * (pre > 0)
        model.inc_grad("W", X.T @ d_pre)
        model.inc_grad("b", d_pre.sum(0))
        model.inc_grad("U", dU)
        model.inc_grad("u", du)
        model.inc_grad("distance", d_dist)
        d_sents, d_root = without_root(d_pre @ W.T, offsets)
        model.inc_grad("root", d_root)
        return d_sents

    return ParseScores(arcs, label_dep, label_head), backprop
