"""The encoder part that the scorers share: a tok2vec sublayer and an
optional BiLSTM over each sentence (refs "tok2vec" and "context")."""
from __future__ import annotations

from typing import Optional, Sequence

from thinc.api import Model

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
