"""The `joint_parser` component: a constituency tree per sentence, and with
`ner = true` the entities joined into it (Finkel & Manning 2009).

predict: the span scorer (`spacy_struct.SpanScorer.v1`) gives an (n, n, L)
array of scores of every span and chart label; the empty label ("no
constituent", the spans only there to make the tree binary) scores 0, so
each label's score is its margin over being no node. CKY over labeled
binary trees (`structs.spans.SpanTrees`) returns the best tree, which
`trees.chart_to_tree` turns back into an n-ary tree with unary chains.
update: the tree-CRF likelihood (inside/outside over all labeled binary
trees) or the structured margin (spacy_struct.losses), plus in the joint
mode the entity columns' own nested-set CRF times `entity_loss_weight`
(entity_loss.py); the training loop, labels and sentence batching are
the shared `StructuredComponent`'s.

Chart labels. A span's label is its unary chain ("S+VP") and, in the joint
mode, the type of the entity it is ("NP|protein"; "|protein" for an entity
node inserted over a run of children, which is no constituent). The labels
are the ones the training data shows. With `factor_labels` (the default) a
joint label's score is the sum of shared parts, its chain's, its entity
type's and its own (`label_parts.py`), so rare pairs such as "PP|DNA"
learn from every DNA node and every PP; without it each label is a column
of its own.

Output: the tree in `doc.user_data` under benepar's extension names
(`constituents.py`), and the entities in `doc.spans[spans_key]` (nested
allowed; the outermost also in `doc.ents` with `set_ents`).
"""
from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..models import SentenceBatch
from ..models.span_scorer import DEFAULT_SPAN_SCORER_MODEL
from ..pipeline import (
    StructuredComponent, WritesSpans, check_spans_key, component_factory, missing_spans_message,
    non_negative_number, prf_weights,
)
from ..pipeline.sentences import cap_ranges
from ..structs.spans import SpanTrees, outermost
from ..annotations.trees import brackets, has_trees, tree_nodes, tree_of, tree_ranges, write_nodes
from .entity_loss import EntityColumns
from ..annotations.joint import JoinReport, entities_of, join_entities, outer_first
from .label_parts import LabelParts
from ..annotations.brackets import (
    EMPTY, ENTITY_SEPARATOR, ChartLabel, TreeFormatError, chart_to_tree, tree_to_chart, without_entities,
)

DEFAULT_JOINT_PARSER_MODEL = copy.deepcopy(DEFAULT_SPAN_SCORER_MODEL)

#: joint_parser's own settings and their defaults (beside SHARED_DEFAULTS)
JOINT_PARSER_DEFAULTS: Dict[str, Any] = {
    "ner": True, "spans_key": "sc", "set_ents": False, "factor_labels": True,
    "entity_loss_weight": 1.0,
}


def chart_label_name(label: ChartLabel) -> str:
    """The string of a chart label: "NP", "NP|protein", "|protein"."""
    chain, entity = label
    return chain if entity is None else f"{chain}{ENTITY_SEPARATOR}{entity}"


def parse_chart_label(name: str) -> ChartLabel:
    """Inverse of `chart_label_name`."""
    chain, sep, entity = name.partition(ENTITY_SEPARATOR)
    return chain, (entity if sep else None)


@component_factory("joint_parser", ["doc.spans", "doc.ents", "token.is_sent_start"],
                   DEFAULT_JOINT_PARSER_MODEL, JOINT_PARSER_DEFAULTS, "spacy_struct.joint_parser_scorer.v1",
                   {**prf_weights("constituents", 0.5), **prf_weights("spans_sc", 0.5)})
