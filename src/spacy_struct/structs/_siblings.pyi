"""Type stub of the Cython second-order tree core (see _siblings.pyx and siblings.py)."""
import numpy as np

def sibling_eisner_batch(
    flat: np.ndarray,          # packed (n+1)^3 part-score arrays, float64
    offsets: np.ndarray,       # (B + 1,) int64: start of each array in flat
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64 output
    head_offsets: np.ndarray,  # (B + 1,) int64
    failed: np.ndarray,        # (B,) uint8 output: 1 = no legal tree
) -> None: ...
def sibling_inside_outside_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    log_z: np.ndarray,         # (B,) float64 output
    marginals: np.ndarray,     # like flat, float64 output (or empty)
    want_marginals: bool,
) -> None: ...
def hill_climb_batch(
    flat: np.ndarray,
    offsets: np.ndarray,
    sizes: np.ndarray,
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64, a tree per sentence in, the improved tree out
    head_offsets: np.ndarray,
    max_moves: int,            # < 0: no bound
    moves: np.ndarray,         # (B,) int64 output: head changes made
) -> None: ...
def sparse_sibling_eisner_batch(
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    offsets: np.ndarray,       # (5 B,) int64: per sentence, where its arc_index, part_start,
                               # parts, head_start and head_list start in the packed arrays
    arc_index: np.ndarray,     # packed (n+1)^2 int64: kept arc number, -1 if pruned
    part_start: np.ndarray,    # packed (arcs + 1) int64 per sentence
    part_sibling: np.ndarray,  # packed int64: previous sibling of each part (the head: none)
    part_score: np.ndarray,    # packed float64: score of each part
    head_start: np.ndarray,    # packed (n + 2) int64 per sentence
    head_list: np.ndarray,     # packed int64: kept heads of each word, ascending
    single_root: bool,
    heads: np.ndarray,         # (sum sizes,) int64 output
    head_offsets: np.ndarray,  # (B + 1,) int64
    failed: np.ndarray,        # (B,) uint8 output: 1 = no legal tree over the kept arcs
) -> None: ...
def sparse_hill_climb_batch(
    sizes: np.ndarray,
    offsets: np.ndarray,
    arc_index: np.ndarray,
    part_start: np.ndarray,
    part_sibling: np.ndarray,
    part_score: np.ndarray,
    head_start: np.ndarray,
    head_list: np.ndarray,
    single_root: bool,
    heads: np.ndarray,         # a tree per sentence in, the improved tree out
    head_offsets: np.ndarray,
    max_moves: int,
    moves: np.ndarray,
) -> None: ...
def kept_arc_masks_batch(
    flat: np.ndarray,          # packed (n+1)^2 float64 arc scores, row head, column dependent
    offsets: np.ndarray,       # (B + 1,) int64
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    k: int,                    # heads kept per word, >= 1
    tree_heads: np.ndarray,    # (sum sizes,) int64: a tree per sentence whose arcs are kept too
    head_offsets: np.ndarray,  # (B + 1,) int64
    mask: np.ndarray,          # packed (n+1)^2 uint8 output, laid out as flat
) -> None: ...
def count_kept_parts(
    mask: np.ndarray,          # packed (n+1)^2 uint8: the kept arcs, row head, column dependent
    flat_start: np.ndarray,    # (B + 1,) int64: where each sentence's mask starts
    sizes: np.ndarray,         # (B,) int64: n + 1 per sentence
    single_root: bool,
    arcs_per: np.ndarray,      # (B,) int64 output: kept arcs per sentence
    parts_per: np.ndarray,     # (B,) int64 output: their parts
) -> None: ...
def pack_kept_parts(
    mask: np.ndarray,          # as in count_kept_parts
    arc_scores: np.ndarray,    # packed (n+1)^2 float64, laid out as mask
    flat_start: np.ndarray,
    sizes: np.ndarray,
    offsets: np.ndarray,       # (5 B,) int64: PackedParts.offsets from the counts
    single_root: bool,
    arc_index: np.ndarray,     # outputs: the PackedParts arrays ...
    part_start: np.ndarray,
    part_sibling: np.ndarray,
    part_score: np.ndarray,    # the arc's score of each part (the caller adds the sibling term)
    part_h: np.ndarray,        # (parts,) int64 output: head, sibling and dependent of each part,
    part_s: np.ndarray,        # as batch node numbers
    part_m: np.ndarray,
    head_start: np.ndarray,
    head_list: np.ndarray,
) -> None: ...
