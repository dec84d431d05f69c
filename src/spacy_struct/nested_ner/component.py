"""The `nested_ner` component: nested entities as a tree over each sentence.

predict: the span scorer gives an (n, n, L) score array per sentence, and CKY
(`structs.spans.laminar_argmax`) returns the best set of labeled spans that
do not cross, nested ones included (Finkel & Manning 2009: the entities are
the constituents of a tree over the sentence). update: the tree-CRF or
structured-margin loss of that set (losses.py).

The spans go to `doc.spans[spans_key]`, "sc" by default, as spancat writes
them, so the component is a drop-in replacement; `set_ents` also writes the
outermost ones to `doc.ents`.
"""

import warnings
from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..convert.spans_jsonl import crosses
from ..layers import DEFAULT_TOK2VEC_CONFIG
from ..sentences import check_sentence_limits, sentence_ranges
from ..structs import spans as span_structs
from .losses import LOSSES, get_loss_function
from .span_scorer import SpanBatch

DEFAULT_NESTED_NER_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_struct.SpanScorer.v1"
hidden_width = 150
dropout = 0.33
context_width = 256
context_depth = 1
attention = true
"""
    + DEFAULT_TOK2VEC_CONFIG
)["model"]


@Language.factory(
    "nested_ner",
    assigns=["doc.spans", "doc.ents"],
    default_config={
        "model": DEFAULT_NESTED_NER_MODEL,
        "spans_key": "sc",
        "set_ents": False,
        "loss": "crf",
        "margin_cost": 1.0,
        "max_width": 0,
        "max_unsegmented_length": 200,
        "max_sentence_length": 512,
        "scorer": {"@scorers": "spacy_struct.nested_ner_scorer.v1"},
    },
    default_score_weights={
        "spans_sc_f": 1.0,
        "spans_sc_p": 0.0,
        "spans_sc_r": 0.0,
        "spans_sc_outer_r": None,
        "spans_sc_inner_r": None,
    },
)
def make_nested_ner(
    nlp: Language,
    name: str,
    model: Model,
    spans_key: str,
    set_ents: bool,
    loss: str,
    margin_cost: float,
    max_width: int,
    max_unsegmented_length: int,
    max_sentence_length: int,
    scorer: Optional[Callable],
) -> "NestedNER":
    """Nested named entities, decoded by CKY as a tree over each sentence.

    spans_key: the `doc.spans` key to read gold spans from and write to.
    set_ents: also write the outermost predicted spans to `doc.ents`.
    loss: "crf" (tree CRF over nested span sets) or "margin" (structured
        hinge with a Hamming cost of `margin_cost` per wrong span).
    max_width: longest span (in tokens) considered, for speed; 0 for no limit.
    max_unsegmented_length, max_sentence_length: how a Doc is cut into the
        sentences CKY runs over (see spacy_struct/sentences.py).
    """
    return NestedNER(
        nlp.vocab, model, name, spans_key=spans_key, set_ents=set_ents, loss=loss,
        margin_cost=margin_cost, max_width=max_width,
        max_unsegmented_length=max_unsegmented_length,
        max_sentence_length=max_sentence_length, scorer=scorer,
    )


class NestedNER(TrainablePipe):
    """Nested entity recognizer: span scores and a CKY decoder."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "nested_ner",
        *,
        spans_key: str = "sc",
        set_ents: bool = False,
        loss: str = "crf",
        margin_cost: float = 1.0,
        max_width: int = 0,
        max_unsegmented_length: int = 200,
        max_sentence_length: int = 512,
        scorer: Optional[Callable] = None,
    ) -> None:
        if loss not in LOSSES:
            raise ValueError(f"nested_ner: loss must be one of {LOSSES}, got {loss!r}")
        if not isinstance(spans_key, str) or not spans_key:
            raise ValueError(f"nested_ner: spans_key must be a non-empty string, got {spans_key!r}")
        if not np.isfinite(margin_cost) or margin_cost < 0:
            raise ValueError(f"nested_ner: margin_cost must be >= 0, got {margin_cost!r}")
        if not isinstance(max_width, int) or max_width < 0:
            raise ValueError(f"nested_ner: max_width must be 0 (no limit) or positive, got {max_width!r}")
        check_sentence_limits("nested_ner", max_unsegmented_length, max_sentence_length)
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, object] = {
            "labels": [],
            "spans_key": spans_key,
            "set_ents": bool(set_ents),
            "loss": loss,
            "margin_cost": float(margin_cost),
            "max_width": max_width,
            "max_unsegmented_length": max_unsegmented_length,
            "max_sentence_length": max_sentence_length,
        }
        self._too_wide = 0

    # ------------------------------------------------------------------ labels
    @property
    def labels(self) -> Tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    @property
    def spans_key(self) -> str:
        return str(self.cfg["spans_key"])

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label:
            raise ValueError(f"nested_ner: a label must be a non-empty string, got {label!r}")
        if label in self.cfg["labels"]:
            return 0
        if self.model.has_param("U"):
            raise ValueError(
                f"nested_ner: cannot add label {label!r} to a component that is already "
                f"initialized; initialize it again with data that has the label"
            )
        self.cfg["labels"].append(label)
        return 1

    # ------------------------------------------------------------- sentences
    def _ranges(self, doc: Doc) -> List[Tuple[int, int]]:
        return sentence_ranges(
            doc, self.cfg["max_unsegmented_length"], self.cfg["max_sentence_length"]
        )

    def _batch(self, docs: Sequence[Doc]) -> SpanBatch:
        sents = [(i, s, e) for i, doc in enumerate(docs) for s, e in self._ranges(doc)]
        return SpanBatch(list(docs), sents)

    def _masks(self, batch: SpanBatch) -> List[Optional[np.ndarray]]:
        """Allowed spans per sentence: all of them, or those up to max_width."""
        limit = self.cfg["max_width"]
        if not limit:
            return [None] * len(batch.sents)
        masks = []
        for _, s, e in batch.sents:
            width = np.arange(e - s)[None, :] - np.arange(e - s)[:, None] + 1
            masks.append(width <= limit)
        return masks

    # ------------------------------------------------------------- predicting
    def predict(self, docs: Iterable[Doc]):
        """(batch, predicted (start, end inclusive, label) rows per sentence)."""
        docs = list(docs)
        if not self.labels:
            raise ValueError("nested_ner: the component has no labels; initialize it first")
        batch = self._batch(docs)
        if not batch.sents:
            return batch, []
        scores = self.model.predict(batch)
        results = span_structs.laminar_argmax(
            [s.astype(np.float64) for s in scores], self._masks(batch)
        )
        return batch, [spans for spans, _ in results]

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        batch, predicted = predictions
        docs = list(docs)
        found: List[List[Tuple[int, int, int]]] = [[] for _ in docs]
        for (doc_i, start, _), rows in zip(batch.sents, predicted):
            found[doc_i].extend((start + int(s), start + int(e) + 1, int(l)) for s, e, l in rows)
        labels = self.labels
        for doc, rows in zip(docs, found):
            rows.sort(key=lambda r: (r[0], -r[1]))
            spans = [Span(doc, s, e, label=labels[l]) for s, e, l in rows]
            doc.spans[self.spans_key] = SpanGroup(doc, name=self.spans_key, spans=spans)
            if self.cfg["set_ents"]:
                doc.set_ents(outermost(spans), default="outside")

    # ---------------------------------------------------------------- training
    def _gold(self, eg: Example, index: int):
        """Sentence ranges of the predicted doc and the gold span rows of each
        (start, end inclusive, label id), in sentence coordinates."""
        key = self.spans_key
        if key not in eg.reference.spans:
            return [], []
        label_index = {label: i for i, label in enumerate(self.labels)}
        gold = eg.get_aligned_spans_y2x(eg.reference.spans[key], allow_overlap=True)
        if len(gold) < len(eg.reference.spans[key]):
            raise ValueError(
                f"nested_ner: example {index} ({_preview(eg)}): "
                f"{len(eg.reference.spans[key]) - len(gold)} gold spans do not align with the "
                f"predicted tokens; train on the corpus's own tokens (gold_preproc = true)"
            )
        ranges = self._ranges(eg.predicted)
        rows_per_sent: List[List[Tuple[int, int, int]]] = [[] for _ in ranges]
        limit = self.cfg["max_width"]
        for span in gold:
            if span.label_ not in label_index:
                raise ValueError(
                    f"nested_ner: example {index} ({_preview(eg)}): label {span.label_!r} "
                    f"is not one of the component's labels {list(self.labels)}; initialize "
                    f"it with data that contains it"
                )
            sent = next((k for k, (s, e) in enumerate(ranges) if s <= span.start and span.end <= e), None)
            if sent is None:
                raise ValueError(
                    f"nested_ner: example {index} ({_preview(eg)}): gold span "
                    f"{span.text!r} (tokens {span.start}..{span.end - 1}) crosses a sentence "
                    f"boundary; entities are decoded per sentence"
                )
            if limit and len(span) > limit:
                if not self._too_wide:
                    warnings.warn(
                        f"nested_ner: gold spans longer than max_width = {limit} tokens are "
                        f"left out of training, as the decoder cannot predict them (first: "
                        f"{span.text!r} in example {index}); set max_width = 0 to keep them"
                    )
                self._too_wide += 1
                continue
            s0 = ranges[sent][0]
            rows_per_sent[sent].append((span.start - s0, span.end - 1 - s0, label_index[span.label_]))
        for k, rows in enumerate(rows_per_sent):
            pairs = sorted({(s, e + 1) for s, e, _ in rows})
            for a_i, a in enumerate(pairs):
                for b in pairs[a_i + 1:]:
                    if b[0] >= a[1]:
                        break
                    if crosses(a, b):
                        s0 = ranges[k][0]
                        raise ValueError(
                            f"nested_ner: example {index} ({_preview(eg)}): gold spans at "
                            f"tokens {a[0] + s0}..{a[1] - 1 + s0} and {b[0] + s0}..{b[1] - 1 + s0} "
                            f"cross, and crossing spans cannot be one tree; convert with "
                            f"`--crossing drop` or remove one of them"
                        )
        golds = [np.array(rows, dtype=np.int64).reshape(-1, 3) for rows in rows_per_sent]
        return ranges, golds

    def _loss(self, scores: List[np.ndarray], golds: List[np.ndarray], masks):
        loss_fn = get_loss_function(self.cfg["loss"])
        if self.cfg["loss"] == "margin":
            return loss_fn(scores, golds, masks, cost=self.cfg["margin_cost"])
        return loss_fn(scores, golds, masks)

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, "NestedNER.update")
        docs, sents, golds = [], [], []
        for index, eg in enumerate(examples):
            ranges, gold = self._gold(eg, index)
            if not ranges:
                continue
            sents.extend((len(docs), s, e) for s, e in ranges)
            golds.extend(gold)
            docs.append(eg.predicted)
        if not sents:
            return losses
        set_dropout_rate(self.model, drop)
        batch = SpanBatch(docs, sents)
        scores, backprop = self.model.begin_update(batch)
        loss, grads = self._loss([s.astype(np.float64) for s in scores], golds, self._masks(batch))
        n_words = sum(e - s for _, s, e in sents)
        backprop([(g / n_words).astype(np.float32) for g in grads])
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: List[np.ndarray]):
        """Loss and gradients of `scores` (from the model on the examples' sentences)."""
        golds = []
        for index, eg in enumerate(examples):
            golds.extend(self._gold(eg, index)[1])
        masks = self._masks(SpanBatch([eg.predicted for eg in examples], [
            (i, s, e) for i, eg in enumerate(examples) for s, e in self._ranges(eg.predicted)
        ]))
        return self._loss([s.astype(np.float64) for s in scores], golds, masks)

    # ----------------------------------------------------------- initializing
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "NestedNER.initialize")
        if labels is not None:
            found = list(labels)
        else:
            found = sorted({
                span.label_
                for eg in get_examples()
                for span in eg.reference.spans.get(self.spans_key, [])
            })
        if not found:
            raise ValueError(
                f"nested_ner: found no spans under doc.spans[{self.spans_key!r}] in the "
                f"training examples; set spans_key to the key your corpus uses"
            )
        for label in found:
            if not isinstance(label, str) or not label:
                raise ValueError(f"nested_ner: a label must be a non-empty string, got {label!r}")
        found = list(dict.fromkeys(found))
        if self.model.has_param("U") and self.model.get_dim("nO") != len(found):
            raise ValueError(
                f"nested_ner: the component is already initialized with "
                f"{self.model.get_dim('nO')} labels and cannot be resized to {len(found)}; "
                f"add a new nested_ner component for the new label set"
            )
        self.cfg["labels"] = found
        self.model.set_dim("nO", len(found))
        sample = [eg.predicted for eg in islice(get_examples(), 10)]
        self.model.initialize(X=self._batch(sample))


def outermost(spans: Sequence[Span]) -> List[Span]:
    """The spans not inside another span of the list (they never overlap when
    the list is laminar)."""
    ordered = sorted(spans, key=lambda sp: (sp.start, -sp.end))
    out: List[Span] = []
    for span in ordered:
        if out and span.end <= out[-1].end:
            continue
        out.append(span)
    return out


def _preview(eg: Example) -> str:
    text = eg.reference.text
    return repr(text[:40] + ("..." if len(text) > 40 else ""))
