"""`spacy_struct.SentenceEncoder.v1`: one vector per word of each sentence.

Every scorer reads the same thing: for each sentence a structure is built
over, an (n, width) array of word vectors. The encoder makes it, as a chain
of small layers:

    docs ──► tok2vec (+ characters) ──► per sentence ──► BiLSTM (optional)
    SentenceBatch                         List[(n, width)]   List[(n, context_width)]

- tok2vec: a listener to share a `tok2vec` component, or a layer of its own.
  A shared component stays exactly what the other components (and a baseline
  pipeline) see: what follows is the scorer's own.
- characters: a character encoder beside the tok2vec (spaCy's
  CharacterEmbed: the first and last four bytes of each word and its
  lowercase form). In an inflected language a word's function is written in
  its ending, and a shared tok2vec sees only a few hashed affixes.
- context: a BiLSTM over each sentence, which gives a first-order score (two
  words, one span) the sentence context that the CPU tok2vec encoders,
  seeing only a few words around each token, leave out. It runs per
  sentence: structures never cross sentences, and many short sequences
  batch far better than a few long docs.

A scorer is `chain(encoder, head)`; the head maps the list of sentence
arrays to its scores (arcs, spans, segment pairs).
"""
from __future__ import annotations

from typing import Callable, List, Optional, Tuple

from spacy.ml.models.tok2vec import CharacterEmbed
from spacy.util import registry
from thinc.api import Config, Model, chain, concatenate
from thinc.types import Floats2d

from .batch import SentenceBatch
from .bilstm import BiLSTM
from .character_bytes import with_cached_bytes
from .dropout import check_dropout

# The tok2vec a component gets when its config names none: spaCy's
# efficiency-config CNN, appended to each scorer's default config.
DEFAULT_TOK2VEC_CONFIG = """
[model.tok2vec]
@architectures = "spacy.HashEmbedCNN.v2"
pretrained_vectors = null
width = 96
depth = 4
embed_size = 2000
window_size = 1
maxout_pieces = 3
subword_features = true
"""



def default_model_config(model_block: str) -> Config:
    """A component's default model: its `[model]` block, as a config string,
    on the default tok2vec (`DEFAULT_TOK2VEC_CONFIG`).

    model_block: the "[model]" section with the architecture and its settings.
    RETURNS: the "model" part of the parsed config, for `default_config`.
    """
    return Config().from_str(model_block + DEFAULT_TOK2VEC_CONFIG)["model"]


@registry.architectures("spacy_struct.SentenceEncoder.v1")
def build_sentence_encoder(
    tok2vec: Model,
    characters: int = 0,
    context_width: int = 0,
    context_depth: int = 1,
    dropout: float = 0.0,
) -> Model[SentenceBatch, List[Floats2d]]:
    """Word vectors per sentence: tok2vec, optional characters, optional BiLSTM.

    tok2vec: docs to one vector per token.
    characters: width of the character encoder beside the tok2vec; 0 for none.
    context_width: output width of a BiLSTM (half per direction) over each
        sentence; 0 for none.
    context_depth: its number of layers.
    dropout: on the BiLSTM's inputs in training (the scorer's own rate).
    RETURNS: a Model from a SentenceBatch to one (n, width) float32 array per
        sentence, with refs "tok2vec" (the word layer, characters included)
        and, with a BiLSTM, "context".
    """
    if context_width < 0 or context_width % 2:
        raise ValueError(f"context_width must be 0 or a positive even number, not {context_width}")
    if context_width and context_depth < 1:
        raise ValueError(f"context_depth must be at least 1, not {context_depth}")
    check_dropout(dropout)
    words = with_characters(tok2vec, characters)
    encoder = per_sentence(words)
    if context_width:
        context = BiLSTM(context_width, depth=context_depth, dropout=dropout)
        encoder = chain(encoder, context)
        encoder.init = _init_with_context
        encoder.set_ref("context", context)
    encoder.set_ref("tok2vec", words)
    return encoder


def with_characters(tok2vec: Model, width: int) -> Model:
    """`tok2vec` with a character encoder of `width` more columns beside
    it; `tok2vec` itself if width is 0."""
    if width < 0:
        raise ValueError(f"characters must be 0 or a positive width, not {width}")
    if not width:
        return tok2vec
    return concatenate(tok2vec, with_cached_bytes(CharacterEmbed(
        width=width, rows=5000, nM=16, nC=8, include_static_vectors=False
    )))


def per_sentence(words: Model) -> Model[SentenceBatch, List[Floats2d]]:
    """Run `words` over the batch's docs and cut its output into sentences;
    the backward pass adds each sentence's gradient back into its doc."""
    return Model(
        "per_sentence",
        _per_sentence_forward,
        init=_per_sentence_init,
        layers=[words],
        dims={"nO": None},
    )


def _per_sentence_init(model: Model, X: Optional[SentenceBatch] = None, Y=None) -> Model:
    words = model.layers[0]
    words.initialize(X=X.docs if X is not None else None)
    model.set_dim("nO", words.get_dim("nO"))
    return model


def _per_sentence_forward(
    model: Model, batch: SentenceBatch, is_train: bool
) -> Tuple[List[Floats2d], Callable]:
    words = model.layers[0]
    ops = model.ops
    tokvecs, bp_words = words(batch.docs, is_train)
    tokvecs = [ops.asarray2f(t, dtype="float32") for t in tokvecs]
    sents = [tokvecs[d][s:e] for d, s, e in batch.sents]

    def backprop(d_sents: List[Floats2d]) -> SentenceBatch:
        d_tokvecs = [ops.alloc2f(*t.shape) for t in tokvecs]
        for (d, s, e), grad in zip(batch.sents, d_sents):
            d_tokvecs[d][s:e] += grad
        bp_words(d_tokvecs)
        return batch

    return sents, backprop


def _init_with_context(model: Model, X: Optional[SentenceBatch] = None, Y=None) -> Model:
    first, context = model.layers
    first.initialize(X=X)
    context.set_dim("nI", first.get_dim("nO"))
    context.initialize()
    model.set_dim("nO", context.get_dim("nO"))
    return model
