"""Dependency trees over a root plus n words, from arc scores.

Scores are an (n+1) x (n+1) array, `scores[h, d]` = score of the arc from
head h to dependent d; node 0 is the root, nodes 1..n the words. Column 0 and
the diagonal are ignored (the root has no head, no word heads itself), and
-inf forbids an arc. A tree is returned as `heads`, an int64 array of length
n+1 with `heads[0] == -1` and `heads[d]` the head of word d, so it indexes
the score matrix directly.

Single root (the default) means exactly one word hangs from the root, as in
UD and CoNLL, and as spaCy needs to keep `doc.sents` equal to the sentences
that came in; `single_root=False` allows several root children, as in the
original McDonald et al. (2005) model.

| operation | function | cost |
|---|---|---|
| non-projective argmax | `chu_liu_edmonds` | O(n^2), both modes |
| projective argmax | `eisner` | O(n^3) |
| projective log Z, arc marginals | `eisner_log_partition`, `eisner_marginals` | O(n^3) |
| non-projective log Z, arc marginals | `matrix_tree_log_partition`, `matrix_tree_marginals` | O(n^3) (Gauss-Jordan) |
| cost-augmented argmax | `add_hamming_cost` then any argmax | O(n^2) extra |
| arcs that cross another arc | `crossing_arcs` | O(n^2) |
| nearest projective tree (lifting) | `lift_to_projective` | O(n^2) per lift |

Chu-Liu-Edmonds follows Tarjan's dense-graph organisation: paths of best
incoming edges are grown and every cycle is contracted at a cost linear in its
size times n, and the cycle sizes add up to less than 2n. The single-root
mode reweights the root arcs (Stanojevic & Cohen 2021) exactly: an arc weighs
the pair (-[it leaves the root], score), compared lexicographically, so the
optimum has the fewest root arcs first and the best score second, with no
large constant that could swamp the scores. Still O(n^2).

Every function takes one array (and returns one result) or a list/tuple of
arrays of different sizes (and returns a list). The Cython decoders run a
batch in one call with the GIL released, the Matrix-Tree functions included
(`_matrix_tree.pyx`: one Gauss-Jordan elimination per sentence gives the
Laplacian's inverse and log-determinant).
"""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

from . import _dependency
from . import _matrix_tree as _matrix_tree_kernel
from .base import Structure
from .arrays import (
    NoLegalStructureError,
    as_batch,
    check_scores,
    offsets_of,
    pack,
    per_item,
    unbatch,
    unpack,
    where,
)

Heads = np.ndarray


def _check_arc_scores(scores, name: str = "scores") -> Tuple[List[np.ndarray], bool]:
    items, single = as_batch(scores, name)
    arrays = []
    for i, x in enumerate(items):
        arr = check_scores(x, name, 2, i, single)
        if arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
            problem = "has no root row and column" if arr.shape[0] == arr.shape[1] else "is not square"
            raise ValueError(
                f"{name}{where(i, single)} {problem}: it must be (n+1) x (n+1) with row "
                f"and column 0 for the root, got shape {arr.shape}"
            )
        arrays.append(arr)
    return arrays, single


def _argmax(kernel, scores, single_root: bool, what: str):
    arrays, single = _check_arc_scores(scores)
    flat, offsets = pack(arrays)
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    heads, head_offsets = packed_argmax(kernel, flat, offsets, sizes, single_root, what, single)
    return unbatch(unpack(heads, head_offsets, [(n,) for n in sizes]), single)


def packed_argmax(kernel, flat: np.ndarray, offsets: np.ndarray, sizes: np.ndarray, single_root: bool,
                  what: str, single: bool = False) -> Tuple[np.ndarray, np.ndarray]:
    """A tree decoder's kernel over arc scores already checked and packed
    (`pack`: float64, C-contiguous; sizes: n+1 per sentence, int64).

    RETURNS: heads of all sentences in one int64 array, and where each
        sentence's start (len(sizes) + 1 offsets).
    Raises NoLegalStructureError naming the first sentence without a tree.
    """
    head_offsets = offsets_of(sizes)
    heads = np.full(int(head_offsets[-1]), -1, dtype=np.int64)
    failed = np.zeros(len(sizes), dtype=np.uint8)
    kernel(flat, offsets, sizes, bool(single_root), heads, head_offsets, failed)
    if failed.any():
        i = int(np.flatnonzero(failed)[0])
        raise NoLegalStructureError(
            f"scores{where(i, single)}: no {what} has a finite score"
            + (" with exactly one root child" if single_root else "")
        )
    return heads, head_offsets


