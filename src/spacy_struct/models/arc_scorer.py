"""`spacy_struct.BiaffineArcScorer.v1`: arc scores from a tok2vec layer.

Every word vector (and a learned root vector) goes through one ReLU layer that
gives four views: the word as a dependent and as a head for arcs, and the same
two for labels. The arc score is biaffine (Dozat & Manning 2017),
score(h, d) = head_h^T U dep_d + u . head_h + distance(h, d), where the last
term is a learned bias per signed, bucketed distance: the tok2vec encoders
spaCy trains on CPU see only a few words around each token, so the scorer
gets the distance explicitly, as the feature models of McDonald et al. do.

With `order = 2` the head also scores every arc h -> m with its previous
sibling s (McDonald & Pereira 2006's second-order parts): three more views
of each word (as a head, as the sibling, as the dependent) and a trilinear
form, sibling(h, s, m) = sum_d v_d a_hd b_sd c_md (s = h for the first
dependent on a side), the diagonal, O(n^3 d) form of Zhang, Li & Zhang
(2020)'s triaffine sibling scorer. v starts at zero, so training starts from
the first-order model.

The word vectors come from the shared sentence encoder (`encoder.py`:
tok2vec, characters, BiLSTM); this module is the head on top of it:
`chain(encoder, biaffine arc head)`. A first-order score sees only its two
words, so the BiLSTM (`context_width`) is what gives it the sentence context
a transition parser reads off its stack and buffer.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import List, Optional

import numpy as np
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ._trilinear import trilinear
from .batch import SentenceBatch, with_root, without_root
from .distance import N_DISTANCE_BUCKETS, distance_buckets
from .dropout import SCORER_DROPOUT, check_dropout, dropout as apply_dropout
from .edge_labeler import build_edge_labeler, size_edge_labeler
from .encoder import build_sentence_encoder
from .scorer import encoder_and_head


@dataclass
class ParseScores:
    """Output of an arc scorer, one entry per sentence.

    `arcs[i]` is the (n+1) x (n+1) arc score matrix of sentence i, row/column
    0 the root. `label_dep[i]` and `label_head[i]` are (n+1) x k
    representations of each node as a dependent and as a head, which the
    edge labeler combines for the arcs of a tree. A second-order scorer also
    gives `siblings[i]`, the (n+1)^3 scores of an arc h -> m with previous
    sibling s, `siblings[i][h, s, m]`, added to `arcs[i][h, m]` to make the
    part scores of `structs.siblings` (at prediction a `LazySiblingScores`,
    which makes each when it is read).
    """

    arcs: List[np.ndarray]
    label_dep: List[np.ndarray]
    label_head: List[np.ndarray]
    siblings: Optional[Sequence] = None


@registry.architectures("spacy_struct.BiaffineArcScorer.v1")
def build_biaffine_arc_scorer(
    tok2vec: Model,
    arc_width: int = 256,
    label_width: int = 64,
    dropout: float = 0.33,
    context_width: int = 512,
    context_depth: int = 1,
    characters: int = 0,
    order: int = 1,
    sibling_width: int = 100,
    label_distance: bool = False,
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
    order: 1, arcs alone; 2, arcs and their previous siblings (McDonald &
        Pereira 2006), decoded by the second-order structures.
    sibling_width: size of the three views the sibling scores come from
        (order 2 only).
    label_distance: the edge labeler also weighs each arc's signed,
        bucketed distance, a bias per label and bucket (edge_labeler.py).
    RETURNS: a Model from a SentenceBatch to ParseScores, with refs
        "tok2vec", "context" (with a BiLSTM), "labeler" and "output" (the
        labeler, whose nO is the number of labels).
    """
    encoder = build_sentence_encoder(tok2vec, characters, context_width, context_depth, dropout)
    head = biaffine_arc_head(arc_width, label_width, dropout, order, sibling_width, label_distance)
    return encoder_and_head(encoder, head)


