"""`spacy_struct.DetachedTok2Vec.v1`: read a shared tok2vec without training it.

A helper task on the parser's tok2vec (a `senter` before `mst_parser`)
pulls the shared vectors towards its own loss: on UD English-EWT a
`senter` listening to the parser's tok2vec cost the parser 2 LAS, and a
`senter` with a tok2vec of its own costs a second tok2vec pass. This layer
gives the helper the shared vectors, which the parser's gradient shapes,
and sends none of the helper's gradient back: one tok2vec pass, and a
tok2vec trained for the parser alone. A small encoder of its own (a
maxout window layer) lets the helper adapt the vectors it reads.
"""
from __future__ import annotations

from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Maxout, Model, chain, expand_window, with_array
from thinc.types import Floats2d


@registry.architectures("spacy_struct.DetachedTok2Vec.v1")
def build_detached_tok2vec(
    tok2vec: Model[List[Doc], List[Floats2d]], width: int = 96, window_size: int = 1
) -> Model[List[Doc], List[Floats2d]]:
    """The vectors of `tok2vec` (a `spacy.Tok2VecListener.v1`) with no
    gradient sent back to it, through one maxout layer over a window of
    words that trains with the component.

    tok2vec: the listener to the shared tok2vec component.
    width: the output width (the maxout layer's).
    window_size: words on each side the maxout layer sees.
    RETURNS: a Model from docs to one (n, width) array per doc.
    """
    if width < 1 or window_size < 0:
        raise ValueError(
            f"DetachedTok2Vec: width must be positive and window_size >= 0, got "
            f"{width} and {window_size}"
        )
    detached = Model(
        "detached", _detached_forward, layers=[tok2vec],
        dims={"nO": tok2vec.get_dim("nO") if tok2vec.has_dim("nO") else None},
    )
    encode = with_array(chain(
        expand_window(window_size=window_size),
        Maxout(nO=width, nP=3, dropout=0.0, normalize=True),
    ))
    return chain(detached, encode)


def _detached_forward(model: Model, docs: List[Doc], is_train: bool):
    vectors, backprop_listener = model.layers[0](docs, is_train)

    def backprop(d_vectors: List[Floats2d]) -> List[Doc]:
        # The listener must still be called back: the last listener of a
        # tok2vec is what runs the tok2vec's own update in spaCy. It gets
        # zeros, so the update carries only the other listeners' gradient.
        backprop_listener([model.ops.alloc2f(*d.shape) for d in d_vectors])
        return []

    return vectors, backprop
