"""The weights of trained pipelines of one config: averaged into one
pipeline, or copied into a pipeline before its training starts.

Why: runs of one config that differ only in their seed disagree most about
rare decisions (a few gapped segments out of thousands of mentions), and an
ensemble of them is better than any one, but costs every run's time at
prediction. Runs that start from the same weights and part only after that
(a shared first epoch, then a seed each) tend to end in one basin of the
loss, where the average of their weights is itself a good model (Frankle et
al. 2020, "linear mode connectivity"; Wortsman et al. 2022, "model soups"):
an ensemble's gain at one model's speed, when it works. Runs from
independent random starts do not share a basin (their hidden units are
permuted), so averaging those gives a worse model, not an ensemble.

- `average_pipelines(paths)`: the element-wise mean of every parameter of
  the pipelines, which must share their components, architectures and
  labels; the result is the first pipeline with the mean weights.
- `spacy_struct.weights_from.v1` (a callback for `[initialize.after_init]`):
  after `nlp.initialize`, each trainable component takes the weights of the
  component of the same name in a trained pipeline, so that a training
  continues from them with its own seed, data order and optimizer state.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Iterator, List, Sequence, Tuple, Union

import numpy as np
from spacy.language import Language
from spacy.util import registry


def _models(nlp: Language) -> Dict[str, object]:
    """The pipeline's components that hold a thinc model, by name."""
    return {name: proc.model for name, proc in nlp.pipeline if hasattr(proc, "model")
            and hasattr(proc.model, "walk")}


def _labels(nlp: Language, name: str) -> Tuple:
    labels = getattr(nlp.get_pipe(name), "labels", ())
    return tuple(labels) if labels is not None else ()


def _paired_params(models: Sequence[object], where: str) -> Iterator[Tuple[List[object], str]]:
    """(nodes, param name) for every parameter the models hold, node by node
    in walk order; a clear error where their layers or shapes differ."""
    walks = [list(model.walk()) for model in models]
    if len({len(walk) for walk in walks}) != 1:
        raise ValueError(f"{where}: the pipelines' models have {sorted({len(w) for w in walks})} layers: "
                         f"not the same architecture, so their weights cannot be matched")
    for nodes in zip(*walks):
        names = {node.name for node in nodes}
        if len(names) != 1:
            raise ValueError(f"{where}: layer {sorted(names)} differ: not the same architecture")
        first = nodes[0]
        for param in first.param_names:
            held = [node.has_param(param) for node in nodes]
            if not any(held):
                continue
            if not all(held):
                raise ValueError(f"{where}: the parameter {param!r} of layer {first.name!r} is set in some "
                                 f"pipelines only: is one of them untrained?")
            shapes = {tuple(node.get_param(param).shape) for node in nodes}
            if len(shapes) != 1:
                raise ValueError(f"{where}: the parameter {param!r} of layer {first.name!r} has the shapes "
                                 f"{sorted(shapes)}: not the same widths")
            yield list(nodes), param


def _check_same_components(pipelines: Sequence[Language], sources: Sequence[str]) -> List[str]:
    names = [sorted(_models(nlp)) for nlp in pipelines]
    for nlp_names, source in zip(names[1:], sources[1:]):
        if nlp_names != names[0]:
            raise ValueError(f"{source}: its trainable components {nlp_names} are not {sources[0]}'s "
                             f"{names[0]}")
    for name in names[0]:
        labels = [_labels(nlp, name) for nlp in pipelines]
        for nlp_labels, source in zip(labels[1:], sources[1:]):
            if nlp_labels != labels[0]:
                raise ValueError(f"{source}: the labels of {name!r} differ from {sources[0]}'s, so the "
                                 f"rows of their output layers do not mean the same; train on the same data")
    return names[0]


def average_pipelines(paths: Sequence[Union[str, Path]]) -> Language:
    """The pipelines at `paths` (trained from one config) loaded, with every
    parameter replaced by its mean over them. Returns the first pipeline,
    changed in place; raises ValueError when the pipelines do not share
    their components, layers, widths and labels."""
    if len(paths) < 2:
        raise ValueError(f"average_pipelines: give at least two pipelines, got {len(paths)}")
    import spacy

    sources = [str(path) for path in paths]
    pipelines = [spacy.load(path) for path in paths]
    for name in _check_same_components(pipelines, sources):
        models = [_models(nlp)[name] for nlp in pipelines]
        for nodes, param in _paired_params(models, f"{name!r} of {', '.join(sources)}"):
            values = [node.ops.to_numpy(node.get_param(param)) for node in nodes]
            mean = np.mean(np.stack(values).astype("float64"), axis=0).astype(values[0].dtype)
            nodes[0].set_param(param, nodes[0].ops.asarray(mean))
    return pipelines[0]


def copy_weights(source: Language, target: Language, source_name: str = "the source pipeline") -> int:
    """Set every parameter of `target`'s trainable components to that of
    the component of the same name in `source`. Returns the number of
    parameters copied; raises ValueError when the two differ in their
    components, layers, widths or labels."""
    _check_same_components([target, source], ["the pipeline in training", source_name])
    copied = 0
    for name, model in _models(target).items():
        for (node, source_node), param in _paired_params([model, _models(source)[name]],
                                                          f"{name!r} from {source_name}"):
            node.set_param(param, node.ops.asarray(source_node.ops.to_numpy(source_node.get_param(param)).copy()))
            copied += 1
    return copied


@registry.callbacks("spacy_struct.weights_from.v1")
def create_weights_from(path: Union[str, Path, None]) -> Callable[[Language], Language]:
    """A callback for `[initialize.after_init]`: the initialized pipeline
    takes the weights of the trained pipeline at `path` (the same config's,
    e.g. one epoch of a run), so that its training continues from them with
    its own seed. `path` null does nothing, so a config can hold the block
    with `path = ${paths.start}`."""

    def weights_from(nlp: Language) -> Language:
        if path is None:
            return nlp
        import spacy

        if not Path(path).exists():
            raise ValueError(f"spacy_struct.weights_from.v1: no pipeline at {str(path)!r}")
        copy_weights(spacy.load(path), nlp, source_name=str(path))
        return nlp

    return weights_from
