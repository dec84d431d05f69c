"""Type stub of the BiLSTM step kernels (see _lstm_step.pyx)."""
import numpy as np

def add_inputs(
    gates: np.ndarray,     # (2, k, 4 hidden) float32, C-contiguous, updated in place
    forward: np.ndarray,   # (k, 4 hidden) float32: the forward direction's inputs
    backward: np.ndarray,  # (k, 4 hidden) float32: the backward direction's
    bias: np.ndarray,      # (2, 4 hidden) float32: each direction's bias
) -> None: ...
def update_cells(
    gates: np.ndarray,      # (2, k, 4 hidden) float32, tanh of the gate inputs; i, f, o made sigmoids in place
    cells: np.ndarray,      # (2, >= k, hidden) float32: the previous cells
    new_cells: np.ndarray,  # (2, k, hidden) float32 output
) -> None: ...
