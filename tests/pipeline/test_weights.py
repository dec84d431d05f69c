"""Weights of several trained pipelines: `python -m spacy_struct average`
writes their element-wise mean, and `spacy_struct.weights_from.v1` starts a
training from a trained pipeline's weights (runs that share a start, then
part with their own seeds)."""
import numpy as np
import pytest
import spacy
from spacy.training import Example
from spacy.util import registry
from thinc.api import Adam, fix_random_seed

from spacy_struct.__main__ import main
from spacy_struct.pipeline import average_pipelines, copy_weights, gold_token_doc
from spacy_struct.pipeline.weights import average_weights, create_weights_from

from helpers.toy_segments import SENTENCES, SMALL_MODEL, segment_references

def _examples(nlp, labels=None):
    return [Example(gold_token_doc(ref, nlp.vocab), ref) for ref in segment_references(nlp.vocab, labels)]


def _initialized(model=SMALL_MODEL, labels=None, seed=0):
    fix_random_seed(seed)
    nlp = spacy.blank("en")
    nlp.add_pipe("overlap_segmenter", config={"model": model})
    nlp.initialize(lambda: _examples(nlp, labels))
    return nlp


def _train(nlp, seed, updates=30):
    """Batches of two sentences in an order and with dropout masks drawn
    from `seed`, as in a training run."""
    fix_random_seed(seed)
    rng = np.random.default_rng(seed)
    optimizer = Adam(0.03)
    examples = _examples(nlp)
    for _ in range(updates):
        batch = [examples[i] for i in rng.choice(len(examples), size=2, replace=False)]
        nlp.update(batch, sgd=optimizer, drop=0.2)
    return nlp


def _params(nlp):
    """Every parameter of the component's model, in walk order."""
    model = nlp.get_pipe("overlap_segmenter").model
    return [(node.name, name, np.array(node.get_param(name))) for node in model.walk()
            for name in node.param_names if node.has_param(name)]


