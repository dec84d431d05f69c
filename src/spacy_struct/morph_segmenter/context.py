"""The token context of each word type, as arrays for the sampler.

All tokens of a type share its tag and segmentation, so the token-level
factors of Lee et al. (2011) (a tag HMM over the tokens, an agreement chain
over adjacent segmentations) depend on a type only through the types next
to its tokens. Each adjacent pair of tokens in a sentence is counted once
per pair of types, with the sentence's start and end as the boundary -1:

- `in_*[in_start[i]:in_start[i + 1]]`: the types j (or -1) before type i's
  tokens, how often, and the length of the common ending of the two words;
- `out_*`: the same for the types after;
- `self_count[i]`: how often a token of i follows another of i (counted
  neither in nor out).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

BOUNDARY = -1


def common_ending(a: str, b: str) -> int:
    """The number of final characters two words share."""
    n = 0
    for x, y in zip(reversed(a), reversed(b)):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Context:
    """Token counts and type-bigram edges of a corpus (see the docstring)."""

    type_count: np.ndarray   # (n_types,) int64: tokens of each type
    in_start: np.ndarray     # (n_types + 1,) int64
    in_type: np.ndarray      # (n_in,) int32, BOUNDARY for a sentence start
    in_count: np.ndarray     # (n_in,) int64
    in_ending: np.ndarray    # (n_in,) int32
    out_start: np.ndarray
    out_type: np.ndarray
    out_count: np.ndarray
    out_ending: np.ndarray
    self_count: np.ndarray   # (n_types,) int64


def _csr(n_types: int, edges: Counter, words: Sequence[str], key_first: bool):
    by_type = [[] for _ in range(n_types)]
    for (a, b), count in edges.items():
        owner, other = (a, b) if key_first else (b, a)
        by_type[owner].append((other, count))
    start = np.zeros(n_types + 1, dtype=np.int64)
    types, counts, endings = [], [], []
    for i, rows in enumerate(by_type):
        rows.sort()
        for other, count in rows:
            types.append(other)
            counts.append(count)
            endings.append(0 if other == BOUNDARY else common_ending(words[i], words[other]))
        start[i + 1] = len(types)
    return (start, np.array(types, dtype=np.int32), np.array(counts, dtype=np.int64),
            np.array(endings, dtype=np.int32))


def build_context(sentences: Iterable[Sequence[int]], words: Sequence[str]) -> Context:
    """The context arrays of `sentences` (each a sequence of type ids into
    `words`, the types' strings)."""
    n_types = len(words)
    counts = np.zeros(n_types, dtype=np.int64)
    pairs: Counter = Counter()
    self_count = np.zeros(n_types, dtype=np.int64)
    for sentence in sentences:
        previous = BOUNDARY
        for i in sentence:
            counts[i] += 1
            if previous == i:
                self_count[i] += 1
            else:
                pairs[previous, i] += 1
            previous = i
        if len(sentence):
            pairs[previous, BOUNDARY] += 1
    incoming = Counter({(a, b): c for (a, b), c in pairs.items() if b != BOUNDARY})
    outgoing = Counter({(a, b): c for (a, b), c in pairs.items() if a != BOUNDARY})
    in_arrays = _csr(n_types, incoming, words, key_first=False)
    out_arrays = _csr(n_types, outgoing, words, key_first=True)
    return Context(counts, *in_arrays, *out_arrays, self_count)
