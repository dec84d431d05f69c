"""The settings every structured component shares, and how a component's
factory and default config are declared."""
from typing import Any, Callable, Dict, List, Optional

import numpy as np
from spacy.language import Language

#: The defaults of the settings every structured component takes, for the
#: components' `default_config`: the best on every benchmark so far.
SHARED_DEFAULTS: Dict[str, Any] = {
    "loss": "crf",
    "margin_cost": 1.0,
    "max_unsegmented_length": 200,
    "max_sentence_length": 512,
}


def non_negative_number(name: str, key: str, value: Any) -> float:
    """`value` as a float; a ValueError naming component `name` and setting
    `key` when it is not a finite number >= 0 (a bool is refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name}: {key} must be a finite number >= 0, got {value!r}")
    return float(value)


def prf_weights(prefix: str, weight: float, **others: Optional[float]) -> Dict[str, Optional[float]]:
    """A factory's `default_score_weights`: `prefix`_f weighted `weight`, its
    _p and _r reported (0.0), and `others` as given (None: reported, not
    weighted), e.g. prf_weights("segments", 1.0, segments_crossing_f=None)."""
    return {f"{prefix}_f": weight, f"{prefix}_p": 0.0, f"{prefix}_r": 0.0, **others}


def component_factory(name: str, assigns: List[str], model: Any, own_defaults: Dict[str, Any], scorer: str,
                      score_weights: Dict[str, Optional[float]]) -> Callable:
    """spaCy's `Language.factory` decorator for a structured component: its
    default config is `factory_config(model, own_defaults, scorer)`."""
    return Language.factory(name, assigns=assigns, default_config=factory_config(model, own_defaults, scorer),
                            default_score_weights=score_weights)


def factory_config(model: Any, own_defaults: Dict[str, Any], scorer: str) -> Dict[str, Any]:
    """A structured component's `default_config` for `Language.factory`: its
    default model, its own settings, the shared settings and the name of
    its registered scorer, in the order `spacy init config` writes them. A
    component's own default for a shared setting (mst_parser's loss) wins."""
    shared = {key: value for key, value in SHARED_DEFAULTS.items() if key not in own_defaults}
    return {"model": model, **own_defaults, **shared, "scorer": {"@scorers": scorer}}


def check_spans_key(name: str, settings: Dict[str, Any]) -> None:
    """The `spans_key` setting of a component that writes `doc.spans`: a
    non-empty string, or a ValueError naming the component."""
    key = settings["spans_key"]
    if not isinstance(key, str) or not key:
        raise ValueError(f"{name}: spans_key must be a non-empty string, got {key!r}")


class WritesSpans:
    """A component with a `spans_key` setting: the `doc.spans` key its gold
    is read from and its predictions are written to."""

    cfg: Dict[str, Any]

    @property
    def spans_key(self) -> str:
        """The `doc.spans` key gold is read from and predictions written to."""
        return str(self.cfg["spans_key"])
