"""What the structured components share: the base component and sentence ranges."""
from .base import SHARED_DEFAULTS, GoldErrors, LabelSet, SentenceBatching, StructuredComponent, preview
from .sentences import check_sentence_limits, ranges_from_starts, sentence_ranges

__all__ = [
    "SHARED_DEFAULTS",
    "GoldErrors",
    "LabelSet",
    "SentenceBatching",
    "StructuredComponent",
    "check_sentence_limits",
    "preview",
    "ranges_from_starts",
    "sentence_ranges",
]
