"""The `mst_parser` component: arc scores, a spanning-tree decoder, a labeler.

predict: the arc scorer gives an (n+1) x (n+1) score matrix per sentence,
Chu-Liu-Edmonds (or Eisner) picks the best tree, and the edge labeler labels
its arcs. update: the tree loss ("margin", "crf" or "local", see losses.py)
on the arcs plus the labeler's cross-entropy on the gold arcs.
"""

from itertools import islice
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Config, Model, Optimizer, set_dropout_rate

from ..structs import dependency
from ..structs._arrays import NoLegalStructureError
from .batch import ParseBatch, ParseScores
from .losses import DECODERS, LOSSES, decode, get_loss_function
from ..layers import DEFAULT_TOK2VEC_CONFIG
from ..sentences import check_sentence_limits, ranges_from_starts, sentence_ranges

ROOT_LABEL = "ROOT"

DEFAULT_MST_PARSER_MODEL = Config().from_str(
    """
[model]
@architectures = "spacy_struct.BiaffineArcScorer.v1"
arc_width = 256
label_width = 64
dropout = 0.33
context_width = 512
context_depth = 1
characters = 64
"""
    + DEFAULT_TOK2VEC_CONFIG
)["model"]


@Language.factory(
    "mst_parser",
    assigns=["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
    default_config={
        "model": DEFAULT_MST_PARSER_MODEL,
        "decoder": "cle",
        "multi_root": False,
        "loss": "margin",
        "margin_cost": 1.0,
        "max_unsegmented_length": 200,
        "max_sentence_length": 512,
        "scorer": {"@scorers": "spacy_struct.mst_parser_scorer.v1"},
    },
    default_score_weights={
        "dep_uas": 0.5,
        "dep_las": 0.5,
        "dep_las_per_type": None,
        "sents_p": None,
        "sents_r": None,
        "sents_f": None,
        "dep_conll_uas": None,
        "dep_conll_las": None,
        "dep_nonproj_p": None,
        "dep_nonproj_r": 0.0,
        "dep_nonproj_f": None,
    },
)
def make_mst_parser(
    nlp: Language,
    name: str,
    model: Model,
    decoder: str,
    multi_root: bool,
    loss: str,
    margin_cost: float,
    max_unsegmented_length: int,
    max_sentence_length: int,
    scorer: Optional[Callable],
) -> "MSTParser":
    """Graph-based dependency parser (McDonald et al. 2005).

    decoder: "cle" (Chu-Liu-Edmonds, non-projective) or "eisner" (projective).
    multi_root: allow several words to hang from the root of one sentence.
    loss: "margin" (cost-augmented structured hinge), "crf" (tree CRF) or
        "local" (per-word head cross-entropy).
    margin_cost: Hamming cost per wrong head in the "margin" loss.
    max_unsegmented_length: a Doc without sentence boundaries up to this many
        tokens is one sentence; longer ones are cut (see sentences.py).
    max_sentence_length: longer sentences are cut, to bound n x n memory.
    """
    return MSTParser(
        nlp.vocab, model, name, decoder=decoder, multi_root=multi_root, loss=loss,
        margin_cost=margin_cost, max_unsegmented_length=max_unsegmented_length,
        max_sentence_length=max_sentence_length, scorer=scorer,
    )


class MSTParser(TrainablePipe):
    """Maximum spanning tree dependency parser with a second-stage labeler."""

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "mst_parser",
        *,
        decoder: str = "cle",
        multi_root: bool = False,
        loss: str = "margin",
        margin_cost: float = 1.0,
        max_unsegmented_length: int = 200,
        max_sentence_length: int = 512,
        scorer: Optional[Callable] = None,
    ) -> None:
        if decoder not in DECODERS:
            raise ValueError(f"mst_parser: decoder must be one of {DECODERS}, got {decoder!r}")
        if loss not in LOSSES:
            raise ValueError(f"mst_parser: loss must be one of {LOSSES}, got {loss!r}")
        if not np.isfinite(margin_cost) or margin_cost < 0:
            raise ValueError(f"mst_parser: margin_cost must be >= 0, got {margin_cost!r}")
        check_sentence_limits("mst_parser", max_unsegmented_length, max_sentence_length)
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, object] = {
            "labels": [],
            "decoder": decoder,
            "multi_root": bool(multi_root),
            "loss": loss,
            "margin_cost": float(margin_cost),
            "max_unsegmented_length": max_unsegmented_length,
            "max_sentence_length": max_sentence_length,
        }

    # ------------------------------------------------------------------ labels
    @property
    def labels(self) -> Tuple[str, ...]:
        """Arc labels the labeler predicts (the root arc is always ROOT)."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        return list(self.labels)

    def add_label(self, label: str) -> int:
        if not isinstance(label, str) or not label:
            raise ValueError(f"mst_parser: a label must be a non-empty string, got {label!r}")
        if label == ROOT_LABEL or label in self.cfg["labels"]:
            return 0
        if self.model.get_ref("labeler").has_param("V"):
            raise ValueError(
                f"mst_parser: cannot add label {label!r} to a parser that is already "
                f"initialized; initialize it again with data that has the label"
            )
        self.cfg["labels"].append(label)
        return 1

    @property
    def _single_root(self) -> bool:
        return not self.cfg["multi_root"]

    # ------------------------------------------------------------- sentences
    def _ranges(self, doc: Doc) -> List[Tuple[int, int]]:
        return sentence_ranges(
            doc, self.cfg["max_unsegmented_length"], self.cfg["max_sentence_length"]
        )

    def _batch(self, docs: Sequence[Doc], ranges: Sequence[List[Tuple[int, int]]]) -> ParseBatch:
        sents = [(i, s, e) for i, rs in enumerate(ranges) for s, e in rs]
        return ParseBatch(list(docs), sents)

    # ------------------------------------------------------------- predicting
    @property
    def _needs_tags(self) -> bool:
        return bool(self.model.attrs.get("needs_tags", False))

    def predict(self, docs: Iterable[Doc]):
        """(batch, heads per sentence, label ids per sentence) for the docs."""
        docs = list(docs)
        if self._needs_tags:
            for i, doc in enumerate(docs):
                if len(doc) and not (doc.has_annotation("TAG") or doc.has_annotation("POS")):
                    raise ValueError(
                        f"mst_parser: doc {i} has no POS tags, and the EdgeFeatures model "
                        f"scores arcs from them; put a tagger before the parser"
                    )
        batch = self._batch(docs, [self._ranges(doc) for doc in docs])
        if not batch.sents:
            return batch, [], []
        scores = self.model.predict(batch)
        heads = decode(
            [s.astype(np.float64) for s in scores.arcs], self.cfg["decoder"], self._single_root
        )
        if not self.labels:
            return batch, heads, [np.full(len(h) - 1, -1) for h in heads]
        label_scores = self.model.get_ref("labeler").predict(
            (scores.label_dep, scores.label_head, heads)
        )
        return batch, heads, [ls.argmax(axis=1) if len(ls) else np.zeros(0, int) for ls in label_scores]

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        batch, heads, labels = predictions
        docs = list(docs)
        arrays = [np.zeros((len(doc), 2), dtype=np.uint64) for doc in docs]
        strings = self.vocab.strings
        label_ids = [strings.add(label) for label in self.labels]
        root_id = strings.add(ROOT_LABEL)
        for (doc_i, start, end), h, lab in zip(batch.sents, heads, labels):
            arr = arrays[doc_i]
            for j in range(1, end - start + 1):
                token = start + j - 1
                if h[j] == 0:
                    arr[token, 0] = 0
                    arr[token, 1] = root_id
                else:
                    arr[token, 0] = np.int64(start + h[j] - 1 - token).astype(np.uint64)
                    arr[token, 1] = label_ids[lab[j - 1]] if lab[j - 1] >= 0 else strings.add("dep")
        for doc, arr in zip(docs, arrays):
            if len(doc):
                doc.from_array([HEAD, DEP], arr)

    # ---------------------------------------------------------------- training
    def _gold(self, eg: Example, index: int):
        """Sentence ranges, gold heads (-2 = unknown) and gold label ids."""
        heads, deps = eg.get_aligned_parse(projectivize=False)
        ref = eg.reference
        if not ref.has_annotation("DEP"):
            return [], [], []
        x2y = eg.alignment.x2y
        known = np.zeros(len(eg.predicted), dtype=bool)
        for i in range(len(eg.predicted)):
            ys = x2y[i]
            known[i] = len(ys) == 1 and heads[i] is not None and ref[int(ys[0])].has_head()
        if eg.predicted.has_annotation("SENT_START") and not eg.reference.has_annotation("SENT_START"):
            ranges = [(s.start, s.end) for s in eg.predicted.sents]
        else:
            ranges = ranges_from_starts(eg.get_aligned_sent_starts())
        label_index = {label: i for i, label in enumerate(self.labels)}
        golds, gold_labels, kept = [], [], []
        for start, end in ranges:
            n = end - start
            g = np.full(n + 1, -2, dtype=np.int64)
            g[0] = -1
            lab = np.full(n, -1, dtype=np.int64)
            for j, t in enumerate(range(start, end), start=1):
                if not known[t]:
                    continue
                h = int(heads[t])
                if not start <= h < end:
                    raise ValueError(
                        f"mst_parser: example {index} ({_preview(eg)}): the gold head of "
                        f"token {t} ({eg.predicted[t].text!r}) is token {h}, outside its "
                        f"sentence (tokens {start}..{end - 1}); a tree cannot cross a "
                        f"sentence boundary"
                    )
                g[j] = 0 if h == t else h - start + 1
                dep = deps[t]
                if g[j] != 0 and dep:
                    if dep not in label_index:
                        raise ValueError(
                            f"mst_parser: example {index} ({_preview(eg)}): label {dep!r} "
                            f"is not one of the parser's labels; initialize the parser with "
                            f"data that contains it"
                        )
                    lab[j - 1] = label_index[dep]
            if (g[1:] == -2).all():
                continue
            if (g[1:] != -2).all():
                try:
                    dependency.check_heads(g, n)
                except ValueError as err:
                    raise ValueError(
                        f"mst_parser: example {index} ({_preview(eg)}): the gold arcs of "
                        f"tokens {start}..{end - 1} are not a tree: {err}"
                    ) from None
                if self._single_root and (g[1:] == 0).sum() > 1:
                    raise ValueError(
                        f"mst_parser: example {index} ({_preview(eg)}): the sentence at "
                        f"tokens {start}..{end - 1} has {(g[1:] == 0).sum()} roots; set "
                        f"multi_root = true to train on several roots per sentence"
                    )
            golds.append(g)
            gold_labels.append(lab)
            kept.append((start, end))
        return kept, golds, gold_labels

    def _complete_gold(self, scores: np.ndarray, gold: np.ndarray, where: str) -> np.ndarray:
        """Best tree that keeps every known gold arc (partial annotation)."""
        if (gold[1:] != -2).all():
            return gold
        S = scores.copy()
        for d in np.flatnonzero(gold != -2):
            if d == 0:
                continue
            keep = S[gold[d], d]
            S[:, d] = -np.inf
            S[gold[d], d] = keep
        try:
            return decode([S], self.cfg["decoder"], self._single_root)[0]
        except NoLegalStructureError:
            raise ValueError(
                f"mst_parser: {where}: the known gold arcs cannot be completed to a "
                f"{'projective ' if self.cfg['decoder'] == 'eisner' else ''}tree "
                f"(a cycle, or more than one root)"
            ) from None

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
        validate_examples(examples, "MSTParser.update")
        docs, ranges, golds, gold_labels = [], [], [], []
        for index, eg in enumerate(examples):
            kept, g, lab = self._gold(eg, index)
            if kept and self._needs_tags:
                _use_gold_tags(eg)
            if kept:
                docs.append(eg.predicted)
                ranges.append(kept)
                golds.extend(g)
                gold_labels.extend(lab)
        if not golds:
            return losses
        set_dropout_rate(self.model, drop)
        batch = self._batch(docs, ranges)
        scores, backprop = self.model.begin_update(batch)
        arcs = [s.astype(np.float64) for s in scores.arcs]
        golds = [self._complete_gold(S, g, f"sentence {i} of the batch")
                 for i, (S, g) in enumerate(zip(arcs, golds))]
        n_words = sum(len(g) - 1 for g in golds)
        arc_loss, arc_grads = self.get_loss_from_scores(arcs, golds)
        label_loss, d_dep, d_head = self._label_loss(scores, golds, gold_labels, n_words)
        backprop(ParseScores(
            [(g / n_words).astype(np.float32) for g in arc_grads], d_dep, d_head
        ))
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += arc_loss + label_loss
        return losses

    def get_loss_from_scores(self, arcs: List[np.ndarray], golds: List[np.ndarray]):
        """Tree loss and gradient per sentence, with the configured loss."""
        loss_fn = get_loss_function(self.cfg["loss"])
        if self.cfg["loss"] == "margin":
            return loss_fn(arcs, golds, self.cfg["decoder"], self._single_root,
                           cost=self.cfg["margin_cost"])
        return loss_fn(arcs, golds, self.cfg["decoder"], self._single_root)

    def get_loss(self, examples: Iterable[Example], scores: ParseScores):
        """Arc loss of `scores` (from the model on the examples' gold sentences)."""
        golds = []
        for index, eg in enumerate(examples):
            golds.extend(self._gold(eg, index)[1])
        arcs = [s.astype(np.float64) for s in scores.arcs]
        golds = [self._complete_gold(S, g, f"sentence {i}") for i, (S, g) in enumerate(zip(arcs, golds))]
        return self.get_loss_from_scores(arcs, golds)

    def _label_loss(self, scores: ParseScores, golds, gold_labels, n_words: int):
        labeler = self.model.get_ref("labeler")
        label_scores, backprop = labeler.begin_update((scores.label_dep, scores.label_head, golds))
        loss = 0.0
        grads = []
        for ls, lab in zip(label_scores, gold_labels):
            G = np.zeros_like(ls)
            rows = np.flatnonzero(lab >= 0)
            if len(rows):
                X = ls[rows] - ls[rows].max(axis=1, keepdims=True)
                P = np.exp(X)
                P /= P.sum(axis=1, keepdims=True)
                loss += float(-np.log(np.maximum(P[np.arange(len(rows)), lab[rows]], 1e-30)).sum())
                P[np.arange(len(rows)), lab[rows]] -= 1.0
                G[rows] = P / n_words
            grads.append(G)
        d_dep, d_head, _ = backprop(grads)
        return loss, d_dep, d_head

    # ----------------------------------------------------------- initializing
    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        validate_get_examples(get_examples, "MSTParser.initialize")
        if labels is not None:
            found = list(labels)
        else:
            found = set()
            for eg in get_examples():
                for token in eg.reference:
                    if token.dep_ and token.head.i != token.i:
                        found.add(token.dep_)
            found = sorted(found)
        self.cfg["labels"] = []
        for label in found:
            if label != ROOT_LABEL:
                self.cfg["labels"].append(label)
        if not self.cfg["labels"]:
            raise ValueError(
                "mst_parser: found no dependency labels in the training examples; the "
                "reference docs need heads and deps (token.head, token.dep_)"
            )
        self.model.get_ref("labeler").set_dim("nO", len(self.labels))
        sample_egs = list(islice(get_examples(), 10))
        if self._needs_tags:
            for eg in sample_egs:
                _use_gold_tags(eg)
        sample = [eg.predicted for eg in sample_egs]
        batch = self._batch(sample, [self._ranges(d) for d in sample])
        self.model.initialize(X=batch)


def _use_gold_tags(eg: Example) -> None:
    """Give the predicted doc the gold tags when it has none (training only)."""
    doc = eg.predicted
    if doc.has_annotation("TAG") or not eg.reference.has_annotation("TAG"):
        return
    for token, tag in zip(doc, eg.get_aligned("TAG", as_string=True)):
        if tag:
            token.tag_ = tag


def _preview(eg: Example) -> str:
    text = eg.reference.text
    return repr(text[:40] + ("..." if len(text) > 40 else ""))
