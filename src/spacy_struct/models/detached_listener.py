"""`spacy_struct.DetachedListener.v1`: a shared tok2vec's vectors, read by a
component that sends it no gradient.

A component that listens to the pipeline's shared tok2vec pays nothing
for its words' vectors at prediction time (the tok2vec has run already),
but in training its loss pulls those vectors its way. For a senter before
a parser that pull costs the parser: on English-EWT a senter on the shared
tok2vec cost `mst_parser` 2.0 LAS from raw text, so the EWT configs gave
the senter a tok2vec of its own, which costs about a fifth of the raw-text
pipeline's time (docs/results/parse.md). Read through this layer, the
senter learns from the parser's vectors as they are and leaves them to the
parser: the parser trains as if the senter were not there, and the senter
costs only its own layers.

The listener inside stays spaCy's `Tok2VecListener`, so spaCy finds it
(`nlp.replace_listeners`, the tok2vec's list of listeners) and feeds it.
Its backprop is still called, with zeros: the tok2vec updates when its
last listener reports, and this one may be the last.
"""
from __future__ import annotations

from typing import Callable, List, Tuple

from spacy.ml.models.tok2vec import Tok2VecListener
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Model, chain, with_array
from thinc.types import Floats2d


@registry.architectures("spacy_struct.DetachedListener.v1")
def build_detached_listener(width: int, upstream: str = "*", projection: int = 0) -> Model[List[Doc], List[Floats2d]]:
    """The vectors of the tok2vec component `upstream` ("*": any), one
    array per doc, with no gradient sent back to it.

    width: the upstream tok2vec's output width.
    upstream: the name of the tok2vec component to listen to.
    projection: if > 0, the vectors are mapped linearly to this many
        columns (trained with the component), so that the layers after
        them work at a smaller width; 0 gives them as they are.
    """
    listener = Tok2VecListener(upstream_name=upstream, width=width)
    detached = Model("detached-listener", _forward, layers=[listener], dims={"nO": width})
    if not projection:
        return detached
    return chain(detached, with_array(Linear(nO=projection, nI=width)))


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    listener = model.layers[0]
    vectors, backprop_listener = listener(docs, is_train)

    def backprop(d_vectors: List[Floats2d]) -> List[Doc]:
        backprop_listener([model.ops.alloc2f(*d.shape) for d in d_vectors])
        return []

    return vectors, backprop
