"""The edge labeler's prediction path (V contracted once per distinct head,
then a kernel per word) against its training path (every word's own
contraction), which the gradient checks cover."""
import numpy as np
import pytest

from spacy_struct.models import edge_labeler
from spacy_struct.models._label_forms import scores_from_forms
from spacy_struct.models.edge_labeler import build_edge_labeler


def _labeler_and_inputs(rng, k=5, n_labels=7, distance=False):
    labeler = build_edge_labeler(distance=distance)
    labeler.set_dim("nI", k)
    labeler.set_dim("nO", n_labels)
    labeler.initialize()
    for name in labeler.param_names:
        labeler.set_param(name, rng.normal(size=labeler.get_param(name).shape).astype(np.float32))
    deps, heads_side, heads = [], [], []
    for n in (6, 1, 9, 3):
        deps.append(rng.normal(size=(n + 1, k)).astype(np.float32))
        heads_side.append(rng.normal(size=(n + 1, k)).astype(np.float32))
        h = rng.integers(0, n + 1, size=n + 1)
        h[0] = -1
        heads.append(h)
    return labeler, (deps, heads_side, heads)


@pytest.mark.parametrize("chunk", [1, 3, 256])
@pytest.mark.parametrize("distance", [False, True])
def test_prediction_scores_equal_the_training_scores(monkeypatch, chunk, distance):
    monkeypatch.setattr(edge_labeler, "HEADS_PER_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    labeler, inputs = _labeler_and_inputs(rng, distance=distance)
    predicted, _ = labeler(inputs, is_train=False)
    trained, _ = labeler(inputs, is_train=True)
    assert [p.shape for p in predicted] == [(6, 7), (1, 7), (9, 7), (3, 7)]
    for p, t in zip(predicted, trained):
        np.testing.assert_allclose(p, t, rtol=1e-4, atol=1e-4)


def test_the_form_kernel_is_each_word_times_its_heads_form():
    rng = np.random.default_rng(0)
    forms = rng.normal(size=(4, 6, 3)).astype(np.float32)
    D = rng.normal(size=(10, 6)).astype(np.float32)
    form_of = rng.integers(0, 4, size=10).astype(np.int64)
    out = np.empty((10, 3), dtype=np.float32)
    scores_from_forms(forms, D, form_of, out)
    np.testing.assert_allclose(out, np.einsum("wa,wal->wl", D, forms[form_of]), rtol=1e-5, atol=1e-5)


def test_float64_inputs_are_scored_as_float32():
    rng = np.random.default_rng(5)
    labeler, (deps, heads_side, heads) = _labeler_and_inputs(rng)
    wide = ([d.astype(np.float64) for d in deps], [h.astype(np.float64) for h in heads_side], heads)
    narrow, _ = labeler((deps, heads_side, heads), is_train=False)
    for w, n in zip(labeler(wide, is_train=False)[0], narrow):
        np.testing.assert_allclose(w, n, rtol=1e-4, atol=1e-4)
