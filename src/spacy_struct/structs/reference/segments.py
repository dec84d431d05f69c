"""Plain numpy reference of the k-best gapped-segment decoder.

The same DP as `spacy_struct.structs.segments` written straightforwardly:
per type and position i, gather every predecessor's k best partial segments
shifted by g(j, i) into one candidate array and keep the k best with
np.argsort. O(n^2 k log(nk) T). It is the tests' oracle and the benchmark's
baseline, so it is meant to be clear and fair, not clever.
"""
from __future__ import annotations

from typing import List, Optional, Union

import numpy as np

from ..segments import Segments, check_gap, check_k, check_segment_scores


def kbest_segments(
    scores, k: int, max_gap: Optional[int] = None, contiguous: bool = False
) -> Union[Segments, List[Segments]]:
    """Same contract as `spacy_struct.structs.segments.kbest_segments`."""
    k = check_k(k)
    gap = check_gap(max_gap, contiguous)
    if isinstance(scores, (list, tuple)):
        return [
            _kbest_one(check_segment_scores(s, i, False), k, gap)
            for i, s in enumerate(scores)
        ]
    return _kbest_one(check_segment_scores(scores), k, gap)


def _kbest_one(scores: np.ndarray, k: int, gap: int) -> Segments:
    T, N, _ = scores.shape
    types, seg_scores, lengths, words = [], [], [], []
    for t in range(T):
        g = scores[t]
        # best[i] = (scores, predecessor j, rank in j's list), best first
        best = [(np.zeros(1), np.full(1, -1), np.full(1, -1))]
        for i in range(1, N):
            if i == N - 1:
                preds = range(1, i)  # the end may follow any word, never start
            else:
                lo = 1 if gap < 0 else max(1, i - 1 - gap)
                preds = [0] + list(range(lo, i))
            cand_s, cand_j, cand_r = [], [], []
            for j in preds:
                s_j = best[j][0]
                cand_s.append(s_j + g[j, i])
                cand_j.append(np.full(len(s_j), j))
                cand_r.append(np.arange(len(s_j)))
            if cand_s:
                cs = np.concatenate(cand_s)
                cj = np.concatenate(cand_j)
                cr = np.concatenate(cand_r)
                top = np.argsort(-cs, kind="stable")[:k]
                top = top[cs[top] > -np.inf]
                best.append((cs[top], cj[top], cr[top]))
            else:
                best.append((np.zeros(0), np.zeros(0, int), np.zeros(0, int)))
        end_s, end_j, end_r = best[N - 1]
        for c in range(len(end_s)):
            path = []
            j, r = int(end_j[c]), int(end_r[c])
            while j > 0:
                path.append(j - 1)
                j, r = int(best[j][1][r]), int(best[j][2][r])
            path.reverse()
            types.append(t)
            seg_scores.append(end_s[c])
            lengths.append(len(path))
            words.extend(path)
    offsets = np.zeros(len(types) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Segments(
        np.asarray(types, np.int64), np.asarray(seg_scores, np.float64),
        offsets, np.asarray(words, np.int64),
    )
