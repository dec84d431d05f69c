"""`spacy_struct.SentenceDocs.v1`: a corpus reader for one-sentence Docs.

spaCy's reader with `gold_preproc = true` cuts every Doc that has sentence
boundaries into its sentences with `Span.as_doc`, which keeps neither
`doc.spans` nor `doc.user_data`. A Doc of one token always has a sentence
boundary, so a one-word sentence ("Abstract", "Results") loses its gold
spans and segments even when the corpus stores one sentence per Doc, as the
CRAFT and spans-jsonl converters do. This reader keeps each Doc whole: the
predicted Doc gets the corpus's tokens and spaces and its sentences (what
`gold_preproc` means): the reference's sentence boundaries when it has
them, else the whole Doc as one sentence, so a component that cuts a Doc
without boundaries by rule never cuts a gold sentence at an inner full stop.
The reference keeps everything it holds, and a Doc with several sentences
stays one example.

With `teacher = PATH` (a file of `python -m spacy_struct teach`, or a
folder of them), each reference doc also gets the teacher scores of its
sentences, which a component with a `teacher_weight` setting learns from
(spacy_struct/pipeline/teacher.py).
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Corpus, Example
from spacy.util import registry

from .pipeline.sentences import gold_token_doc


class SentenceDocs(Corpus):
    """spaCy's `Corpus` whose gold-token mode never cuts a Doc."""

    def __init__(self, *args, teacher=None, **kwargs) -> None:
        """As spaCy's `Corpus`; `teacher`: a `TeacherScores` to attach."""
        super().__init__(*args, **kwargs)
        self.teacher = teacher

    def make_examples_gold_preproc(self, nlp: Language, reference_docs: Iterable[Doc]) -> Iterator[Example]:
        """One example per Doc, its predicted side made of the reference's tokens."""
        total, missing, first_missing = 0, 0, None
        for reference in reference_docs:
            if len(reference):
                total += 1
                if self.teacher is not None and not self.teacher.attach(reference):
                    missing += 1
                    first_missing = first_missing or reference.text
                yield Example(gold_token_doc(reference, nlp.vocab), reference)
        if missing:
            self.teacher.warn_missing(missing, total, first_missing)


@registry.readers("spacy_struct.SentenceDocs.v1")
def create_sentence_docs_reader(
    path: Optional[Union[str, Path]],
    gold_preproc: bool = True,
    max_length: int = 0,
    limit: int = 0,
    augmenter: Optional[Callable] = None,
    teacher: Optional[Union[str, Path]] = None,
) -> Callable[[Language], Iterable[Example]]:
    """Examples from a .spacy file, one per Doc (see the module docstring).

    path: the .spacy file or a directory of them.
    gold_preproc: the corpus's tokens (True) or the pipeline's tokenizer.
    max_length, limit, augmenter: as in spaCy's `spacy.Corpus.v1`.
    teacher: a file of teacher scores for these docs (`python -m
        spacy_struct teach`), a folder of such files, or None. Needs
        gold_preproc = true: the scores are of the corpus's tokens.
    """
    if path is None:
        raise ValueError("spacy_struct.SentenceDocs.v1: no path given (set paths.train / paths.dev)")
    scores = None
    if teacher is not None:
        if not gold_preproc:
            raise ValueError("spacy_struct.SentenceDocs.v1: teacher scores are of the corpus's tokens; "
                             "set gold_preproc = true to train on them")
        from .pipeline.teacher import TeacherScores

        scores = TeacherScores(teacher)
    return SentenceDocs(
        path, gold_preproc=gold_preproc, max_length=max_length, limit=limit, augmenter=augmenter, teacher=scores
    )
