"""Type stub of the label-form kernel (see _label_forms.pyx)."""
import numpy as np

def scores_from_forms(
    forms: np.ndarray,    # (heads, k, labels) float32, C-contiguous
    D: np.ndarray,        # (words, k) float32
    form_of: np.ndarray,  # (words,) int64: the form of each word's head
    out: np.ndarray,      # (words, labels) float32 output
) -> None: ...
