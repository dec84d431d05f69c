"""Teacher scores: what trained pipelines score on a corpus, kept for
training another pipeline on it (distillation).

A model trained from scratch on a small corpus depends on its seed: on
GENIA's coordinations, three seeds of the same config are 6 points of
discontinuous F1 apart, and the average of their scores decodes better
than any of them (docs/results/segments.md). The average is an ensemble,
three times as slow. A single model can learn it instead: trained toward
the ensemble's probabilities of every structure (the expected uses of its
parts, `losses.TeacherTarget`) beside the gold, it keeps one model's speed.

- `score_corpus` runs a trained component over a corpus's docs with gold
  tokens, on the sentence ranges it trains on (or predicts on), in
  word-bounded batches; `write_teacher_scores` (`python -m spacy_struct
  teach`) averages one or more pipelines' scores per sentence into a
  `.npz` file, with the component's labels and a fingerprint of each
  doc's words.
- `TeacherScores` reads such files; `spacy_struct.SentenceDocs.v1` with
  `teacher = PATH` attaches each doc's scores to its reference doc
  (`user_data[TEACHER_KEY]`), and a component with a `teacher_weight`
  setting mixes them into its loss's target (`teacher_targets`). A doc
  without annotation that has scores (unlabelled text) learns from them
  alone.

Only components whose scores are one array per sentence with the labels
first (overlap_segmenter's (T, n + 2, n + 2)) take teacher scores: those
with a `teacher_weight` setting.
"""
from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.tokens import Doc
from spacy.training import Example

from ..annotations.text import text_preview
from ..losses import TEACHABLE_LOSSES, TeacherTarget
from .batching import word_bounded
from .sentences import Range, gold_token_doc

#: key of the teacher scores in a reference doc's user_data: component
#: name -> (its labels, {(start, end) of a sentence: scores})
TEACHER_KEY = "spacy_struct.teacher"
#: version of the .npz layout
TEACHER_FORMAT = 1


def words_key(doc: Doc) -> str:
    """A fingerprint of a doc's words: which teacher scores belong to it."""
    return hashlib.blake2b("\x1f".join(t.text for t in doc).encode("utf8"), digest_size=8).hexdigest()


def score_corpus(nlp, component, references: Sequence[Doc], for_training: bool = True,
                 batch_words: int = 10_000) -> Iterator[Tuple[List[int], List[Doc], Any, List[np.ndarray]]]:
    """`component`'s scores (float64) for every sentence of `references`,
    read with their gold tokens, the pipes before it run first.

    for_training: score the sentence ranges the component trains on (its
        `training_ranges`, what a student's targets must match); else those
        it predicts on (`predict` and `set_annotations` take the batch).
    batch_words: most words scored at once (memory stays bounded).
    YIELDS: per batch, (the references' indices, their docs, the
        SentenceBatch, one score array per sentence of the batch).
    """
    kept = [i for i, ref in enumerate(references) if len(ref)]
    for group in word_bounded([references[i] for i in kept], batch_words):
        indices, kept = kept[:len(group)], kept[len(group):]
        docs = [gold_token_doc(ref, nlp.vocab) for ref in group]
        for _, pipe in nlp.pipeline:  # what the component reads (its tok2vec)
            if pipe is component:
                break
            docs = list(pipe.pipe(docs))
        if for_training:
            ranges = [component.training_ranges(Example(doc, ref)) for doc, ref in zip(docs, group)]
            batch = component.make_batch(docs, ranges)
            scores = component.model.predict(batch) if batch.sents else []
        else:
            _, batch, scores = component.score_docs(docs)
        # astype keeps an array subclass (the coordination factor's candidates)
        yield indices, docs, batch, [s.astype(np.float64) for s in scores or []]


def teachable(nlp, name: Optional[str], where: str) -> Tuple[str, Any]:
    """The component to take teacher scores from: `name`, or the
    pipeline's only component that can learn from them (a
    `teacher_weight` setting)."""
    found = [(n, p) for n, p in nlp.pipeline if "teacher_weight" in getattr(p, "cfg", {})]
    if name is not None:
        if name not in nlp.pipe_names:
            raise ValueError(f"teach: {where} has no component {name!r} (its pipes: {nlp.pipe_names})")
        if name not in dict(found):
            raise ValueError(f"teach: {name!r} in {where} does not learn from teacher scores (no "
                             f"teacher_weight setting); those that do: {[n for n, _ in found]}")
        return name, nlp.get_pipe(name)
    if len(found) != 1:
        raise ValueError(f"teach: {where} has {len(found)} components that learn from teacher scores "
                         f"({[n for n, _ in found]}); name one with --component")
    return found[0]


