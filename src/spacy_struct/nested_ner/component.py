"""The `nested_ner` component: nested entities as a tree over each sentence.

predict: the span scorer gives an (n, n, L) score array per sentence, and CKY
(`structs.spans.LaminarSpans`) returns the best set of labeled spans that
do not cross, nested ones included (Finkel & Manning 2009: the entities are
the constituents of a tree over the sentence). update: the tree-CRF,
structured-margin or local loss of that set (spacy_struct.losses); the
training loop, labels and sentence batching are the shared
`StructuredComponent`'s.

The spans go to `doc.spans[spans_key]`, "sc" by default, as spancat writes
them, so the component is a drop-in replacement; `set_ents` also writes the
outermost ones to `doc.ents`.
"""

import copy
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..models.span_scorer import DEFAULT_SPAN_SCORER_MODEL
from ..pipeline import (
    StructuredComponent, WritesSpans, check_spans_key, component_factory, missing_spans_message, prf_weights,
)
from ..structs.spans import LaminarSpans, first_crossing, outermost

DEFAULT_NESTED_NER_MODEL = copy.deepcopy(DEFAULT_SPAN_SCORER_MODEL)


#: nested_ner's own settings and their defaults (beside SHARED_DEFAULTS)
NESTED_NER_DEFAULTS = {"spans_key": "sc", "set_ents": False, "max_width": 0}


@component_factory("nested_ner", ["doc.spans", "doc.ents"],
                   DEFAULT_NESTED_NER_MODEL, NESTED_NER_DEFAULTS, "spacy_struct.nested_ner_scorer.v1",
                   prf_weights("spans_sc", 1.0, spans_sc_outer_r=None, spans_sc_inner_r=None))
def make_nested_ner(
    nlp: Language, name: str, model: Model,
    spans_key: str, set_ents: bool, max_width: int,
    loss: str, margin_cost: float, max_unsegmented_length: int, max_sentence_length: int,  # SHARED_DEFAULTS
    scorer: Optional[Callable],
) -> "NestedNER":
    """Nested named entities, decoded by CKY as a tree over each sentence.

    spans_key: the `doc.spans` key to read gold spans from and write to.
    set_ents: also write the outermost predicted spans to `doc.ents`.
    loss: "crf" (tree CRF over nested span sets, the default: best on GENIA),
        "margin" (structured hinge with a Hamming cost of `margin_cost` per
        wrong span) or "local" (each span's label on its own); any loss
        registered in spacy_struct.losses that a tree can take (not
        "multilabel_margin").
    max_width: longest span (in tokens) considered, for speed; 0 for no limit.
    max_unsegmented_length, max_sentence_length: how a Doc is cut into the
        sentences CKY runs over (see spacy_struct/pipeline/sentences.py).
    """
    return NestedNER.from_factory(locals())


class NestedNER(WritesSpans, StructuredComponent):
    """Nested entity recognizer: span scores and a CKY decoder."""

    default_name = "nested_ner"
    rule_sentences = False
    own_defaults = NESTED_NER_DEFAULTS
    unsupported_losses = ("multilabel_margin",)

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """spans_key is a non-empty string, max_width an int >= 0, set_ents a bool."""
        check_spans_key(name, settings)
        width = settings["max_width"]
        if isinstance(width, bool) or not isinstance(width, int) or width < 0:
            raise ValueError(f"{name}: max_width must be 0 (no limit) or positive, got {width!r}")
        settings["set_ents"] = bool(settings["set_ents"])

    @property
    def structure(self) -> LaminarSpans:
        """Laminar span sets, up to `max_width` words per span."""
        return LaminarSpans(max_width=self.cfg["max_width"])


    @property
    def missing_labels_message(self) -> str:
        return (
            f"found no spans under doc.spans[{self.spans_key!r}] in the training "
            f"examples; set spans_key to the key your corpus uses"
        )

    # ------------------------------------------------------------- predicting
    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write the entities to `doc.spans[spans_key]` (and the outermost
        ones to `doc.ents` with `set_ents`).

        docs: the docs that were tagged.
        predictions: what `predict` returned for them.
        """
        batch, predicted = predictions
        docs = list(docs)
        labels = self.labels
        for doc, sentences in zip(docs, self.per_doc(batch, predicted, len(docs))):
            rows = sorted(((start + int(s), start + int(e) + 1, int(l)) for start, found in sentences
                           for s, e, l in found), key=lambda r: (r[0], -r[1]))
            spans = [Span(doc, s, e, label=labels[l]) for s, e, l in rows]
            doc.spans[self.spans_key] = SpanGroup(doc, name=self.spans_key, spans=spans)
            if self.cfg["set_ents"]:
                top = outermost([(s, e) for s, e, _ in rows])
                doc.set_ents([spans[i] for i in top], default="outside")

    # ---------------------------------------------------------------- training
    def gold(self, eg: Example, index: int):
        """Sentence ranges of the predicted doc and the gold span rows of each
        (start, end inclusive, label id), in sentence coordinates."""
        key = self.spans_key
        if key not in eg.reference.spans:
            raise self.gold_error(index, eg, missing_spans_message(eg.reference, key))
        gold = eg.get_aligned_spans_y2x(eg.reference.spans[key], allow_overlap=True)
        if len(gold) < len(eg.reference.spans[key]):
            raise self.gold_error(index, eg, (
                f"{len(eg.reference.spans[key]) - len(gold)} gold spans do not align with "
                f"the predicted tokens; train on the corpus's own tokens (gold_preproc = true)"
            ))
        ranges = self.training_ranges(eg)
        rows_per_sent: List[List[Tuple[int, int, int]]] = [[] for _ in ranges]
        limit = self.cfg["max_width"]
        for span in gold:
            label = self.label_id(span.label_, index, eg)
            sent = self.sentence_of(ranges, span.start, span.end - 1, index, eg,
                                    f"gold span {span.text!r} (tokens {span.start}..{span.end - 1})")
            if limit and len(span) > limit:
                self.count_unrepresentable(
                    f"gold spans longer than max_width = {limit} tokens are left out of "
                    f"training, as the decoder cannot predict them (first: {span.text!r} "
                    f"in example {index}); set max_width = 0 to keep them"
                )
                continue
            s0 = ranges[sent][0]
            rows_per_sent[sent].append((span.start - s0, span.end - 1 - s0, label))
        for (s0, _), rows in zip(ranges, rows_per_sent):
            crossing = first_crossing([(s, e + 1) for s, e, _ in rows])
            if crossing is not None:
                (a0, a1), (b0, b1) = crossing
                raise self.gold_error(index, eg, (
                    f"gold spans at tokens {a0 + s0}..{a1 - 1 + s0} and {b0 + s0}..{b1 - 1 + s0} "
                    f"cross, and crossing spans cannot be one tree; convert with "
                    f"`--crossing drop` or remove one of them"
                ))
        golds = [np.array(rows, dtype=np.int64).reshape(-1, 3) for rows in rows_per_sent]
        return ranges, golds

    # ----------------------------------------------------------- initializing
    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        """The span labels under `spans_key` in the examples' reference docs, sorted."""
        return sorted({
            span.label_ for eg in examples for span in eg.reference.spans.get(self.spans_key, [])
        })
