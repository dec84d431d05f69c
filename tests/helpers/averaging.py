"""Check that parameter averaging (`use_averages = true`) reaches a component.

The shipped configs evaluate and save the averaged weights, so every
parameter of the component's model must be averaged, and swapping the
averages in and out must change the predictions and then restore them.
"""
import numpy as np
from thinc.api import Adam


def check_parameter_averaging(nlp, name, examples, outputs, steps=6):
    """Train `steps` batches with an averaging optimizer, then compare
    `outputs(nlp)` (a flat float array) under the raw and averaged weights."""
    optimizer = nlp.initialize(lambda: examples, sgd=Adam(0.01, use_averages=True))
    for step in range(steps):
        nlp.update(examples[(step * 8) % len(examples):][:8], sgd=optimizer)
    model = nlp.get_pipe(name).model
    params = [(node.id, param) for node in model.walk()
              for param in node.param_names if node.has_param(param)]
    missing = [key for key in params if key not in optimizer.averages]
    assert params and not missing, f"parameters not averaged: {missing}"
    raw = outputs(nlp)
    with nlp.use_params(optimizer.averages):
        averaged = outputs(nlp)
    again = outputs(nlp)
    assert raw.shape == averaged.shape
    assert not np.allclose(raw, averaged)
    np.testing.assert_array_equal(raw, again)
