"""`senter_if_needed`: spaCy's `senter`, run only on the docs whose
sentences are not all given.

A parser pipeline for raw text needs a `senter` before the parser (the
EWT configs have one). But with `overwrite =
false`, spaCy's senter still runs its model over a doc whose every token
already says whether it starts a sentence (gold sentences, a corpus
segmented upstream, `Doc(words=..., sent_starts=...)`), and then sets
nothing on it: on EWT with gold sentences, leaving it out makes the
default parsing pipeline 1.21x faster (docs/results/speed.md). This
senter skips those docs and is the same `senter` otherwise (model,
training, scores, saved weights), so its output is spaCy's senter's (a
doc's guesses vary with the batch it is computed in only as spaCy's own
do). A pipeline saved with `senter` takes it at load time:
`spacy.load(path, config={"components": {"senter": {"factory":
"senter_if_needed"}}})`. An `overwrite` given at load time is kept (spaCy's
senter takes the saved one over it).
"""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional

import numpy as np
from spacy.attrs import SENT_START
from spacy.language import Language
from spacy.pipeline.senter import DEFAULT_SENTER_MODEL, SentenceRecognizer
from spacy.tokens import Doc
from thinc.api import Model


def sentences_given(doc: Doc) -> bool:
    """Whether every token of `doc` already says whether it starts a
    sentence (so a senter that does not overwrite would set nothing)."""
    return bool(len(doc)) and bool(np.all(doc.to_array([SENT_START]) != 0))


class SenterIfNeeded(SentenceRecognizer):
    """spaCy's SentenceRecognizer that leaves out of its model the docs it
    would not change (see the module's docstring), and keeps its
    `overwrite` when it loads its weights: spaCy's senter takes the saved
    one instead, so `spacy.load(path, config={"components": {"senter":
    {"overwrite": True}}})` did not overwrite. (So `nlp.from_bytes` does
    not restore `overwrite` either: it is a setting of the senter, not of
    its weights.)"""

    def _load_keeping_overwrite(self, load, data, exclude) -> "SenterIfNeeded":
        overwrite = self.cfg.get("overwrite", False)
        load(data, exclude=exclude)
        self.cfg["overwrite"] = overwrite
        return self

    def from_disk(self, path, *, exclude=tuple()) -> "SenterIfNeeded":
        """The weights, labels and settings saved at `path`, but `overwrite`
        as it is now (the config's, or the one given at load time).
        RETURNS: self."""
        return self._load_keeping_overwrite(super().from_disk, path, exclude)

    def from_bytes(self, bytes_data, *, exclude=tuple()) -> "SenterIfNeeded":
        """As `from_disk`, from bytes. RETURNS: self."""
        return self._load_keeping_overwrite(super().from_bytes, bytes_data, exclude)

    def predict(self, docs: Iterable[Doc]) -> List[np.ndarray]:
        """The senter's guesses per doc; a doc whose sentences are all given
        (and `overwrite` false) gets all-zero guesses without running the
        model, which `set_annotations` then leaves as they are.
        RETURNS: one int array of tag ids per doc, as SentenceRecognizer's."""
        docs = list(docs)
        if self.cfg.get("overwrite"):
            return super().predict(docs)
        todo = [i for i, doc in enumerate(docs) if not sentences_given(doc)]
        if len(todo) == len(docs):
            return super().predict(docs)
        guesses: List[np.ndarray] = [np.zeros((len(doc),), dtype="int64") for doc in docs]
        for i, guess in zip(todo, super().predict([docs[i] for i in todo]) if todo else ()):
            guesses[i] = guess
        return guesses


@Language.factory(
    "senter_if_needed",
    assigns=["token.is_sent_start"],
    default_config={
        "model": DEFAULT_SENTER_MODEL,
        "overwrite": False,
        "scorer": {"@scorers": "spacy.senter_scorer.v1"},
    },
    default_score_weights={"sents_f": 1.0, "sents_p": 0.0, "sents_r": 0.0},
)
def make_senter_if_needed(
    nlp: Language, name: str, model: Model, overwrite: bool, scorer: Optional[Callable]
) -> SenterIfNeeded:
    """spaCy's `senter` that does not run its model on a doc whose sentences
    are all given (with `overwrite` false; with it true, on every doc).

    model: the senter's tagger model (spaCy's default if not given).
    overwrite: replace sentence starts that are already set.
    scorer: spaCy's senter scorer by default.
    """
    return SenterIfNeeded(nlp.vocab, model, name, overwrite=overwrite, scorer=scorer)
