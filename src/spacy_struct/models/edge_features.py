"""`spacy_struct.EdgeFeatures.v1`: the paper's own first-order arc model.

A sparse linear model over the hashed edge feature templates of McDonald,
Crammer & Pereira (2005), see `_edge_features.pyx`: words, POS tags,
in-between and surrounding POS, all conjoined with direction and distance,
with 5-character prefix back-off. POS is the token's fine tag (`tag_`, or
`pos_` when there is none): gold in training, a tagger's at run time. It
trains fast without a neural encoder.

The labeler needs a vector per word; here it is a small hash embedding of
the word's norm, prefix, suffix and tag, since the sparse model has none.
"""
from __future__ import annotations

from typing import List

import numpy as np
from spacy.util import registry
from thinc.api import Model

from ._edge_features import edge_grads, edge_scores
from .arc_scorer import ParseScores
from .batch import SentenceBatch, with_root, without_root
from .edge_labeler import build_edge_labeler, size_edge_labeler
from .encoder import per_sentence

_ROOT_ID = 0x524F4F54


def node_features(batch: SentenceBatch):
    """Per node (root first in each sentence) word, POS and prefix ids."""
    words, tags, prefixes, long_word, offsets = [], [], [], [], [0]
    for doc_i, start, end in batch.sents:
        doc = batch.docs[doc_i]
        words.append(_ROOT_ID)
        tags.append(_ROOT_ID)
        prefixes.append(_ROOT_ID)
        long_word.append(0)
        for token in doc[start:end]:
            norm = token.lower_
            words.append(token.lower)
            tags.append(token.tag if token.tag else token.pos)
            if len(norm) > 5:
                prefixes.append(doc.vocab.strings.add(norm[:5]))
                long_word.append(1)
            else:
                prefixes.append(token.lower)
                long_word.append(0)
        offsets.append(offsets[-1] + end - start + 1)
    as64 = lambda xs: np.ascontiguousarray(np.array(xs, dtype=np.uint64).astype(np.int64))
    return (as64(words), as64(tags), as64(prefixes),
            np.asarray(long_word, dtype=np.uint8), np.asarray(offsets, dtype=np.int64))


@registry.architectures("spacy_struct.EdgeFeatures.v1")
def build_edge_features(
    n_bits: int = 22, label_embed: Model | None = None, label_width: int = 64
) -> Model[SentenceBatch, ParseScores]:
    """Sparse edge-feature arc scores (McDonald et al. 2005) with an edge labeler.

    n_bits: the hashed weight vector has 2^n_bits entries.
    label_embed: docs to a vector per token, for the labeler (default: a
        hash embedding of NORM, PREFIX, SUFFIX and TAG).
    label_width: size of the labeler's dependent and head vectors.
    """
    if not 10 <= n_bits <= 28:
        raise ValueError(f"EdgeFeatures: n_bits must be between 10 and 28, got {n_bits}")
    if label_embed is None:
        from spacy.ml.models.tok2vec import MultiHashEmbed

        label_embed = MultiHashEmbed(
            width=64, attrs=["NORM", "PREFIX", "SUFFIX", "TAG"],
            rows=[5000, 1000, 2500, 500], include_static_vectors=False,
        )
    labeler = build_edge_labeler()
    words = per_sentence(label_embed)
    return Model(
        "edge_features",
        _forward,
        init=_init,
        layers=[words, labeler],
        refs={"label_embed": label_embed, "words": words, "labeler": labeler, "output": labeler},
        dims={"n_bits": n_bits, "label_width": label_width, "nI": None},
        params={"weights": None, "root": None, "W": None, "b": None},
        attrs={"needs_tags": True},
    )


def _init(model: Model, X: SentenceBatch | None = None, Y=None) -> Model:
    words = model.get_ref("words")
    words.initialize(X=X)
    width = words.get_dim("nO")
    k = model.get_dim("label_width")
    model.set_dim("nI", width)
    rng = np.random.default_rng(0)
    limit = np.sqrt(6.0 / (width + 2 * k))
    model.set_param("weights", np.zeros((1 << model.get_dim("n_bits"),), dtype=np.float32))
    model.set_param("root", (rng.standard_normal(width) * 0.1).astype(np.float32))
    model.set_param("W", rng.uniform(-limit, limit, (width, 2 * k)).astype(np.float32))
    model.set_param("b", np.zeros((2 * k,), dtype=np.float32))
    size_edge_labeler(model, k)
    return model


def _forward(model: Model, batch: SentenceBatch, is_train: bool):
    weights = model.get_param("weights")
    word, tag, pre, long_word, offsets = node_features(batch)
    flat = np.zeros(int(sum((offsets[1:] - offsets[:-1]) ** 2)), dtype=np.float64)
    edge_scores(word, tag, pre, long_word, offsets, weights, flat)
    arcs: List[np.ndarray] = []
    pos = 0
    for i in range(len(batch.sents)):
        n1 = int(offsets[i + 1] - offsets[i])
        arcs.append(flat[pos:pos + n1 * n1].reshape(n1, n1).astype(np.float32))
        pos += n1 * n1

    sent_vecs, bp_words = model.get_ref("words")(batch, is_train)
    root, W, b = model.get_param("root"), model.get_param("W"), model.get_param("b")
    k = model.get_dim("label_width")
    X, _ = with_root(sent_vecs, root)
    pre_act = X @ W + b
    act = np.maximum(pre_act, 0)
    label_dep = [act[offsets[i]:offsets[i + 1], :k] for i in range(len(batch.sents))]
    label_head = [act[offsets[i]:offsets[i + 1], k:] for i in range(len(batch.sents))]

    def backprop(d: ParseScores):
        d_flat = np.concatenate([g.astype(np.float64).ravel() for g in d.arcs])
        grad = np.zeros_like(weights)
        edge_grads(word, tag, pre, long_word, offsets, np.ascontiguousarray(d_flat), grad)
        model.inc_grad("weights", grad)
        d_act = np.concatenate([np.concatenate([dd, dh], axis=1)
                                for dd, dh in zip(d.label_dep, d.label_head)])
        d_pre = d_act * (pre_act > 0)
        model.inc_grad("W", X.T @ d_pre)
        model.inc_grad("b", d_pre.sum(0))
        d_sents, d_root = without_root(d_pre @ W.T, offsets)
        model.inc_grad("root", d_root)
        return bp_words(d_sents)

    return ParseScores(arcs, label_dep, label_head), backprop
