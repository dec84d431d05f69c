"""The encoder part that the scorers share: a tok2vec sublayer (with an
optional character encoder beside it) and an optional BiLSTM over each
sentence (refs "tok2vec" and "context")."""
from __future__ import annotations

from typing import Optional, Sequence

from spacy.ml.models.tok2vec import CharacterEmbed
from thinc.api import Model, concatenate

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


def with_characters(tok2vec: Model, width: int) -> Model:
    """`tok2vec` with a character encoder of the scorer's own beside it
    (spaCy's CharacterEmbed: the first and last four bytes of each word and
    its lowercase form), `width` more columns; `tok2vec` itself if width is
    0. A shared tok2vec component stays what the other components see."""
    if width < 0:
        raise ValueError(f"characters must be 0 or a positive width, not {width}")
    if not width:
        return tok2vec
    return concatenate(tok2vec, CharacterEmbed(
        width=width, rows=5000, nM=16, nC=8, include_static_vectors=False
    ))


def initialize_encoder(model: Model, docs: Optional[Sequence] = None) -> int:
    """Initialize the scorer's tok2vec and context layers; return the width
    of the vectors the scorer reads (the context's output, if it has one)."""
    tok2vec = model.get_ref("tok2vec")
    if docs is not None:
        tok2vec.initialize(X=list(docs))
    else:
        tok2vec.initialize()
    width = tok2vec.get_dim("nO")
    if model.has_ref("context"):
        context = model.get_ref("context")
        context.set_dim("nI", width)
        context.initialize()
        width = context.get_dim("nO")
    model.set_dim("nI", width)
    return width
