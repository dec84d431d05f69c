"""What every structured component does the same way, written once.

A structured component reads gold from `Example`s, builds one structure per
sentence, trains a scorer through a structured loss and writes annotations.
Only reading the gold, decoding and writing are its own; the rest is here,
in parts a component takes as it needs them:

- `SentenceBatching`: which token ranges a structure is built over
  (`sentences.py`) and the `SentenceBatch` a scorer reads.
- `LabelSet`: `labels`, `label_data`, `add_label`, and setting the label set
  at initialization, with resizing checked through the output layer's `nO`
  dimension (the layer the scorer names "output"), not through parameter
  names.
- `GoldErrors`: one format for errors about a training example, naming the
  component, the example and its text; `MisalignedGold`: a count (and one
  warning) of the gold that raw-text training cannot align.
- `StructuredComponent`: a `TrainablePipe` with all of the above plus the
  gradient training loop (`update`, `get_loss`, `initialize`) over a
  registered loss (`spacy_struct.losses`) and the component's structure
  object (`spacy_struct.structs`), and the settings contract: what was
  learned (labels, and the settings that shape the model) comes from disk,
  how to decode comes from the config.

A component without a gradient loss (morph_segmenter, a sampler that learns
in `initialize`) is a plain spaCy `Pipe` and takes from here what fits.
"""

import warnings
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.util import minibatch
from spacy.training import Example, validate_examples, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate

from ..annotations.text import text_preview
from ..losses import get_loss, loss_names
from ..models.batch import SentenceBatch
from ..structs.base import Structure
from .sentences import Range, check_sentence_limits, sentence_ranges, training_ranges

#: Version of the saved model layout. A pipeline saved with another one was
#: built from another layer tree and cannot be loaded into this one.
MODEL_FORMAT = 2

#: The defaults of the settings every structured component takes, for the
#: components' `default_config`: the best on every benchmark so far.
SHARED_DEFAULTS: Dict[str, Any] = {
    "loss": "crf",
    "margin_cost": 1.0,
    "max_unsegmented_length": 200,
    "max_sentence_length": 512,
}


#: a score no healthy model reaches (they stay within a few hundred): past
#: it the updates have blown the weights up, even while the loss is finite
MAX_SANE_SCORE = 1e6


class TrainingDivergedError(FloatingPointError, ValueError):
    """The training's numbers blew up (NaN or infinite scores or loss)."""