def _scores(nlp):
    return [(seg.label_, seg.offsets) for text, _ in SENTENCES for seg in nlp(text)._.segments]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A shared start (trained a little from seed 0), and two runs that
    continue from its weights with seeds 1 and 2."""
    root = tmp_path_factory.mktemp("weights")
    _train(_initialized(seed=0), seed=0).to_disk(root / "start")
    for seed in (1, 2):
        nlp = _initialized(seed=seed)
        create_weights_from(root / "start")(nlp)
        _train(nlp, seed=seed, updates=10).to_disk(root / f"run{seed}")
    return root


def test_weights_from_starts_the_training_at_the_trained_weights(runs):
    start = spacy.load(runs / "start")
    nlp = _initialized(seed=5)
    before = _params(nlp)
    create_weights_from(runs / "start")(nlp)
    after, wanted = _params(nlp), _params(start)
    assert [(a, b) for a, b, _ in after] == [(a, b) for a, b, _ in wanted]
    assert any(not np.array_equal(x, y) for (_, _, x), (_, _, y) in zip(before, wanted))
    for (_, _, got), (_, _, expected) in zip(after, wanted):
        np.testing.assert_array_equal(got, expected)
    assert _scores(nlp) == _scores(start)


def test_weights_from_is_registered_and_does_nothing_without_a_path(runs):
    callback = registry.resolve({"cb": {"@callbacks": "spacy_struct.weights_from.v1",
                                        "path": str(runs / "start")}})["cb"]
    nlp = _initialized(seed=5)
    callback(nlp)
    for (_, _, got), (_, _, expected) in zip(_params(nlp), _params(spacy.load(runs / "start"))):
        np.testing.assert_array_equal(got, expected)
    untouched = _initialized(seed=5)
    before = _params(untouched)
    create_weights_from(None)(untouched)
    for (_, _, got), (_, _, expected) in zip(_params(untouched), before):
        np.testing.assert_array_equal(got, expected)


def test_the_average_is_the_mean_of_every_parameter(runs):
    one, two = spacy.load(runs / "run1"), spacy.load(runs / "run2")
    first, second = _params(one), _params(two)
    assert any(not np.array_equal(x, y) for (_, _, x), (_, _, y) in zip(first, second))
    averaged = _params(average_pipelines([runs / "run1", runs / "run2"]))
    assert len(averaged) == len(first) > 0
    for (_, _, got), (_, _, x), (_, _, y) in zip(averaged, first, second):
        assert got.dtype == x.dtype
        np.testing.assert_allclose(got, (x.astype("float64") + y) / 2, rtol=1e-6, atol=1e-7)


def test_the_average_command_writes_a_pipeline_that_loads_and_predicts(runs, capsys):
    out = runs / "averaged" / "model-best"  # its parent does not exist yet
    assert main(["average", str(out), str(runs / "run1"), str(runs / "run2")]) == 0
    assert "the mean of 2 pipelines' weights" in capsys.readouterr().out
    loaded = spacy.load(out)
    first, second = _params(spacy.load(runs / "run1")), _params(spacy.load(runs / "run2"))
    for (_, _, got), (_, _, x), (_, _, y) in zip(_params(loaded), first, second):
        np.testing.assert_allclose(got, (x.astype("float64") + y) / 2, rtol=1e-6, atol=1e-7)
    assert _scores(loaded) == _scores(average_pipelines([runs / "run1", runs / "run2"]))
    assert loaded.meta["performance"] == {}
    assert loaded.meta["averaged_from"] == [str(runs / "run1"), str(runs / "run2")]


def test_the_average_command_never_writes_over_a_pipeline(runs, tmp_path, capsys):
    run1_config = (runs / "run1" / "config.cfg").read_text()
    # the output forgotten: the first pipeline would be the output
    assert main(["average", str(runs / "run1"), str(runs / "run1"), str(runs / "run2")]) == 1
    assert "one of the pipelines" in capsys.readouterr().err
    assert main(["average", str(runs / "run2"), str(runs / "start"), str(runs / "run1")]) == 1
    assert "not an empty folder" in capsys.readouterr().err
    assert (runs / "run1" / "config.cfg").read_text() == run1_config
    (tmp_path / "empty").mkdir()
    assert main(["average", str(tmp_path / "empty"), str(runs / "run1"), str(runs / "run2")]) == 0


def test_a_layer_shared_by_two_components_is_averaged_once():
    """Where two components hold the same layers, each pass over the
    pipeline meets them again: they must be averaged once, not twice."""
    def pipeline(seed):
        fix_random_seed(seed)
        nlp = spacy.blank("en")
        tagger = nlp.add_pipe("tagger")
        tagger.add_label("N")
        tagger.add_label("V")
        nlp.initialize()
        twin = nlp.add_pipe("tagger", name="twin")
        twin.add_label("N")
        twin.add_label("V")
        twin.model = tagger.model
        return nlp

    one, two = pipeline(0), pipeline(1)
    expected = [(x.astype("float64") + y) / 2 for x, y in zip(_all_params(one, "tagger"), _all_params(two, "tagger"))]
    averaged = average_weights([one, two], ["one", "two"])
    assert averaged.get_pipe("twin").model is averaged.get_pipe("tagger").model
    for got, mean in zip(_all_params(averaged, "tagger"), expected):
        np.testing.assert_allclose(got, mean, rtol=1e-6, atol=1e-7)


def _all_params(nlp, name):
    return [np.array(node.get_param(param)) for node in nlp.get_pipe(name).model.walk()
            for param in node.param_names if node.has_param(param)]


def test_weights_from_leaves_frozen_components_alone(runs, tmp_path):
    """spaCy disables frozen components while the callback runs: only the
    enabled ones take the trained weights."""
    def pipeline(seed):
        fix_random_seed(seed)
        nlp = spacy.blank("en")
        nlp.add_pipe("tagger", name="frozen").add_label("N")
        nlp.add_pipe("tagger", name="trained").add_label("N")
        nlp.initialize()
        return nlp

    pipeline(0).to_disk(tmp_path / "source")
    target = pipeline(1)
    frozen_before = _all_params(target, "frozen")
    with target.select_pipes(disable=["frozen"]):
        create_weights_from(tmp_path / "source")(target)
    source = spacy.load(tmp_path / "source")
    for got, expected in zip(_all_params(target, "trained"), _all_params(source, "trained")):
        np.testing.assert_array_equal(got, expected)
    frozen_after, theirs = _all_params(target, "frozen"), _all_params(source, "frozen")
    for got, before in zip(frozen_after, frozen_before):
        np.testing.assert_array_equal(got, before)
    assert any(not np.array_equal(got, other) for got, other in zip(frozen_after, theirs))


def test_pipelines_of_other_widths_or_labels_are_refused(runs, tmp_path):
    wide = _initialized(model={**SMALL_MODEL, "hidden_width": 24})
    wide.to_disk(tmp_path / "wide")
    with pytest.raises(ValueError, match="shapes"):
        average_pipelines([runs / "run1", tmp_path / "wide"])
    relabelled = _initialized(labels={"PR": "GP"})
    relabelled.to_disk(tmp_path / "relabelled")
    with pytest.raises(ValueError, match="labels"):
        average_pipelines([runs / "run1", tmp_path / "relabelled"])
    with pytest.raises(ValueError, match="labels"):
        copy_weights(spacy.load(runs / "run1"), relabelled)
    with pytest.raises(ValueError, match="at least two"):
        average_pipelines([runs / "run1"])
    with pytest.raises(ValueError, match="no pipeline at"):
        create_weights_from(tmp_path / "missing")(_initialized())
    assert main(["average", str(tmp_path / "out"), str(runs / "run1"), str(tmp_path / "wide")]) == 1