def write_teacher_scores(output: Union[str, Path], corpus: Union[str, Path], pipelines: Sequence[Union[str, Path]],
                         component: Optional[str] = None,
                         progress: Optional[Callable[[str], None]] = print) -> Dict[str, Any]:
    """Average one component's scores over `pipelines` for every sentence
    of `corpus` and write them to `output` (.npz).

    corpus: a .spacy file (gold tokens, one example per doc, as
        `SentenceDocs.v1` reads it).
    pipelines: trained pipeline folders with the same component, labels
        and model shape (the seeds of one config, say).
    component: its name in the pipelines (None: their only component with
        a `teacher_weight` setting). The student's must have the same name.
    RETURNS: a summary (docs, sentences, teachers, component, labels).
    """
    import spacy
    from spacy.tokens import DocBin

    if not pipelines:
        raise ValueError("teach: no teacher pipeline given")
    sums: Dict[Tuple[int, int, int], np.ndarray] = {}
    labels: Optional[List[str]] = None
    name: Optional[str] = None
    references: List[Doc] = []
    for number, path in enumerate(pipelines):
        nlp = spacy.load(path)
        this_name, scorer = teachable(nlp, component if name is None else name, str(path))
        these = list(scorer.labels)
        if labels is None:
            labels, name = these, this_name
            references = list(DocBin().from_disk(corpus).get_docs(nlp.vocab))
        elif sorted(these) != sorted(labels):
            raise ValueError(f"teach: {path}'s {name} has the labels {these}, the first teacher's {labels}")
        order = [these.index(label) for label in labels]
        for indices, _, batch, scores in score_corpus(nlp, scorer, references):
            for (doc_i, start, end), S in zip(batch.sents, scores):
                if getattr(S, "candidates", None) is not None:
                    raise ValueError(
                        f"teach: {path}'s {name} scores whole coordinations (coordination_width > 0), "
                        f"whose scores are not stored as teacher scores; teach with pipelines without it"
                    )
                key = (indices[doc_i], start, end)
                S = S[order].astype(np.float32)
                if key not in sums:
                    sums[key] = S
                elif sums[key].shape != S.shape:
                    raise ValueError(f"teach: {path} gives scores of shape {S.shape} for sentence {key}, "
                                     f"the first teacher {sums[key].shape}: another model shape")
                else:
                    sums[key] += S
        if progress is not None:
            progress(f"teacher {number + 1} of {len(pipelines)} ({path}): {len(sums):,} sentences scored")
    if not sums:
        raise ValueError(f"teach: {corpus} has no sentence to score")
    keys = sorted(sums)
    shapes = np.array([sums[k].shape for k in keys], dtype=np.int32)
    offsets = np.concatenate([[0], np.cumsum([sums[k].size for k in keys])]).astype(np.int64)
    values = np.empty(int(offsets[-1]), dtype=np.float32)
    for row, key in enumerate(keys):
        values[offsets[row]:offsets[row + 1]] = sums.pop(key).ravel() / len(pipelines)
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with open(output, "wb") as file:  # np.savez would add ".npz" to a name without it
        np.savez(file, format=np.array([TEACHER_FORMAT]), component=np.array([name]), labels=np.array(labels),
                 teachers=np.array([str(p) for p in pipelines]),
                 doc_keys=np.array([words_key(references[k[0]]) for k in keys]),
                 starts=np.array([k[1] for k in keys], np.int32), ends=np.array([k[2] for k in keys], np.int32),
                 shapes=shapes, offsets=offsets, values=values)
    return {"docs": len(references), "sentences": len(keys), "teachers": len(pipelines), "component": name,
            "labels": labels}


