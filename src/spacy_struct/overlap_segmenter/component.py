"""The `overlap_segmenter` component: typed segments that may overlap, nest,
cross and be discontinuous (McDonald, Crammer & Pereira 2005).

predict: the segment pair scorer gives (T, n+2, n+2) transition scores per
sentence ((T, n+2, n+3) with its gapped end, off by default), by default
with its skip layer, which scores a skip by the words around and inside
its gap together (without it the paper's transitions find no
discontinuous mention on GENIA's coordinations), and the k-best
gapped-segment decoder (`structs.segments.GappedSegments`) returns, per type, the segments that
score above the threshold, under the restrictions configured (no overlap,
no embedding, contiguous only, a maximum gap). update: a CRF over segment
sets on the segment lattice ("crf", the default) or the paper's multilabel
margin ("multilabel_margin"); the training loop, labels and sentence
batching are the shared `StructuredComponent`'s.

Output: every segment in `doc._.segments` (see `segments.py`); the
contiguous ones also in `doc.spans[spans_key]`, as spancat writes them, and
the fragments of the discontinuous ones in `doc.spans[spans_key +
"_fragments"]`, one span per fragment with the segment's number as its
`id`, so spaCy's span scorer, `spacy evaluate` and displaCy's span style
read them.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup
from spacy.training import Example
from thinc.api import Model

from ..losses import loss_names
from ..models import SentenceBatch, default_model_config
from ..pipeline import (
    StructuredComponent, TokenMap, WritesSpans, check_spans_key, component_factory, has_teacher_scores,
    non_negative_number, prf_weights,
)
from ..structs.segments import GappedSegments, Segments
from ..annotations.segments import get_segments, has_segments, set_segments

DEFAULT_SEGMENTER_MODEL = default_model_config("""
[model]
@architectures = "spacy_struct.SegmentPairScorer.v2"
gap_words = false
skip_width = 64
hidden_width = 128
dropout = 0.1
context_width = 256
context_depth = 1
characters = 0
""")

#: overlap_segmenter's own settings and their defaults (beside SHARED_DEFAULTS)
SEGMENTER_DEFAULTS: Dict[str, Any] = {
    "spans_key": "sc",
    "threshold": None,
    "gapped_threshold": None,
    "k": 0,
    "max_gap": None,
    "contiguous": False,
    "allow_overlap": True,
    "allow_embedding": True,
    "gapped_weight": 1.0,
    "teacher_weight": 0.5,
}

#: the losses defined for sets of segments, and the score at which each
#: decides a segment is present when no threshold is set
DEFAULT_THRESHOLDS = {"crf": float(np.log(0.5)), "multilabel_margin": 0.0}
#: ... and a segment with a gap, when neither threshold is set. crf: an
#: estimated probability of exp(-1) = 0.37 instead of 1/2. The threshold
#: that maximizes F1 is lower the lower the F1 that can be reached (about
#: half of it, for calibrated probabilities: Lipton, Elkan & Narayanaswamy
#: 2014), and gapped segments reach far less than contiguous ones: on
#: GENIA dev this raised the discontinuous F1 on each of three seeds and
#: left the overall F1 as it was (docs/results/segments.md).
DEFAULT_GAPPED_THRESHOLDS = {"crf": -1.0, "multilabel_margin": 0.0}
SEGMENT_LOSSES = tuple(DEFAULT_THRESHOLDS)


@component_factory("overlap_segmenter", ["doc.spans", "doc._.segments"],
                   DEFAULT_SEGMENTER_MODEL, SEGMENTER_DEFAULTS, "spacy_struct.overlap_segmenter_scorer.v1",
                   prf_weights("segments", 1.0, segments_discontinuous_f=None, segments_crossing_f=None))
def make_overlap_segmenter(
    nlp: Language, name: str, model: Model,
    spans_key: str, threshold: Optional[float], gapped_threshold: Optional[float], k: int,
    max_gap: Optional[int], contiguous: bool,
    allow_overlap: bool, allow_embedding: bool, gapped_weight: float, teacher_weight: float,
    loss: str, margin_cost: float, max_unsegmented_length: int, max_sentence_length: int,  # SHARED_DEFAULTS
    scorer: Optional[Callable],
) -> "OverlapSegmenter":
    """Typed segments that may overlap, nest, cross and have gaps.

    spans_key: `doc.spans` key of the contiguous segments (the discontinuous
        ones' fragments go under `spans_key + "_fragments"`).
    threshold: segments scoring above it are kept; raise it for precision,
        lower it for recall. None: the loss's own decision point (crf:
        log(1/2) = -0.69, where a segment's estimated probability of being
        gold passes 1/2; multilabel_margin: 0, the middle of the margin).
    gapped_threshold: the threshold of the segments with a gap. None: the
        loss's own for gapped segments when `threshold` is None too (crf:
        -1.0, an estimated probability of 0.37; see
        DEFAULT_GAPPED_THRESHOLDS), else `threshold`. Lower it for
        discontinuous recall without touching the contiguous segments.
        (With contiguous = true or max_gap = 0 there are none to decide.)
    k: segments considered per type and sentence (0: the sentence length,
        the paper's choice).
    max_gap: most words a segment may skip between two of its words (None:
        no limit). contiguous: no gaps at all (max_gap = 0).
    allow_overlap, allow_embedding: the paper's restrictions at prediction;
        when False, of two segments sharing words (or one inside the other)
        the higher scoring is kept. max_gap and contiguous restrict training
        too: gold segments they exclude are left out, counted and announced.
    gapped_weight: how many times a gold segment with a gap counts in the
        "crf" loss (1: once, as every segment); above 1 the model learns a
        higher rate for gapped segments, which are rare.
    teacher_weight: where the training corpus gives teacher scores
        (`spacy_struct.SentenceDocs.v1` with `teacher`, written by `python
        -m spacy_struct teach` from trained pipelines), the teacher's share
        of the loss's target, in [0, 1]: the model learns (1 - w) the gold
        and w the teacher's probability of every segment. Without teacher
        scores it does nothing.
    loss: "crf" (each segment present independently with rate exp(score),
        normalized exactly by forward-backward over the segment lattice; see
        structs.segments.GappedSegments) or "multilabel_margin" (the paper's:
        gold above +margin_cost, the k-best wrong below -margin_cost).
    max_unsegmented_length, max_sentence_length: how a Doc is cut into the
        sentences the decoder runs over (see spacy_struct/pipeline/sentences.py).
    """
    return OverlapSegmenter.from_factory(locals())


class OverlapSegmenter(WritesSpans, StructuredComponent):
    """Overlapping, nested, crossing and discontinuous segments per sentence."""

    default_name = "overlap_segmenter"
    rule_sentences = False
    own_defaults = SEGMENTER_DEFAULTS
    # the losses for one best structure per sentence: segments are a set
    unsupported_losses = tuple(sorted(set(loss_names()) - set(SEGMENT_LOSSES)))

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """spans_key a non-empty string; the decoding settings valid for
        `GappedSegments` (the loss, one for sets of segments, is checked by
        the base through `unsupported_losses`)."""
        check_spans_key(name, settings)
        for key in ("threshold", "gapped_threshold"):
            threshold = settings[key]
            if threshold is not None and (
                isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                or not np.isfinite(threshold)
            ):
                raise ValueError(f"{name}: {key} must be a finite number or null, got {threshold!r}")
        for flag in ("contiguous", "allow_overlap", "allow_embedding"):
            settings[flag] = bool(settings[flag])
        try:
            self._structure(settings)
        except (TypeError, ValueError) as err:
            raise ValueError(f"{name}: {err}") from None
        teacher = non_negative_number(name, "teacher_weight", settings["teacher_weight"])
        if teacher > 1:
            raise ValueError(f"{name}: teacher_weight is the teacher's share of the target, in [0, 1]; "
                             f"got {teacher!r}")
        settings["teacher_weight"] = teacher
        weight = settings["gapped_weight"]
        if weight != 1 and (settings["loss"] != "crf" or settings["contiguous"] or settings["max_gap"] == 0):
            raise ValueError(
                f"{name}: gapped_weight = {weight!r} weights gapped gold segments in the 'crf' loss; "
                f"with loss = {settings['loss']!r}, contiguous = {settings['contiguous']} and "
                f"max_gap = {settings['max_gap']!r} it would do nothing"
            )

    @staticmethod
    def _structure(cfg: Dict[str, Any]) -> GappedSegments:
        threshold, gapped_threshold = cfg["threshold"], cfg["gapped_threshold"]
        if gapped_threshold is None:
            gapped_threshold = DEFAULT_GAPPED_THRESHOLDS[cfg["loss"]] if threshold is None else threshold
        if threshold is None:
            threshold = DEFAULT_THRESHOLDS[cfg["loss"]]
        return GappedSegments(
            max_gap=cfg["max_gap"], contiguous=cfg["contiguous"], k=cfg["k"],
            threshold=threshold, allow_overlap=cfg["allow_overlap"],
            allow_embedding=cfg["allow_embedding"], gapped_weight=cfg["gapped_weight"],
            gapped_threshold=gapped_threshold,
        )

    @property
    def structure(self) -> GappedSegments:
        """The gapped-segment structure under the configured restrictions."""
        return self._structure(self.cfg)


    @property
    def missing_labels_message(self) -> str:
        return (
            "found no segments (doc._.segments) in the training examples; convert "
            "the corpus with `python -m spacy_struct convert craft` or set "
            "doc._.segments on the reference docs"
        )

    # ------------------------------------------------------------- predicting
    def set_annotations(self, docs: Iterable[Doc], predictions) -> None:
        """Write the segments to `doc._.segments`, the contiguous ones to
        `doc.spans[spans_key]` and the discontinuous ones' fragments to
        `doc.spans[spans_key + "_fragments"]`.

        docs: the docs that were tagged.
        predictions: what `predict` returned for them.
        """
        batch, predicted = predictions
        docs = list(docs)
        labels = self.labels
        key = self.spans_key
        for doc, sentences in zip(docs, self.per_doc(batch, predicted, len(docs))):
            items = sorted(((labels[t], runs([start + w for w in words])) for start, segs in sentences
                            for t, words in segs.keys()),
                           key=lambda item: (item[1][0][0], -item[1][-1][1], item[0]))
            set_segments(doc, items)
            whole, pieces = [], []
            for number, (label, frags) in enumerate(items):
                if len(frags) == 1:
                    whole.append(Span(doc, frags[0][0], frags[0][1], label=label))
                else:
                    pieces.extend(
                        Span(doc, s, e, label=label, span_id=str(number)) for s, e in frags
                    )
            doc.spans[key] = SpanGroup(doc, name=key, spans=whole)
            doc.spans[key + "_fragments"] = SpanGroup(doc, name=key + "_fragments", spans=pieces)

    # ---------------------------------------------------------------- training
    def gold(self, eg: Example, index: int):
        """Sentence ranges of the predicted doc and the gold `Segments` of
        each, in sentence word indices (None for each sentence of a doc
        without segments that has teacher scores: unlabelled text)."""
        ref = eg.reference
        if not has_segments(ref):
            if self.cfg["teacher_weight"] and has_teacher_scores(self.name, ref):
                ranges = self.training_ranges(eg)  # unlabelled text: the teacher's scores alone
                return ranges, [None] * len(ranges)
            raise self.gold_error(index, eg, (
                "the reference doc has no doc._.segments. Convert the corpus with "
                "`python -m spacy_struct convert craft` (or set doc._.segments = "
                "[(label, [(start, end), ...]), ...]; an empty list for a doc without "
                "segments). If the corpus has them, spaCy's reader dropped them: with "
                "gold_preproc = true (on docs with sentence boundaries) or "
                "max_length > 0 it cuts docs with Span.as_doc, which keeps no user_data. "
                "A doc without annotation trains only where the corpus gives it teacher "
                "scores (SentenceDocs.v1's teacher)"
            ))
        ranges = self.training_ranges(eg)
        per_sent: List[List[Tuple[int, Tuple[int, ...]]]] = [[] for _ in ranges]
        token_map = TokenMap(eg)
        for seg in get_segments(ref):
            label = self.label_id(seg.label_, index, eg, of=f" of segment {seg.text!r}")
            words = []
            for s, e in seg.offsets:
                mapped = token_map.to_predicted(s, e)
                if mapped is None:
                    break
                words.extend(range(*mapped))
            else:
                sent = self.sentence_of(ranges, words[0], words[-1], index, eg,
                                        f"segment {seg.text!r} (tokens {list(seg.offsets)})")
                s0 = ranges[sent][0]
                if not self._representable(words):
                    self._count_unrepresentable(seg, index)
                    continue
                per_sent[sent].append((label, tuple(w - s0 for w in words)))
                continue
            self.count_misaligned("segments")
        golds = [Segments.from_list(sorted(set(items))) for items in per_sent]
        return ranges, golds

    def _representable(self, words: List[int]) -> bool:
        """Whether the decoder can predict a segment over these words."""
        gap = self.structure.gap
        return gap < 0 or all(b - a - 1 <= gap for a, b in zip(words, words[1:]))

    def _count_unrepresentable(self, seg, index: int) -> None:
        self.count_unrepresentable(
            f"gold segments with a gap the decoder cannot predict (max_gap = "
            f"{self.cfg['max_gap']}, contiguous = {self.cfg['contiguous']}) are left out "
            f"of training (first: {seg.text!r} in example {index})"
        )

    def get_loss_from_scores(self, batch: SentenceBatch, scores: List[np.ndarray], golds):
        """Loss of the transition scores, and their gradient (per word of the
        batch), as the base computes them, checked for overflow."""
        loss, out = super().get_loss_from_scores(batch, scores, golds)
        # The crf loss is a sum of exp(score) over exponentially many segments:
        # scores that grow too fast overflow it before the loss check sees NaN.
        if not np.isfinite(loss) or not all(np.isfinite(g).all() for g in out):
            raise self.diverged(
                "the segment loss or its gradient overflowed (the summed rate of a "
                "sentence's segments is too large; max_gap limits how many there are)"
            )
        return loss, out

    # ----------------------------------------------------------- initializing
    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        """The segment labels in the examples' reference docs, sorted."""
        return sorted({seg.label_ for eg in examples for seg in get_segments(eg.reference)})


def runs(words: List[int]) -> List[Tuple[int, int]]:
    """Increasing token indices as maximal [start, end) runs (the fragments)."""
    out: List[List[int]] = []
    for w in words:
        if out and w == out[-1][1]:
            out[-1][1] = w + 1
        else:
            out.append([w, w + 1])
    return [(s, e) for s, e in out]
