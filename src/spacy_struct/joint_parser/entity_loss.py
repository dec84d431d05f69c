"""A second loss on the entity columns alone (`entity_loss_weight`).

With `factor_labels` every entity node of a type, phrase or inserted node,
scores through one "entity" column of the scorer (label_parts.py). In the
tree CRF those columns learn only as parts of whole-tree labels, whose
probability is shared with every bracket of the sentence: a protein node
competes with the parse around it. `nested_ner` trains the same kind of
scores as a set of nested entities on their own and finds more of them.

This loss reads the entity columns as `nested_ner` reads its scores, one
(n, n, types) chart of laminar spans, and adds their tree CRF (log Z of
all nested entity sets minus the gold set's score), weighted, to the
joint loss. The columns then learn from every gold entity as an entity,
the ones that cross a bracket of the tree included, which the joint chart
must leave out. It is Finkel & Manning's (2010) hierarchical joint
learning in the form this model allows: the joint model and an entity-only
model sharing their entity parameters, trained on the same sentences.
Decoding is unchanged: the tree, with its entity nodes.

Gold entities of one sentence that share their words with another entity
(a second type) or cross another entity cannot be one laminar set; they
are left out of this loss, first placed first (outer, then earlier), as
the tree leaves them out (`JoinReport.same_span`).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from ..losses import get_loss
from ..structs.spans import LaminarSpans, crosses
from .label_parts import LabelParts

Entity = Tuple[int, int, str]  # start, end exclusive, type


def laminar_entities(entities: Sequence[Entity]) -> List[Entity]:
    """The entities that can be one nested set: outer first, each kept
    unless its words are a kept entity's or it crosses one."""
    kept: List[Entity] = []
    for start, end, label in sorted(set(entities), key=lambda x: (x[0], -x[1], x[2])):
        if any((s, e) == (start, end) or crosses((s, e), (start, end)) for s, e, _ in kept):
            continue
        kept.append((start, end, label))
    return kept


class EntityColumns:
    """The entity columns of a factored scorer, and their nested-set loss.

    parts: the component's LabelParts; its ("entity", type) parts are the
        columns read.
    """

    structure = LaminarSpans()

    def __init__(self, parts: LabelParts) -> None:
        found = [(k, name) for k, (kind, name) in enumerate(parts.parts) if kind == "entity"]
        self.columns = np.array([k for k, _ in found], dtype=np.int64)
        self.types = tuple(name for _, name in found)
        self._type_ids = {name: i for i, name in enumerate(self.types)}

    def gold_rows(self, entities: Sequence[Entity]) -> np.ndarray:
        """(start, end inclusive, type id) rows of the laminar gold entities
        of one sentence (sentence coordinates); an unknown type raises
        KeyError, as the chart label it belongs to is unknown too."""
        rows = [(s, e - 1, self._type_ids[t]) for s, e, t in laminar_entities(entities)]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def loss(
        self, part_scores: Sequence[np.ndarray], golds: Sequence[np.ndarray]
    ) -> Tuple[float, List[np.ndarray]]:
        """The tree CRF of the entity columns as nested entity sets.

        part_scores: the scorer's (n, n, parts) output per sentence.
        golds: `gold_rows` per sentence.
        RETURNS: (summed loss, the (n, n, parts) gradient per sentence,
            zero outside the entity columns).
        """
        charts = [np.ascontiguousarray(s[:, :, self.columns], dtype=np.float64) for s in part_scores]
        value, grads = get_loss("crf")(self.structure, charts, list(golds))
        out = []
        for scores, grad in zip(part_scores, grads):
            full = np.zeros(scores.shape, dtype=np.float64)
            full[:, :, self.columns] = grad
            out.append(full)
        return float(value), out