def chu_liu_edmonds(scores, single_root: bool = True):
    """Maximum spanning arborescence (non-projective tree), O(n^2).

    Raises NoLegalStructureError when -inf scores leave no tree.
    """
    return _argmax(_dependency.cle_batch, scores, single_root, "spanning tree")


def eisner(scores, single_root: bool = True):
    """Best projective tree (Eisner 1996), O(n^3)."""
    return _argmax(_dependency.eisner_batch, scores, single_root, "projective tree")


def _eisner_inside_outside(scores, single_root: bool, want_marginals: bool):
    arrays, single = _check_arc_scores(scores)
    flat, offsets = pack(arrays)
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    log_z = np.zeros(len(arrays), dtype=np.float64)
    marginals = np.zeros(flat.shape[0] if want_marginals else 0, dtype=np.float64)
    _dependency.eisner_inside_outside_batch(
        flat, offsets, sizes, bool(single_root), log_z, marginals, want_marginals
    )
    return arrays, single, log_z, marginals, offsets


def eisner_log_partition(scores, single_root: bool = True):
    """log of the sum of exp(tree score) over all projective trees."""
    _, single, log_z, _, _ = _eisner_inside_outside(scores, single_root, False)
    return unbatch([float(z) for z in log_z], single)


def eisner_marginals(scores, single_root: bool = True):
    """(log Z, arc marginals) over projective trees; marginals[h, d] = P(h -> d).

    Computed by an inside pass and its exact reverse (outside) pass in log
    space, so the marginals are the gradient of log Z. With no legal tree,
    log Z is -inf and the marginals are zero.
    """
    arrays, single, log_z, marg, offsets = _eisner_inside_outside(scores, single_root, True)
    mats = unpack(marg, offsets, [a.shape for a in arrays])
    return unbatch([(float(z), m) for z, m in zip(log_z, mats)], single)


def _matrix_tree(arrays: List[np.ndarray], single_root: bool):
    """log Z and marginals for a batch, each sentence by the Cython kernel
    (`_matrix_tree.matrix_tree_batch`): no padding, no grouping by length.

    Stability: each column (the incoming arcs of one word, root arc included)
    is shifted by its maximum before exponentiation. Every tree has exactly
    one arc per column, so log Z moves by the sum of the shifts, the
    marginals do not move, and no exp() overflows. In the single-root matrix
    the root weights form a row of their own, which is rescaled by its own
    maximum (in log space), so weak root arcs cannot underflow to zero.
    A determinant that came out non-positive, or marginals that no longer
    sum to one per word, are told apart (no tree at all, or lost precision)
    by `_has_no_tree`.
    """
    flat, offsets = pack(arrays)
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    log_z = np.zeros(len(arrays), dtype=np.float64)
    flat_marg = np.zeros(flat.shape[0], dtype=np.float64)
    worst = np.zeros(len(arrays), dtype=np.float64)
    _matrix_tree_kernel.matrix_tree_batch(flat, offsets, sizes, bool(single_root), log_z, flat_marg, worst)
    marginals = unpack(flat_marg, offsets, [a.shape for a in arrays])
    suspect = (sizes > 1) & (worst > 1e-6)             # +inf: the determinant was not positive
    for i in np.flatnonzero(suspect):
        if _has_no_tree(arrays[i], single_root):
            log_z[i] = -np.inf
            marginals[i][...] = 0.0
    np.clip(flat_marg, 0.0, 1.0, out=flat_marg)
    return log_z, marginals


