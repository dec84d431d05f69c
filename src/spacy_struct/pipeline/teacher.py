"""Teacher scores: what trained pipelines score on a corpus, kept for
training another pipeline on it (distillation).

A model trained from scratch on a small corpus depends on its seed: on
GENIA's coordinations, three seeds of the same config are 6 points of
discontinuous F1 apart, and the average of their scores decodes better
than any of them (docs/results/segments.md). The average is an ensemble,
three times as slow. A single model can learn it instead: trained toward
the ensemble's probabilities of every structure (the expected uses of its
parts, `losses.TeacherTarget`) beside the gold, it keeps one model's speed.

- `write_teacher_scores` (`python -m spacy_struct teach`) runs one or more
  trained pipelines over a corpus's sentences, as the training reader
  gives them (gold tokens, the corpus's sentences), and writes the average
  of one component's scores per sentence to a `.npz` file, with the
  component's labels and a fingerprint of each doc's words.
- `TeacherScores` reads the file; `spacy_struct.SentenceDocs.v1` with
  `teacher = PATH` attaches each doc's scores to its reference doc
  (`user_data[TEACHER_KEY]`), and a component with a `teacher_weight`
  setting mixes them into its loss's target (`teacher_targets`).
"""
from __future__ import annotations

import hashlib
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from spacy.tokens import Doc

from ..corpus import gold_token_doc
from ..losses import TEACHABLE_LOSSES, TeacherTarget

#: key of the teacher scores in a reference doc's user_data: component
#: name -> (its labels, {(start, end) of a sentence: scores})
TEACHER_KEY = "spacy_struct.teacher"
#: version of the .npz layout
TEACHER_FORMAT = 1

Range = Tuple[int, int]


def words_key(doc: Doc) -> str:
    """A fingerprint of a doc's words: which teacher scores belong to it."""
    return hashlib.blake2b("\x1f".join(t.text for t in doc).encode("utf8"), digest_size=8).hexdigest()


def _component(nlp, name: Optional[str], where: str):
    """The component to take scores from: `name`, or the pipeline's only
    component that scores sentences."""
    if name is not None:
        if name not in nlp.pipe_names:
            raise ValueError(f"teach: {where} has no component {name!r} (its pipes: {nlp.pipe_names})")
        component = nlp.get_pipe(name)
        if not hasattr(component, "score_docs"):
            raise ValueError(f"teach: {name!r} in {where} is not a spacy_struct component that scores sentences")
        return name, component
    found = [(n, p) for n, p in nlp.pipeline if hasattr(p, "score_docs")]
    if len(found) != 1:
        raise ValueError(f"teach: {where} has {len(found)} components that score sentences "
                         f"({[n for n, _ in found]}); name one with --component")
    return found[0]