def non_negative_number(name: str, key: str, value: Any) -> float:
    """`value` as a float; a ValueError naming component `name` and setting
    `key` when it is not a finite number >= 0 (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: {key} must be a finite number >= 0, got {value!r}")
    return float(value)


def factory_config(model: Any, own_defaults: Dict[str, Any], scorer: str) -> Dict[str, Any]:
    """A structured component's `default_config` for `Language.factory`: its
    default model, its own settings, the shared settings and the name of
    its registered scorer, in the order `spacy init config` writes them. A
    component's own default for a shared setting (mst_parser's loss) wins."""
    shared = {key: value for key, value in SHARED_DEFAULTS.items() if key not in own_defaults}
    return {"model": model, **own_defaults, **shared, "scorer": {"@scorers": scorer}}


class SentenceBatching:
    """Token ranges to build structures over, and the batch a scorer reads.

    Needs `self.cfg` with "max_unsegmented_length" and "max_sentence_length".
    """

    cfg: Dict[str, Any]

    #: whether the fall-back to rule-based sentences was announced already
    _warned_rule_sentences = False
    _warned_long_sentences = False
    #: whether a short Doc without boundaries is cut by rule too (a parser:
    #: one tree over several sentences is wrong) or kept whole (spans: a
    #: span tree over a short text costs little and loses no entity to a
    #: wrong cut)
    rule_sentences = True

    @property
    def max_sentence_length(self) -> int:
        """The longest range a structure is built over: the setting, or less
        where a component's structure costs more than n x n memory."""
        return self.cfg["max_sentence_length"]

    @property
    def sentence_length_note(self) -> str:
        """Why `max_sentence_length` in force is below the setting ("" when
        it is the setting), for the warning when a sentence is cut."""
        return ""

    def sentence_ranges(self, doc: Doc) -> List[Range]:
        """The [start, end) token ranges of `doc` that get one structure each:
        its sentences, or sentences by rule when it has no boundaries (with a
        one-time warning when the rule cuts a doc in several)."""
        ranges = sentence_ranges(
            doc, self.cfg["max_unsegmented_length"], self.max_sentence_length,
            by_rule=self.rule_sentences,
        )
        if (not self._warned_long_sentences and doc.has_annotation("SENT_START")
                and any(not doc[start].is_sent_start for start, _ in ranges[1:])):
            self._warned_long_sentences = True
            warnings.warn(
                f"{getattr(self, 'name', type(self).__name__)}: a sentence longer than "
                f"{self.max_sentence_length} tokens (the max_sentence_length in force"
                f"{self.sentence_length_note}) is cut into pieces, each decoded as a sentence of its own",
                stacklevel=3,
            )
        if len(ranges) > 1 and not doc.has_annotation("SENT_START") and not self._warned_rule_sentences:
            self._warned_rule_sentences = True
            warnings.warn(
                f"{getattr(self, 'name', type(self).__name__)}: a doc without sentence "
                f"boundaries is cut into sentences by rule (after sentence-final "
                f"punctuation and at blank lines); put a trained 'senter' (or a "
                f"'sentencizer') before this component for better sentences",
                stacklevel=3,
            )
        return ranges

    def training_ranges(self, eg: Example) -> List[Range]:
        """The ranges of `eg.predicted` to train over: the gold sentences."""
        return training_ranges(
            eg, self.cfg["max_unsegmented_length"], self.max_sentence_length
        )

    def make_batch(
        self, docs: Sequence[Doc], ranges: Optional[Sequence[List[Range]]] = None
    ) -> SentenceBatch:
        """A SentenceBatch of `docs`, with the given ranges per doc or their own."""
        if ranges is None:
            ranges = [self.sentence_ranges(doc) for doc in docs]
        sents = [(i, s, e) for i, rs in enumerate(ranges) for s, e in rs]
        return SentenceBatch(list(docs), sents)


class GoldErrors:
    """One message format for a problem with a training example."""

    name: str

    def gold_error(self, index: int, eg: Example, problem: str) -> ValueError:
        """A ValueError "<component>: example <index> ('<text>...'): <problem>"."""
        return ValueError(f"{self.name}: example {index} ({preview(eg)}): {problem}")


class MisalignedGold:
    """Counts gold left out of training: because the predicted tokens cut it
    differently from the reference (once per kind), or because the
    component's settings make it one the decoder cannot predict; each is
    announced in a warning the first time."""

    name: str
    _misaligned: Optional[Dict[str, int]] = None
    _unrepresentable = 0

    def count_unrepresentable(self, message: str) -> None:
        """Count one gold item left out because the decoder cannot predict
        it; `message` (what and why, naming the first example) is warned the
        first time since `initialize`."""
        if not self._unrepresentable:
            warnings.warn(f"{self.name}: {message}; component.unrepresentable_gold counts them")
        self._unrepresentable += 1

    @property
    def unrepresentable_gold(self) -> int:
        """Gold items left out of training since `initialize` because the
        component's settings exclude them (counted per reading)."""
        return self._unrepresentable

    def count_misaligned(self, what: str) -> None:
        """Count one left-out gold item of kind `what` ("arcs", "spans", ...);
        the first of each kind is announced in a warning."""
        if self._misaligned is None:
            self._misaligned = {}
        if what not in self._misaligned:
            warnings.warn(
                f"{self.name}: some gold {what} are left out of training because the "
                f"predicted tokens (the pipeline's tokenizer, gold_preproc = false) "
                f"split the words differently from the reference; "
                f"component.misaligned_gold counts them"
            )
        self._misaligned[what] = self._misaligned.get(what, 0) + 1

    @property
    def misaligned_gold(self) -> Dict[str, int]:
        """How many gold items of each kind were left out for misalignment
        since `initialize`, counted each time an example was read (so an
        arc left out in every epoch counts once per epoch)."""
        return dict(self._misaligned or {})


