"""Which token ranges of a doc a structure is built over, and the batches
a scorer reads and `pipe` predicts."""
import warnings
from typing import Any, Dict, Iterator, List, Optional, Sequence

from spacy.tokens import Doc
from spacy.training import Example

from ..models.batch import SentenceBatch
from .sentences import Range, sentence_ranges, training_ranges


class SentenceBatching:
    """Token ranges to build structures over, and the batch a scorer reads.

    Needs `self.cfg` with "max_unsegmented_length" and "max_sentence_length".
    """

    cfg: Dict[str, Any]

    #: whether the fall-back to rule-based sentences was announced already
    _warned_rule_sentences = False
    _warned_long_sentences = False
    #: whether a short Doc without boundaries is cut by rule too (a parser:
    #: one tree over several sentences is wrong) or kept whole (spans: a
    #: span tree over a short text costs little and loses no entity to a
    #: wrong cut)
    rule_sentences = True

    @property
    def max_sentence_length(self) -> int:
        """The longest range a structure is built over: the setting, or less
        where a component's structure costs more than n x n memory."""
        return self.cfg["max_sentence_length"]

    @property
    def sentence_length_note(self) -> str:
        """Why `max_sentence_length` in force is below the setting ("" when
        it is the setting), for the warning when a sentence is cut."""
        return ""

    def sentence_ranges(self, doc: Doc) -> List[Range]:
        """The [start, end) token ranges of `doc` that get one structure each:
        its sentences, or sentences by rule when it has no boundaries (with a
        one-time warning when the rule cuts a doc in several)."""
        ranges = sentence_ranges(
            doc, self.cfg["max_unsegmented_length"], self.max_sentence_length,
            by_rule=self.rule_sentences,
        )
        if (not self._warned_long_sentences and doc.has_annotation("SENT_START")
                and any(not doc[start].is_sent_start for start, _ in ranges[1:])):
            self._warned_long_sentences = True
            warnings.warn(
                f"{getattr(self, 'name', type(self).__name__)}: a sentence longer than "
                f"{self.max_sentence_length} tokens (the max_sentence_length in force"
                f"{self.sentence_length_note}) is cut into pieces, each decoded as a sentence of its own",
                stacklevel=3,
            )
        if len(ranges) > 1 and not doc.has_annotation("SENT_START") and not self._warned_rule_sentences:
            self._warned_rule_sentences = True
            warnings.warn(
                f"{getattr(self, 'name', type(self).__name__)}: a doc without sentence "
                f"boundaries is cut into sentences by rule (after sentence-final "
                f"punctuation and at blank lines); put a trained 'senter' (or a "
                f"'sentencizer') before this component for better sentences",
                stacklevel=3,
            )
        return ranges

    def training_ranges(self, eg: Example) -> List[Range]:
        """The ranges of `eg.predicted` to train over: the gold sentences."""
        return training_ranges(
            eg, self.cfg["max_unsegmented_length"], self.max_sentence_length
        )

    def make_batch(
        self, docs: Sequence[Doc], ranges: Optional[Sequence[List[Range]]] = None
    ) -> SentenceBatch:
        """A SentenceBatch of `docs`, with the given ranges per doc or their own."""
        if ranges is None:
            ranges = [self.sentence_ranges(doc) for doc in docs]
        sents = [(i, s, e) for i, rs in enumerate(ranges) for s, e in rs]
        return SentenceBatch(list(docs), sents)


def word_bounded(docs: Sequence[Doc], max_words: int) -> Iterator[List[Doc]]:
    """`docs` in order, in consecutive groups of at most `max_words` words
    (a doc longer than that alone)."""
    group: List[Doc] = []
    words = 0
    for doc in docs:
        if group and words + len(doc) > max_words:
            yield group
            group, words = [], 0
        group.append(doc)
        words += len(doc)
    if group:
        yield group