def biaffine_arc_head(
    arc_width: int, label_width: int, dropout: float, order: int = 1, sibling_width: int = 100,
    label_distance: bool = False,
) -> Model[List[Floats2d], ParseScores]:
    """The head alone: per-sentence word vectors to ParseScores."""
    check_dropout(dropout)
    if order not in (1, 2) or isinstance(order, bool):
        raise ValueError(f"BiaffineArcScorer: order must be 1 or 2, got {order!r}")
    if order == 2 and (isinstance(sibling_width, bool) or not isinstance(sibling_width, int) or sibling_width < 1):
        raise ValueError(f"BiaffineArcScorer: sibling_width must be an integer >= 1, got {sibling_width!r}")
    if not isinstance(label_distance, bool):
        raise ValueError(f"BiaffineArcScorer: label_distance must be true or false, got {label_distance!r}")
    labeler = build_edge_labeler(distance=label_distance)
    return Model(
        "biaffine_arcs",
        _forward,
        init=_init,
        layers=[labeler],
        refs={"labeler": labeler, "output": labeler},
        dims={"nI": None, "arc_width": arc_width, "label_width": label_width,
              "sibling_width": sibling_width if order == 2 else 0},
        params={"root": None, "W": None, "b": None, "U": None, "u": None, "distance": None,
                **({"v": None} if order == 2 else {})},
        attrs={SCORER_DROPOUT: dropout, "needs_tags": False, "order": order},
    )


def _init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    width = model.get_dim("nI")
    a, k = model.get_dim("arc_width"), model.get_dim("label_width")
    sw = model.get_dim("sibling_width")
    rng = np.random.default_rng(0)
    n_out = 2 * a + 2 * k + 3 * sw
    limit = np.sqrt(6.0 / (width + n_out))
    model.set_param("W", rng.uniform(-limit, limit, (width, n_out)).astype(np.float32))
    model.set_param("b", np.zeros((n_out,), dtype=np.float32))
    model.set_param("root", (rng.standard_normal(width) * 0.1).astype(np.float32))
    model.set_param("U", np.zeros((a, a), dtype=np.float32))
    model.set_param("u", np.zeros((a,), dtype=np.float32))
    model.set_param("distance", np.zeros((N_DISTANCE_BUCKETS,), dtype=np.float32))
    if sw:
        model.set_param("v", np.zeros((sw,), dtype=np.float32))
    size_edge_labeler(model, k)
    return model


def _forward(model: Model, sent_vecs: List[Floats2d], is_train: bool):
    root, W, b = model.get_param("root"), model.get_param("W"), model.get_param("b")
    U, u, dist = model.get_param("U"), model.get_param("u"), model.get_param("distance")
    a, k = model.get_dim("arc_width"), model.get_dim("label_width")
    sw = model.get_dim("sibling_width")
    v = model.get_param("v") if sw else None

    X, offsets = with_root(sent_vecs, root)
    # bias and ReLU in place: the (nodes, views) array is the layer's largest
    relu = X @ W
    relu += b
    np.maximum(relu, 0, out=relu)
    act, bp_dropout = apply_dropout(relu, model.attrs[SCORER_DROPOUT], is_train)
    arc_dep, arc_head = act[:, :a], act[:, a:2 * a]
    lab_dep, lab_head = act[:, 2 * a:2 * a + k], act[:, 2 * a + k:2 * a + 2 * k]
    sib = 2 * a + 2 * k  # first column of the sibling views
    siblings = [] if sw else None
    # At prediction the head side of the biaffine form is made for every
    # node in two products, not two per sentence. The sums then run in
    # another order (equal up to float rounding), so training keeps the
    # per-sentence products and learns exactly as it did.
    head_U, head_u = (None, None) if is_train else (arc_head @ U, arc_head @ u)

    arcs, label_dep, label_head, cached = [], [], [], []
    for i in range(len(sent_vecs)):
        lo, hi = offsets[i], offsets[i + 1]
        D = arc_dep[lo:hi]
        if is_train:
            H = arc_head[lo:hi]
            HU, Hu = H @ U, H @ u
        else:
            HU, Hu = head_U[lo:hi], head_u[lo:hi]
        buckets = distance_buckets(hi - lo)
        scores = HU @ D.T
        scores += Hu[:, None]
        scores += dist[buckets]
        arcs.append(scores)
        cached.append((HU, buckets))
        label_dep.append(lab_dep[lo:hi])
        label_head.append(lab_head[lo:hi])
        if sw:
            siblings.append(act[lo:hi, sib:])
    if sw and not is_train:
        # at prediction the (n+1)^3 arrays are made per sentence when the
        # decoder asks for them, so memory follows the sentence, not the batch
        siblings = LazySiblingScores(siblings, v, act[:, sib:])
    elif sw:
        siblings = [sibling_scores(views, v) for views in siblings]

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
            d_act[lo:hi, 2 * a + k:2 * a + 2 * k] += d_scores.label_head[i]
            if sw:
                d_views, d_v = backprop_sibling_scores(act[lo:hi, sib:], v, d_scores.siblings[i])
                d_act[lo:hi, sib:] += d_views
                model.inc_grad("v", d_v)
        d_pre = bp_dropout(d_act) * (relu > 0)
        model.inc_grad("W", X.T @ d_pre)
        model.inc_grad("b", d_pre.sum(0))
        model.inc_grad("U", dU)
        model.inc_grad("u", du)
        model.inc_grad("distance", d_dist)
        d_sents, d_root = without_root(d_pre @ W.T, offsets)
        model.inc_grad("root", d_root)
        return d_sents

    return ParseScores(arcs, label_dep, label_head, siblings), backprop


