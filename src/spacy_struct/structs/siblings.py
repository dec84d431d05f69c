"""Second-order dependency trees: arcs scored with their previous sibling.

McDonald & Pereira (2006) score a tree as a sum over its arcs h -> m of a
part score that also sees s, the previous dependent of h on m's side (the
next one closer to h), or nothing when m is h's closest dependent on that
side. Scores are an (n+1, n+1, n+1) array per sentence:

    parts[h, s, m] = score of the arc h -> m with previous sibling s,
    parts[h, h, m] = score of the arc h -> m as h's first dependent on m's side,

node 0 the root, as in `structs.dependency`. Entries that no tree uses (m = 0,
h = m, s not between h and m; with one root, also parts[0, s, m] for s != 0)
are ignored, and get zero marginals and gradients. A first-order model is the case
`parts[h, s, m] = arcs[h, m]` for every s (`parts_from_arcs`), so a
second-order scorer adds a sibling term to the arc scores it already has.

| operation | function | cost |
|---|---|---|
| projective argmax (second-order Eisner) | `sibling_eisner` | O(n^3) |
| log Z, part marginals (its inside and reverse pass) | `sibling_log_partition`, `sibling_marginals` | O(n^3) |
| approximate non-projective argmax | `hill_climb` after `sibling_eisner` | O(n^3) per change |
| parts of a tree, its score | `tree_parts`, `tree_part_score` | O(n) |
| cost-augmented argmax | `add_hamming_cost` then an argmax | O(n^3) extra |
| the same argmax and search over kept parts | `kept_parts`, `kept_argmax` | O(n^3) adds, O(n^2 + parts) memory |

Non-projective second-order parsing is NP-hard (McDonald & Pereira 2006,
appendix A); their approximation starts from the best projective tree and
makes the single head change that raises the score most, while one does.
The CRF loss sums over projective trees (Zhang, Li & Zhang 2020's
second-order TreeCRF), so its gold tree is lifted to the nearest projective
one; the margin loss trains against the approximate decoder's output, as
McDonald & Pereira do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Sequence, Tuple

import numpy as np

from . import _dependency, _siblings
from .arrays import (
    NoLegalStructureError,
    as_batch,
    check_int,
    check_scores,
    offsets_of,
    pack,
    per_item,
    unbatch,
    unpack,
    where,
)
from .base import Structure
from .dependency import (
    UNKNOWN_HEAD,
    check_heads,
    chu_liu_edmonds,
    column_softmax,
    crossing_arcs,
    hamming_augmented,
    lift_to_projective,
    packed_argmax,
)


def _check_part_scores(scores, name: str = "scores") -> Tuple[List[np.ndarray], bool]:
    items, single = as_batch(scores, name)
    arrays = []
    for i, x in enumerate(items):
        arr = check_scores(x, name, 3, i, single)
        if not (arr.shape[0] == arr.shape[1] == arr.shape[2]) or arr.shape[0] < 1:
            raise ValueError(
                f"{name}{where(i, single)} must be (n+1, n+1, n+1), parts[head, "
                f"previous sibling, dependent] with index 0 for the root, got shape {arr.shape}"
            )
        arrays.append(arr)
    return arrays, single


def part_mask(n_nodes: int) -> np.ndarray:
    """Boolean (n+1, n+1, n+1) array of the parts some tree can use:
    m >= 1, h != m, and s == h or s strictly between h and m."""
    h, s, m = np.meshgrid(*(np.arange(n_nodes),) * 3, indexing="ij")
    between = ((h < s) & (s < m)) | ((m < s) & (s < h))
    return (m >= 1) & (h != m) & ((s == h) | between)


def parts_from_arcs(arcs: np.ndarray) -> np.ndarray:
    """The part scores of a first-order model: parts[h, s, m] = arcs[h, m]."""
    arcs = np.asarray(arcs, dtype=np.float64)
    return np.ascontiguousarray(np.broadcast_to(arcs[:, None, :], (arcs.shape[0],) * 3))


def tree_parts(heads) -> np.ndarray:
    """The parts of a tree: an (n, 3) int64 array of rows (h, s, m), one per
    word m, s its previous sibling on its side of h (h itself when none)."""
    heads = check_heads(heads)
    n = len(heads) - 1
    rows = np.zeros((n, 3), dtype=np.int64)
    last_left = np.arange(n + 1)
    last_right = np.arange(n + 1)
    for m in range(1, n + 1):  # right dependents, nearest first
        h = heads[m]
        if h < m:
            rows[m - 1] = (h, last_right[h], m)
            last_right[h] = m
    for m in range(n, 0, -1):  # left dependents, nearest first
        h = heads[m]
        if h > m:
            rows[m - 1] = (h, last_left[h], m)
            last_left[h] = m
    return rows


def tree_part_score(parts: np.ndarray, heads) -> float:
    """Sum of the part scores of a tree given as `heads`."""
    rows = tree_parts(heads)
    return float(np.asarray(parts, dtype=np.float64)[rows[:, 0], rows[:, 1], rows[:, 2]].sum())


def _sizes(arrays: Sequence[np.ndarray]) -> np.ndarray:
    return np.array([a.shape[0] for a in arrays], dtype=np.int64)


def sibling_eisner(scores, single_root: bool = True):
    """Best projective tree under second-order part scores (McDonald &
    Pereira 2006's extension of Eisner's algorithm), O(n^3).

    scores: one (n+1, n+1, n+1) array, or a list of them.
    RETURNS: the heads array (length n+1, heads[0] = -1), or a list.
    Raises NoLegalStructureError when -inf scores leave no tree.
    """
    arrays, single = _check_part_scores(scores)
    heads, offsets = _decode(arrays, single, single_root)
    return unbatch(unpack(heads, offsets, [(n,) for n in _sizes(arrays)]), single)


def _decode(arrays: List[np.ndarray], single: bool, single_root: bool):
    flat, offsets = pack(arrays)
    sizes = _sizes(arrays)
    head_offsets = offsets_of(sizes)
    heads = np.full(int(head_offsets[-1]), -1, dtype=np.int64)
    failed = np.zeros(len(arrays), dtype=np.uint8)
    _siblings.sibling_eisner_batch(flat, offsets, sizes, bool(single_root), heads, head_offsets, failed)
    if failed.any():
        i = int(np.flatnonzero(failed)[0])
        raise NoLegalStructureError(
            f"scores{where(i, single)}: no projective tree has a finite score"
            + (" with exactly one root child" if single_root else "")
        )
    return heads, head_offsets


def hill_climb(scores, heads, single_root: bool = True, max_moves: int = -1):
    """McDonald & Pereira (2006)'s approximate non-projective search: from
    the tree `heads`, make the single head change that raises the
    second-order score most, while one does (at most `max_moves`; < 0: no
    bound). With one root, the start tree must have one root dependent,
    and the search keeps it.

    scores: (n+1, n+1, n+1) part scores, or a list; heads: a tree per sentence.
    RETURNS: (the improved heads, the number of changes made), or lists.
    """
    arrays, single = _check_part_scores(scores)
    trees = per_item(heads, "heads", len(arrays), single)
    max_moves = check_int(max_moves, "max_moves")
    sizes = _sizes(arrays)
    trees = [check_heads(t, n - 1, name=f"heads{where(i, single)}") for i, (t, n) in enumerate(zip(trees, sizes))]
    for i, (P, tree) in enumerate(zip(arrays, trees)):
        at = where(i, single)
        if single_root and len(tree) > 1 and int((tree[1:] == 0).sum()) != 1:
            raise ValueError(f"heads{at}: the start tree has {int((tree[1:] == 0).sum())} root "
                             f"dependents; with single_root it must have one")
        if len(tree) > 1 and not np.isfinite(tree_part_score(P, tree)):
            raise ValueError(f"heads{at}: the start tree has score -inf; start from a legal tree "
                             f"(e.g. sibling_eisner's)")
    flat, offsets = pack(arrays)
    packed, head_offsets = pack(trees, dtype=np.int64)
    moves = np.zeros(len(arrays), dtype=np.int64)
    _siblings.hill_climb_batch(flat, offsets, sizes, bool(single_root), packed, head_offsets, max_moves, moves)
    out = unpack(packed, head_offsets, [(n,) for n in sizes])
    if single:
        return out[0], int(moves[0])
    return out, [int(k) for k in moves]


def _inside_outside(scores, single_root: bool, want_marginals: bool):
    arrays, single = _check_part_scores(scores)
    flat, offsets = pack(arrays)
    log_z = np.zeros(len(arrays), dtype=np.float64)
    marginals = np.zeros(flat.shape[0] if want_marginals else 0, dtype=np.float64)
    _siblings.sibling_inside_outside_batch(
        flat, offsets, _sizes(arrays), bool(single_root), log_z, marginals, want_marginals
    )
    return arrays, single, log_z, marginals, offsets


def sibling_log_partition(scores, single_root: bool = True):
    """log of the sum of exp(tree score) over all projective trees."""
    _, single, log_z, _, _ = _inside_outside(scores, single_root, False)
    return unbatch([float(z) for z in log_z], single)


def sibling_marginals(scores, single_root: bool = True):
    """(log Z, part marginals) over projective trees: marginals[h, s, m] is
    the probability that the tree has the arc h -> m with previous sibling s.
    Computed by the inside pass and its exact reverse, so the marginals are
    the gradient of log Z. With no legal tree, log Z is -inf and they are 0."""
    arrays, single, log_z, marg, offsets = _inside_outside(scores, single_root, True)
    arrays_out = unpack(marg, offsets, [a.shape for a in arrays])
    return unbatch([(float(z), m) for z, m in zip(log_z, arrays_out)], single)


def add_hamming_cost(scores, gold_heads, cost: float = 1.0):
    """Part scores plus `cost` on every part whose arc is not in the gold
    tree, so an argmax of the result is the cost-augmented argmax under the
    number of words with a wrong head."""
    arrays, single = _check_part_scores(scores)
    return hamming_augmented(arrays, single, gold_heads, cost,
                             lambda a, heads: (heads[1:], slice(None), np.arange(1, a.shape[0])))


# --------------------------------------------------------------------------
# Pruned parts (Koo & Collins 2010; Rush & Petrov 2012): a first-order score
# keeps a few heads per word, and only the parts of kept arcs are scored and
# decoded. Scoring every part costs (n+1)^3 of time and memory, and nearly
# all of them belong to arcs no good tree uses.
# --------------------------------------------------------------------------

#: scores the sibling term of parts: (h, s, m) int64 arrays in, float64 out
PartScorer = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def kept_arcs(arcs: Sequence[np.ndarray], k: int, single_root: bool = True) -> List[np.ndarray]:
    """Boolean (n+1, n+1) masks of the arcs to keep, one per sentence: each
    word's k best heads by first-order score (the first of equal scores),
    and every arc of the best first-order projective tree, so that a tree
    over kept arcs always exists. -inf arcs are never kept.

    arcs: per sentence, (n+1, n+1) first-order scores (row head, column dependent).
    k: heads kept per word (at least 1).
    """
    if not len(arcs):
        check_kept_heads(k)
        return []
    _, offsets, sizes, mask = _kept_arc_mask(arcs, k, single_root)
    mask = mask.view(bool)
    return [mask[offsets[i]:offsets[i + 1]].reshape(n, n) for i, n in enumerate(sizes.tolist())]


def kept_parts(arcs: Sequence[np.ndarray], masks: Sequence[np.ndarray], sibling: PartScorer,
               single_root: bool = True) -> "PackedParts":
    """The parts of the kept arcs of a batch of sentences, scored, packed
    for the pruned kernels.

    arcs: per sentence, (n+1, n+1) arc scores; masks: the kept arcs (`kept_arcs`).
    sibling: the sibling term of given parts, (h, s, m) as node indices of
        the whole batch (sentence i's node j is offset_i + j, offsets the
        running sum of the sentences' n+1), s == h for a first dependent;
        called once, for the kept parts only.
    single_root: the root's arcs then take no sibling (the root has one dependent).
    RETURNS: PackedParts, part scores arcs[h, m] + sibling(h, s, m).
    """
    sizes = np.array([a.shape[0] for a in arcs], dtype=np.int64)
    if len(masks) != len(sizes) or any(np.shape(mask) != (n, n) for mask, n in zip(masks, sizes.tolist())):
        raise ValueError("kept_parts: one (n+1) x (n+1) mask per arc score array is needed")
    arc_scores, flat_start = pack([np.asarray(a) for a in arcs])
    mask, _ = pack([np.asarray(m, dtype=bool) for m in masks], dtype=np.uint8)
    # no tree has an arc into the root or from a word to itself
    mask[impossible_arcs(flat_start, sizes)] = 0
    return _pack_parts(arc_scores, flat_start, sizes, mask, sibling, single_root)


def pruned_parts(arcs: Sequence[np.ndarray], k: int, sibling: PartScorer,
                 single_root: bool = True) -> "PackedParts":
    """`kept_parts(arcs, kept_arcs(arcs, k, single_root), sibling,
    single_root)` in one pass over the packed scores: what the parser
    decodes at prediction."""
    if not len(arcs):
        check_kept_heads(k)
        return kept_parts([], [], sibling, single_root)
    flat, offsets, sizes, mask = _kept_arc_mask(arcs, k, single_root)
    # the root's column and the diagonal are -inf in flat now; no part reads them
    return _pack_parts(flat, offsets, sizes, mask, sibling, single_root)


def check_kept_heads(k: object) -> int:
    """k as an int, or a clear error when it is not an integer >= 1."""
    k = check_int(k, "kept heads")
    if k < 1:
        raise ValueError(f"kept heads must be at least 1, got {k}")
    return k


def _kept_arc_mask(arcs: Sequence[np.ndarray], k: int, single_root: bool):
    """The checked arc scores packed (float64, with -inf for arcs into the
    root and from a word to itself), their offsets and sizes, and the uint8
    mask of the kept arcs in the same layout."""
    k = check_kept_heads(k)
    arrays = [np.asarray(A) for A in arcs]
    for i, A in enumerate(arrays):
        if A.dtype.kind not in "iuf":
            check_scores(A, "arcs", 2, i, False)
        if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] < 1:
            raise ValueError(f"arcs (batch item {i}) must be (n+1) x (n+1), got shape {A.shape}")
    flat, offsets = pack(arrays)
    sizes = np.array([A.shape[0] for A in arrays], dtype=np.int64)
    flat[impossible_arcs(offsets, sizes)] = -np.inf
    # NaN or +inf where an arc can be is an error (in the root's column or
    # on the diagonal it is never read)
    if np.isnan(flat).any() or np.isposinf(flat).any():
        for i, n in enumerate(sizes.tolist()):
            check_scores(flat[offsets[i]:offsets[i + 1]].reshape(n, n), "arcs", 2, i, False)
    heads, head_offsets = packed_argmax(_dependency.eisner_batch, flat, offsets, sizes, single_root,
                                        "projective tree")
    mask = np.empty(len(flat), dtype=np.uint8)
    _siblings.kept_arc_masks_batch(flat, offsets, sizes, k, heads, head_offsets, mask)
    return flat, offsets, sizes, mask


def impossible_arcs(offsets: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Positions, in packed (n+1) x (n+1) arrays starting at `offsets`, of
    the arcs no tree has: into the root (column 0) and from a word to itself."""
    nodes = np.repeat(np.arange(len(sizes)), sizes)
    local = np.arange(int(sizes.sum())) - np.repeat(offsets_of(sizes)[:-1], sizes)
    return np.concatenate([offsets[nodes] + local * sizes[nodes], offsets[nodes] + local * (sizes[nodes] + 1)])


def _pack_parts(arc_scores: np.ndarray, flat_start: np.ndarray, sizes: np.ndarray, mask: np.ndarray,
                sibling: PartScorer, single_root: bool) -> "PackedParts":
    """`kept_parts` from packed float64 arc scores and a uint8 mask in their layout."""
    arcs_per = np.zeros(len(sizes), dtype=np.int64)
    parts_per = np.zeros(len(sizes), dtype=np.int64)
    _siblings.count_kept_parts(mask, flat_start, sizes, bool(single_root), arcs_per, parts_per)
    node_start, arc_start, part_first = (offsets_of(x) for x in (sizes, arcs_per, parts_per))
    b = np.arange(len(sizes))
    # per sentence i, where its blocks start: arc_index (n+1)^2, part_start
    # (arcs + 1), parts, head_start (n + 2), head_list (arcs)
    offsets = np.ascontiguousarray(np.stack(
        [flat_start[:-1], arc_start[:-1] + b, part_first[:-1], node_start[:-1] + b, arc_start[:-1]], axis=1).ravel())
    n_parts = int(part_first[-1])
    arc_index = np.empty(int(flat_start[-1]), dtype=np.int64)
    part_start = np.empty(int(arc_start[-1]) + len(sizes), dtype=np.int64)
    part_sibling = np.empty(n_parts, dtype=np.int64)
    score = np.empty(n_parts, dtype=np.float64)
    ph, ps, pm = (np.empty(n_parts, dtype=np.int64) for _ in range(3))
    head_start = np.empty(int(node_start[-1]) + len(sizes), dtype=np.int64)
    head_list = np.empty(int(arc_start[-1]), dtype=np.int64)
    _siblings.pack_kept_parts(mask, arc_scores, flat_start, sizes, offsets, bool(single_root), arc_index,
                              part_start, part_sibling, score, ph, ps, pm, head_start, head_list)
    if n_parts:
        score += np.asarray(sibling(ph, ps, pm), dtype=np.float64)
    return PackedParts(sizes, offsets, arc_index, part_start, part_sibling, score, head_start, head_list)


@dataclass
class PackedParts:
    """The kept parts of a batch of sentences, in the layout the pruned
    kernels read (`_siblings.sparse_*`): per sentence i, with offsets[5 i ..
    5 i + 4] where its blocks start,

    - arc_index: (n+1)^2, the kept arc's number a of h -> m at h (n+1) + m,
      -1 if pruned;
    - part_start: arcs + 1 entries, arc a's parts are part_start[a] ..
      part_start[a + 1] of the sentence's parts;
    - part_sibling, part_score: each part's previous sibling (the head
      itself first, for "no sibling", then ascending) and score;
    - head_start, head_list: n + 2 entries, and word m's kept heads
      head_list[head_start[m] : head_start[m + 1]], ascending.
    """

    sizes: np.ndarray
    offsets: np.ndarray
    arc_index: np.ndarray
    part_start: np.ndarray
    part_sibling: np.ndarray
    part_score: np.ndarray
    head_start: np.ndarray
    head_list: np.ndarray

    @property
    def n_parts(self) -> int:
        return len(self.part_sibling)


def kept_argmax(parts: PackedParts, single_root: bool = True, projective: bool = False,
                max_moves: int = -1) -> List[np.ndarray]:
    """Best tree over each sentence's kept parts (`kept_parts`): second-order
    Eisner, and without `projective` McDonald & Pereira's search, both
    reading only the kept parts. With every arc kept it equals
    `sibling_eisner` (and `hill_climb`) on the full parts.

    RETURNS: heads per sentence (length n+1, heads[0] = -1).
    Raises NoLegalStructureError when the kept arcs hold no tree.
    """
    sizes = parts.sizes
    if not len(sizes):
        return []
    head_offsets = offsets_of(sizes)
    heads = np.full(int(head_offsets[-1]), -1, dtype=np.int64)
    failed = np.zeros(len(sizes), dtype=np.uint8)
    arrays = (sizes, parts.offsets, parts.arc_index, parts.part_start, parts.part_sibling, parts.part_score,
              parts.head_start, parts.head_list, bool(single_root))
    _siblings.sparse_sibling_eisner_batch(*arrays, heads, head_offsets, failed)
    if failed.any():
        i = int(np.flatnonzero(failed)[0])
        raise NoLegalStructureError(f"sentence {i}: no projective tree over the kept arcs has a finite score")
    if not projective:
        moves = np.zeros(len(sizes), dtype=np.int64)
        _siblings.sparse_hill_climb_batch(*arrays, heads, head_offsets, check_int(max_moves, "max_moves"), moves)
    return [heads[head_offsets[i]:head_offsets[i + 1]].copy() for i in range(len(sizes))]


class SiblingTrees(Structure):
    """Second-order trees as one structure object (see the module docstring).

    projective: the second-order Eisner argmax; otherwise that argmax
        improved by `hill_climb`, McDonald & Pereira's approximation.
    single_root: exactly one word hangs from the root.
    max_moves: bound on the head changes of the non-projective search
        (< 0: none; McDonald & Pereira needed none).

    A structure is a heads array. Heads of -2 in an annotation are unknown
    (partial annotation): `gold_target` completes them with the best tree
    that keeps every known arc. log Z and the marginals are over projective
    trees, the only ones the dynamic program sums; the likelihood's gold
    tree is lifted to the nearest projective tree (`gold_score`). The margin
    loss compares the decoder's output with `gold_target`: the tree as
    annotated without `projective`, lifted with it.
    """

    name = "second-order dependency tree"

    def __init__(self, projective: bool = False, single_root: bool = True, max_moves: int = -1) -> None:
        self.projective = bool(projective)
        self.single_root = bool(single_root)
        self.max_moves = check_int(max_moves, "max_moves")

    def __repr__(self) -> str:
        return (f"SiblingTrees(projective={self.projective}, single_root={self.single_root}, "
                f"max_moves={self.max_moves})")

    def argmax(self, scores: Sequence[np.ndarray]) -> List[np.ndarray]:
        if not len(scores):
            return []
        trees = sibling_eisner(list(scores), single_root=self.single_root)
        if not self.projective:
            trees, _ = hill_climb(list(scores), trees, self.single_root, self.max_moves)
        return trees

    def kept_argmax(self, parts: PackedParts) -> List[np.ndarray]:
        """`argmax` over pruned parts (`kept_parts`): the same decoder,
        reading only the parts of kept arcs."""
        return kept_argmax(parts, self.single_root, self.projective, self.max_moves)

    def log_partition(self, scores: Sequence[np.ndarray]) -> List[float]:
        if not len(scores):
            return []
        return sibling_log_partition(list(scores), single_root=self.single_root)

    def marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        if not len(scores):
            return []
        return sibling_marginals(list(scores), single_root=self.single_root)

    def local_marginals(self, scores: Sequence[np.ndarray]) -> List[Tuple[float, np.ndarray]]:
        """Each word picks its (head, previous sibling) pair on its own: a
        softmax over the parts that end in it."""
        results = []
        for S in scores:
            N = S.shape[0]
            X = np.where(part_mask(N), S, -np.inf)
            P = np.zeros_like(X)
            log_z, probs = column_softmax(X[:, :, 1:].reshape(N * N, N - 1))
            P[:, :, 1:] = probs.reshape(N, N, N - 1)
            results.append((log_z, P))
        return results

    def add_hamming_cost(self, scores, golds, cost: float = 1.0) -> List[np.ndarray]:
        return add_hamming_cost(list(scores), list(golds), cost=cost)

    def indicator(self, shape: Tuple[int, ...], heads: np.ndarray) -> np.ndarray:
        G = np.zeros(shape, dtype=np.float64)
        rows = tree_parts(heads)
        G[rows[:, 0], rows[:, 1], rows[:, 2]] = 1.0
        return G

    def score(self, scores: np.ndarray, heads: np.ndarray) -> float:
        return tree_part_score(scores, heads)

    def complete(self, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """The best tree that keeps every known arc of `gold` (heads of -2
        are unknown); `gold` itself when complete. Projective: the
        second-order Eisner argmax with the known arcs forced. Otherwise the
        known arcs may cross, which no projective tree allows, so the search
        starts from Chu-Liu-Edmonds over each arc's best part instead.
        Raises NoLegalStructureError when the known arcs leave no tree."""
        gold = np.asarray(gold, dtype=np.int64)
        if not (gold[1:] == UNKNOWN_HEAD).any():
            return gold
        S = np.array(scores, dtype=np.float64)
        for m in np.flatnonzero(gold[1:] != UNKNOWN_HEAD) + 1:
            keep = S[gold[m], :, m].copy()
            S[:, :, m] = -np.inf
            S[gold[m], :, m] = keep
        if self.projective:
            return sibling_eisner(S, self.single_root)
        arcs = np.where(part_mask(S.shape[0]), S, -np.inf).max(axis=1)
        start = chu_liu_edmonds(arcs, single_root=self.single_root)
        if not np.isfinite(tree_part_score(S, start)):  # its best parts may not fit together
            start = sibling_eisner(S, self.single_root)
        return hill_climb(S, start, self.single_root, self.max_moves)[0]

    def gold_target(self, scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
        """`complete`, lifted to the nearest projective tree when the
        structure is projective and the tree is not."""
        heads = self.complete(scores, gold)
        if self.projective and crossing_arcs(heads).any():
            return lift_to_projective(heads, self.single_root)
        return heads

    def gold_score(self, scores: np.ndarray, gold: np.ndarray) -> Tuple[float, np.ndarray]:
        """Score and indicator of the gold tree lifted to projective, the
        trees log Z sums over (so the likelihood stays bounded)."""
        heads = self.complete(scores, gold)
        if crossing_arcs(heads).any():
            heads = lift_to_projective(heads, self.single_root)
        return self.score(scores, heads), self.indicator(scores.shape, heads)
