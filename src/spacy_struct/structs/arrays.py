"""Checking, packing and unpacking the score arrays every structure takes.

The Cython cores trust their input: they see one flat float64 buffer holding
all the sentences of a batch, with offsets, and no NaN or +inf in it. Whatever
a user can get wrong (type, dtype, shape, NaN) is caught here, in Python, with
an error that names the argument and the sentence, so nothing fails deep in
Cython and nothing returns a silently wrong answer.
"""
from __future__ import annotations

import operator
from typing import List, Sequence, Tuple, Union

import numpy as np

ArrayOrBatch = Union[np.ndarray, Sequence[np.ndarray]]


class NoLegalStructureError(ValueError):
    """Every structure over a sentence has score -inf, so there is no argmax."""


def as_batch(x: ArrayOrBatch, name: str) -> Tuple[List[object], bool]:
    """Return (items, was_single): one array becomes a batch of one.

    Every public function accepts either one array or a list/tuple of arrays
    (the batched entry point); this decides which, and rejects anything else.
    """
    if isinstance(x, np.ndarray):
        return [x], True
    if isinstance(x, (list, tuple)):
        return list(x), False
    raise TypeError(
        f"{name} must be a numpy array or a list/tuple of numpy arrays, "
        f"not {type(x).__name__}"
    )


def per_item(x: object, name: str, count: int, single: bool) -> List[object]:
    """Match a per-sentence argument (mask, gold tree, gold spans) to a batch.

    With one array of scores it is one value; with a batch it must be a
    list/tuple of the same length, so a mask can never pair with the wrong
    sentence.
    """
    if single:
        return [x]
    if not isinstance(x, (list, tuple)):
        raise TypeError(
            f"with a batch of scores, {name} must be a list/tuple with one "
            f"item per sentence, not {type(x).__name__}"
        )
    if len(x) != count:
        raise ValueError(f"{name} has {len(x)} items but scores has {count}")
    return list(x)


def check_int(value: object, name: str, kind: str = "an int") -> int:
    """`value` as an int (anything with __index__ but a bool), or a
    TypeError "<name> must be <kind>, not <type>"."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be {kind}, not bool")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be {kind}, not {type(value).__name__}") from None


def where(index: int, single: bool) -> str:
    """How an error message names a sentence of the batch."""
    return "" if single else f" (batch item {index})"


def check_scores(
    x: object, name: str, ndim: int, index: int = 0, single: bool = True
) -> np.ndarray:
    """Return `x` as a C-contiguous float64 array, or raise a clear error.

    Accepted: real integer or floating arrays. -inf marks a forbidden part.
    Refused: other dtypes (TypeError), the wrong number of dimensions, NaN and
    +inf (ValueError): +inf has no meaningful argmax, and NaN means a bug
    upstream that a decoder would otherwise hide.
    """
    at = where(index, single)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name}{at} must be a numpy array, not {type(x).__name__}")
    if x.dtype.kind not in "iuf":
        raise TypeError(
            f"{name}{at} must hold real numbers (a float or int dtype), "
            f"not dtype {x.dtype}"
        )
    if x.ndim != ndim:
        raise ValueError(
            f"{name}{at} must have {ndim} dimensions, got shape {x.shape}"
        )
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.size and not np.isfinite(arr).all():
        if np.isnan(arr).any():
            raise ValueError(f"{name}{at} contains NaN")
        if np.isposinf(arr).any():
            raise ValueError(
                f"{name}{at} contains +inf; use -inf to forbid a part and "
                f"large finite values to force one"
            )
    return arr


def check_mask(
    mask: object, shape: Tuple[int, ...], name: str, index: int = 0, single: bool = True
) -> np.ndarray:
    """Return a boolean mask of `shape` as a C-contiguous uint8 array.

    The mask has the scores' shape, or leaves out their last axis (an (n, n)
    span mask for (n, n, L) scores applies to every label); any other shape
    is refused rather than broadcast in a way the caller did not mean.
    """
    at = where(index, single)
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"{name}{at} must be a numpy array, not {type(mask).__name__}")
    if mask.dtype.kind not in "bui":
        raise TypeError(f"{name}{at} must be boolean, not dtype {mask.dtype}")
    if mask.shape == tuple(shape[:-1]):
        mask = mask[..., None]
    elif mask.shape != tuple(shape):
        raise ValueError(
            f"{name}{at} has shape {mask.shape}; it must be {tuple(shape)} "
            f"or {tuple(shape[:-1])}"
        )
    return np.ascontiguousarray(np.broadcast_to(mask != 0, shape), dtype=np.uint8)


def offsets_of(sizes: Sequence[int]) -> np.ndarray:
    """Where each of consecutive blocks of these sizes starts, and the end
    (len(sizes) + 1 int64 offsets)."""
    out = np.zeros(len(sizes) + 1, dtype=np.int64)
    if len(sizes):
        np.cumsum(sizes, out=out[1:])
    return out


def pack(arrays: Sequence[np.ndarray], dtype=np.float64) -> Tuple[np.ndarray, np.ndarray]:
    """Concatenate arrays into one flat buffer plus start offsets (len + 1).

    One numpy call does the copying, so a batch costs no per-element Python
    work, and the Cython core loops over sentences with the GIL released.
    """
    offsets = offsets_of([a.size for a in arrays])
    if arrays:
        flat = np.concatenate([a.ravel() for a in arrays]).astype(dtype, copy=False)
    else:
        flat = np.zeros(0, dtype=dtype)
    return np.ascontiguousarray(flat), offsets


def unpack(flat: np.ndarray, offsets: np.ndarray, shapes: Sequence[Tuple[int, ...]]) -> List[np.ndarray]:
    """Split a flat result buffer back into one array per sentence."""
    return [
        flat[offsets[i] : offsets[i + 1]].reshape(shape)
        for i, shape in enumerate(shapes)
    ]


def unbatch(results: List[object], single: bool):
    """Give back what the caller passed: one result, or the list."""
    return results[0] if single else results
