"""losses.py on its own, over a small structure: each loss is zero or
positive as its definition says, and its gradient is the derivative of the
loss (finite differences)."""
import numpy as np
import pytest

from spacy_struct.losses import get_loss, loss_names
from spacy_struct.structs.spans import LaminarSpans


def _problem(seed):
    rng = np.random.default_rng(seed)
    n, labels = 4, 2
    scores = [rng.normal(size=(n, n, labels))]
    gold = [np.array([[0, 3, 0], [1, 1, 1]], dtype=np.int64)]  # (start, end inclusive, label)
    return scores, gold


def test_every_registered_loss_is_named():
    assert {"crf", "margin", "local", "multilabel_margin"} <= set(loss_names())
    with pytest.raises(Exception, match="nope"):
        get_loss("nope")


@pytest.mark.parametrize("name", ["crf", "local"])
def test_likelihood_losses_match_finite_differences(name):
    structure = LaminarSpans()
    scores, gold = _problem(0)
    loss, _ = get_loss(name)(structure, scores, gold)
    assert loss > 0
    _check_gradient(get_loss(name), structure, scores, gold, directions=5)


def _check_gradient(loss_fn, structure, scores, gold, directions):
    """The loss's gradient against central differences along random directions."""
    _, (grad,) = loss_fn(structure, scores, gold)
    rng = np.random.default_rng(1)
    for _ in range(directions):
        direction = rng.normal(size=grad.shape)
        eps = 1e-5
        up, _ = loss_fn(structure, [scores[0] + eps * direction], gold)
        down, _ = loss_fn(structure, [scores[0] - eps * direction], gold)
        assert (up - down) / (2 * eps) == pytest.approx(float((grad * direction).sum()), rel=1e-4, abs=1e-6)


def test_the_margin_loss_is_zero_once_the_gold_wins_by_the_margin():
    structure = LaminarSpans()
    scores, gold = _problem(0)
    loss, (grad,) = get_loss("margin")(structure, scores, gold)
    assert loss > 0 and np.abs(grad).sum() > 0
    boosted = scores[0] - 10.0 + 20.0 * structure.indicator(scores[0].shape, gold[0])
    loss, (grad,) = get_loss("margin")(structure, [boosted], gold, cost=1.0)
    assert loss == 0 and not grad.any()


def _segments_problem(seed):
    from spacy_struct.structs.segments import GappedSegments, Segments

    rng = np.random.default_rng(seed)
    n, types = 4, 2
    scores = [rng.normal(size=(types, n + 2, n + 2)) - 1.0]
    gold = [Segments.from_list([(0, (0, 2)), (1, (1, 2, 3))])]
    return GappedSegments(), scores, gold


@pytest.mark.parametrize("name", ["crf", "local"])
@pytest.mark.parametrize("weight", [0.0, 0.5, 1.0])
def test_a_teacher_target_has_the_loss_gradient(name, weight):
    """Mixed with a teacher's scores, the loss still has its gradient: the
    teacher's expected uses are a constant target."""
    from spacy_struct.losses import TeacherTarget

    problems = [(LaminarSpans(), *_problem(0))]
    if name == "crf":  # gapped segments have no factorized relaxation
        problems.append(_segments_problem(0))
    for structure, scores, gold in problems:
        teacher = np.random.default_rng(3).normal(size=scores[0].shape)
        _check_gradient(get_loss(name), structure, scores, [TeacherTarget(gold[0], teacher, weight)], directions=3)


def test_the_teacher_weight_mixes_gold_and_teacher():
    """Weight 0 is the gold loss; weight 1 on the model's own scores has no
    gradient (the model already has the teacher's distribution), and its
    gradient elsewhere moves the model's expected uses to the teacher's."""
    from spacy_struct.losses import TeacherTarget

    structure, scores, gold = _segments_problem(2)
    crf = get_loss("crf")
    plain, (plain_grad,) = crf(structure, scores, gold)
    teacher = np.random.default_rng(5).normal(size=scores[0].shape) - 1.0
    mixed, (mixed_grad,) = crf(structure, scores, [TeacherTarget(gold[0], teacher, 0.0)])
    assert mixed == pytest.approx(plain) and np.allclose(mixed_grad, plain_grad)
    _, (own_grad,) = crf(structure, scores, [TeacherTarget(gold[0], scores[0], 1.0)])
    assert np.abs(own_grad).max() < 1e-9
    _, (taught_grad,) = crf(structure, scores, [TeacherTarget(gold[0], teacher, 1.0)])
    (_, model_uses), (_, teacher_uses) = structure.marginals([scores[0], teacher])
    assert np.allclose(taught_grad, model_uses - teacher_uses)
    with pytest.raises(ValueError, match="shape"):
        crf(structure, scores, [TeacherTarget(gold[0], teacher[:, :-1], 0.5)])


def test_a_teacher_target_without_gold_learns_from_the_teacher_alone():
    from spacy_struct.losses import TeacherTarget

    structure, scores, gold = _segments_problem(4)
    teacher = np.random.default_rng(6).normal(size=scores[0].shape) - 1.0
    crf = get_loss("crf")
    alone, (alone_grad,) = crf(structure, scores, [TeacherTarget(None, teacher, 0.3)])
    full, (full_grad,) = crf(structure, scores, [TeacherTarget(gold[0], teacher, 1.0)])
    assert alone == pytest.approx(full) and np.allclose(alone_grad, full_grad)
