"""The `mst_parser` component: arc scores, a spanning-tree decoder, a labeler.

predict: the arc scorer gives an (n+1) x (n+1) score matrix per sentence,
Chu-Liu-Edmonds (or Eisner) picks the best tree, and the edge labeler labels
its arcs. update: the tree loss ("margin", "crf" or "local", from
spacy_struct.losses over `DependencyTrees`) on the arcs plus the labeler's
cross-entropy on the gold arcs.

A second-order scorer (`order = 2` in the model, the factory's default,
trained with the margin loss) also scores each arc with
its previous sibling; the parts (arc + sibling, (n+1)^3 per sentence) are
decoded by `SiblingTrees`: second-order Eisner, followed with "cle" by
McDonald & Pereira's non-projective search, and trained through the same
losses (the CRF over projective trees). The training loop, labels and sentence
batching are the shared `StructuredComponent`'s.
"""

import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.attrs import DEP, HEAD, IS_SPACE
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from ..models import ParseScores, SentenceBatch, default_model_config
from ..pipeline import StructuredComponent, component_factory, training_ranges
from ..structs import NoLegalStructureError
from ..structs.arrays import offsets_of
from ..structs.dependency import UNKNOWN_HEAD, DependencyTrees, check_heads
from ..structs.siblings import SiblingTrees, pruned_parts

ROOT_LABEL = "ROOT"
#: the label of a whitespace token's arc, as spaCy's parser writes it
SPACE_LABEL = "dep"
DECODERS = ("cle", "eisner")

DEFAULT_MST_PARSER_MODEL = default_model_config("""
[model]
@architectures = "spacy_struct.BiaffineArcScorer.v1"
arc_width = 256
label_width = 64
dropout = 0.33
context_width = 256
context_depth = 1
characters = 32
order = 2
sibling_width = 100
""")


#: the longest sentence a second-order model trains on, or decodes whole
#: with every part (kept_heads = 0): its parts take (n+1)^3 floats, 65 MB
#: per array at 200 words. Pruned decoding has no such limit.
SECOND_ORDER_MAX_LENGTH = 200
#: parts a second-order model decodes at once (4M: 32 MB per float64 copy)
DECODE_CHUNK_PARTS = 1 << 22

#: mst_parser's own settings and their defaults (beside SHARED_DEFAULTS)
MST_PARSER_DEFAULTS = {"decoder": "cle", "multi_root": False, "kept_heads": 8, "loss": "margin"}


#: what `spacy train` weighs to pick the best model (None: reported only)
MST_PARSER_SCORE_WEIGHTS = {
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
}


@component_factory("mst_parser", ["token.head", "token.dep", "token.is_sent_start", "doc.sents"],
                   DEFAULT_MST_PARSER_MODEL, MST_PARSER_DEFAULTS, "spacy_struct.mst_parser_scorer.v1",
                   MST_PARSER_SCORE_WEIGHTS)
def make_mst_parser(
    nlp: Language, name: str, model: Model,
    decoder: str, multi_root: bool, kept_heads: int,
    loss: str, margin_cost: float, max_unsegmented_length: int, max_sentence_length: int,  # SHARED_DEFAULTS
    scorer: Optional[Callable],
) -> "MSTParser":
    """Graph-based dependency parser (McDonald et al. 2005).

    decoder: "cle" (Chu-Liu-Edmonds, non-projective) or "eisner" (projective).
    multi_root: allow several words to hang from the root of one sentence.
    kept_heads: with a second-order model, the heads kept per word by
        first-order score (and the best first-order tree's) before the
        sibling parts are scored and decoded: only the parts of kept arcs
        are made, so memory grows with them, not (n+1)^3, and sentences of
        any length are decoded whole. 0: every part (sentences over
        SECOND_ORDER_MAX_LENGTH are then cut). Prediction only; training
        scores every part.
    loss: "margin" (cost-augmented structured hinge, the default: the one
        for the default second-order model with the "cle" decoder, which
        the treebank configs train), "crf" (tree CRF: at first order it
        learns fastest, and the three losses end within 0.3 LAS on Gothic)
        or "local" (per-word head cross-entropy); any loss registered in
        spacy_struct.losses that a tree can take (not "multilabel_margin").
    margin_cost: Hamming cost per wrong head in the "margin" loss.
    max_unsegmented_length: a Doc without sentence boundaries is cut into
        sentences by rule, and pieces longer than this are cut evenly; in
        training, a gold Doc without boundaries up to this many tokens is one
        sentence (see pipeline/sentences.py).
    max_sentence_length: longer sentences are cut, to bound n x n memory
        (with a second-order model, at most SECOND_ORDER_MAX_LENGTH: its
        parts take (n+1)^3 memory).
    """
    return MSTParser.from_factory(locals())


