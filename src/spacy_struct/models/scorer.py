"""A scorer is a shared encoder chained with a structure's own head.

`encoder_and_head` does the composition once for every scorer: thinc's
`chain`, an initialization that gives the head the encoder's output width,
and the refs the components read (`tok2vec`, `context`, `output`, ...), so a
component never depends on where in the tree a layer sits.
"""
from __future__ import annotations

from typing import Optional

from thinc.api import Model, chain

from .batch import SentenceBatch


def encoder_and_head(encoder: Model, head: Model) -> Model:
    """`chain(encoder, head)`, with the refs of both lifted to the top.

    encoder: a SentenceBatch to one (n, width) array per sentence
        (`spacy_struct.SentenceEncoder.v1`).
    head: the per-sentence arrays to the structure's scores; its ref
        "output" (if any) is the layer whose nO is the number of labels.
    RETURNS: the scorer, with refs "encoder", "head", and every ref of the
        encoder and of the head; its attrs are the head's.
    """
    model = chain(encoder, head)
    model.init = _init
    model.set_ref("encoder", encoder)
    model.set_ref("head", head)
    for part in (encoder, head):
        for name in part.ref_names:
            if part.has_ref(name):
                model.set_ref(name, part.get_ref(name))
    if not model.has_ref("output"):
        model.set_ref("output", head)
    model.attrs.update(head.attrs)
    return model


def _init(model: Model, X: Optional[SentenceBatch] = None, Y=None) -> Model:
    encoder, head = model.layers
    encoder.initialize(X=X)
    head.set_dim("nI", encoder.get_dim("nO"), force=True)
    head.initialize()
    return model