class LabelSet:
    """The label set in `cfg["labels"]`, sized into the scorer's "output" layer."""

    cfg: Dict[str, Any]
    model: Model
    name: str

    @property
    def labels(self) -> Tuple[str, ...]:
        """The labels the component predicts, in the order of the output layer."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """The labels, for `nlp.initialize(labels=...)` (`spacy init labels`)."""
        return list(self.labels)

    @property
    def is_sized(self) -> bool:
        """Whether the output layer's size (nO, the number of labels) is fixed."""
        output = self.model.get_ref("output")
        return output.has_dim("nO") is True

    def add_label(self, label: str) -> int:
        """Add a label before initialization.

        label: a non-empty string.
        RETURNS: 1 if the label was added, 0 if it was there already.
        """
        if not isinstance(label, str) or not label:
            raise ValueError(f"{self.name}: a label must be a non-empty string, got {label!r}")
        if label in self.cfg["labels"] or label in self.implicit_labels:
            return 0
        if self.is_sized:
            raise ValueError(
                f"{self.name}: cannot add label {label!r} to a component that is already "
                f"initialized; initialize it again with data that has the label"
            )
        self.cfg["labels"].append(label)
        return 1

    #: labels the component writes without predicting them (mst_parser's ROOT)
    implicit_labels: Tuple[str, ...] = ()

    def set_labels(self, labels: Sequence[str]) -> None:
        """Replace the label set and size the output layer to it.

        Raises a ValueError for a label that is not a non-empty string, and
        for a component whose output layer already has another size.
        """
        found = []
        for label in labels:
            if not isinstance(label, str) or not label:
                raise ValueError(f"{self.name}: a label must be a non-empty string, got {label!r}")
            if label not in self.implicit_labels and label not in found:
                found.append(label)
        output = self.model.get_ref("output")
        width = self.output_width(found)
        if self.is_sized and output.get_dim("nO") != width:
            raise ValueError(
                f"{self.name}: the component is already initialized with "
                f"{output.get_dim('nO')} output columns and cannot be resized to {width} "
                f"({len(found)} labels); add a new {self.name} component for the new label set"
            )
        self.cfg["labels"] = found
        output.set_dim("nO", width)

    def output_width(self, labels: Sequence[str]) -> int:
        """The output layer's number of columns for `labels`: one per label,
        unless the component scores its labels from shared parts."""
        return len(labels)