def _has_no_tree(S: np.ndarray, single_root: bool) -> bool:
    """Tell apart the two reasons a sentence's Matrix-Tree result is suspect
    (a determinant that came out non-positive, or head marginals that do
    not sum to one per word): True if the sentence has no tree with a finite
    score (its Laplacian is singular, and rounding can give the determinant
    either sign: log Z is -inf), else raise, because a finite tree exists
    and the determinant lost its precision (LU on a Laplacian whose root
    weights are many orders of magnitude below its word weights cancels
    catastrophically), which would be silently wrong.
    """
    try:
        chu_liu_edmonds(S, single_root=single_root)
    except NoLegalStructureError:
        return True
    raise FloatingPointError(
        "the Matrix-Tree determinant lost its precision: the root arcs are "
        "too many orders of magnitude weaker than the word arcs"
        + ("" if single_root else "; single_root=True or eisner_marginals stay accurate here")
    )


def matrix_tree_log_partition(scores, single_root: bool = True):
    """log Z over all non-projective trees (Matrix-Tree theorem)."""
    arrays, single = _check_arc_scores(scores)
    log_z, _ = _matrix_tree(arrays, single_root)
    return unbatch([float(z) for z in log_z], single)


def matrix_tree_marginals(scores, single_root: bool = True):
    """(log Z, arc marginals) over non-projective trees.

    Single-root uses Koo, Globerson, Carreras & Collins (2007): the first row
    of the Laplacian is replaced by the root weights. Each sentence is solved
    by one Gauss-Jordan elimination of its Laplacian with partial pivoting
    (`_matrix_tree.pyx`), which gives the inverse and the log-determinant
    together.
    """
    arrays, single = _check_arc_scores(scores)
    log_z, marginals = _matrix_tree(arrays, single_root)
    return unbatch([(float(z), m) for z, m in zip(log_z, marginals)], single)


def check_heads(heads, n_words: int | None = None, name: str = "heads") -> np.ndarray:
    """Return `heads` as int64 if it is a tree over root + words, else raise.

    Accepts the layout the decoders return (length n+1, heads[0] == -1).
    The error says what is wrong: a head out of range, a word heading itself,
    or a cycle (with the words in it, which then never reach the root).
    """
    h = np.asarray(heads)
    if h.ndim != 1 or h.dtype.kind not in "iu":
        raise TypeError(f"{name} must be a 1-d integer array, got {h.dtype} {h.shape}")
    h = h.astype(np.int64)
    if n_words is not None and h.shape[0] != n_words + 1:
        raise ValueError(f"{name} must have length n+1 = {n_words + 1}, got {h.shape[0]}")
    n = h.shape[0] - 1
    if n < 0 or h[0] != -1:
        raise ValueError(f"{name}[0] is the root and must be -1")
    words = np.arange(1, n + 1)
    bad = words[(h[1:] < 0) | (h[1:] > n)]
    if bad.size:
        raise ValueError(f"{name}: word {int(bad[0])} has head {int(h[bad[0]])}, outside 0..{n}")
    selfish = words[h[1:] == words]
    if selfish.size:
        raise ValueError(f"{name}: word {int(selfish[0])} is its own head")
    state = np.zeros(n + 1, dtype=np.int8)      # 0 new, 1 on stack, 2 reaches root
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        x = start
        while state[x] == 0:
            state[x] = 1
            path.append(x)
            x = h[x]
        if state[x] == 1:
            cycle = [int(w) for w in path[path.index(x):]]
            raise ValueError(f"{name}: words {cycle} form a cycle, so they never reach the root")
        state[path] = 2
    return h


def crossing_arcs(heads: np.ndarray) -> np.ndarray:
    """Boolean mask over words 1..n: does the arc into the word cross another?

    The root sits at position 0, so a tree without crossing arcs is exactly
    one that Eisner's algorithm can build.
    """
    heads = np.asarray(heads)
    n = len(heads) - 1
    if n < 2:
        return np.zeros(max(n, 0), dtype=bool)
    d = np.arange(1, n + 1)
    lo = np.minimum(heads[1:], d)
    hi = np.maximum(heads[1:], d)
    L1, R1 = lo[:, None], hi[:, None]
    L2, R2 = lo[None, :], hi[None, :]
    cross = ((L1 < L2) & (L2 < R1) & (R1 < R2)) | ((L2 < L1) & (L1 < R2) & (R2 < R1))
    return cross.any(axis=1)


