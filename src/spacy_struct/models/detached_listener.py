"""`spacy_struct.DetachedListener.v1`: a shared tok2vec's vectors, read by a
component that sends it no gradient.

A component that listens to the pipeline's shared tok2vec pays nothing
for its words' vectors at prediction time (the tok2vec has run already),
but in training its loss pulls those vectors its way. For a senter before
a parser that pull costs the parser LAS (docs/results/parse.md), and a
tok2vec of the senter's own costs 12 to 14% of the raw-text pipeline's
time even at 64 wide and 2 deep (the wide EWT config's is 96 x 4). Read through this layer, the senter
learns from the parser's vectors as they are and leaves them to the
parser, and costs only its own layers.

The listener inside stays spaCy's `Tok2VecListener`, so the tok2vec finds
and feeds it. Its backprop is still called, with zeros: the tok2vec
updates when its last listener reports, and this one may be the last.
The tok2vec should be frozen or trained by another listener: with this one
alone, an optimizer with weight decay would still shrink its weights.
`nlp.replace_listeners` is not supported (spaCy would write the tok2vec's
config over this layer's, and the saved pipeline would not load): the
layer raises an error when it finds its listener replaced.
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

    width: the upstream tok2vec's output width (checked on every batch).
    upstream: the name of the tok2vec component to listen to.
    projection: if > 0, the vectors are mapped linearly to this many
        columns (trained with the component), so that the layers after
        them work at a smaller width; 0 gives them as they are.
    """
    listener = Tok2VecListener(upstream_name=upstream, width=width)
    detached = Model("detached-listener", _forward, layers=[listener], dims={"nO": width},
                     attrs={"upstream": upstream})
    if not projection:
        return detached
    return chain(detached, with_array(Linear(nO=projection, nI=width)))


def _forward(model: Model, docs: List[Doc], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    listener = model.layers[0]
    if listener.name != "tok2vec-listener":
        raise ValueError("DetachedListener: its listener was replaced by a model of its own "
                         "(nlp.replace_listeners), which this layer does not support; keep the shared "
                         "tok2vec, or give the component a tok2vec of its own in its config")
    vectors, backprop_listener = listener(docs, is_train)
    width = model.get_dim("nO")
    for doc, array in zip(docs, vectors):
        if array.shape[1] != width:
            raise ValueError(f"DetachedListener: the tok2vec {model.attrs['upstream']!r} gives vectors of "
                             f"{array.shape[1]} columns, but the layer's width is {width}: set its `width` "
                             f"to the tok2vec's output width (doc: {doc.text[:40]!r})")

    def backprop(d_vectors: List[Floats2d]) -> List[Doc]:
        backprop_listener([model.ops.alloc2f(*d.shape) for d in d_vectors])
        return []

    return vectors, backprop
