"""`spacy_struct.SpanScorer.v1`: a score for every span and label of a sentence.

A nested entity's evidence sits at its edges (where it starts and ends),
in its length and in the words it covers, so each span (i, j) and label l
gets the sum of three terms:

- boundaries: a biaffine form of a start view of word i and an end view of
  word j, [s_i; 1]^T U_l [e_j; 1] (as Yu et al. 2020 score entities, and as
  the arc scorer scores arcs), which also holds a linear term per side and
  a bias per label;
- width: a learned bias per label and bucketed width;
- content: the sum over the covered words of a per-label score of each word,
  read off prefix sums, so it costs O(n^2 L) and has no length limit; and
  (`attention`) a weighted mean of a second per-label word score, the
  weights a softmax over the span's words of a per-label relevance (a span's
  head word, as in Lee et al. 2017's span heads). A sum grows with the
  length of the span, a mean does not: the two tell "many words of this
  type" from "a typical word of this type".

Every span of every length is scored: O(n^2 L) scores per sentence of n
words, all from O(n) vectors, so a 100-word sentence costs no more than a
matrix product. The word vectors come from the shared sentence encoder
(`encoder.py`), whose BiLSTM (`context_width`) gives each word its whole
sentence before the views are taken: the scorer is `chain(encoder, span head)`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Tuple

import numpy as np
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .batch import SentenceBatch
from .dropout import SCORER_DROPOUT, check_dropout
from .encoder import build_sentence_encoder, default_model_config
from .scorer import encoder_and_head
from .views import bucket_gradient, relu_views, stack_sentences

#: the span scorer's default `[model]` (on the default tok2vec), the best
#: on GENIA; nested_ner and joint_parser both start from it
DEFAULT_SPAN_SCORER_MODEL = default_model_config("""
[model]
@architectures = "spacy_struct.SpanScorer.v1"
hidden_width = 150
dropout = 0.33
context_width = 256
context_depth = 1
attention = true
""")

# widths 1..10 get a bucket each, then 11-15, 16-20, 21-30, 31-50, 51+
_WIDTH_EDGES = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 21, 31, 51], dtype=np.int64)
N_WIDTH_BUCKETS = len(_WIDTH_EDGES)


def width_buckets(n: int) -> np.ndarray:
    """(n, n) bucket id of span (i, j) by its width j - i + 1 (0 where j < i)."""
    return _span_grid(n)[0]


def _upper(n: int) -> np.ndarray:
    """(n, n, 1) float32 mask: 1 where j >= i (a span), 0 below the diagonal."""
    return _span_grid(n)[1]


@lru_cache(maxsize=512)
def _span_grid(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """Width buckets and span mask of a sentence of n words, cached per
    length; read-only."""
    width = np.arange(n)[None, :] - np.arange(n)[:, None] + 1
    buckets = np.maximum(np.digitize(np.maximum(width, 1), _WIDTH_EDGES) - 1, 0).astype(np.int64)
    upper = (width >= 1).astype(np.float32)[:, :, None]
    buckets.flags.writeable = upper.flags.writeable = False
    return buckets, upper


@registry.architectures("spacy_struct.SpanScorer.v1")
def build_span_scorer(
    tok2vec: Model,
    hidden_width: int = 150,
    dropout: float = 0.33,
    context_width: int = 256,
    context_depth: int = 1,
    attention: bool = True,
) -> Model[SentenceBatch, List[np.ndarray]]:
    """Scores of every span and label over the sentence encoder.

    tok2vec: docs to one vector per token (a listener to share a `tok2vec`
        component, or a layer of its own).
    hidden_width: size of the start and end views of each word.
    dropout: in training, on the LSTM's inputs and on the views; the
        scorer's own rate, not overridden by `training.dropout`.
    context_width: output width of a BiLSTM (half per direction) over each
        sentence before scoring; 0 for none.
    context_depth: its number of layers.
    attention: add the attention-pooled content term.
    RETURNS: a Model from a SentenceBatch to one (n, n, L) float32 array per
        sentence, [i, j, l] the score of words i..j (inclusive) as label l,
        0 where j < i. Its ref "output" (the head) holds nO = L, which must
        be set before initializing.
    """
    encoder = build_sentence_encoder(tok2vec, 0, context_width, context_depth, dropout)
    return encoder_and_head(encoder, span_head(hidden_width, dropout, attention))


def span_head(hidden_width: int, dropout: float, attention: bool) -> Model[List[Floats2d], List[np.ndarray]]:
    """The head alone: per-sentence word vectors to span scores."""
    if hidden_width < 1:
        raise ValueError(f"hidden_width must be positive, not {hidden_width}")
    check_dropout(dropout)
    params = {"W": None, "b": None, "U": None, "width": None, "content": None}
    if attention:
        params.update(attend=None, pooled=None)
    return Model(
        "span_head",
        _forward,
        init=_init,
        dims={"nI": None, "nO": None, "hidden_width": hidden_width},
        params=params,
        attrs={SCORER_DROPOUT: dropout, "attention": bool(attention)},
    )


def _init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if not model.has_dim("nO") or model.get_dim("nO") is None:
        raise ValueError("SpanScorer: the number of labels (nO) must be set before initializing")
    width = model.get_dim("nI")
    h, L = model.get_dim("hidden_width"), model.get_dim("nO")
    rng = np.random.default_rng(0)
    limit = np.sqrt(6.0 / (width + 2 * h))
    model.set_param("W", rng.uniform(-limit, limit, (width, 2 * h)).astype(np.float32))
    model.set_param("b", np.zeros((2 * h,), dtype=np.float32))
    model.set_param("U", np.zeros((h + 1, L, h + 1), dtype=np.float32))
    model.set_param("width", np.zeros((N_WIDTH_BUCKETS, L), dtype=np.float32))
    model.set_param("content", np.zeros((width, L), dtype=np.float32))
    if model.attrs["attention"]:
        model.set_param("attend", np.zeros((width, L), dtype=np.float32))
        model.set_param("pooled", np.zeros((width, L), dtype=np.float32))
    return model


def _inside_sums(dS: np.ndarray) -> np.ndarray:
    """(n, L): for each word t, the sum of dS[i, j] over the spans i <= t <= j."""
    n = dS.shape[0]
    inside = np.cumsum(np.cumsum(dS, axis=0)[:, ::-1], axis=1)[:, ::-1]
    return inside[np.arange(n), np.arange(n)]


_MAX_RELEVANCE = 30.0  # |relevance| is clipped here, so exp() stays finite in float64


def _attention_mean(relevance: np.ndarray, values: np.ndarray):
    """Per-label softmax-weighted mean of `values` over every span.

    relevance, values: (n, L). Returns (n, n, L) float64 ([i, j, l] for
    j >= i, 0 below the diagonal) and a backprop to (d_relevance, d_values).
    The sums run from each start forward (no prefix differences), so a span
    of low-weight words after a high-weight one loses no precision.
    """
    n, L = values.shape
    if n == 0:
        return np.zeros((0, 0, L)), lambda d_mean: (np.zeros((0, L)), np.zeros((0, L)))
    a = np.clip(relevance.astype(np.float64), -_MAX_RELEVANCE, _MAX_RELEVANCE)
    weight = np.exp(a - a.max(axis=0, keepdims=True))            # (n, L), in (0, 1]
    upper = _upper(n)                                            # [i, k] = k >= i, cached
    num = np.cumsum(upper * (weight * values)[None], axis=1)     # [i, j] = sum_{k=i..j}
    den = np.cumsum(upper * weight[None], axis=1)
    den = np.where(upper > 0, den, 1.0)
    mean = num / den * upper

    def backprop(d_mean: np.ndarray):
        d_num = d_mean * upper / den
        d_den = -d_num * mean
        d_weighted = _inside_sums(d_num)                         # d(weight * values)
        d_weight = d_weighted * values + _inside_sums(d_den)
        d_values = d_weighted * weight
        d_relevance = d_weight * weight * (np.abs(relevance) < _MAX_RELEVANCE)
        return d_relevance, d_values

    return mean, backprop


def _forward(model: Model, sent_vecs: List[Floats2d], is_train: bool):
    h, L = model.get_dim("hidden_width"), model.get_dim("nO")
    U = model.get_param("U")
    Wd, Wc = model.get_param("width"), model.get_param("content")
    U2 = U.reshape(h + 1, L * (h + 1))

    sizes, offsets, X = stack_sentences(model, sent_vecs)
    (S1, E1), bp_views = relu_views(model, X, 2, is_train)  # start and end views
    T_all = S1 @ U2                                  # (N, L * (h + 1))
    word_scores = X @ Wc                             # (N, L) content term per word
    attention = model.attrs["attention"]
    if attention:
        Wa, Wp = model.get_param("attend"), model.get_param("pooled")
        relevance, values = X @ Wa, X @ Wp           # (N, L) each
        attention_bps = []

    outputs = []
    for i, n in enumerate(sizes):
        lo, hi = offsets[i], offsets[i + 1]
        T = T_all[lo:hi].reshape(n * L, h + 1)
        S = (T @ E1[lo:hi].T).reshape(n, L, n).transpose(0, 2, 1)
        prefix = np.concatenate([np.zeros((1, L), np.float32), np.cumsum(word_scores[lo:hi], axis=0)])
        S = S + (prefix[1:][None, :, :] - prefix[:-1][:, None, :]) + Wd[width_buckets(n)]
        if attention:
            mean, bp_mean = _attention_mean(relevance[lo:hi], values[lo:hi])
            S = S + mean
            attention_bps.append(bp_mean)
        S *= _upper(n)
        outputs.append(np.ascontiguousarray(S, dtype=np.float32))

    def backprop(d_scores: List[np.ndarray]):
        d_T_all = np.zeros_like(T_all)
        d_E1 = np.zeros_like(E1)
        d_words = np.zeros_like(word_scores)
        d_Wd = np.zeros_like(Wd)
        if attention:
            d_relevance = np.zeros_like(relevance)
            d_values = np.zeros_like(values)
        for i, n in enumerate(sizes):
            if attention:
                bp_mean = attention_bps[i]
            if n == 0:
                continue
            lo, hi = offsets[i], offsets[i + 1]
            dS = d_scores[i].astype(np.float32, copy=False) * _upper(n)
            dS_t = np.ascontiguousarray(dS.transpose(0, 2, 1)).reshape(n * L, n)  # [i*L + l, j]
            T = T_all[lo:hi].reshape(n * L, h + 1)
            d_T_all[lo:hi] = (dS_t @ E1[lo:hi]).reshape(n, L * (h + 1))
            d_E1[lo:hi] = dS_t.T @ T
            d_Wd += bucket_gradient(width_buckets(n), dS.transpose(2, 0, 1), N_WIDTH_BUCKETS)
            d_words[lo:hi] = _inside_sums(dS)  # word t is in span (i, j) iff i <= t <= j
            if attention:
                d_relevance[lo:hi], d_values[lo:hi] = bp_mean(dS)
        model.inc_grad("U", (S1.T @ d_T_all).reshape(U.shape))
        model.inc_grad("width", d_Wd)
        model.inc_grad("content", X.T @ d_words)
        dX = bp_views([d_T_all @ U2.T, d_E1]) + d_words @ Wc.T
        if attention:
            model.inc_grad("attend", X.T @ d_relevance)
            model.inc_grad("pooled", X.T @ d_values)
            dX += d_relevance @ Wa.T + d_values @ Wp.T
        return [dX[offsets[i]:offsets[i + 1]] for i in range(len(sizes))]

    return outputs, backprop
