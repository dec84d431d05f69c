"""Readable numpy reference of `spacy_struct.structs.spans`.

Same functions, same results, written as the textbook recursions: a Python
loop over spans (i, j), numpy over labels and split points. It is the oracle
of the tests and the baseline of the benchmark, so it stays straightforward
(no vectorisation across spans, no transposed tables). See spans.py for the
formulations.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np

from ..arrays import NoLegalStructureError, as_batch, check_mask, check_scores, unbatch

NEG_INF = -np.inf


def _lse(x: np.ndarray) -> float:
    """log(sum(exp(x))) of a 1-d array, -inf when empty or all -inf."""
    if x.size == 0:
        return NEG_INF
    mx = np.max(x)
    if mx == NEG_INF:
        return NEG_INF
    return float(mx + np.log(np.sum(np.exp(x - mx))))


def _label_lse(s: np.ndarray) -> np.ndarray:
    """u[i, j] = logsumexp over labels of s[i, j, :] (-inf where all -inf)."""
    mx = np.max(s, axis=2)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(s - safe[:, :, None]), axis=2))


def _prepare(scores, mask) -> Tuple[List[np.ndarray], bool]:
    items, single = as_batch(scores, "scores")
    masks = [mask] if single else (mask if mask is not None else [None] * len(items))
    out = []
    for b, (x, m) in enumerate(zip(items, masks)):
        s = check_scores(x, "scores", 3, b, single)
        if s.shape[0] != s.shape[1] or s.shape[2] == 0:
            raise ValueError(f"scores must have shape (n, n, L) with L >= 1, got {s.shape}")
        if m is not None:
            s = np.where(check_mask(m, s.shape, "mask", b, single) != 0, s, NEG_INF)
        out.append(s)
    return out, single


# ---------------------------------------------------------------- CKY trees

def _cky_inside(s: np.ndarray):
    n = s.shape[0]
    u = _label_lse(s)
    beta = np.full((n, n), NEG_INF)
    inner = np.full((n, n), NEG_INF)
    for i in range(n - 1, -1, -1):
        beta[i, i] = u[i, i]
        inner[i, i] = 0.0
        for j in range(i + 1, n):
            inner[i, j] = _lse(beta[i, i:j] + beta[i + 1 : j + 1, j])
            beta[i, j] = u[i, j] + inner[i, j]
    return u, beta, inner


def _one_cky_log_partition(s: np.ndarray) -> float:
    n = s.shape[0]
    return float(_cky_inside(s)[1][0, n - 1]) if n else 0.0


def _one_cky_marginals(s: np.ndarray) -> Tuple[float, np.ndarray]:
    n, _, L = s.shape
    marg = np.zeros((n, n, L))
    if n == 0:
        return 0.0, marg
    u, beta, inner = _cky_inside(s)
    log_z = float(beta[0, n - 1])
    if log_z == NEG_INF:
        return log_z, marg
    g = np.zeros((n, n))  # d log Z / d beta[i, j] = marginal of span (i, j)
    g[0, n - 1] = 1.0
    for i in range(n):
        for j in range(n - 1, i - 1, -1):
            if g[i, j] == 0.0:
                continue
            marg[i, j] = g[i, j] * np.exp(s[i, j] - u[i, j])
            if j > i:
                p = g[i, j] * np.exp(beta[i, i:j] + beta[i + 1 : j + 1, j] - inner[i, j])
                g[i, i:j] += p
                g[i + 1 : j + 1, j] += p
    return log_z, marg


def _one_cky_argmax(s: np.ndarray, null_label: bool) -> Tuple[np.ndarray, float]:
    n, _, L = s.shape
    if n == 0:
        return np.zeros((0, 3), dtype=np.int64), 0.0
    if null_label:
        # label -1 = unlabeled at score 0; a label must score strictly more
        ext = np.concatenate([np.zeros((n, n, 1)), s], axis=2)
        lab = np.argmax(ext, axis=2) - 1
        m = np.max(ext, axis=2)
    else:
        lab = np.argmax(s, axis=2)
        m = np.max(s, axis=2)
    best = np.full((n, n), NEG_INF)
    split = np.full((n, n), -1)
    for i in range(n - 1, -1, -1):
        best[i, i] = m[i, i]
        for j in range(i + 1, n):
            if m[i, j] == NEG_INF:
                continue
            cand = best[i, i:j] + best[i + 1 : j + 1, j]
            k = int(np.argmax(cand))
            if cand[k] > NEG_INF:
                best[i, j] = m[i, j] + cand[k]
                split[i, j] = i + k
    score = float(best[0, n - 1])
    if score == NEG_INF:
        raise NoLegalStructureError("no legal tree")
    spans = []

    def visit(i: int, j: int) -> None:
        if lab[i, j] >= 0:
            spans.append((i, j, int(lab[i, j])))
        if j > i:
            visit(i, split[i, j])
            visit(split[i, j] + 1, j)

    visit(0, n - 1)
    return np.array(spans, dtype=np.int64).reshape(-1, 3), score


# --------------------------------------------------------- laminar span sets

def _softplus(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def _one_laminar_log_partition(s: np.ndarray) -> float:
    return _one_laminar_marginals(s, want_marginals=False)[0]


def _one_laminar_marginals(s: np.ndarray, want_marginals: bool = True):
    n, _, L = s.shape
    marg = np.zeros((n, n, L))
    if n == 0:
        return 0.0, marg
    u = _label_lse(s)
    nn = np.zeros((n, n))  # log N[i, j]: sets within i..j without span (i, j)
    a = np.zeros((n, n))  # log A[i, j]: all sets within i..j
    c = np.full((n, n), NEG_INF)  # log C[i, k] = u[i, k] + log N[i, k]
    for i in range(n - 1, -1, -1):
        a[i, i] = _softplus(u[i, i])
        c[i, i] = u[i, i]
        for j in range(i + 1, n):
            terms = np.concatenate([[a[i + 1, j]], c[i, i:j] + a[i + 1 : j + 1, j]])
            nn[i, j] = _lse(terms)
            a[i, j] = nn[i, j] + _softplus(u[i, j])
            c[i, j] = u[i, j] + nn[i, j]
    log_z = float(a[0, n - 1])
    if not want_marginals:
        return log_z, marg
    ga = np.zeros((n, n))
    gn = np.zeros((n, n))
    gu = np.zeros((n, n))
    ga[0, n - 1] = 1.0
    for i in range(n):
        for j in range(n - 1, i - 1, -1):
            if u[i, j] > NEG_INF:
                gu[i, j] += ga[i, j] * np.exp(-np.logaddexp(0.0, -u[i, j]))
            gn[i, j] += ga[i, j]
            if j > i:
                ga[i + 1, j] += gn[i, j] * np.exp(a[i + 1, j] - nn[i, j])
                p = gn[i, j] * np.exp(c[i, i:j] + a[i + 1 : j + 1, j] - nn[i, j])
                gu[i, i:j] += p
                gn[i, i:j] += p
                ga[i + 1 : j + 1, j] += p
            if gu[i, j] > 0:
                marg[i, j] = gu[i, j] * np.exp(s[i, j] - u[i, j])
    return log_z, marg


# ------------------------------------------------------------------ public

def _each(fn, scores, mask, *args):
    items, single = _prepare(scores, mask)
    out = []
    for b, s in enumerate(items):
        try:
            out.append(fn(s, *args))
        except NoLegalStructureError:
            raise NoLegalStructureError(
                f"every tree over scores{'' if single else f' (batch item {b})'} "
                f"has score -inf"
            ) from None
    return unbatch(out, single)


def cky_argmax(scores, mask=None):
    return _each(_one_cky_argmax, scores, mask, False)


def cky_log_partition(scores, mask=None):
    return _each(_one_cky_log_partition, scores, mask)


def cky_marginals(scores, mask=None):
    return _each(_one_cky_marginals, scores, mask)


def laminar_argmax(scores, mask=None):
    return _each(_one_cky_argmax, scores, mask, True)


def laminar_log_partition(scores, mask=None):
    return _each(_one_laminar_log_partition, scores, mask)


def laminar_marginals(scores, mask=None):
    return _each(_one_laminar_marginals, scores, mask)


def add_hamming_cost(scores: np.ndarray, gold_spans: np.ndarray, cost: float = 1.0) -> np.ndarray:
    """One sentence: scores + cost * (1 - 2 * gold indicator)."""
    s = np.asarray(scores, dtype=np.float64)
    gold = np.zeros(s.shape)
    g = np.asarray(gold_spans, dtype=np.int64).reshape(-1, 3)
    gold[g[:, 0], g[:, 1], g[:, 2]] = 1.0
    return s + cost * (1.0 - 2.0 * gold)
