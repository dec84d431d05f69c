"""Type stub of the Cython Matrix-Tree core (see _matrix_tree.pyx and dependency.py)."""
import numpy as np

def invert_with_logdet(
    matrices: np.ndarray,  # (B, n, n) float64, C-contiguous: inverted in place
    out_sign: np.ndarray,  # (B,) float64: sign of each determinant, 0 if singular
    out_logabsdet: np.ndarray,  # (B,) float64: log |det|
) -> None: ...
def matrix_tree_batch(
    flat: np.ndarray,  # packed (n+1) x (n+1) score matrices, float64
    offsets: np.ndarray,  # (B + 1,) int64: start of each matrix in flat
    sizes: np.ndarray,  # (B,) int64: n + 1 per sentence
    single_root: bool,
    out_log_z: np.ndarray,  # (B,) float64: -inf where the determinant is not positive
    out_marginals: np.ndarray,  # like flat, float64
    out_worst: np.ndarray,  # (B,) float64: largest |sum of a word's head marginals - 1|
) -> None: ...
