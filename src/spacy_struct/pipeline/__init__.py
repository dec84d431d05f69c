"""What the structured components share: the base component and its parts
(settings, sentence batching, labels, gold errors), sentence ranges, the
token map between predicted and reference docs, and span scoring."""
from .alignment import TokenMap
from .base import MAX_SANE_SCORE, MODEL_FORMAT, StructuredComponent, TrainingDivergedError
from .batching import SentenceBatching, word_bounded
from .gold import GoldErrors, MisalignedGold, missing_spans_message, preview
from .labels import LabelSet
from .sentences import check_sentence_limits, ranges_from_starts, rule_starts, sentence_ranges, training_ranges
from .settings import (
    SHARED_DEFAULTS, WritesSpans, check_spans_key, component_factory, factory_config, non_negative_number,
    prf_weights,
)
from ..annotations.text import text_preview

__all__ = [
    "MAX_SANE_SCORE", "MODEL_FORMAT", "SHARED_DEFAULTS", "GoldErrors", "LabelSet", "MisalignedGold",
    "SentenceBatching", "StructuredComponent", "TokenMap", "TrainingDivergedError", "check_sentence_limits",
    "check_spans_key", "component_factory", "factory_config", "missing_spans_message", "non_negative_number",
    "preview", "prf_weights", "ranges_from_starts", "rule_starts", "sentence_ranges", "text_preview",
    "training_ranges", "word_bounded", "WritesSpans",
]
