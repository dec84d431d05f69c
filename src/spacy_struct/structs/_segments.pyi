"""Type stub of the Cython k-best segment core (see segments.py)."""
import numpy as np

def kbest_segments_batch(
    flat: np.ndarray,  # (total,) float64, C-contiguous: the packed scores
    offsets: np.ndarray,  # (B + 1,) int64: start of each sentence in flat
    lengths: np.ndarray,  # (B,) int64: n, the words per sentence
    n_types: np.ndarray,  # (B,) int64: T per sentence
    k: int,  # DP list size (>= 1)
    max_gap: int,  # < 0: unlimited
    out_types: np.ndarray,  # (>= sum k*T, >= 1) int64
    out_scores: np.ndarray,  # (>= sum k*T, >= 1) float64
    out_offsets: np.ndarray,  # (>= sum k*T + 1,) int64: CSR word offsets
    out_words: np.ndarray,  # (>= sum k*T*n, >= 1) int64
    out_counts: np.ndarray,  # (B,) int64: segments written per sentence
) -> int: ...

def segment_marginals_batch(
    flat: np.ndarray,  # (total,) float64, C-contiguous: the packed scores
    offsets: np.ndarray,  # (B + 1,) int64
    lengths: np.ndarray,  # (B,) int64
    n_types: np.ndarray,  # (B,) int64
    max_gap: int,  # < 0: unlimited
    out_log_mass: np.ndarray,  # (sum T,) float64: log sum of exp(score) per sentence and type
    out_marginals: np.ndarray,  # (total,) float64: each transition's share of the mass
) -> None: ...

def two_phase_fill(
    scores: np.ndarray,  # (T, n+2, n+3) float64, C-contiguous: transitions and the gapped end
    max_gap: int,  # < 0: unlimited
    out: np.ndarray,  # (T, 2n+2, 2n+2) float64, all -inf: the lattice, filled in place
) -> None: ...