class LazySiblingScores(Sequence):
    """The sibling scores of a batch's sentences, each (n+1)^3 array made
    from the sentence's views when it is read: a batch of 4,000 sentences of
    35 words would hold 750 MB of them at once."""

    def __init__(self, views: List[np.ndarray], v: np.ndarray, stacked: Optional[np.ndarray] = None) -> None:
        """views: each sentence's (n+1, 3 d) views; v: the trilinear weights;
        stacked: the views of all sentences in one array, when the caller
        has them so (the part scorer then reads it without a copy)."""
        self.views, self.v, self.stacked = views, v, stacked

    def __len__(self) -> int:
        return len(self.views)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return LazySiblingScores(self.views[i], self.v)
        return sibling_scores(self.views[i], self.v)

    def part_scorer(self):
        """The sibling term of given parts only, for decoding pruned parts
        without the (n+1)^3 arrays: a function from (h, s, m) int arrays of
        node indices of the whole batch (sentence i's node j is the sum of
        the earlier sentences' n+1, plus j) to their scores."""
        if self.stacked is not None:
            views = self.stacked
        else:
            views = np.concatenate(self.views) if self.views else np.zeros((0, 3 * len(self.v)), dtype=np.float32)
        d = len(self.v)
        A = np.ascontiguousarray(views[:, :d] * self.v, dtype=np.float32)
        B = np.ascontiguousarray(views[:, d:2 * d], dtype=np.float32)
        C = np.ascontiguousarray(views[:, 2 * d:], dtype=np.float32)

        def score(h: np.ndarray, s: np.ndarray, m: np.ndarray) -> np.ndarray:
            h, s, m = (np.ascontiguousarray(x, dtype=np.int64) for x in (h, s, m))
            if len(h) and max(int(h.max()), int(s.max()), int(m.max())) >= len(A) or min(
                    (int(x.min()) for x in (h, s, m) if len(x)), default=0) < 0:
                raise IndexError(f"part node indices out of range 0..{len(A) - 1}")
            out = np.empty(len(h), dtype=np.float32)
            trilinear(A, B, C, h, s, m, out)
            return out

        return score


def sibling_scores(views: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(n+1)^3 scores sum_d v_d a_hd b_sd c_md from the (n+1, 3 d) views [a b c]."""
    d = len(v)
    A, B, C = views[:, :d] * v, views[:, d:2 * d], views[:, 2 * d:]
    N = len(views)
    AB = (A[:, None, :] * B[None, :, :]).reshape(N * N, d)
    return (AB @ C.T).reshape(N, N, N)


def backprop_sibling_scores(views: np.ndarray, v: np.ndarray, d_scores: np.ndarray):
    """Gradients of `sibling_scores` for the views and for v."""
    d = len(v)
    N = len(views)
    A0, B, C = views[:, :d], views[:, d:2 * d], views[:, 2 * d:]
    A = A0 * v
    G = np.asarray(d_scores, dtype=np.float32).reshape(N * N, N)
    AB = (A[:, None, :] * B[None, :, :]).reshape(N * N, d)
    dC = G.T @ AB
    dAB = (G @ C).reshape(N, N, d)
    dA = np.einsum("hsd,sd->hd", dAB, B)
    dB = np.einsum("hsd,hd->sd", dAB, A)
    d_views = np.concatenate([dA * v, dB, dC], axis=1)
    return d_views, (dA * A0).sum(0)