class StructuredComponent(SentenceBatching, LabelSet, GoldErrors, MisalignedGold, TrainablePipe):
    """Base of the gradient-trained structured components.

    A subclass gives:
    - `structure`: the structure object its loss and decoder use;
    - `gold(eg, index)`: the sentence ranges of `eg.predicted` with gold,
      and one gold annotation per range;
    - `get_loss_from_scores(batch, scores, golds)`: loss and the gradient
      of the scores (usually `structure_loss` on the float64 scores);
    - `labels_in(examples)` and `missing_labels_message`, for `initialize`;
    - `predict` and `set_annotations`.
    """

    #: the name a component gets when none is given
    default_name = "structured_component"
    #: the component's own settings and their defaults, beside SHARED_DEFAULTS
    #: (an own default for a shared setting wins); its factory's
    #: `default_config` is built from both
    own_defaults: Dict[str, Any] = {}
    #: own settings that shape the trained model (so a saved pipeline keeps
    #: its own whatever the config says), with the value a pipeline saved
    #: before the setting existed was trained with
    learned_settings: Dict[str, Any] = {}
    #: registered losses that need what the component's structure lacks
    #: (multilabel_margin needs independent candidates, which trees are not)
    unsupported_losses: Tuple[str, ...] = ()

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: Optional[str] = None,
        *,
        scorer: Optional[Callable] = None,
        **settings: Any,
    ) -> None:
        """Create the component.

        vocab: the pipeline's vocab.
        model: the scorer (a thinc Model whose output layer is called "output").
        name: the component's name in the pipeline (`default_name` if None).
        scorer: the scoring function of `Language.evaluate`.
        settings: the shared settings (SHARED_DEFAULTS: loss, margin_cost,
            max_unsegmented_length, max_sentence_length) and the component's
            own (`own_defaults`); a setting not given takes its default.
        """
        name = name or self.default_name
        unknown = sorted(set(settings) - set(SHARED_DEFAULTS) - set(self.own_defaults))
        if unknown:
            raise TypeError(
                f"{name}: unknown settings {unknown}; the settings are "
                f"{sorted({**SHARED_DEFAULTS, **self.own_defaults})}"
            )
        values = {**SHARED_DEFAULTS, **self.own_defaults, **settings}
        usable = tuple(loss for loss in loss_names() if loss not in self.unsupported_losses)
        if values["loss"] not in usable:
            raise ValueError(f"{name}: loss must be one of {usable}, got {values['loss']!r}")
        values["margin_cost"] = non_negative_number(name, "margin_cost", values["margin_cost"])
        check_sentence_limits(name, values["max_unsegmented_length"], values["max_sentence_length"])
        self.check_settings(name, values)
        self.vocab = vocab
        self.model = model
        self.name = name
        self.scorer = scorer
        self._settings: Dict[str, Any] = values
        self.cfg: Dict[str, Any] = {
            "labels": [], "model_format": MODEL_FORMAT, "component": self.default_name, **values,
        }

    def check_settings(self, name: str, settings: Dict[str, Any]) -> None:
        """Check the component's own settings (and normalize them in place);
        raise a ValueError naming the component and the setting."""

    # ------------------------------------------------------------- settings
    @property
    def structure(self) -> Structure:
        """The structure object that decoding and the loss use."""
        raise NotImplementedError

    def from_disk(self, path, *, exclude: Iterable[str] = tuple()) -> "StructuredComponent":
        """Load what was learned (labels, weights, `learned_settings`) from
        `path`; the other settings given to the component (its config) stay
        in force."""
        cfg_file = Path(path) / "cfg"
        self._load(lambda: TrainablePipe.from_disk(self, path, exclude=exclude), str(path),
                   cfg_read=lambda: cfg_file.exists())
        return self

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "StructuredComponent":
        """Load what was learned from `bytes_data`, as `from_disk`."""
        self._load(lambda: TrainablePipe.from_bytes(self, bytes_data, exclude=exclude), "bytes",
                   cfg_read=lambda: True)
        return self

    def _load(self, load: Callable[[], Any], where: str, cfg_read: Callable[[], bool]) -> None:
        """Run `load`; a saved cfg without this MODEL_FORMAT (older pipelines
        have none) gets a clear error instead of a layer mismatch."""
        for key in ("model_format", "component", *self.learned_settings):  # read from what was saved
            self.cfg.pop(key, None)
        try:
            load()
        except Exception as err:
            self._check_saved_component(where, err)
            if cfg_read() and "model_format" not in self.cfg:
                raise ValueError(
                    f"{self.name}: could not read the saved component ({where}) as a "
                    f"{self.default_name} ({type(err).__name__}: {err}): it is another "
                    f"component's, one saved by an earlier version of spacy_struct (then "
                    f"train it again with this version), or damaged"
                ) from err
            if cfg_read() and self.cfg.get("model_format") != MODEL_FORMAT:
                raise self._format_error(where) from err
            if "Attempt to change dimension" in str(err):  # thinc: a saved layer of another shape
                raise ValueError(
                    f"{self.name}: the model the config describes does not have the shape of "
                    f"the saved one ({err}); settings of the model's architecture (widths, "
                    f"order) are fixed by training: load without changing them, or train again. "
                    f"A config.cfg that leaves a model setting out takes the factory's default, "
                    f"which may have changed since the pipeline was saved (mst_parser's order: "
                    f"2 now, 1 before): add the setting to its [model] block"
                ) from err
            raise
        self._check_saved_component(where)
        self.cfg["component"] = self.default_name
        if self.cfg.get("model_format") != MODEL_FORMAT:
            raise self._format_error(where)
        learned = {key: self.cfg.get(key, saved_before) for key, saved_before in self.learned_settings.items()}
        for key, value in learned.items():
            if self._settings[key] != value:
                warnings.warn(
                    f"{self.name}: {key} = {self._settings[key]!r} in the config, but the "
                    f"saved model was trained with {key} = {value!r}, which it keeps: the "
                    f"setting shapes the model and only training can change it"
                )
        self.check_loaded_settings(dict(self.cfg))
        self.cfg.update(self._settings)
        self.cfg.update(learned)

    def check_loaded_settings(self, saved: Dict[str, Any]) -> None:
        """Warn where a setting given at load time (`self._settings`) does
        not fit what the saved model (its cfg: `saved`) was trained with,
        though the setting may change; `learned_settings` are kept from
        disk instead."""

    def _check_saved_component(self, where: str, err: Optional[Exception] = None) -> None:
        """Refuse what another kind of component saved (two components may
        share an architecture, so the weights alone can load); pipelines
        saved before the kind was recorded pass."""
        saved = self.cfg.get("component", self.default_name)
        if saved != self.default_name:
            raise ValueError(
                f"{self.name}: the saved component ({where}) is a {saved}, not a "
                f"{self.default_name}; load it with its own factory"
            ) from err

    def _format_error(self, where: str) -> ValueError:
        return ValueError(
            f"{self.name}: the saved component ({where}) was made by an earlier version "
            f"of spacy_struct whose model has another layout (format "
            f"{self.cfg.get('model_format', 1)}, this version reads {MODEL_FORMAT}); "
            f"train it again with this version"
        )

    # ----------------------------------------------------------- predicting
    #: the most words `pipe` predicts for at once: nlp.pipe's batch_size
    #: counts docs, and the scorer's activations (a few thousand floats per
    #: word) of 1,000 long docs would take gigabytes
    predict_batch_words = 10_000

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        """Annotate a stream of docs, as spaCy's `TrainablePipe.pipe`, but
        each batch of `batch_size` docs is predicted in pieces of at most
        `predict_batch_words` words (a longer doc alone), so memory is
        bounded whatever the batch size. The output is the same.
        """
        error_handler = self.get_error_handler()
        for docs in minibatch(stream, size=batch_size):
            for piece in word_bounded(docs, self.predict_batch_words):
                try:
                    self.set_annotations(piece, self.predict(piece))
                    yield from piece
                except Exception as err:
                    error_handler(self.name, self, piece, err)

    def score_docs(self, docs: Iterable[Doc]) -> Tuple[List[Doc], SentenceBatch, Any]:
        """Run the scorer over the sentences of `docs`, as `predict` starts.

        docs: the docs to predict for.
        RETURNS: (the docs as a list, their SentenceBatch, the scorer's output
            or None when the docs have no sentence to decode).
        """
        docs = list(docs)
        if not self.labels:
            raise ValueError(f"{self.name}: the component has no labels; initialize it first")
        batch = self.make_batch(docs)
        if not batch.sents:
            return docs, batch, None
        return docs, batch, self.model.predict(batch)

    # ------------------------------------------------------------- training
    def gold(self, eg: Example, index: int) -> Tuple[List[Range], List[Any]]:
        raise NotImplementedError

    def get_loss_from_scores(self, batch: SentenceBatch, scores: Any, golds: List[Any]):
        """The configured loss of the structure over the scores (float64),
        and their gradient per word of the batch (float32), what the scorer's
        backprop takes. Components whose scores are not one array per
        sentence (arcs and labels, label parts) override it.

        batch: the sentences scored; scores: one array per sentence; golds:
            the gold of each, as `gold` gives it.
        RETURNS: (loss, gradients).
        """
        loss, grads = self.structure_loss([s.astype(np.float64) for s in scores], golds)
        n_words = sum(batch.lengths())
        return loss, [(g / n_words).astype(np.float32) for g in grads]

    # --------------------------------------------------- what gold reading shares
    def label_id(self, label: str, index: int, eg: Example, what: str = "label", of: str = "") -> int:
        """The column of `label` among the component's labels; a gold label
        the component does not have is an error naming the example.

        what: how the message names the label ("label", "chart label", ...);
        of: what it belongs to, for the message (" of segment 'BMP2 ...'").
        """
        ids = self._label_ids()
        if label not in ids:
            raise self.gold_error(index, eg, (
                f"{what} {label!r}{of} is not one of the component's labels {list(self.labels)}; "
                f"initialize it with data that contains it"
            ))
        return ids[label]

    def _label_ids(self) -> Dict[str, int]:
        labels = self.labels
        if getattr(self, "_label_ids_for", None) != labels:
            self._label_ids_for, self._label_id_map = labels, {label: i for i, label in enumerate(labels)}
        return self._label_id_map

    def sentence_of(self, ranges: Sequence[Range], first: int, last: int, index: int, eg: Example,
                    what: str) -> int:
        """Which of `ranges` holds tokens first..last (inclusive); one that
        crosses a sentence boundary is an error naming `what` and the example."""
        for k, (start, end) in enumerate(ranges):
            if start <= first and last < end:
                return k
        raise self.gold_error(index, eg, (
            f"{what} crosses a sentence boundary (the doc's sentences, or a cut made because "
            f"the doc has no boundaries and is longer than max_unsegmented_length = "
            f"{self.cfg['max_unsegmented_length']}); structures are built per sentence"
        ))

    # ------------------------------------------------------------- predicting
    def predict(self, docs: Iterable[Doc]):
        """The structure of every sentence of the docs, without changing them:
        the scorer's output decoded by `structure.argmax` (in float64).
        Components that mask or reshape scores first override it.

        RETURNS: (the SentenceBatch, one decoded structure per sentence).
        """
        _, batch, scores = self.score_docs(docs)
        if scores is None:
            return batch, []
        return batch, self.structure.argmax([s.astype(np.float64) for s in scores])

    @staticmethod
    def per_doc(batch: SentenceBatch, per_sentence: Sequence[Any], n_docs: int) -> List[List[Tuple[int, Any]]]:
        """Scatter one result per sentence back to its doc: per doc, the
        (start token of the sentence, its result) pairs in order."""
        out: List[List[Tuple[int, Any]]] = [[] for _ in range(n_docs)]
        for (doc_i, start, _), result in zip(batch.sents, per_sentence):
            out[doc_i].append((start, result))
        return out

    def prepare_training_doc(self, eg: Example) -> None:
        """Give the predicted doc what the scorer reads in training (nothing by default)."""

    def structure_loss(self, scores: List[np.ndarray], golds: List[Any]):
        """The configured loss of `scores` (float64, one per sentence).

        RETURNS: (summed loss, one gradient array per sentence).
        """
        self.check_finite(scores)
        loss_fn = get_loss(self.cfg["loss"])
        return loss_fn(self.structure, scores, golds, cost=self.cfg["margin_cost"])

    def check_finite(self, scores: Sequence[np.ndarray]) -> None:
        """Raise TrainingDivergedError when a score is NaN or +inf (-inf is a
        mask: a forbidden part)."""
        for S in scores:
            if np.isnan(S).any() or np.isposinf(S).any():
                raise self.diverged("the scorer's output contains NaN or infinity")
            largest = np.max(np.abs(S), where=np.isfinite(S), initial=0.0)
            if largest > MAX_SANE_SCORE:
                raise self.diverged(f"the scorer's output reached {largest:.3g}")

    def diverged(self, what: str) -> "TrainingDivergedError":
        """The error for a training run whose numbers have blown up."""
        return TrainingDivergedError(
            f"{self.name}: {what}: the training diverged. Lower "
            f"training.optimizer.learn_rate (or training.optimizer.grad_clip), "
            f"and check the data for very long sentences"
        )

    def collect_gold(self, examples: Sequence[Example]):
        """The docs with gold, their ranges, and the gold per range in order."""
        docs, ranges, golds = [], [], []
        for index, eg in enumerate(examples):
            kept, gold = self.gold(eg, index)
            if kept:
                self.prepare_training_doc(eg)
                docs.append(eg.predicted)
                ranges.append(kept)
                golds.extend(gold)
        return docs, ranges, golds

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Optimizer] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Learn from a batch of examples.

        examples: the batch; sentences without gold are left out.
        drop: dropout rate of the layers that take spaCy's rate (the tok2vec).
        sgd: the optimizer; without one the gradients are only accumulated.
        losses: the dict to add this component's loss to.
        RETURNS: the updated `losses`.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_examples(examples, f"{type(self).__name__}.update")
        if not self.labels:
            raise ValueError(f"{self.name}: the component has no labels; initialize it first "
                             f"(nlp.initialize)")
        docs, ranges, golds = self.collect_gold(examples)
        if not golds:
            return losses
        set_dropout_rate(self.model, drop)
        batch = self.make_batch(docs, ranges)
        scores, backprop = self.model.begin_update(batch)
        loss, d_scores = self.get_loss_from_scores(batch, scores, golds)
        if not np.isfinite(loss):
            raise self.diverged(f"the training loss is {loss}")
        backprop(d_scores)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def get_loss(self, examples: Iterable[Example], scores: Any):
        """Loss and gradient of `scores`, the model's output on the batch of
        the examples' sentences that have gold (as `update` builds it)."""
        examples = list(examples)
        docs, ranges, golds = self.collect_gold(examples)
        return self.get_loss_from_scores(self.make_batch(docs, ranges), scores, golds)

    # --------------------------------------------------------- initializing
    def labels_in(self, examples: Iterable[Example]) -> List[str]:
        raise NotImplementedError

    missing_labels_message = "found no labels in the training examples"

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        labels: Optional[Sequence[str]] = None,
    ) -> None:
        """Set the labels and initialize the model from a sample of examples.

        get_examples: returns the training examples.
        nlp: the pipeline (unused).
        labels: the label set (from `spacy init labels`); read from the
            examples when None.
        """
        validate_get_examples(get_examples, f"{type(self).__name__}.initialize")
        self._misaligned = None
        self._unrepresentable = 0
        found = list(labels) if labels is not None else self.labels_in(get_examples())
        if not [label for label in found if label not in self.implicit_labels]:
            raise ValueError(f"{self.name}: {self.missing_labels_message}")
        self.set_labels(found)
        # docs with words where there are any: an empty doc gives some layers
        # (a listener's maxout) no width to infer
        sample = (list(islice((eg for eg in get_examples() if len(eg.predicted)), 10))
                  or list(islice(get_examples(), 10)))
        for eg in sample:
            self.prepare_training_doc(eg)
        self.model.initialize(X=self.make_batch(
            [eg.predicted for eg in sample], [self.training_ranges(eg) for eg in sample]
        ))


