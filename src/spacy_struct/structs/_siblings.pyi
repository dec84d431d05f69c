"""Type stub of the Cython second-order tree core (see _siblings.pyx and siblings.py)."""
import numpy as np

def sibling_eisner_batch(
    flat: np.ndarray,          # packed (n+1)^3 part-score arrays, float64
    offsets: np.ndarray,       # (B + 1,) int64: start of each array in flat
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64 output
    head_offsets: np.ndarray,  # (B + 1,) int64
    failed: np.ndarray,        # (B,) uint8 output: 1 = no legal tree
) -> None: ...
def sibling_inside_outside_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    log_z: np.ndarray,         # (B,) float64 output
    marginals: np.ndarray,     # like flat, float64 output (or empty)
    want_marginals: bool,
) -> None: ...
def hill_climb_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64, a tree per sentence in, the improved tree out
    head_offsets: np.ndarray,
    max_moves: int,            # < 0: no bound
    moves: np.ndarray,         # (B,) int64 output: head changes made
) -> None: ...
