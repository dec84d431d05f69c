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
    loss_fn = get_loss(name)
    loss, (grad,) = loss_fn(structure, scores, gold)
    assert loss > 0
    rng = np.random.default_rng(1)
    for _ in range(5):
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