def make_joint_parser(
    nlp: Language, name: str, model: Model,
    ner: bool, spans_key: str, set_ents: bool, factor_labels: bool, entity_loss_weight: float,
    loss: str, margin_cost: float, max_unsegmented_length: int, max_sentence_length: int,  # SHARED_DEFAULTS
    scorer: Optional[Callable],
) -> "JointParser":
    """Constituency parser, optionally with entities joined into its trees.

    ner: also predict entities, as nodes of the tree (Finkel & Manning's
        joint model); false trains a plain constituency parser.
    spans_key: the `doc.spans` key gold entities are read from and
        predicted ones written to.
    set_ents: also write the outermost predicted entities to `doc.ents`.
    factor_labels: score a joint label ("NP|protein") as the sum of its
        chain's, its entity type's and its own score (label_parts.py), so
        that rare pairs learn from their parts; false gives each label a
        score of its own. Fixed by training: a saved model keeps its own.
    entity_loss_weight: weight of a second loss on the entity columns of
        `factor_labels` alone: the tree CRF of the sentence's entities as a
        nested set, as `nested_ner` trains its scores, crossing-bracket
        entities included (entity_loss.py). 0 turns it off; decoding is the
        same either way. Needs factor_labels (refused at initialize
        without); no effect with ner = false.
    loss: "crf" (the tree CRF, default) or "margin" (structured hinge with
        a Hamming cost of `margin_cost` per wrong labeled span).
    max_unsegmented_length, max_sentence_length: how a Doc is cut into the
        sentences CKY runs over (see spacy_struct/pipeline/sentences.py).
    """
    return JointParser.from_factory(locals())


