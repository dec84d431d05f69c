"""The `supervised_morph_segmenter` component: morphs learned from gold.

Where a corpus gives its words' segmentations (`token._.morphs` on the
reference docs), `spacy train` learns a segmenter from them
discriminatively, which neither the unsupervised `morph_segmenter` nor
Morfessor does:

- scores: `spacy_struct.MorphScorer.v1` scores every piece [i, j) of a
  word's characters from a character BiLSTM that also reads the word's
  vector in its sentence (the shared encoder), so context can decide
  between segmentations of one spelling;
- structure: the partitions of the word (`structs.partitions`): the best
  segmentation by semi-Markov Viterbi, the CRF's log Z and marginals by
  forward-backward, both in Cython;
- loss: any shared loss over that structure ("crf", the default, or
  "margin" with a Hamming cost per wrong cut decision); the training loop,
  sentence batching and settings contract are the shared
  `StructuredComponent`'s.

Words whose gold is missing (a canonical segmentation that does not spell
the word, a token the predicted doc splits otherwise) are left out of the
loss, the latter counted in `misaligned_gold`. Whitespace tokens are left
whole. Output goes to `token._.morphs` as the unsupervised component writes
it (stem: the longest morph; no tag), so the two are interchangeable.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from thinc.api import Model

from ..models import SentenceBatch
from ..models.morph_scorer import DEFAULT_MORPH_SCORER_MODEL, MAX_WORD_LENGTH_ATTR, token_texts
from ..pipeline import StructuredComponent, TokenMap, component_factory, prf_weights
from ..structs.partitions import Partitions
from ..annotations.morphs import Morphs, doc_morphs, write_morphs

#: the component's own settings and their defaults (beside SHARED_DEFAULTS)
SUPERVISED_DEFAULTS: Dict[str, Any] = {"max_morph_length": 0, "max_word_length": 128}
#: the one kind of piece the component predicts: its label set
MORPH_LABEL = "MORPH"


@component_factory("supervised_morph_segmenter", ["token._.morphs"],
                   DEFAULT_MORPH_SCORER_MODEL, SUPERVISED_DEFAULTS, "spacy_struct.morph_segmenter_scorer.v1",
                   prf_weights("morph_boundary", 1.0, morph_type_boundary_f=0.0))
def make_supervised_morph_segmenter(
    nlp: Language, name: str, model: Model,
    max_morph_length: int, max_word_length: int,
    loss: str, margin_cost: float, max_unsegmented_length: int, max_sentence_length: int,  # SHARED_DEFAULTS
    scorer: Optional[Callable],
) -> "SupervisedMorphSegmenter":
    """Morphological segmentation learned from gold morphs.

    max_morph_length: the longest morph considered, in characters, for
        speed on long tokens; 0 for any length.
    max_word_length: tokens longer than this many characters stay whole
        (one morph), with a warning, and their gold is left out of training:
        a word's piece scores take (m+1)^2 floats, so a DNA sequence or a
        base64 blob of 50,000 characters would take gigabytes. The longest
        SIGMORPHON 2022 word has 59 characters.
    loss: "crf" (the default: the likelihood of the gold segmentation among
        all of the word's) or "margin" (structured hinge, `margin_cost` per
        wrong cut decision); any registered loss defined on partitions.
    max_unsegmented_length, max_sentence_length: how a Doc is cut into the
        sentences whose words are encoded together
        (spacy_struct/pipeline/sentences.py).
    """
    return SupervisedMorphSegmenter.from_factory(locals())


#: gold of one sentence: per token, its gold cuts or None (no gold)
SentenceGold = List[Optional[np.ndarray]]


class SupervisedMorphSegmenter(StructuredComponent):
    """Sets `token._.morphs` with a segmenter trained on gold morphs."""

    default_name = "supervised_morph_segmenter"
    rule_sentences = False
    own_defaults = SUPERVISED_DEFAULTS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._warned_long_words = False

    def _limit_word_length(self) -> None:
        """Tell the scorer the setting (MorphScorer.v1 makes no piece scores
        for longer words). Set before each use, not once: loading a saved
        model restores its attributes, and the setting may be given at load."""
        self.model.attrs[MAX_WORD_LENGTH_ATTR] = self.cfg["max_word_length"]

    def update(self, examples: Iterable[Example], **kwargs: Any) -> Dict[str, float]:
        """As `StructuredComponent.update`, under the max_word_length in force."""
        self._limit_word_length()
        return super().update(examples, **kwargs)

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """max_morph_length is an int >= 0, max_word_length one >= 1; the
        loss is defined on partitions."""
        limit = settings["max_morph_length"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"{name}: max_morph_length must be 0 (any) or positive, got {limit!r}")
        limit = settings["max_word_length"]
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"{name}: max_word_length must be a positive integer, got {limit!r}")
        if settings["loss"] in ("local", "multilabel_margin"):
            raise ValueError(
                f"{name}: loss {settings['loss']!r} is not defined for segmentations "
                f"(partitions of a word); use 'crf' or 'margin'"
            )

    @property
    def structure(self) -> Partitions:
        """Partitions of each word into morphs of at most `max_morph_length`."""
        return Partitions(max_length=self.cfg["max_morph_length"] or None)

    def output_width(self, labels) -> int:
        """One column: a piece's score as a morph."""
        return 1

    missing_labels_message = (
        "found no gold morphs (token._.morphs) on the training examples' reference docs; "
        "this component learns from them (the unsupervised 'morph_segmenter' needs none)"
    )

    # ------------------------------------------------------------- predicting
    def predict(self, docs: Iterable[Doc]):
        """Segment every word of the docs without changing them.

        RETURNS: (the SentenceBatch, the cuts of each token of its
            sentences in order, an int64 array per token).
        """
        self._limit_word_length()
        _, batch, scores = self.score_docs(docs)
        if scores is None:
            return batch, []
        scored = [i for i, s in enumerate(scores) if s is not None]
        if len(scored) < len(scores):
            self._warn_long_words(batch, scores)
        cuts: List[Optional[np.ndarray]] = [None] * len(scores)
        for i, found in zip(scored, self.structure.argmax([scores[i].astype(np.float64) for i in scored])):
            cuts[i] = found
        return batch, cuts

    def _warn_long_words(self, batch: SentenceBatch, scores: List[Optional[np.ndarray]]) -> None:
        """Warn once that tokens over max_word_length are left whole."""
        if self._warned_long_words:
            return
        self._warned_long_words = True
        texts = token_texts(batch)
        long_words = [texts[i] for i, s in enumerate(scores) if s is None]
        first = long_words[0]
        warnings.warn(
            f"{self.name}: {len(long_words)} token(s) longer than max_word_length = "
            f"{self.cfg['max_word_length']} characters are left whole (first: {first[:40]!r}"
            f"{'...' if len(first) > 40 else ''}, {len(first):,} characters); raise max_word_length to "
            f"segment them (a word's piece scores take (m+1)^2 floats)"
        )

    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write `token._.morphs` on every token (whitespace and tokens
        outside the decoded sentences are one morph).

        docs: the docs that were segmented.
        predictions: what `predict` returned for them.
        """
        batch, cuts = predictions
        docs = list(docs)
        found: List[Dict[int, Any]] = [{} for _ in docs]
        at = 0
        for d, start, end in batch.sents:
            for t in range(start, end):
                token = docs[d][t]
                if not token.is_space and cuts[at] is not None:
                    found[d][t] = Morphs.from_cuts(token.text, cuts[at].tolist())
                at += 1
        for doc, segmented in zip(docs, found):
            write_morphs(doc, {t.i: segmented.get(t.i) or Morphs((t.text,)) for t in doc})

    # ---------------------------------------------------------------- training
    def gold(self, eg: Example, index: int) -> Tuple[list, List[SentenceGold]]:
        """The sentence ranges of the predicted doc, and for each the gold
        cuts of its tokens (None where there are none: left out of the loss)."""
        reference = doc_morphs(eg.reference)
        same_tokens = TokenMap(eg).same_tokens
        x2y = None if same_tokens else eg.alignment.x2y
        per_token: List[Optional[np.ndarray]] = []
        for token in eg.predicted:
            if same_tokens:
                morphs = reference[token.i]
            else:
                aligned = np.asarray(x2y[token.i]).tolist()
                morphs = None
                if len(aligned) == 1 and eg.reference[aligned[0]].text == token.text:
                    morphs = reference[aligned[0]]
                elif any(reference[j] is not None for j in aligned):
                    self.count_misaligned("morphs")
            cuts = None if morphs is None or token.is_space else np.array(morphs.cuts, np.int64)
            if cuts is not None and len(token.text) > self.cfg["max_word_length"]:
                self.count_unrepresentable(
                    f"gold words longer than max_word_length = {self.cfg['max_word_length']} "
                    f"characters are left out of training, as the component leaves them whole "
                    f"(first: {token.text[:40]!r} in example {index}); raise max_word_length to keep them"
                )
                cuts = None
            if cuts is not None and not self._representable(token.text, cuts):
                self.count_unrepresentable(
                    f"gold words with a morph longer than max_morph_length = "
                    f"{self.cfg['max_morph_length']} characters are left out of training, as "
                    f"the decoder cannot predict them (first: {'|'.join(morphs)!r} in "
                    f"example {index}); set max_morph_length = 0 to keep them"
                )
                cuts = None
            per_token.append(cuts)
        # every sentence is kept, with or without gold: a shared tok2vec's
        # listener must receive the docs the tok2vec component saw
        ranges = self.training_ranges(eg)
        return ranges, [per_token[start:end] for start, end in ranges]

    def _representable(self, word: str, cuts: np.ndarray) -> bool:
        """Whether every morph between the gold cuts fits max_morph_length."""
        limit = self.cfg["max_morph_length"]
        bounds = np.concatenate(([0], cuts, [len(word)]))
        return not limit or int(np.diff(bounds).max()) <= limit

    def get_loss_from_scores(self, batch: SentenceBatch, scores: List[np.ndarray], golds: List[SentenceGold]):
        """Loss of the piece scores of the words with gold, and the gradient
        of every word's scores (zero for words without gold), per gold word."""
        flat = [cuts for sentence in golds for cuts in sentence]
        kept = [i for i, cuts in enumerate(flat) if cuts is not None]
        grads = [None if s is None else np.zeros_like(s) for s in scores]
        if not kept:
            return 0.0, grads
        loss, kept_grads = self.structure_loss(
            [scores[i].astype(np.float64) for i in kept], [flat[i] for i in kept]
        )
        for i, grad in zip(kept, kept_grads):
            grads[i] = (grad / len(kept)).astype(np.float32)
        return loss, grads

    # ----------------------------------------------------------- initializing
    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        """[MORPH_LABEL] when some reference token has gold morphs, else []."""
        for eg in examples:
            if any(m is not None for m in doc_morphs(eg.reference)):
                return [MORPH_LABEL]
        return []
