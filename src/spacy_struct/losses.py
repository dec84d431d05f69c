"""Structured training losses, written once over the structure protocol.

Each loss takes a structure object (`spacy_struct.structs.base.Structure`:
dependency trees, span trees, laminar span sets, ...), one float64 score
array per sentence and one gold annotation per sentence, and returns the
summed loss and one gradient array per sentence (same shape as the scores):

- "crf": the negative log-likelihood of the gold structure under a CRF over
  all structures, log Z - score(gold). Gradient: marginals minus the gold
  indicator. Where the annotation admits several structures (unknown heads,
  a span with two gold labels) the gold term is handled by the structure's
  `gold_score`.
- "margin": the structured hinge of online large-margin training,
  max_y [score(y) + cost * Hamming(y, gold)] - score(gold), found by
  cost-augmented decoding. Gradient: indicator of the cost-augmented
  argmax minus that of the gold structure (a subgradient).
- "multilabel_margin": for structures that are sets of independent
  candidates (gapped segments), McDonald, Crammer & Pereira (2005)'s
  multilabel margin: every gold candidate scores at least +cost, every
  wrong one among the k best at most -cost (threshold form of their
  constraints); hinge per candidate. Needs the structure's `candidates`,
  `gold_candidates` and `candidate_indicator`.
  A gold annotation may come as a `TeacherTarget` (distillation): the gold
  term is then mixed with the expected uses of every part under a
  teacher's scores (trained models, an ensemble: `pipeline/teacher.py`).
  With teacher weight w the target is (1 - w) gold indicator + w teacher
  uses, and the gradient marginals minus that target: for w = 1 the loss
  is, up to a constant, the KL divergence from the teacher's distribution
  to the model's, so the model learns the teacher's probabilities of every
  structure, not only which one is gold.
- "local": the CRF loss of the factorized relaxation (each word's head,
  each span's label, decided on its own; `local_marginals`). It ignores
  the structural constraints in training; the decoder restores them.

The hinge is clamped per sentence: the batch loss is the sum of
max(0, violation) over its sentences, the structured SVM objective. Clamping
the batch sum instead would let a sentence that is already separated by a
wide margin cancel the loss (though not the gradient) of one that is not, so
the reported loss would disagree with the gradient that is applied.

The losses are registered under their names in `losses_registry`; a
package can add one through the `spacy_struct_losses` entry point, and a
component's `loss` setting names it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Sequence, Tuple

import catalogue
import numpy as np

from .structs.base import Structure

LossResult = Tuple[float, List[np.ndarray]]
LossFunction = Callable[..., LossResult]

losses_registry = catalogue.create("spacy_struct", "losses", entry_points=True)

#: the losses that read a `TeacherTarget` (a likelihood has a target
#: distribution to move toward; a margin has none)
TEACHABLE_LOSSES = ("crf", "local")


@dataclass
class TeacherTarget:
    """A sentence's gold together with a teacher's scores for it.

    gold: the gold annotation, as the structure takes it; None for a
        sentence without one (unlabelled text), which learns from the
        teacher alone (weight 1).
    scores: the teacher's scores of the sentence, the shape of the model's.
    weight: the teacher's share of the target, in [0, 1].
    """

    gold: Any
    scores: np.ndarray
    weight: float


@losses_registry.register("crf")
def crf_loss(
    structure: Structure, scores: Sequence[np.ndarray], golds: Sequence[Any], cost: float = 1.0
) -> LossResult:
    """log Z - gold score per sentence, summed (`cost` is unused)."""
    return _likelihood_loss(structure.marginals, structure, scores, golds)


@losses_registry.register("local")
def local_loss(
    structure: Structure, scores: Sequence[np.ndarray], golds: Sequence[Any], cost: float = 1.0
) -> LossResult:
    """The CRF loss of the factorized relaxation (`cost` is unused)."""
    return _likelihood_loss(structure.local_marginals, structure, scores, golds)


Marginals = Callable[[Sequence[np.ndarray]], List[Tuple[float, np.ndarray]]]


def _likelihood_loss(marginals_of: Marginals, structure: Structure, scores, golds) -> LossResult:
    """log Z - gold term per sentence, with `marginals_of` the model's
    distribution (the structure's, or its factorized relaxation's)."""
    taught = [i for i, gold in enumerate(golds) if isinstance(gold, TeacherTarget)]
    for i in taught:
        if getattr(scores[i], "candidates", None) is not None:
            raise ValueError("teacher scores cannot train a model that scores whole coordinations "
                             "(coordination_width > 0): train it without a teacher")
        if golds[i].scores.shape != scores[i].shape:
            raise ValueError(f"the teacher's scores have shape {golds[i].scores.shape}, the model's "
                             f"{scores[i].shape}: the teacher was made by another model shape or for other "
                             f"sentences")
    # the teachers' expected uses, in one batch (a constant target: the teacher is not trained)
    teacher_uses = dict(zip(taught, (uses for _, uses in marginals_of(
        [np.asarray(golds[i].scores, dtype=np.float64) for i in taught])))) if taught else {}
    loss, grads = 0.0, []
    for i, (S, gold, (log_z, marginals)) in enumerate(zip(scores, golds, marginals_of(scores))):
        if i in teacher_uses:
            gold_value, gold_grad = _taught_score(structure, S, gold, teacher_uses[i])
        else:
            gold_value, gold_grad = structure.gold_score(S, gold)
        loss += log_z - gold_value
        grads.append(marginals - gold_grad)
    return loss, grads


def _taught_score(structure: Structure, S: np.ndarray, target: TeacherTarget,
                  uses: np.ndarray) -> Tuple[float, np.ndarray]:
    """The target term of a likelihood loss and its gradient for a
    `TeacherTarget`: the gold's mixed with the teacher's expected uses of
    the parts (`uses`, under the same distribution as the model's)."""
    w = 1.0 if target.gold is None else target.weight  # unlabelled text: the teacher alone
    value, grad = structure.gold_score(S, target.gold) if w < 1 else (0.0, np.zeros_like(S))
    used = uses > 0  # a part the teacher never uses adds nothing, also where S is a -inf mask
    taught = float(np.sum(uses[used] * S[used]))
    return (1.0 - w) * value + w * taught, (1.0 - w) * grad + w * uses


@losses_registry.register("margin")
def margin_loss(
    structure: Structure, scores: Sequence[np.ndarray], golds: Sequence[Any], cost: float = 1.0
) -> LossResult:
    """Structured hinge with a Hamming cost of `cost` per wrong part,
    clamped at 0 per sentence."""
    if not np.isfinite(cost) or cost < 0:
        raise ValueError(f"margin cost must be a finite number >= 0, got {cost!r}")
    targets = [structure.gold_target(S, g) for S, g in zip(scores, golds)]
    augmented = structure.add_hamming_cost(scores, targets, cost)
    predicted = structure.argmax(augmented)
    loss, grads = 0.0, []
    for S, A, target, pred in zip(scores, augmented, targets, predicted):
        grad = np.zeros(S.shape, dtype=np.float64)
        if not structure.same(pred, target):
            violation = structure.score(A, pred) - structure.score(A, target)
            if violation > 0:
                loss += violation
                grad += structure.indicator(S.shape, pred)
                grad -= structure.indicator(S.shape, target)
        grads.append(grad)
    return loss, grads


@losses_registry.register("multilabel_margin")
def multilabel_margin_loss(
    structure: Structure, scores: Sequence[np.ndarray], golds: Sequence[Any], cost: float = 1.0
) -> LossResult:
    """sum over gold candidates of max(0, cost - s) plus, over the wrong
    candidates among the k best, max(0, cost + s)."""
    if not np.isfinite(cost) or cost < 0:
        raise ValueError(f"margin cost must be a finite number >= 0, got {cost!r}")
    for method in ("candidates", "gold_candidates", "candidate_indicator"):
        if not hasattr(structure, method):
            raise ValueError(
                f"the 'multilabel_margin' loss needs a structure of independent "
                f"candidates; {structure.name} has no {method}()"
            )
    loss, grads = 0.0, []
    for S, gold, found in zip(scores, golds, structure.candidates(scores)):
        grad = np.zeros(S.shape, dtype=np.float64)
        gold_items = structure.gold_candidates(S, gold)
        gold_keys = {key for key, _ in gold_items}
        for key, value in gold_items:
            if value < cost:
                loss += cost - value
                grad -= structure.candidate_indicator(S.shape, key)
        for key, value in found:
            if key not in gold_keys and value > -cost:
                loss += cost + value
                grad += structure.candidate_indicator(S.shape, key)
        grads.append(grad)
    return loss, grads


def get_loss(name: str) -> LossFunction:
    """The registered loss called `name`, or a ValueError listing the names."""
    try:
        return losses_registry.get(name)
    except catalogue.RegistryError:
        raise ValueError(
            f"unknown loss {name!r}; the registered losses are {loss_names()}"
        ) from None


def loss_names() -> Tuple[str, ...]:
    """Names of the registered losses."""
    return tuple(sorted(losses_registry.get_all()))
