"""Type stub of the Cython span-tree core (see _spans.pyx and spans.py)."""
import numpy as np

def log_partition(
    scores: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    nlabels: np.ndarray,
    laminar: bool,
    log_z: np.ndarray,
) -> None: ...
def marginals(
    scores: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    nlabels: np.ndarray,
    laminar: bool,
    log_z: np.ndarray,
    marg: np.ndarray,
) -> None: ...
def argmax(
    scores: np.ndarray,
    offsets: np.ndarray,
    lengths: np.ndarray,
    nlabels: np.ndarray,
    null_label: bool,
    spans: np.ndarray,
    span_offsets: np.ndarray,
    counts: np.ndarray,
    best: np.ndarray,
) -> None: ...