class JointParser(WritesSpans, StructuredComponent):
    """Constituency trees (and entities in them) decoded by CKY."""

    default_name = "joint_parser"
    own_defaults = JOINT_PARSER_DEFAULTS
    #: pipelines saved before factor_labels existed scored whole labels
    learned_settings = {"factor_labels": False}
    #: what became of the gold entities of training (see joint.py)
    join_report: JoinReport
    _warned_left_out = False
    _label_parts: Optional[Tuple[Tuple[Tuple[str, ...], bool], LabelParts]] = None
    _entity_column_cache: Optional[Tuple[Tuple[str, ...], EntityColumns]] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.join_report = JoinReport()

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """spans_key is a non-empty string; ner, set_ents and factor_labels
        are bools; entity_loss_weight a number >= 0; the loss one for trees."""
        check_spans_key(name, settings)
        settings["ner"] = bool(settings["ner"])
        settings["set_ents"] = bool(settings["set_ents"])
        settings["factor_labels"] = bool(settings["factor_labels"])
        settings["entity_loss_weight"] = non_negative_number(name, "entity_loss_weight", settings["entity_loss_weight"])
        if settings["loss"] not in ("crf", "margin"):
            raise ValueError(
                f"{name}: loss must be 'crf' or 'margin' for trees, got {settings['loss']!r}"
            )

    @property
    def structure(self) -> SpanTrees:
        """Labeled binary trees over each sentence."""
        return SpanTrees()

    @property
    def label_parts(self) -> LabelParts:
        """How the scorer's columns sum to the chart labels' scores."""
        key = (self.labels, self.cfg["factor_labels"])
        if self._label_parts is None or self._label_parts[0] != key:
            self._label_parts = (key, LabelParts(*key))
        return self._label_parts[1]

    def output_width(self, labels) -> int:
        """One scorer column per label part (label_parts.py)."""
        return LabelParts(labels, self.cfg["factor_labels"]).n_parts


    missing_labels_message = (
        "found no constituents in the training examples; convert the treebank with "
        "`python -m spacy_struct convert ptb` (or joint-jsonl), or put trees on the "
        "reference docs with spacy_struct.joint_parser.set_parse"
    )

    def sentence_ranges(self, doc: Doc):
        """As `StructuredComponent.sentence_ranges`, but a dependency-parsed
        doc, whose sentences cannot be changed, is parsed in exactly its
        sentences (a sentence of whitespace alone too; one longer than
        `max_sentence_length` still in pieces), so each has its tree."""
        if not doc.has_annotation("DEP") or not len(doc):
            return super().sentence_ranges(doc)
        return cap_ranges(doc, [(sent.start, sent.end) for sent in doc.sents], self.max_sentence_length)

    # ------------------------------------------------------------- predicting
    def predict(self, docs: Iterable[Doc]):
        """Find the tree of every sentence of the docs without changing them.

        RETURNS: (the SentenceBatch, (start, end inclusive, label id) rows
            per sentence, the 2n - 1 spans of its binary tree; label 0 is
            the empty label, label k > 0 is `labels[k - 1]`). The whole
            sentence always gets a label, as benepar forces a root
            constituent, so every sentence reads as one tree; no entity
            starts or ends on a whitespace token.
        """
        docs, batch, scores = self.score_docs(docs)
        if scores is None:
            return batch, []
        parts = self.label_parts
        charts = [_with_empty_label(s, parts) for s in scores]
        entity_columns = [k + 1 for k, name in enumerate(self.labels) if ENTITY_SEPARATOR in name]
        # a sentence is a constituent: its span gets a label with a phrase
        # (not the empty label, nor an entity alone: "|protein" over a
        # one-word sentence would leave it without a label)
        no_phrase = [0] + [k + 1 for k, name in enumerate(self.labels) if not parse_chart_label(name)[0]]
        if len(no_phrase) == len(self.labels) + 1:  # a model without phrase labels: any label
            no_phrase = [0]
        for (doc_i, start, end), chart in zip(batch.sents, charts):
            if not chart.shape[0]:
                continue
            chart[0, -1, no_phrase] = -np.inf
            # no entity starts or ends on a whitespace token
            space = [k for k, token in enumerate(docs[doc_i][start:end]) if token.is_space]
            if space and entity_columns:
                every = np.arange(chart.shape[0])
                chart[np.ix_(space, every, entity_columns)] = -np.inf
                chart[np.ix_(every, space, entity_columns)] = -np.inf
        return batch, self.structure.argmax(charts)

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write each sentence's tree to the doc (constituents.py) and the
        entities to `doc.spans[spans_key]` (outermost to `doc.ents` with
        `set_ents`). Every doc gets the sentences it was parsed in, as
        spaCy's parser sets them, so `doc.sents` and the trees agree: those
        of a doc that came without boundaries; with boundaries, a sentence
        of whitespace alone (a text ending in a newline, a senter's blank
        line) joins the sentence before it and one over
        `max_sentence_length` is cut. A doc already dependency-parsed keeps
        the sentences of its parse (spaCy forbids changing them): it is
        parsed in exactly those (`sentence_ranges`), only one longer than
        `max_sentence_length` in pieces, whose span then holds several trees.

        docs: the docs that were parsed.
        predictions: what `predict` returned for them.
        """
        batch, charts = predictions
        docs = list(docs)
        labels = [EMPTY] + [parse_chart_label(name) for name in self.labels]
        found: List[List[Tuple[int, int, str]]] = [[] for _ in docs]
        trees: List[list] = [[] for _ in docs]
        self._set_sentences(docs, batch)
        for (doc_i, start, end), rows in zip(batch.sents, charts):
            root = chart_to_tree([(int(s), int(e), labels[int(l)]) for s, e, l in rows], end - start)
            trees[doc_i].append((start, end, tree_nodes(without_entities(root), start, end)))
            if self.cfg["ner"]:
                found[doc_i].extend((start + s, start + e, t) for s, e, t in entities_of(root))
        for doc, doc_trees in zip(docs, trees):
            write_nodes(doc, doc_trees)
        if not self.cfg["ner"]:
            return
        key = self.spans_key
        for doc, rows in zip(docs, found):
            rows = outer_first(rows)
            spans = [Span(doc, s, e, label=t) for s, e, t in rows]
            doc.spans[key] = SpanGroup(doc, name=key, spans=spans)
            if self.cfg["set_ents"]:
                top = outermost([(s, e) for s, e, _ in rows])
                doc.set_ents([spans[i] for i in top], default="outside")

    @staticmethod
    def _set_sentences(docs: List[Doc], batch: SentenceBatch) -> None:
        """The sentences each doc was parsed in become its `doc.sents`, one
        array write per doc that differs (a dependency-parsed doc keeps its
        own, which it was parsed in)."""
        wanted = {i: np.full(len(doc), -1, dtype=np.int32) for i, doc in enumerate(docs)
                  if len(doc) and not doc.has_annotation("DEP")}
        for doc_i, start, _ in batch.sents:
            if doc_i in wanted:
                wanted[doc_i][start] = 1
        for doc_i, starts in wanted.items():
            doc = docs[doc_i]
            if not np.array_equal(doc.to_array(SENT_START).astype(np.int32), starts):
                doc.from_array([SENT_START], starts.reshape(-1, 1).astype(np.uint64))

    # ---------------------------------------------------------------- training
    def gold_charts(self, eg: Example, index: int) -> Tuple[List[Tuple[int, int]], List[list], List[list]]:
        """Sentence ranges, the gold chart of each: (start, end inclusive,
        ChartLabel) rows, and its gold entities: (start, end exclusive,
        type), all in sentence coordinates (no entities with ner = false)."""
        ref, pred = eg.reference, eg.predicted
        if [t.text for t in ref] != [t.text for t in pred]:
            raise self.gold_error(index, eg, (
                "the predicted doc's tokens differ from the reference's; train on the "
                "corpus's own tokens (gold_preproc = true)"
            ))
        if self.cfg["ner"] and self.spans_key not in ref.spans:
            raise self.gold_error(index, eg, missing_spans_message(
                ref, self.spans_key, "; or set ner = false to train a parser alone"))
        ranges = self.training_ranges(eg)
        charts, entities_per_sentence = [], []
        entities = [(s.start, s.end, s.label_) for s in ref.spans[self.spans_key]] if self.cfg["ner"] else []
        edge_on_space = [(s, e, t) for s, e, t in entities if ref[s].is_space or ref[e - 1].is_space]
        for s, e, t in edge_on_space:
            self.count_unrepresentable(
                f"gold entities that start or end on a whitespace token are left out of "
                f"training, as the decoder never predicts one (first: {t} "
                f"{ref[s:e].text!r} in example {index})"
            )
        entities = [item for item in entities if item not in edge_on_space]
        try:
            stored_trees = tree_ranges(ref)
        except ValueError as err:
            raise self.gold_error(index, eg, f"its gold trees cannot be read: {err}") from None
        for start, end in ranges:
            cut = next(((s, e, l) for s, e, l in brackets(ref) if s < start < e or s < end < e), None)
            if cut is not None:
                raise self.gold_error(index, eg, (
                    f"its gold constituent {cut[2]} over tokens {cut[0]}..{cut[1] - 1} crosses the "
                    f"sentence boundary at token {start if cut[0] < start else end}; a doc without "
                    f"sentence boundaries is cut by rule past max_unsegmented_length "
                    f"({self.cfg['max_unsegmented_length']}): raise it, or give the sentences"
                ))
            inside = [(s, e) for s, e in stored_trees if start <= s and e <= end]
            if inside and inside != [(start, end)]:
                covered = sum(e - s for s, e in inside)
                raise self.gold_error(index, eg, (
                    f"tokens {start}..{end - 1} are one training sentence, but the trees stored "
                    f"there cover {'only ' if covered < end - start else ''}"
                    f"{', '.join(f'{s}..{e - 1}' for s, e in inside)}: a tree must cover its whole "
                    f"sentence. Set the reference's sentence boundaries where the trees are "
                    f"(or put one tree over each sentence with set_parse)"
                ))
            try:
                root = tree_of(ref, start, end)
            except TreeFormatError as err:
                raise self.gold_error(index, eg, f"its gold tree is broken: {err}") from None
            if root is None:
                why = (
                    "convert the treebank with `python -m spacy_struct convert ptb` (or "
                    "joint-jsonl) or put a tree on with set_parse"
                    if has_trees(ref) else
                    "the reference holds no tree at all. If the corpus has them, spaCy's reader "
                    "dropped them: with gold_preproc = true it cuts docs with Span.as_doc, which "
                    "keeps no user_data (a one-word doc is always cut); read the corpus with "
                    "spacy_struct.SentenceDocs.v1, as configs/joint_parser_*.cfg do"
                )
                raise self.gold_error(index, eg, f"tokens {start}..{end - 1} have no gold tree; {why}")
            inside = [(s - start, e - start, t) for s, e, t in entities if start <= s and e <= end]
            if self.cfg["ner"]:
                root, report = join_entities(root, end - start, inside)
                self._count_left_out(report, eg, index, start)
            charts.append(tree_to_chart(root, end - start))
            entities_per_sentence.append(inside)
        n_inside = sum(1 for s, e, _ in entities if any(a <= s and e <= b for a, b in ranges))
        if n_inside < len(entities):
            raise self.gold_error(index, eg, (
                f"{len(entities) - n_inside} gold entities cross a sentence boundary; "
                f"trees are built per sentence"
            ))
        return ranges, charts, entities_per_sentence

    def _count_left_out(self, report: JoinReport, eg: Example, index: int, start: int) -> None:
        self.join_report.add(report)
        if report.left_out and not self._warned_left_out:
            self._warned_left_out = True
            s, e, t = report.left_out[0]
            text = eg.reference[start + s:start + e].text
            warnings.warn(
                f"{self.name}: gold entities that cross a bracket of the tree (or share "
                f"their words with another entity) cannot be nodes of it and are left out "
                f"of training; counted in `join_report` (first: {t} {text!r} in example "
                f"{index})"
            )

    def gold(self, eg: Example, index: int):
        """Sentence ranges and the gold of each: a pair of the (start, end
        inclusive, label id) rows of its tree and, when the entity loss is
        on, the (start, end inclusive, type id) rows of its nested gold
        entities (entity_loss.py; else None)."""
        ranges, charts, entities = self.gold_charts(eg, index)
        golds = []
        for chart in charts:
            rows = []
            for s, e, label in chart:
                # column 0 is the empty label, label k is column k + 1
                column = 0 if label == EMPTY else self.label_id(chart_label_name(label), index, eg, "chart label") + 1
                rows.append((s, e, column))
            golds.append(np.array(rows, dtype=np.int64).reshape(-1, 3))
        columns = self.entity_columns()
        if columns is None:
            return ranges, [(tree, None) for tree in golds]
        pairs = []
        for tree, inside in zip(golds, entities):
            rows, unknown = columns.gold_rows(inside)
            for s, e, t in unknown:
                self.count_unrepresentable(
                    f"gold entities of a type no chart label has (they all cross a bracket) "
                    f"are left out of the entity loss too (first: {t} in example {index})"
                )
            pairs.append((tree, rows))
        return ranges, pairs

    def entity_columns(self) -> Optional[EntityColumns]:
        """The entity columns the entity loss trains; None when it is off
        (weight 0, ner = false, or no entity among the labels). A model
        without entity columns (factor_labels = false) cannot take it: a
        ValueError says so."""
        if not (self.cfg["ner"] and self.cfg["entity_loss_weight"]):
            return None
        if not self.label_parts.factored:
            if not self.cfg["factor_labels"]:
                raise ValueError(
                    f"{self.name}: entity_loss_weight = {self.cfg['entity_loss_weight']} trains "
                    f"the entity columns of factor_labels, which a model with factor_labels = "
                    f"false does not have: set entity_loss_weight = 0 (or train a new model "
                    f"with factor_labels = true)"
                )
            return None  # no entity labels: nothing to train
        key = self.labels
        if self._entity_column_cache is None or self._entity_column_cache[0] != key:
            self._entity_column_cache = (key, EntityColumns(self.label_parts))
        return self._entity_column_cache[1]

    def get_loss_from_scores(self, batch: SentenceBatch, scores: List[np.ndarray], golds):
        """Loss of the span scores, and their gradient (per word of the batch):
        the tree's, plus `entity_loss_weight` times the entity columns' own
        (entity_loss.py) when it is on."""
        parts = self.label_parts
        trees = [tree for tree, _ in golds]
        loss, grads = self.structure_loss([_with_empty_label(s, parts) for s in scores], trees)
        n_words = sum(batch.lengths())
        part_grads = [parts.part_gradient(g[:, :, 1:] / n_words) for g in grads]
        columns = self.entity_columns()
        if columns is None:
            return loss, part_grads
        weight = self.cfg["entity_loss_weight"]
        entity_loss, entity_grads = columns.loss(scores, [entities for _, entities in golds])
        for total, extra in zip(part_grads, entity_grads):
            extra *= weight / n_words
            total += extra  # cast into the float32 gradient in place
        return loss + weight * entity_loss, part_grads

    # ----------------------------------------------------------- initializing
    def initialize(self, get_examples, *, nlp=None, labels=None) -> None:
        """As StructuredComponent.initialize; then an entity loss that has
        no entity columns to train is refused before any training time is
        spent (`entity_columns`)."""
        super().initialize(get_examples, nlp=nlp, labels=labels)
        self.entity_columns()

    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        """The chart labels of the examples' gold trees, sorted."""
        found = set()
        for i, eg in enumerate(examples):
            for chart in self.gold_charts(eg, i)[1]:
                found.update(chart_label_name(label) for _, _, label in chart if label != EMPTY)
        self.join_report = JoinReport()
        return sorted(found)


def _with_empty_label(part_scores: np.ndarray, parts: LabelParts) -> np.ndarray:
    """The (n, n, 1 + labels) chart of a sentence's part scores: the empty
    label's column of zeros in front of the labels' scores."""
    n = part_scores.shape[0]
    out = np.zeros((n, n, len(parts.labels) + 1), dtype=np.float64)
    parts.label_scores(part_scores, out=out[:, :, 1:])
    return out