def lift_to_projective(heads, single_root: bool = True) -> np.ndarray:
    """The projective tree that lifting makes of `heads` (Nivre & Nilsson
    2005): while an arc crosses another, the shortest crossing arc moves up
    to its head's head. Every word keeps an ancestor of its gold head as its
    head, so the tree stays as close to the gold one as a projective decoder
    can get; the projective losses need it, since a tree-CRF over projective
    trees cannot put its mass on a tree outside them. With `single_root`, no
    arc is lifted onto the root, so the root keeps its one child (one of the
    two arcs of every crossing pair can always be lifted elsewhere)."""
    h = check_heads(heads).copy()
    d = np.arange(len(h))
    while True:
        crossing = np.flatnonzero(crossing_arcs(h)) + 1
        liftable = crossing[h[crossing] != 0]
        if single_root:
            liftable = liftable[h[h[liftable]] != 0]
        if not len(liftable):
            return h
        word = liftable[np.argmin(np.abs(h[liftable] - d[liftable]))]
        h[word] = h[h[word]]


def tree_score(scores: np.ndarray, heads: np.ndarray) -> float:
    """Sum of the arc scores of a tree given as `heads`."""
    s = np.asarray(scores, dtype=np.float64)
    heads = check_heads(heads, s.shape[0] - 1)
    return float(s[heads[1:], np.arange(1, len(heads))].sum())


def add_hamming_cost(scores, gold_heads, cost: float = 1.0):
    """Scores plus `cost` on every arc not in the gold tree.

    The argmax of the result is the cost-augmented argmax
    max_y score(y) + cost * (number of words whose head differs from gold),
    which the structured large-margin losses need. Works for one matrix or a
    batch (then `gold_heads` is a list of the same length).
    """
    arrays, single = _check_arc_scores(scores)
    return hamming_augmented(arrays, single, gold_heads, cost,
                             lambda a, heads: (heads[1:], np.arange(1, a.shape[0])))


def hamming_augmented(arrays: List[np.ndarray], single: bool, gold_heads, cost: float, gold_entries):
    """Each checked score array plus `cost`, less `cost` again on the
    entries of its gold tree's arcs (`gold_entries(array, heads)` gives
    their index): what `add_hamming_cost` returns, for any layout of the
    scores that puts each arc's entries under one index."""
    golds = per_item(gold_heads, "gold_heads", len(arrays), single)
    if isinstance(cost, bool) or not isinstance(cost, (int, float, np.number)) or not np.isfinite(cost):
        raise ValueError(f"cost must be a finite number, got {cost!r}")
    out = []
    for i, (a, g) in enumerate(zip(arrays, golds)):
        g = check_heads(g, a.shape[0] - 1, name=f"gold_heads{where(i, single)}")
        aug = a + cost
        aug[gold_entries(a, g)] -= cost
        out.append(aug)
    return unbatch(out, single)


UNKNOWN_HEAD = -2


def column_softmax(cols: np.ndarray) -> Tuple[float, np.ndarray]:
    """The local relaxation of a tree: each column (a word's candidate
    heads) normalized on its own. RETURNS (log Z, the probabilities); a
    column with no finite candidate means no structure: (-inf, zeros)."""
    if not cols.size:
        return 0.0, np.zeros_like(cols)
    top = cols.max(axis=0, keepdims=True)
    if not np.isfinite(top).all():
        return -np.inf, np.zeros_like(cols)
    E = np.exp(cols - top)
    sums = E.sum(axis=0, keepdims=True)
    return float((np.log(sums) + top).sum()), E / sums