def word_bounded(docs: Sequence[Doc], max_words: int) -> Iterator[List[Doc]]:
    """`docs` in order, in consecutive groups of at most `max_words` words
    (a doc longer than that alone)."""
    group: List[Doc] = []
    words = 0
    for doc in docs:
        if group and words + len(doc) > max_words:
            yield group
            group, words = [], 0
        group.append(doc)
        words += len(doc)
    if group:
        yield group


def missing_spans_message(reference: Doc, key: str, alternative: str = "") -> str:
    """Why a reference has no `doc.spans[key]`, for a gold error: another
    key, or spaCy's reader having dropped every span group.
    alternative: a further way out (e.g. "or ner = false ...")."""
    found = sorted(reference.spans.keys())
    why = (
        f"its span keys are {found}; set spans_key to the key your corpus uses"
        if found else
        "it has no span groups at all. If the corpus has them, spaCy's reader "
        "dropped them: with gold_preproc = true (on docs with sentence "
        "boundaries, a one-word doc always) or max_length > 0 it cuts docs with "
        "Span.as_doc, which keeps no doc.spans; read the corpus with "
        "spacy_struct.SentenceDocs.v1, or store one sentence per doc without "
        "boundaries"
    )
    return (f"the reference doc has no doc.spans[{key!r}]: {why}{alternative}. A doc "
            f"without entities needs an empty group under the key")


def preview(eg: Example) -> str:
    """The start of an example's text, quoted, for error messages."""
    return text_preview(eg.reference.text)
