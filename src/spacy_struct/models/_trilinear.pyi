"""Type stub of the trilinear triple kernel (see _trilinear.pyx)."""
import numpy as np

def trilinear(
    A: np.ndarray,      # (nodes, d) float32, C-contiguous
    B: np.ndarray,      # (nodes, d) float32
    C: np.ndarray,      # (nodes, d) float32
    h: np.ndarray,      # (parts,) int64
    s: np.ndarray,      # (parts,) int64
    m: np.ndarray,      # (parts,) int64
    out: np.ndarray,    # (parts,) float32 output
) -> None: ...