class DependencyTrees(Structure):
    """Trees over a root plus n words from arc scores, as one structure object.

    projective: Eisner's algorithm (argmax) and inside-outside (marginals)
        over projective trees; otherwise Chu-Liu-Edmonds and the Matrix-Tree
        theorem over all trees.
    single_root: exactly one word hangs from the root.

    A structure is a heads array (length n+1, heads[0] = -1). An annotation
    may mark heads unknown with -2 (partial annotation): `gold_target`
    completes it to the best tree that keeps every known arc. With
    `projective`, a non-projective annotation is lifted to the nearest
    projective tree (`lift_to_projective`): the projective structure cannot
    put its mass on a tree outside it, so a CRF loss toward such a tree would
    fall without bound.
    """

    name = "dependency tree"

    def __init__(self, projective: bool = False, single_root: bool = True) -> None:
        self.projective = bool(projective)
        self.single_root = bool(single_root)

    def __repr__(self) -> str:
        return f"DependencyTrees(projective={self.projective}, single_root={self.single_root})"

    def argmax(self, scores: Sequence[np.ndarray]) -> List[np.ndarray]:
        if not len(scores):
            return []
        decode = eisner if self.projective else chu_liu_edmonds
        return decode(list(scores), single_root=self.single_root)

    def log_partition(self, scores: Sequence[np.ndarray]) -> List[float]:
        if not len(scores):
            return []
        if self.projective:
            return eisner_log_partition(list(scores), single_root=self.single_root)
        return [log_z for log_z, _ in self.marginals(scores)]

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """(log Z, arc marginals) per sentence.

        Non-projective: a sentence whose Matrix-Tree determinant loses its
        precision (word arcs forming cycles many orders of magnitude stronger
        than any tree, as scores grow late in training) gets the
        zero-temperature limit instead, the best tree as its marginals and
        its score as log Z, so one such sentence cannot stop a training run.
        The functions `matrix_tree_marginals` and `eisner_marginals` raise
        instead; this object is what training uses.
        """
        if not len(scores):
            return []
        if self.projective:
            return eisner_marginals(list(scores), single_root=self.single_root)
        try:
            return matrix_tree_marginals(list(scores), single_root=self.single_root)
        except FloatingPointError:
            pass
        results = []
        for S in scores:
            try:
                results.append(matrix_tree_marginals(S, single_root=self.single_root))
            except FloatingPointError:
                heads = chu_liu_edmonds(S, single_root=self.single_root)
                results.append((tree_score(S, heads), self.indicator(S.shape, heads)))
        return results

    def local_marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """Each word picks its head on its own: a softmax over every column
        (the root and the other words as heads)."""
        results = []
        for S in scores:
            X = np.array(S, dtype=np.float64)
            np.fill_diagonal(X, -np.inf)
            X[:, 0] = -np.inf
            P = np.zeros_like(X)
            log_z, P[:, 1:] = column_softmax(X[:, 1:])
            results.append((log_z, P))
        return results

    def add_hamming_cost(self, scores, golds, cost: float = 1.0) -> List[np.ndarray]:
        return add_hamming_cost(list(scores), list(golds), cost=cost)

    def indicator(self, shape: Tuple[int, ...], heads: np.ndarray) -> np.ndarray:
        G = np.zeros(shape, dtype=np.float64)
        G[heads[1:], np.arange(1, len(heads))] = 1.0
        return G

    def score(self, scores: np.ndarray, heads: np.ndarray) -> float:
        return float(scores[heads[1:], np.arange(1, len(heads))].sum())

    def complete(self, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """The best tree of this structure that keeps every known arc of
        `gold` (heads of -2 are unknown); `gold` itself when complete.
        Raises NoLegalStructureError when the known arcs cannot be completed."""
        gold = np.asarray(gold, dtype=np.int64)
        if not (gold[1:] == UNKNOWN_HEAD).any():
            return gold
        S = np.array(scores, dtype=np.float64)
        for d in np.flatnonzero(gold != UNKNOWN_HEAD):
            if d == 0:
                continue
            keep = S[gold[d], d]
            S[:, d] = -np.inf
            S[gold[d], d] = keep
        return self.argmax([S])[0]

    def gold_target(self, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """`complete`, then lifted to the nearest projective tree when the
        structure is projective and the tree is not."""
        heads = self.complete(scores, gold)
        if self.projective and crossing_arcs(heads).any():
            return lift_to_projective(heads, self.single_root)
        return heads