def write_teacher_scores(output: Union[str, Path], corpus: Union[str, Path], pipelines: Sequence[Union[str, Path]],
                         component: Optional[str] = None, batch_size: int = 128,
                         progress: Optional[Callable[[str], None]] = print) -> Dict[str, Any]:
    """Average one component's scores over `pipelines` for every sentence
    of `corpus` and write them to `output` (.npz).

    corpus: a .spacy file (gold tokens, one example per doc, as
        `SentenceDocs` reads it).
    pipelines: trained pipeline folders with the same component, labels
        and model shape (the seeds of one config, say).
    component: its name in the pipelines (None: their only component that
        scores sentences).
    RETURNS: a summary (docs, sentences, teachers, component, labels).
    """
    import spacy
    from spacy.tokens import DocBin
    from spacy.util import minibatch

    if not pipelines:
        raise ValueError("teach: no teacher pipeline given")
    sums: Dict[Tuple[int, int, int], np.ndarray] = {}
    labels: Optional[List[str]] = None
    name: Optional[str] = None
    references: List[Doc] = []
    for number, path in enumerate(pipelines):
        nlp = spacy.load(path)
        this_name, scorer = _component(nlp, component if name is None else name, str(path))
        these = list(scorer.labels)
        if labels is None:
            labels, name = these, this_name
            references = [doc for doc in DocBin().from_disk(corpus).get_docs(nlp.vocab) if len(doc)]
        elif sorted(these) != sorted(labels):
            raise ValueError(f"teach: {path}'s {name} has the labels {these}, the first teacher's {labels}")
        order = [these.index(label) for label in labels]
        docs = [gold_token_doc(ref, nlp.vocab) for ref in references]
        for pipe_name, pipe in nlp.pipeline:  # what the component reads (its tok2vec)
            if pipe is scorer:
                break
            docs = list(pipe.pipe(docs, batch_size=batch_size))
        for indices in minibatch(range(len(docs)), batch_size):
            _, batch, scores = scorer.score_docs([docs[i] for i in indices])
            for (doc_i, start, end), S in zip(batch.sents, scores or []):
                key = (indices[doc_i], start, end)
                S = np.asarray(S, dtype=np.float64)[order]
                if key in sums and sums[key].shape != S.shape:
                    raise ValueError(f"teach: {path} gives scores of shape {S.shape} for sentence {key}, "
                                     f"the first teacher {sums[key].shape}: another model shape")
                sums[key] = sums[key] + S if key in sums else S
        if progress is not None:
            progress(f"teacher {number + 1} of {len(pipelines)} ({path}): {len(sums)} sentences scored")
    keys = sorted(sums)
    shapes = np.array([sums[k].shape for k in keys], dtype=np.int32).reshape(len(keys), -1)
    sizes = np.array([sums[k].size for k in keys], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = np.concatenate([(sums[k] / len(pipelines)).ravel() for k in keys]).astype(np.float32) \
        if keys else np.zeros(0, np.float32)
    doc_keys = [words_key(references[k[0]]) for k in keys]
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    with open(output, "wb") as file:  # np.savez would add ".npz" to a name without it
        np.savez(file, format=np.array([TEACHER_FORMAT]), component=np.array([name]), labels=np.array(labels),
                 teachers=np.array([str(p) for p in pipelines]), doc_keys=np.array(doc_keys),
                 starts=np.array([k[1] for k in keys], np.int32), ends=np.array([k[2] for k in keys], np.int32),
                 shapes=shapes, offsets=offsets, values=values)
    return {"docs": len(references), "sentences": len(keys), "teachers": len(pipelines), "component": name,
            "labels": labels}


class TeacherScores:
    """Teacher files (`write_teacher_scores`), to attach to reference docs:
    one file, or a folder of them (say, one per corpus of a training
    folder), for one component and label set."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.path = str(path)
        files = sorted(Path(path).glob("*.npz")) if Path(path).is_dir() else [Path(path)]
        if not files:
            raise ValueError(f"teacher scores {path}: a folder without .npz files")
        self.component: Optional[str] = None
        self.labels: Tuple[str, ...] = ()
        self._arrays: List[Tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._by_doc: Dict[str, List[Tuple[int, int, int, int]]] = {}
        for file in files:
            self._read(file)
        self.missing = 0
        self.first_missing: Optional[str] = None

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
        for row, (key, start, end) in enumerate(zip(data["doc_keys"], data["starts"], data["ends"])):
            self._by_doc.setdefault(str(key), []).append((int(start), int(end), number, row))

    def __len__(self) -> int:
        return sum(len(shapes) for _, shapes, _ in self._arrays)

    def attach(self, reference: Doc) -> bool:
        """Give `reference` its teacher scores (user_data[TEACHER_KEY]);
        False, counted in `missing`, when the file has none for its words."""
        rows = self._by_doc.get(words_key(reference))
        if rows is None:
            self.missing += 1
            if self.first_missing is None:
                self.first_missing = reference.text[:80]
            return False
        by_range = {(start, end): self._scores(number, row) for start, end, number, row in rows}
        reference.user_data.setdefault(TEACHER_KEY, {})[self.component] = (self.labels, by_range)
        return True

    def _scores(self, number: int, row: int) -> np.ndarray:
        values, shapes, offsets = self._arrays[number]
        return values[offsets[row]:offsets[row + 1]].reshape(tuple(shapes[row]))

    def report_missing(self, total: int) -> None:
        """Warn, once per pass over the corpus, of docs without scores."""
        if self.missing:
            warnings.warn(f"teacher scores {self.path}: {self.missing} of {total} docs have none (first: "
                          f"{self.first_missing!r}); they train on their gold alone. Write the file again "
                          f"from this corpus with `python -m spacy_struct teach`")
        self.missing, self.first_missing = 0, None


def has_teacher_scores(name: str, reference: Doc) -> bool:
    """Whether `reference` carries teacher scores for component `name`."""
    return name in reference.user_data.get(TEACHER_KEY, {})


def teacher_targets(name: str, labels: Sequence[str], weight: float, reference: Doc, ranges: Sequence[Range],
                    golds: List[Any], loss: str) -> Tuple[List[Range], List[Any]]:
    """The ranges to train on and their targets: each sentence that has
    teacher scores for component `name` as a `TeacherTarget` of `weight`
    (its teacher's labels put in the order of `labels`), the others as
    they are. A gold of None (a doc without annotation: unlabelled text)
    learns from its teacher scores alone, and is left out where it has
    none. `loss`: the component's, which must learn a target distribution."""
    found = reference.user_data.get(TEACHER_KEY, {}).get(name)
    if found is None:
        return _labelled(ranges, golds)
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
    kept, targets = [], []
    for (start, end), gold in zip(ranges, golds):
        scores = by_range.get((start, end))
        if scores is not None:
            kept.append((start, end))
            targets.append(TeacherTarget(gold, scores, weight))
        elif gold is not None:
            kept.append((start, end))
            targets.append(gold)
    return kept, targets


def _labelled(ranges: Sequence[Range], golds: List[Any]) -> Tuple[List[Range], List[Any]]:
    pairs = [(r, g) for r, g in zip(ranges, golds) if g is not None]
    return [r for r, _ in pairs], [g for _, g in pairs]
