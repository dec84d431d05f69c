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

Gold entities of one sentence that cross another one cannot be in one
nested set with it; they are left out of this loss, the outer (then the
earlier) one kept, as `join_entities` keeps it in the tree (where the
other is counted as crossing). Two types on the same words stay, as in
`nested_ner`: the span stands for either (`LaminarSpans`). An entity of a
type that no chart label has (it only ever crossed a bracket) has no
column; it is returned to the caller to count.
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from ..losses import get_loss
from ..structs.spans import LaminarSpans, crosses
from ..annotations.joint import Entity, outer_first
from .label_parts import LabelParts


def laminar_entities(entities: Sequence[Entity]) -> List[Entity]:
    """The entities that can be one nested set: outer first, each kept
    unless it crosses one kept before it (same words, another type: kept)."""
    kept: List[Entity] = []
    for start, end, label in outer_first(entities):
        if not any(crosses((s, e), (start, end)) for s, e, _ in kept):
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

    def gold_rows(self, entities: Sequence[Entity]) -> Tuple[np.ndarray, List[Entity]]:
        """The gold of one sentence's entities (sentence coordinates).

        RETURNS: ((start, end inclusive, type id) rows of its laminar
            entities, the entities among them whose type has no column).
        """
        rows, unknown = [], []
        for s, e, t in laminar_entities(entities):
            if t in self._type_ids:
                rows.append((s, e - 1, self._type_ids[t]))
            else:
                unknown.append((s, e, t))
        return np.array(rows, dtype=np.int64).reshape(-1, 3), unknown

    def loss(
        self, part_scores: Sequence[np.ndarray], golds: Sequence[np.ndarray]
    ) -> Tuple[float, List[np.ndarray]]:
        """The tree CRF of the entity columns as nested entity sets.

        part_scores: the scorer's (n, n, parts) output per sentence.
        golds: the rows of `gold_rows` per sentence.
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
