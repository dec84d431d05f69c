"""`StructuredComponent`: what every structured component does the same way.

A structured component reads gold from `Example`s, builds one structure per
sentence, trains a scorer through a structured loss and writes annotations.
Only reading the gold, decoding and writing are its own; the rest is here
and in the parts it is built from:

- `batching.py`, `SentenceBatching`: which token ranges a structure is
  built over (`sentences.py`) and the `SentenceBatch` a scorer reads;
- `labels.py`, `LabelSet`: `labels`, `add_label`, and setting the label set
  at initialization, resized through the output layer's `nO`;
- `gold.py`, `GoldErrors` and `MisalignedGold`: one format for errors about
  a training example, and counts of gold left out of training;
- `settings.py`: the shared settings and how a factory is declared.

`StructuredComponent` adds the gradient training loop (`update`,
`get_loss`, `initialize`) over a registered loss and the component's
structure object, the default `predict` and per-word loss, the label and
sentence lookups of gold reading, the word-bounded `pipe`, and the
settings contract: what was learned (labels, and the settings that shape
the model) comes from disk, how to decode comes from the config.

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

from ..losses import get_loss, loss_names
from ..models.batch import SentenceBatch
from ..structs.base import Structure
from .batching import SentenceBatching, word_bounded
from .gold import GoldErrors, MisalignedGold
from .labels import LabelSet
from .sentences import Range, check_sentence_limits
from .settings import SHARED_DEFAULTS, non_negative_number
from .teacher import teacher_targets

#: Version of the saved model layout. A pipeline saved with another one was
#: built from another layer tree and cannot be loaded into this one.
MODEL_FORMAT = 2

#: a score no healthy model reaches (they stay within a few hundred): past
#: it the updates have blown the weights up, even while the loss is finite
MAX_SANE_SCORE = 1e6


class TrainingDivergedError(FloatingPointError, ValueError):
    """The training's numbers blew up (NaN or infinite scores or loss)."""


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

    @classmethod
    def from_factory(cls, arguments: Dict[str, Any]) -> "StructuredComponent":
        """The component from its factory's arguments (the factory passes
        `locals()`): `nlp`, `name`, `model` and `scorer`, every other one a
        setting. spaCy needs each setting in the factory's signature to
        check the config; this keeps them from being spelled out twice."""
        settings = dict(arguments)
        nlp, name, model, scorer = (settings.pop(key) for key in ("nlp", "name", "model", "scorer"))
        return cls(nlp.vocab, model, name, scorer=scorer, **settings)

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
            # one reduction: NaN propagates through max, +inf is its own value
            largest = np.max(np.abs(S), where=~np.isneginf(S), initial=0.0)
            if not np.isfinite(largest):
                raise self.diverged("the scorer's output contains NaN or infinity")
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
        """The docs with gold, their ranges, and the gold per range in order;
        with a `teacher_weight` setting, a sentence the corpus gave teacher
        scores has them with its gold (`pipeline/teacher.py`)."""
        docs, ranges, golds = [], [], []
        weight = self.cfg.get("teacher_weight", 0.0)
        for index, eg in enumerate(examples):
            kept, gold = self.gold(eg, index)
            if kept and weight:
                kept, gold, unscored = teacher_targets(self.name, self.labels, weight, eg.reference, kept, gold,
                                                       self.cfg["loss"])
                if unscored:
                    warnings.warn(f"{self.name}: sentences of a doc with teacher scores have none for their "
                                  f"range (the teachers cut the doc into other sentences); they train on "
                                  f"their gold alone, or not at all without one. Write the scores again "
                                  f"with `python -m spacy_struct teach` from teachers with this component's "
                                  f"sentence settings")
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
