"""Type stub of the Cython partition core (see partitions.py)."""
import numpy as np

def partition_argmax_batch(
    flat: np.ndarray,  # (total,) float64, C-contiguous: the packed (m+1, m+1) scores
    offsets: np.ndarray,  # (B + 1,) int64: start of each sequence in flat
    lengths: np.ndarray,  # (B,) int64: m, the items per sequence
    max_len: int,  # longest piece; < 0: any
    out_cuts: np.ndarray,  # (>= sum m, >= 1) int64: each sequence's cuts from sum of earlier m
    out_counts: np.ndarray,  # (B,) int64: cuts per sequence
    out_scores: np.ndarray,  # (B,) float64: best score, -inf when none is finite
) -> None: ...

def partition_marginals_batch(
    flat: np.ndarray,  # (total,) float64, C-contiguous
    offsets: np.ndarray,  # (B + 1,) int64
    lengths: np.ndarray,  # (B,) int64
    max_len: int,  # < 0: any
    out_log_z: np.ndarray,  # (B,) float64
    out_marginals: np.ndarray,  # (total,) float64: each piece's marginal
) -> None: ...
