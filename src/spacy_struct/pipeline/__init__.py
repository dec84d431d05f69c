"""What the structured components share: the base component, sentence ranges
and the token map between predicted and reference docs."""
from .alignment import TokenMap
from .base import SHARED_DEFAULTS, GoldErrors, factory_config, LabelSet, MisalignedGold, SentenceBatching, StructuredComponent, TrainingDivergedError, missing_spans_message, non_negative_number, preview, text_preview
from .sentences import check_sentence_limits, ranges_from_starts, rule_starts, sentence_ranges, training_ranges

__all__ = [
    "SHARED_DEFAULTS",
    "GoldErrors",
    "LabelSet",
    "MisalignedGold",
    "SentenceBatching",
    "StructuredComponent",
    "TokenMap",
    "TrainingDivergedError",
    "check_sentence_limits",
    "factory_config",
    "missing_spans_message",
    "non_negative_number",
    "preview",
    "text_preview",
    "ranges_from_starts",
    "rule_starts",
    "sentence_ranges",
    "training_ranges",
]
