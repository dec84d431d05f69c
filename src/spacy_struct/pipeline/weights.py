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

- `average_pipelines(paths)` (`average_weights` for loaded pipelines): the
  element-wise mean of every parameter of the pipelines, which must share
  their components, architectures and labels; the result is the first
  pipeline with the mean weights.
- `spacy_struct.weights_from.v1` (a callback for `[initialize.after_init]`):
  after `nlp.initialize`, each trainable component takes the weights of the
  component of the same name in a trained pipeline, so that a training
  continues from them with its own seed, data order and optimizer state.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Iterator, List, Sequence, Set, Tuple, Union

import numpy as np
from spacy.language import Language
from spacy.util import registry


def _models(nlp: Language) -> Dict[str, object]:
    """The pipeline's enabled components that hold a thinc model, by name."""
    return {name: proc.model for name, proc in nlp.pipeline if hasattr(proc, "model")
            and hasattr(proc.model, "walk")}


def _output_rows(nlp: Language, name: str) -> Tuple:
    """What the rows of the component's output layer stand for, in order:
    its labels, and for spaCy's transition components (ner, parser) their
    actions, whose order can differ where the labels do not. Weights of two
    components are only comparable where these agree."""
    proc = nlp.get_pipe(name)
    labels = getattr(proc, "labels", None)
    moves = getattr(proc, "move_names", None)
    return (tuple(labels) if labels is not None else (), tuple(moves) if moves is not None else ())


def _paired_params(models: Sequence[object], where: str,
                   seen: Set[int]) -> Iterator[Tuple[List[object], str]]:
    """(nodes, param name) for every parameter the models hold, node by node
    in walk order, each node once over all calls sharing `seen` (a layer two
    components share is met twice); a clear error where their layers or
    shapes differ, or where a layer keeps weights outside thinc's parameters
    (a shim, e.g. PyTorch's), which this cannot see."""
    walks = [list(model.walk()) for model in models]
    if len({len(walk) for walk in walks}) != 1:
        raise ValueError(f"{where}: the pipelines' models have {sorted({len(w) for w in walks})} layers: "
                         f"not the same architecture, so their weights cannot be matched")
    for nodes in zip(*walks):
        names = {node.name for node in nodes}
        if len(names) != 1:
            raise ValueError(f"{where}: layer {sorted(names)} differ: not the same architecture")
        first = nodes[0]
        if first.shims:
            raise ValueError(f"{where}: layer {first.name!r} keeps its weights in a shim "
                             f"({type(first.shims[0]).__name__}), which cannot be averaged or copied here")
        if id(first) in seen:
            continue
        seen.add(id(first))
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


def _check_components(target: Language, others: Sequence[Language], target_source: str,
                      other_sources: Sequence[str], exact: bool) -> List[str]:
    """The names of `target`'s components with a model, after checking that
    each of `others` has them too (and no others, when `exact`), with the
    same output rows: a label's row in one must be the same label's row in
    the other, or their weights mean different things."""
    names = sorted(_models(target))
    for nlp, source in zip(others, other_sources):
        theirs = sorted(_models(nlp))
        missing = [name for name in names if name not in theirs]
        if missing or (exact and theirs != names):
            raise ValueError(f"{source} has the components {theirs} with a model, {target_source} has "
                             f"{names}: they are not pipelines of one config")
        for name in names:
            if _output_rows(nlp, name) != _output_rows(target, name):
                raise ValueError(f"{source}: the labels (or actions) of {name!r} differ from those of "
                                 f"{target_source} or come in another order, so the rows of their output "
                                 f"layers do not mean the same; train on the same data")
    return names


def average_pipelines(paths: Sequence[Union[str, Path]]) -> Language:
    """The pipelines at `paths` (trained from one config) loaded, with every
    parameter replaced by its mean over them. Returns the first pipeline,
    changed in place, its meta's scores cleared and the sources recorded;
    raises ValueError when the pipelines do not share their components,
    layers, widths and labels."""
    if len(paths) < 2:
        raise ValueError(f"average_pipelines: give at least two pipelines, got {len(paths)}")
    import spacy

    return average_weights([spacy.load(path) for path in paths], [str(path) for path in paths])


def average_weights(pipelines: Sequence[Language], sources: Sequence[str]) -> Language:
    """Set every parameter of the first of `pipelines` (loaded, of one
    config) to its mean over all of them; `sources` names them in errors
    and in the meta. Returns the first pipeline, changed in place."""
    if len(pipelines) < 2 or len(sources) != len(pipelines):
        raise ValueError(f"average_weights: give at least two pipelines and a name for each, got "
                         f"{len(pipelines)} and {len(sources)}")
    names = _check_components(pipelines[0], pipelines[1:], sources[0], sources[1:], exact=True)
    seen: Set[int] = set()
    for name in names:
        models = [_models(nlp)[name] for nlp in pipelines]
        for nodes, param in _paired_params(models, f"{name!r} of {', '.join(sources)}", seen):
            values = [node.ops.to_numpy(node.get_param(param)) for node in nodes]
            mean = np.mean(np.stack(values).astype("float64"), axis=0).astype(values[0].dtype)
            nodes[0].set_param(param, nodes[0].ops.asarray(mean))
    averaged = pipelines[0]
    averaged.meta["performance"] = {}
    averaged.meta["averaged_from"] = list(sources)
    return averaged


def copy_weights(source: Language, target: Language, source_name: str = "the source pipeline") -> int:
    """Set every parameter of `target`'s enabled components that hold a
    model to that of the component of the same name in `source` (frozen or
    disabled ones are left alone). Returns the number of parameters copied;
    raises ValueError when a component is missing from `source` or differs
    in its layers, widths or labels, or when nothing was copied."""
    _check_components(target, [source], "the pipeline in training", [source_name], exact=False)
    copied = 0
    seen: Set[int] = set()
    source_models = _models(source)
    for name, model in _models(target).items():
        for (node, source_node), param in _paired_params([model, source_models[name]],
                                                          f"{name!r} from {source_name}", seen):
            node.set_param(param, node.ops.asarray(source_node.ops.to_numpy(source_node.get_param(param)).copy()))
            copied += 1
    if not copied:
        raise ValueError(f"{source_name}: no weights to copy into the pipeline's components {sorted(_models(target))}")
    return copied


@registry.callbacks("spacy_struct.weights_from.v1")
def create_weights_from(path: Union[str, Path, None]) -> Callable[[Language], Language]:
    """A callback for `[initialize.after_init]`: the initialized pipeline
    takes the weights of the trained pipeline at `path` (the same config's,
    e.g. one epoch of a run), so that its training continues from them with
    its own seed. spaCy calls it with the frozen and sourced components
    disabled, so those keep their own weights. `path` null does nothing, so
    a config can hold the block with `path = ${paths.start}`."""

    def weights_from(nlp: Language) -> Language:
        if path is None:
            return nlp
        import spacy

        if not Path(path).exists():
            raise ValueError(f"spacy_struct.weights_from.v1: no pipeline at {str(path)!r}")
        copy_weights(spacy.load(path), nlp, source_name=str(path))
        return nlp

    return weights_from
