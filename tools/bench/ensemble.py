"""How much of an overlap_segmenter's error is its seed: trained pipelines
of one config scored on dev alone and as an ensemble (the average of their
transition scores, decoded as one model's, with its settings).

python -m tools.bench segments-ensemble DEV PIPELINE PIPELINE...

The ensemble is what `python -m spacy_struct teach` gives a student to
learn from; its row is the accuracy a distilled single model aims at.
"""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Sequence

import numpy as np


COLUMNS = (("segments_f", "overall F1"), ("segments_discontinuous_p", "discontinuous P"),
           ("segments_discontinuous_r", "R"), ("segments_discontinuous_f", "F1"),
           ("segments_crossing_f", "crossing F1"))


def _scores_of(path: Path, references):
    """A pipeline's overlap_segmenter, and its (docs, batch, scores) per
    batch of the references' words and sentences, as it predicts."""
    import spacy

    from spacy_struct.overlap_segmenter import OverlapSegmenter
    from spacy_struct.pipeline import score_corpus

    nlp = spacy.load(path)
    component = next((pipe for _, pipe in nlp.pipeline if isinstance(pipe, OverlapSegmenter)), None)
    if component is None:
        raise ValueError(f"{path} has no overlap_segmenter (pipes: {nlp.pipe_names})")
    parts = [(docs, batch, scores) for _, docs, batch, scores in score_corpus(nlp, component, references,
                                                                              for_training=False)]
    return component, parts


def _evaluate(component, parts, references) -> Dict[str, float]:
    from spacy.training import Example

    from spacy_struct.overlap_segmenter.scoring import score_segments

    predicted = []
    for docs, batch, scores in parts:
        component.set_annotations(docs, (batch, component.structure.argmax(scores)))
        predicted.extend(docs)
    return score_segments([Example(doc, ref) for doc, ref in zip(predicted, references)])


def evaluate(dev: Path, pipelines: Sequence[Path]) -> List[Dict[str, object]]:
    """One row per pipeline and one for the average of their scores
    (decoded by the first pipeline's component and settings)."""
    import spacy
    from spacy.tokens import DocBin

    if len(pipelines) < 2:
        raise ValueError("segments-ensemble: give two or more pipelines")
    references = [doc for doc in DocBin().from_disk(dev).get_docs(spacy.blank("en").vocab) if len(doc)]
    rows, runs = [], []
    for path in pipelines:
        component, parts = _scores_of(path, references)
        labels = list(component.labels)
        if runs and labels != runs[0][2]:
            raise ValueError(f"segments-ensemble: {path} has the labels {labels}, {pipelines[0]} {runs[0][2]}")
        runs.append((component, parts, labels))
        rows.append({"label": str(path), **_evaluate(component, parts, references)})
    first, first_parts, _ = runs[0]
    averaged = [(docs, batch, [_mean([run[1][b][2][s] for run in runs]) for s in range(len(scores))])
                for b, (docs, batch, scores) in enumerate(first_parts)]
    rows.append({"label": f"the average of their scores ({len(runs)} models)",
                 **_evaluate(first, averaged, references)})
    return rows


def _mean(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """The mean of one sentence's score arrays from several pipelines, which
    must share one layout (with the coordination factor: one set of
    candidates, so the same cell holds the same candidate's phi)."""
    first = getattr(arrays[0], "candidates", None)
    same = all(a.shape == arrays[0].shape and (first is None) == (getattr(a, "candidates", None) is None)
               and (first is None or np.array_equal(a.candidates, first)) for a in arrays)
    if not same:
        raise ValueError("segments-ensemble: the pipelines' scores have different layouts (model shapes, or "
                         "coordination_fragment / coordination_gap): they cannot be averaged")
    return sum(arrays) / len(arrays)


def format_table(rows: Sequence[Dict[str, object]]) -> str:
    header = "| pipeline | " + " | ".join(name for _, name in COLUMNS) + " |"
    lines = [header, "|" + "---|" * (len(COLUMNS) + 1)]
    for row in rows:
        cells = [f"{100 * float(row[key]):.1f}" for key, _ in COLUMNS]
        lines.append(f"| {row['label']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