class TeacherScores:
    """Teacher files (`write_teacher_scores`), to attach to reference docs:
    one file, or a folder of them (say, one per corpus of a training
    folder, or one per fold of a corpus, each fold scored by a model
    trained on the others; not its subfolders), for one component and
    label set. Where two files score a doc with the same words (a sentence
    repeated in two folds), the first file by name keeps it, with a
    warning that counts them."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = str(path)
        files = sorted(Path(path).glob("*.npz")) if Path(path).is_dir() else [Path(path)]
        if not files:
            raise ValueError(f"teacher scores {path}: a folder without .npz files")
        self.component: Optional[str] = None
        self.labels: Tuple[str, ...] = ()
        self._arrays: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._by_doc: Dict[str, Tuple[int, List[Tuple[int, int, int]]]] = {}
        #: docs a later file scores again (the first file's scores are kept): file name -> how many
        self.repeated: Dict[str, int] = {}
        for file in files:
            self._read(file)
        if self.repeated:
            warnings.warn(f"teacher scores {self.path}: " + ", ".join(
                f"{n} docs of {name}" for name, n in self.repeated.items()) + " have the words of a doc an "
                f"earlier file scores already (a sentence repeated across corpora or folds); the earlier "
                f"file's scores are kept for them")

    def _read(self, file: Path) -> None:
        try:
            data = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as err:
            raise ValueError(f"teacher scores {file}: not a file `python -m spacy_struct teach` wrote ({err})") \
                from None
        if "format" not in data or int(data["format"][0]) != TEACHER_FORMAT:
            raise ValueError(f"teacher scores {file}: not a file of format {TEACHER_FORMAT}; write it again "
                             f"with `python -m spacy_struct teach`")
        component, labels = str(data["component"][0]), tuple(str(label) for label in data["labels"])
        if self.component is not None and (component, labels) != (self.component, self.labels):
            raise ValueError(f"teacher scores {file}: for {component} with the labels {list(labels)}, but "
                             f"the other files of {self.path} for {self.component} with {list(self.labels)}")
        self.component, self.labels = component, labels
        number = len(self._arrays)
        self._arrays.append((data["values"], data["shapes"], data["offsets"]))
        repeated = set()
        for row, (key, start, end) in enumerate(zip(data["doc_keys"], data["starts"], data["ends"])):
            owner, rows = self._by_doc.setdefault(str(key), (number, []))
            if owner != number:  # an earlier file scores these words: one teacher per doc
                repeated.add(str(key))
                continue
            rows.append((int(start), int(end), row))
        if repeated:
            self.repeated[file.name] = len(repeated)

    def __len__(self) -> int:
        return sum(len(shapes) for _, shapes, _ in self._arrays)

    def attach(self, reference: Doc) -> bool:
        """Give `reference` its teacher scores (user_data[TEACHER_KEY]);
        False when the files have none for its words."""
        found = self._by_doc.get(words_key(reference))
        if found is None:
            return False
        number, rows = found
        values, shapes, offsets = self._arrays[number]
        by_range = {(start, end): values[offsets[row]:offsets[row + 1]].reshape(tuple(shapes[row]))
                    for start, end, row in rows}
        reference.user_data.setdefault(TEACHER_KEY, {})[self.component] = (self.labels, by_range)
        return True

    def warn_missing(self, missing: int, total: int, first: str) -> None:
        """Warn that `missing` of `total` docs of a pass have no scores."""
        warnings.warn(f"teacher scores {self.path}: {missing} of {total} docs have none (first: "
                      f"{text_preview(first)}); they train on their gold alone. Write the scores again "
                      f"from this corpus with `python -m spacy_struct teach`")


def has_teacher_scores(name: str, reference: Doc) -> bool:
    """Whether `reference` carries teacher scores for component `name`."""
    return name in reference.user_data.get(TEACHER_KEY, {})


def teacher_targets(name: str, labels: Sequence[str], weight: float, reference: Doc, ranges: Sequence[Range],
                    golds: List[Any], loss: str) -> Tuple[List[Range], List[Any], int]:
    """The ranges to train on and their targets: each sentence that has
    teacher scores for component `name` as a `TeacherTarget` of `weight`
    (its teacher's labels put in the order of `labels`), the others as
    they are. A gold of None (a doc without annotation: unlabelled text)
    learns from its teacher scores alone, and is left out where it has
    none. `loss`: the component's, which must learn a target distribution.
    RETURNS: (ranges, targets, sentences of a taught doc without scores).
    """
    taught = reference.user_data.get(TEACHER_KEY, {})
    found = taught.get(name)
    if found is None:
        if taught:
            raise ValueError(f"{name}: the corpus gives teacher scores for {sorted(taught)}, none for {name!r}: "
                             f"the teachers' component must have the student's name (teach --component)")
        pairs = [(r, g) for r, g in zip(ranges, golds) if g is not None]
        return [r for r, _ in pairs], [g for _, g in pairs], 0
    if loss not in TEACHABLE_LOSSES:
        raise ValueError(f"{name}: the corpus gives teacher scores, which the {loss!r} loss cannot learn from "
                         f"(a margin has no target distribution); use one of {list(TEACHABLE_LOSSES)}, or "
                         f"set teacher_weight = 0 to train on the gold alone")
    teacher_labels, by_range = found
    if tuple(teacher_labels) != tuple(labels):
        if sorted(teacher_labels) != sorted(labels):
            raise ValueError(f"{name}: the teacher scores are for the labels {list(teacher_labels)}, the "
                             f"component has {list(labels)}")
        order = [list(teacher_labels).index(label) for label in labels]
        by_range = {key: S[order] for key, S in by_range.items()}
    kept, targets, unscored = [], [], 0
    for (start, end), gold in zip(ranges, golds):
        scores = by_range.get((start, end))
        if scores is not None:
            kept.append((start, end))
            targets.append(TeacherTarget(gold, scores, weight))
            continue
        unscored += 1
        if gold is not None:
            kept.append((start, end))
            targets.append(gold)
    return kept, targets, unscored
