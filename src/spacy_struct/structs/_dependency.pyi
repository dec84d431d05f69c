"""Type stub of the Cython dependency-tree core (see _dependency.pyx and dependency.py)."""
import numpy as np

def cle_batch(
    flat: np.ndarray,          # packed (n+1) x (n+1) score matrices, float64
    offsets: np.ndarray,       # (B + 1,) int64: start of each matrix in flat
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64 output
    head_offsets: np.ndarray,  # (B + 1,) int64
    failed: np.ndarray,        # (B,) uint8 output: 1 = no legal tree
) -> None: ...
def eisner_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    heads: np.ndarray,
    head_offsets: np.ndarray,
    failed: np.ndarray,
) -> None: ...
def eisner_inside_outside_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    log_z: np.ndarray,         # (B,) float64 output
    marginals: np.ndarray,     # like flat, float64 output (or empty)
    want_marginals: bool,
) -> None: ...