class MSTParser(StructuredComponent):
    """Maximum spanning tree dependency parser with a second-stage labeler."""

    implicit_labels = (ROOT_LABEL,)
    missing_labels_message = (
        "found no dependency labels in the training examples; the reference "
        "docs need heads and deps (token.head, token.dep_), and nlp.initialize() "
        "needs them: nlp.initialize(lambda: examples)"
    )

    default_name = "mst_parser"
    own_defaults = MST_PARSER_DEFAULTS
    unsupported_losses = ("multilabel_margin",)

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """decoder must be one of DECODERS; multi_root is a bool."""
        if settings["decoder"] not in DECODERS:
            raise ValueError(f"{name}: decoder must be one of {DECODERS}, got {settings['decoder']!r}")
        settings["multi_root"] = bool(settings["multi_root"])
        kept = settings["kept_heads"]
        if isinstance(kept, bool) or not isinstance(kept, int) or kept < 0:
            raise ValueError(f"{name}: kept_heads must be an int >= 0 (0: keep every head), got {kept!r}")

    @property
    def order(self) -> int:
        """1: arcs alone; 2: arcs with their previous sibling (the model's `order`)."""
        return int(self.model.attrs.get("order", 1))

    @property
    def _all_parts(self) -> bool:
        """Whether decoding scores every second-order part (kept_heads = 0)."""
        return self.order == 2 and self.cfg.get("kept_heads", 0) == 0

    @property
    def max_sentence_length(self) -> int:
        """The `max_sentence_length` setting, and at most
        SECOND_ORDER_MAX_LENGTH when a second-order model decodes every part."""
        if self._all_parts:
            return min(self.cfg["max_sentence_length"], SECOND_ORDER_MAX_LENGTH)
        return self.cfg["max_sentence_length"]

    @property
    def training_length(self) -> int:
        """The longest sentence trained on whole: training scores every
        part, so a second-order model takes at most SECOND_ORDER_MAX_LENGTH."""
        if self.order == 2:
            return min(self.cfg["max_sentence_length"], SECOND_ORDER_MAX_LENGTH)
        return self.cfg["max_sentence_length"]

    @property
    def sentence_length_note(self) -> str:
        """Says why a second-order model cuts below the setting."""
        if self.max_sentence_length < self.cfg["max_sentence_length"]:
            return (f"; the config asks for {self.cfg['max_sentence_length']}, but a second-order "
                    f"model with kept_heads = 0 decodes at most {SECOND_ORDER_MAX_LENGTH} tokens at "
                    f"once: its parts take (n+1)^3 floats, 65 MB per array at 200 words")
        return ""

    def training_ranges(self, eg: Example):
        """The gold sentences, cut at `training_length`."""
        return training_ranges(eg, self.cfg["max_unsegmented_length"], self.training_length)

    def check_loaded_settings(self, saved: Dict[str, Any]) -> None:
        """A model trained with one root per sentence decoded with several:
        its root scores were learned only against each other (every
        training tree had exactly one root arc), so they say nothing about
        how many roots a sentence has, and sentences fall apart."""
        if self._settings["multi_root"] and saved.get("multi_root") is False:
            warnings.warn(
                f"{self.name}: multi_root = true in the config, but the model was trained with "
                f"one root per sentence, so its root scores do not tell how many roots a "
                f"sentence has and decoding with several splits sentences; train with "
                f"multi_root = true to parse with it"
            )

    @property
    def structure(self) -> DependencyTrees:
        """Projective trees with Eisner, all trees with CLE; one root or several;
        second-order trees when the model scores siblings."""
        projective = self.cfg["decoder"] == "eisner"
        single_root = not self.cfg["multi_root"]
        if self.order == 2:
            return SiblingTrees(projective=projective, single_root=single_root)
        return DependencyTrees(projective=projective, single_root=single_root)

    def tree_scores(self, batch: SentenceBatch, scores: ParseScores) -> List[np.ndarray]:
        """What the structure decodes, float64, whitespace masked: the arc
        matrices, or with a second-order model the part arrays
        parts[h, s, m] = arcs[h, m] + siblings[h, s, m].

        batch: the sentences of the scores.
        scores: the scorer's output on them.
        RETURNS: one array per sentence.
        """
        arcs = self.mask_whitespace(batch, scores.arcs)
        if scores.siblings is None:
            return arcs
        return [A[:, None, :] + np.asarray(B, dtype=np.float64) for A, B in zip(arcs, scores.siblings)]

    def decode(self, batch: SentenceBatch, scores: ParseScores) -> List[np.ndarray]:
        """The best tree of every sentence of the batch: heads (n+1, -1 at
        the root). A second-order model decodes the parts of each word's
        `kept_heads` best arcs only; with kept_heads = 0 its part arrays
        ((n+1)^3 floats each) are made and decoded a chunk of sentences at a
        time, at most DECODE_CHUNK_PARTS parts, so memory follows the chunk,
        not the batch."""
        if scores.siblings is None:
            return self.structure.argmax(self.tree_scores(batch, scores))
        if not self._all_parts:
            single_root = not self.cfg["multi_root"]
            arcs = self.mask_whitespace(batch, scores.arcs)
            parts = pruned_parts(arcs, self.cfg["kept_heads"], scores.siblings.part_scorer(), single_root)
            return self.structure.kept_argmax(parts)
        heads: List[np.ndarray] = []
        sizes = [(end - start + 1) ** 3 for _, start, end in batch.sents]
        first = 0
        while first < len(sizes):
            last, total = first, 0
            while last < len(sizes) and (last == first or total + sizes[last] <= DECODE_CHUNK_PARTS):
                total += sizes[last]
                last += 1
            chunk = ParseScores(scores.arcs[first:last], scores.label_dep[first:last],
                                scores.label_head[first:last], scores.siblings[first:last])
            heads.extend(self.structure.argmax(self.tree_scores(batch.subset(first, last), chunk)))
            first = last
        return heads

    @property
    def _needs_tags(self) -> bool:
        return bool(self.model.attrs.get("needs_tags", False))

    # ------------------------------------------------------------- predicting
    def predict(self, docs: Iterable[Doc]):
        """Parse the docs without changing them.

        docs: the docs, with POS tags if the model is EdgeFeatures.
        RETURNS: (the SentenceBatch, heads per sentence, label ids per sentence).
        """
        docs = list(docs)
        if self._needs_tags:
            for i, doc in enumerate(docs):
                if len(doc) and not (doc.has_annotation("TAG") or doc.has_annotation("POS")):
                    raise ValueError(
                        f"{self.name}: doc {i} has no POS tags, and the EdgeFeatures model "
                        f"scores arcs from them; put a tagger before the parser"
                    )
        docs, batch, scores = self.score_docs(docs)
        if scores is None:
            return batch, [], []
        heads = self.decode(batch, scores)
        label_scores = self.model.get_ref("labeler").predict(
            (scores.label_dep, scores.label_head, heads)
        )
        return batch, heads, [ls.argmax(axis=1) for ls in label_scores]

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write heads and labels (and so the sentences) to the docs.

        docs: the docs that were parsed.
        predictions: what `predict` returned for them.
        """
        batch, heads, labels = predictions
        docs = list(docs)
        doc_start = offsets_of([len(doc) for doc in docs])
        # every doc's (HEAD, DEP) rows in one array, filled for all sentences at once
        rows = np.zeros((int(doc_start[-1]), 2), dtype=np.uint64)
        strings = self.vocab.strings
        label_ids = np.array([strings.add(label) for label in self.labels] or [0], dtype=np.uint64)
        root_id = np.uint64(strings.add(ROOT_LABEL))
        space_id = np.uint64(strings.add(SPACE_LABEL))
        if batch.sents:
            sents = np.array(batch.sents, dtype=np.int64).reshape(-1, 3)
            lengths = sents[:, 2] - sents[:, 1]
            h = np.concatenate([np.asarray(x[1:], dtype=np.int64) for x in heads])
            lab = np.concatenate([np.asarray(x, dtype=np.int64).reshape(-1) for x in labels])
            first = np.repeat(np.cumsum(lengths) - lengths, lengths)
            start = np.repeat(sents[:, 1], lengths)
            tokens = start + np.arange(len(h)) - first                   # within the doc
            at = np.repeat(doc_start[sents[:, 0]], lengths) + tokens     # within `rows`
            is_space = np.concatenate([doc.to_array(IS_SPACE).astype(bool) for doc in docs])[at]
            root = h == 0
            # HEAD is the offset to the head; uint64 holds a negative one as
            # its two's complement, as spaCy's own arrays do
            rows[at, 0] = np.where(root, 0, start + h - 1 - tokens).astype(np.uint64)
            rows[at, 1] = np.where(root, root_id, np.where(is_space, space_id, label_ids[lab]))
        for i, doc in enumerate(docs):
            if len(doc):
                doc.from_array([HEAD, DEP], rows[doc_start[i]:doc_start[i + 1]])

    # ---------------------------------------------------------------- training
    def gold(self, eg: Example, index: int):
        """Sentence ranges with gold arcs, and per range (heads, label ids):
        heads of length n+1 (-2 = unknown), label ids of length n (-1 = none)."""
        heads, deps = eg.get_aligned_parse(projectivize=False)
        ref = eg.reference
        if not ref.has_annotation("DEP"):
            return [], []
        x2y = eg.alignment.x2y
        known = np.zeros(len(eg.predicted), dtype=bool)
        for i in range(len(eg.predicted)):
            ys = x2y[i]
            known[i] = len(ys) == 1 and heads[i] is not None and ref[int(ys[0])].has_head()
        ranges = self.training_ranges(eg)
        # With the gold tokens, an arc out of its sentence or a gold that is
        # not a tree is an error in the data. With another tokenization
        # (raw-text training), the alignment can cut a word off its gold
        # sentence: those arcs are left unknown and such sentences skipped.
        # A sentence longer than max_sentence_length is decoded in pieces:
        # its arcs between pieces are left out of training and counted.
        retokenized = [t.text for t in eg.predicted] != [t.text for t in ref]
        uncut: List[Tuple[int, int]] = []  # the sentences before any cut for length, when needed

        def same_sentence(t: int, h: int) -> bool:
            if not uncut:
                uncut.extend(training_ranges(eg, self.cfg["max_unsegmented_length"], len(eg.predicted)))
            return any(s0 <= t < e0 and s0 <= h < e0 for s0, e0 in uncut)
        all_space = {start: all(t.is_space for t in eg.predicted[start:end]) for start, end in ranges}
        golds, kept = [], []
        for start, end in ranges:
            n = end - start
            g = np.full(n + 1, UNKNOWN_HEAD, dtype=np.int64)
            g[0] = -1
            lab = np.full(n, -1, dtype=np.int64)
            for j, t in enumerate(range(start, end), start=1):
                if not known[t]:
                    continue
                h = int(heads[t])
                if not start <= h < end and retokenized:
                    self.count_misaligned("arcs")
                    continue
                if not start <= h < end and same_sentence(t, h):
                    self.count_unrepresentable(
                        f"gold arcs between the pieces of a sentence longer than "
                        f"max_sentence_length = {self.training_length} (trained in pieces) are "
                        f"left out of training (first: token {t} in example {index})")
                    continue
                if not start <= h < end:
                    raise self.gold_error(index, eg, (
                        f"the gold head of token {t} ({eg.predicted[t].text!r}) is token {h}, "
                        f"outside its sentence (tokens {start}..{end - 1}); a tree cannot "
                        f"cross a sentence boundary"
                    ))
                if eg.predicted[h].is_space and not all_space[start]:
                    raise self.gold_error(index, eg, (
                        f"the gold tree makes whitespace token {h} "
                        f"{'the root' if h == t else 'the head of token ' + str(t)}; "
                        f"whitespace tokens hang from a word and head nothing"
                    ))
                g[j] = 0 if h == t else h - start + 1
                dep = deps[t]
                if g[j] != 0 and dep:
                    lab[j - 1] = self.label_id(dep, index, eg)
            if (g[1:] == UNKNOWN_HEAD).all():
                continue
            roots = int((g[1:] == 0).sum())
            if retokenized and roots > 1 and not self.cfg["multi_root"]:
                self.count_misaligned("sentences")
                continue
            if (g[1:] != UNKNOWN_HEAD).all():
                try:
                    check_heads(g, n)
                except ValueError as err:
                    raise self.gold_error(
                        index, eg, f"the gold arcs of tokens {start}..{end - 1} are not a tree: {err}"
                    ) from None
                if not self.cfg["multi_root"] and roots > 1:
                    raise self.gold_error(index, eg, (
                        f"the sentence at tokens {start}..{end - 1} has {roots} roots; set "
                        f"multi_root = true to train on several roots per sentence"
                    ))
            golds.append((g, lab))
            kept.append((start, end))
        return kept, golds

    def mask_whitespace(self, batch: SentenceBatch, arcs: List[np.ndarray]) -> List[np.ndarray]:
        """float64 copies of the arc scores in which a whitespace token heads
        nothing and is not the root (as in spaCy's parser, it hangs from a
        word), unless its sentence has no other word.

        batch: the sentences the scores are for.
        arcs: one (n+1, n+1) score array per sentence.
        RETURNS: the masked float64 arrays.
        """
        # only the docs these sentences come from: `decode` asks per chunk
        is_space = {d: batch.docs[d].to_array(IS_SPACE).astype(bool) for d in {d for d, _, _ in batch.sents}}
        # spaces before each token of each doc, to skip the sentences with none
        before = {d: np.concatenate([[0], np.cumsum(flags)]).tolist() for d, flags in is_space.items()}
        out = []
        for (doc_i, start, end), S in zip(batch.sents, arcs):
            S = np.array(S, dtype=np.float64)
            if before[doc_i][end] == before[doc_i][start]:
                out.append(S)
                continue
            space = np.flatnonzero(is_space[doc_i][start:end]) + 1
            if len(space) < end - start:
                S[space, :] = -np.inf
                S[0, space] = -np.inf
            out.append(S)
        return out

    def complete_gold(self, scores: np.ndarray, gold: np.ndarray, where: str) -> np.ndarray:
        """The best tree that keeps every known gold arc (partial annotation).

        scores: the sentence's arc (or, second order, part) scores.
        gold: gold heads, -2 where unknown.
        where: how an error names the sentence.
        RETURNS: complete heads.
        """
        if (gold[1:] != UNKNOWN_HEAD).all():
            return gold
        try:
            return self.structure.complete(scores, gold)
        except NoLegalStructureError:
            raise ValueError(
                f"{self.name}: {where}: the known gold arcs cannot be completed to a "
                f"{'projective ' if self.structure.projective else ''}tree "
                f"(a cycle, or more than one root)"
            ) from None

    def get_loss_from_scores(self, batch: SentenceBatch, scores: ParseScores, golds):
        """Tree loss plus label loss, and the gradient of the ParseScores.

        Both are per word: the gradient is divided by the batch's words.
        """
        parts = self.tree_scores(batch, scores)
        self.check_finite(parts)
        heads = [self.complete_gold(S, g, f"sentence {i} of the batch")
                 for i, (S, (g, _)) in enumerate(zip(parts, golds))]
        n_words = sum(batch.lengths())
        arc_loss, grads = self.structure_loss(parts, heads)
        label_loss, d_dep, d_head = self._label_loss(scores, heads, [lab for _, lab in golds], n_words)
        grads = [(g / n_words).astype(np.float32) for g in grads]
        if scores.siblings is None:
            d_scores = ParseScores(grads, d_dep, d_head)
        else:  # an arc's score enters every part of the arc, whatever its sibling
            d_scores = ParseScores([g.sum(axis=1) for g in grads], d_dep, d_head, grads)
        return arc_loss + label_loss, d_scores

    def _label_loss(self, scores: ParseScores, heads, gold_labels, n_words: int):
        """Cross-entropy of the labeler on the gold arcs."""
        labeler = self.model.get_ref("labeler")
        label_scores, backprop = labeler.begin_update((scores.label_dep, scores.label_head, heads))
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

    def prepare_training_doc(self, eg: Example) -> None:
        """Give the predicted doc the gold tags when the model reads tags and
        the doc has none (training only)."""
        if not self._needs_tags:
            return
        doc, ref = eg.predicted, eg.reference
        if doc.has_annotation("TAG") or doc.has_annotation("POS") or not ref.has_annotation("DEP"):
            return  # tags already there, or no parse to learn from this example
        if len(doc) and not (ref.has_annotation("TAG") or ref.has_annotation("POS")):
            raise ValueError(
                f"{self.name}: the EdgeFeatures model scores arcs from POS tags, and neither "
                f"the predicted doc nor the reference of the example {ref.text[:40]!r} "
                f"has any (TAG or POS); give the corpus tags, or put a tagger before the parser"
            )
        if not ref.has_annotation("TAG"):
            for token, pos in zip(doc, eg.get_aligned("POS", as_string=True)):
                if pos:
                    token.pos_ = pos
            return
        for token, tag in zip(doc, eg.get_aligned("TAG", as_string=True)):
            if tag:
                token.tag_ = tag

    # ----------------------------------------------------------- initializing
    def initialize(self, get_examples, *, nlp=None, labels=None) -> None:
        """As `StructuredComponent.initialize`; warns when a second-order
        model would be trained by the tree CRF (over projective trees) and
        decoded by the non-projective search, which then meets sibling parts
        that training never scored. (The 'local' loss scores every part
        of the gold tree, crossing arcs included.)"""
        super().initialize(get_examples, nlp=nlp, labels=labels)
        if self.order == 2 and self.cfg["decoder"] == "cle" and self.cfg["loss"] == "crf":
            warnings.warn(
                f"{self.name}: a second-order model with decoder 'cle' is decoded by a "
                f"non-projective search, but the 'crf' loss trains it on projective "
                f"trees only; use loss = 'margin' (trained against the search, as "
                f"McDonald & Pereira 2006) or decoder = 'eisner'",
                stacklevel=2,
            )

    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        """The dependency labels of the examples' reference docs, sorted."""
        found = set()
        for eg in examples:
            for token in eg.reference:
                if token.dep_ and token.head.i != token.i:
                    found.add(token.dep_)
        return sorted(found)
