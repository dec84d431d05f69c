"""Dropout with a scorer's own rate.

spaCy's `training.dropout` is set on every layer that has a "dropout_rate"
attribute (thinc's `set_dropout_rate`), the shared tok2vec included. The
scorers keep their own rate under "scorer_dropout" instead, so the rate that
suits a BiLSTM and the views is not overridden by the one that suits the
tok2vec; this function applies it.
"""
from __future__ import annotations

from typing import Callable, Tuple

import numpy as np

SCORER_DROPOUT = "scorer_dropout"


def check_dropout(rate: float) -> float:
    """The rate as a float, or a ValueError when it is not in [0, 1)."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout must be in [0, 1), not {rate}")
    return float(rate)


def dropout(X: np.ndarray, rate: float, is_train: bool) -> Tuple[np.ndarray, Callable]:
    """Inverted dropout of `X` in training; the identity otherwise.

    RETURNS: the output and its backprop (the same mask on the gradient).
    """
    if not is_train or not rate:
        return X, lambda dY: dY
    keep = (np.random.random_sample(X.shape) >= rate).astype(np.float32) / (1.0 - rate)
    return X * keep, lambda dY: dY * keep
