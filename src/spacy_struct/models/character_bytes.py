"""spaCy's character embedding with each word's bytes looked up once.

spaCy's `CharacterEmbed` (tok2vec.py) embeds the first and last bytes of
every token's UTF-8 spelling; its inner "charembed" layer asks each doc for
`to_utf8_array`, which encodes every token's string again, a third of the
whole character encoder's time at prediction. `cached_character_embed` is
the same layer (name, dimensions, parameter, output and gradient) that
takes each word's bytes from a table keyed by the word's string hash, and
reads the strings only of words not in it yet. A model trained with either
loads into the other.
"""
from __future__ import annotations

from typing import Dict, List

import numpy as np
from spacy.attrs import ORTH
from spacy.tokens import Doc
from thinc.api import Model
from thinc.types import Floats2d

#: word string hashes -> their byte rows; cleared when it holds this many, so
#: that a long-running process over an open vocabulary stays bounded (a row is
#: a few bytes, so the table stays under about 100 MB)
MAX_CACHED_WORDS = 500_000

#: one table per row width nC; a string hash names the same string in every vocab
_BYTE_ROWS: Dict[int, Dict[int, bytes]] = {}


def utf8_row(text: str, n_bytes: int) -> bytes:
    """The row `Doc.to_utf8_array(nr_char=n_bytes)` gives a token: its UTF-8
    bytes taken from both ends alternately (first, last, second, second to
    last, ...), 255 where the word is shorter."""
    data = text.encode("utf8")
    row = bytearray(b"\xff" * n_bytes)
    j, start, end = 0, 0, len(data) - 1
    while j < n_bytes and start <= end:
        row[j] = data[start]
        start += 1
        j += 1
        if j < n_bytes and start <= end:
            row[j] = data[end]
            end -= 1
            j += 1
    return bytes(row)


def byte_rows(docs: List[Doc], n_bytes: int) -> np.ndarray:
    """(tokens of all docs, n_bytes) uint8: each token's `utf8_row`."""
    if not docs:
        return np.zeros((0, n_bytes), dtype=np.uint8)
    orths = np.concatenate([doc.to_array(ORTH).astype(np.uint64).reshape(-1) for doc in docs])
    distinct, inverse = np.unique(orths, return_inverse=True)
    table = _BYTE_ROWS.setdefault(n_bytes, {})
    if len(table) + len(distinct) > MAX_CACHED_WORDS:
        table.clear()
    # the docs' string stores (usually one vocab), for the words not in the table
    stores = list({id(doc.vocab): doc.vocab.strings for doc in docs}.values())
    rows = []
    for orth in distinct.tolist():
        row = table.get(orth)
        if row is None:
            row = table[orth] = utf8_row(_string_of(orth, stores), n_bytes)
        rows.append(row)
    ids = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(distinct), n_bytes)
    return ids[inverse.reshape(-1)]


def _string_of(orth: int, stores) -> str:
    """The string of a hash in the first of the string stores that holds it."""
    for strings in stores:
        if orth in strings:
            return strings[orth]
    raise KeyError(f"no string for the hash {orth} in the docs' vocabularies")


def cached_character_embed(nM: int, nC: int) -> Model[List[Doc], List[Floats2d]]:
    """spaCy's inner "charembed" layer (nC bytes of each word, nM columns
    each) with the bytes from `byte_rows`."""
    return Model(
        "charembed",
        _forward,
        init=_init,
        dims={"nM": nM, "nC": nC, "nO": nM * nC, "nV": 256},
        params={"E": None},
    )


def _init(model: Model, X=None, Y=None) -> Model:
    """A table of zeros per byte position, as spaCy's layer starts."""
    model.set_param("E", model.ops.alloc3f(model.get_dim("nC"), model.get_dim("nV"), model.get_dim("nM")))
    return model


def _forward(model: Model, docs: List[Doc], is_train: bool):
    E = model.get_param("E")
    nC, nM, nO = model.get_dim("nC"), model.get_dim("nM"), model.get_dim("nO")
    if not docs:
        return [], lambda d_output: []
    ids = byte_rows(docs, nC)
    columns = np.arange(nC)
    # output[w, j] = E[j, ids[w, j]]: byte position j has its own table
    vectors = E[columns, ids].reshape(len(ids), nO)
    splits = np.cumsum([len(doc) for doc in docs])[:-1]
    output = np.split(vectors, splits)

    def backprop(d_output: List[Floats2d]):
        # spaCy's update, doc by doc: a buffered `+=`, so where one doc has
        # the same byte at the same position in several words only one of
        # their gradients counts. Kept as it is, so that a model trains
        # exactly as with spaCy's layer.
        dE = model.ops.alloc(E.shape, dtype=E.dtype)
        for doc_ids, d_doc in zip(np.split(ids, splits), d_output):
            dE[columns, doc_ids[:, columns]] += d_doc.reshape(len(doc_ids), nC, nM)[:, columns]
        model.inc_grad("E", dE)
        return []

    return output, backprop


def with_cached_bytes(character_embed: Model) -> Model:
    """spaCy's `CharacterEmbed` model with its "charembed" layer replaced by
    `cached_character_embed` of the same sizes."""
    for node in list(character_embed.walk()):
        if node.name == "charembed":
            character_embed.replace_node(node, cached_character_embed(node.get_dim("nM"), node.get_dim("nC")))
    return character_embed
