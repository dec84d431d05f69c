"""What the structured components share: the base component and its parts
(settings, sentence batching, labels, gold errors), sentence ranges, the
token map between predicted and reference docs, span scoring, teacher
scores for distillation, and the weights of several trained pipelines
averaged or copied."""
from .alignment import TokenMap
from .base import MAX_SANE_SCORE, MODEL_FORMAT, StructuredComponent, TrainingDivergedError
from .batching import SentenceBatching, word_bounded
from .gold import GoldErrors, MisalignedGold, missing_spans_message, preview
from .labels import LabelSet
from .sentences import (
    check_sentence_limits, gold_token_doc, ranges_from_starts, rule_starts, sentence_ranges, training_ranges,
)
from .settings import (
    SHARED_DEFAULTS, WritesSpans, check_spans_key, component_factory, factory_config, non_negative_number,
    prf_weights,
)
from .teacher import TEACHER_KEY, TeacherScores, has_teacher_scores, score_corpus, write_teacher_scores
from .weights import average_pipelines, average_weights, copy_weights
from ..annotations.text import text_preview

__all__ = [
    "MAX_SANE_SCORE", "MODEL_FORMAT", "average_pipelines", "average_weights", "copy_weights", "SHARED_DEFAULTS", "GoldErrors", "LabelSet", "MisalignedGold",
    "SentenceBatching", "StructuredComponent", "TokenMap", "TrainingDivergedError", "check_sentence_limits",
    "check_spans_key", "component_factory", "factory_config", "gold_token_doc", "has_teacher_scores",
    "missing_spans_message", "non_negative_number", "preview", "prf_weights", "ranges_from_starts", "rule_starts",
    "score_corpus", "sentence_ranges", "TEACHER_KEY", "TeacherScores", "text_preview", "training_ranges",
    "word_bounded", "write_teacher_scores", "WritesSpans",
]
