"""`spacy_struct.SegmentPairScorer.v2` (and `.v1`): transition scores of
gapped segments.

v2 differs from v1 only in its defaults: the skip layer on (`skip_width`
64) and a scorer dropout of 0.1 (v1: 0 and 0.33, the paper's transitions).
A saved pipeline names its version, so one saved before v2 still loads the
model it was trained with.

A gapped segment of type t is a path 0 -> i1 -> ... -> im -> n+1 over the
positions of a sentence (McDonald, Crammer & Pereira 2005), and its score
is the sum of its transitions' scores g(j, i, t). The paper's four states
each get their own view of a word (from the shared sentence encoder):

- start, g(0, i): a linear score of the start view of word i;
- end, g(i, n+1): a linear score of the end view of word i;
- next and skip, g(j, i) for words j < i: a biaffine form of a "from" view
  of word j and a "to" view of word i, [f_j; 1]^T U_t [o_i; 1], plus a
  learned bias per type and gap length (0 for next, the words skipped
  otherwise), so contiguity is the cheap default and a gap must be earned;
- with `skip_form`, a skip reads the same two views through a biaffine
  form of its own: what may be elided between j and i is not what may
  follow j directly, and one shared form must fit the far more common
  next-word transitions first;
- with `gap_words`, a skip also scores the words at the edges of its gap:
  a linear score of a "gap opens" view of word j+1 (the first word
  skipped) and of a "gap closes" view of word i-1 (the last one). A
  discontinuous mention is mostly a coordination ("digits of the forelimb
  and hindlimb" holds "digits of ... hindlimb"), and what licenses the
  skip is what is skipped, which the views of j and i alone do not see;
- with `skip_width`, a skip also gets the score of a hidden layer over its
  four edge words together and the mean of the words it leaves out
  (`skip_layer`): a coordination is licensed by the left conjunct, the
  coordinator, the other conjunct and the shared head at once, which
  separate terms per word cannot combine;
- with `gap_end`, a segment with a gap also scores its last word by a
  linear score of the end view of its own, e(i): the output is then
  (T, n+2, n+3), e in the last column (`structs.segments`, "a gapped
  end"). The shared head of a coordination ("human and mouse CD19
  *genes*") is often past the skip, where no transition of the skip sees
  it, and whether the corpus reads the construction as gapped depends on
  it ("genes" mostly gapped, "factor" mostly not).
- with `coordination_width`, every two-fragment segment [A] + [B N] with
  fragments of at most `coordination_fragment` words and at most
  `coordination_gap` words skipped also gets a score of its own, phi(c, t),
  from a hidden layer over its four edge words, the mean of its gap, the
  fragments' lengths and the transition scores of [A] and [B N] alone
  (`coordination_layer`): the output is then a `CoordinatedScores`
  (`structs.coordination`), the transitions with phi in extra rows.

One word of type t scores start + end, the common case (most mentions
are one word); every extra word adds one transition. The scores come as one
(T, n+2, n+2) array per sentence, or (T, n+2, n+3) with `gap_end`, the
layouts of `structs.segments`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Tuple

import numpy as np
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..structs.coordination import pack_coordination, coordination_parts, CoordinatedScores
from .batch import SentenceBatch
from .coordination_layer import (
    COORDINATION_TERMS, candidate_geometry, coordination_hidden, coordination_hidden_backprop, path_features,
    table_rows,
)
from .dropout import SCORER_DROPOUT, check_dropout, dropout as apply_dropout
from .encoder import build_sentence_encoder
from .scorer import encoder_and_head
from .skip_layer import (
    PARALLEL_TERMS, SKIP_TERMS, project_terms, skip_block_geometry, skip_hidden, skip_hidden_backprop,
)
from .views import bucket_gradient, relu_views, stack_sentences

# gaps 0 (next), 1, 2, 3, 4 get a bucket each, then 5-7, 8-15, 16+
_GAP_EDGES = np.array([0, 1, 2, 3, 4, 5, 8, 16], dtype=np.int64)
N_GAP_BUCKETS = len(_GAP_EDGES)
# Initial gap bias: 0 for the next word, then lower the more gaps a bucket
# holds, so an untrained model gives gapped segments little weight.
_INITIAL_GAP_BIAS = np.array([0.0, -5.0, -5.0, -5.0, -5.0, -6.0, -7.0, -10.0], dtype=np.float32)


@lru_cache(maxsize=512)
def _pair_grid(n: int) -> Tuple[np.ndarray, np.ndarray]:
    """(n, n) gap bucket of word pair (j, i) and a float32 mask of j < i;
    cached per length, read-only."""
    gap = np.arange(n)[None, :] - np.arange(n)[:, None] - 1
    buckets = np.maximum(np.digitize(np.maximum(gap, 0), _GAP_EDGES) - 1, 0).astype(np.int64)
    later = (gap >= 0).astype(np.float32)
    buckets.flags.writeable = later.flags.writeable = False
    return buckets, later


@registry.architectures("spacy_struct.SegmentPairScorer.v1")
def build_segment_pair_scorer(
    tok2vec: Model,
    hidden_width: int = 128,
    dropout: float = 0.33,
    context_width: int = 256,
    context_depth: int = 1,
    characters: int = 0,
    gap_words: bool = False,
    skip_form: bool = False,
    skip_width: int = 0,
    skip_parallel: bool = False,
    gap_end: bool = False,
    coordination_width: int = 0,
    coordination_fragment: int = 4,
    coordination_gap: int = 12,
) -> Model[SentenceBatch, List[np.ndarray]]:
    """Transition scores of gapped segments over the sentence encoder.

    tok2vec: docs to one vector per token (a listener to share a `tok2vec`
        component, or a layer of its own).
    hidden_width: size of each of the four views of a word.
    dropout: in training, on the LSTM's inputs, the views and the skip
        layer's input.
    context_width: output width of a BiLSTM over each sentence; 0 for none.
    context_depth: its number of layers.
    characters: width of a character encoder beside the tok2vec; 0 for none.
    gap_words: score a skip by the first and last words it skips too. Off
        by default: on CRAFT dev it gained 0.5 F1 (within the dev noise)
        and next to no discontinuous mentions, and ran 3-9% slower
        (docs/results/segments.md).
    skip_form: give skips (j -> i > j + 1) a biaffine form U_skip of their
        own instead of the next-word one (docs/results/segments.md).
    skip_width: width of a hidden layer that scores every skip by its edge
        words together and the mean of its gap (`skip_layer`); 0 for none,
        the paper's first-order transitions alone.
    skip_parallel: with the skip layer, also how alike the left conjunct and
        the word that closes the gap are (an elementwise product of two more
        terms in its hidden layer).
    gap_end: score the last word of a segment with a gap by a term of its
        own, e(i), in a last column of the output (see the module docstring).
        Off by default: on GENIA dev it moved the discontinuous F1 by +0.2
        and -6.0 on two seeds and ran 7-11% slower end to end
        (docs/results/segments.md).
    coordination_width: width of the hidden layer that scores each
        two-fragment segment as a whole (`coordination_layer`); 0 for none.
        Needs the "crf" loss.
    coordination_fragment: the longest fragment of such a segment, in words
        (GENIA's coordinations: 95% of the gapped train mentions have both
        fragments of at most 4 words and a gap of at most 12).
    coordination_gap: the most words it skips.
    RETURNS: a Model from a SentenceBatch to one (T, n+2, n+2) float32 array
        per sentence: [t, 0, i+1] starts at word i, [t, i+1, n+1] ends at
        word i, [t, j+1, i+1] goes from word j to word i > j; 0 elsewhere;
        with `gap_end`, (T, n+2, n+3) with e(i) at [t, i+1, n+2]; with
        `coordination_width`, a `CoordinatedScores` of those transitions.
        Its ref "output" holds nO = T, which must be set before initializing.
    """
    encoder = build_sentence_encoder(tok2vec, characters, context_width, context_depth, dropout)
    return encoder_and_head(
        encoder,
        segment_pair_head(hidden_width, dropout, gap_words, skip_form, skip_width, skip_parallel, gap_end,
                          coordination_width, coordination_fragment, coordination_gap),
    )


@registry.architectures("spacy_struct.SegmentPairScorer.v2")
def build_segment_pair_scorer_v2(
    tok2vec: Model,
    hidden_width: int = 128,
    dropout: float = 0.1,
    context_width: int = 256,
    context_depth: int = 1,
    characters: int = 0,
    gap_words: bool = False,
    skip_form: bool = False,
    skip_width: int = 64,
    skip_parallel: bool = False,
    gap_end: bool = False,
    coordination_width: int = 0,
    coordination_fragment: int = 4,
    coordination_gap: int = 12,
) -> Model[SentenceBatch, List[np.ndarray]]:
    """`build_segment_pair_scorer` with the skip layer on by default: on
    GENIA's coordinations the paper's transitions alone find no
    discontinuous mention of dev, with it 47 of 122 at precision 52 (seed
    0; F1 41.3 over three seeds, docs/results/segments.md); the lower
    dropout fits the rare gapped
    segments (see v1 for the arguments)."""
    return build_segment_pair_scorer(
        tok2vec, hidden_width, dropout, context_width, context_depth, characters,
        gap_words, skip_form, skip_width, skip_parallel, gap_end,
        coordination_width, coordination_fragment, coordination_gap,
    )


def segment_pair_head(
    hidden_width: int, dropout: float, gap_words: bool = False, skip_form: bool = False,
    skip_width: int = 0, skip_parallel: bool = False, gap_end: bool = False,
    coordination_width: int = 0, coordination_fragment: int = 4, coordination_gap: int = 12,
) -> Model[List[Floats2d], List[np.ndarray]]:
    """The head alone: per-sentence word vectors to transition scores."""
    if hidden_width < 1:
        raise ValueError(f"hidden_width must be positive, not {hidden_width}")
    for name, value, least in (("skip_width", skip_width, 0), ("coordination_width", coordination_width, 0),
                               ("coordination_fragment", coordination_fragment, 1),
                               ("coordination_gap", coordination_gap, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(
                f"SegmentPairScorer (the overlap_segmenter's model): {name} must be an int >= {least}"
                f"{' (0: none)' if least == 0 else ''}, not {value!r}"
            )
    check_dropout(dropout)
    params = {"W": None, "b": None, "U": None, "gap": None, "start": None, "end": None}
    if gap_words:
        params.update({"gap_opens": None, "gap_closes": None})
    if skip_form:
        params["U_skip"] = None
    if skip_width:
        params.update({"skip_W": None, "skip_b": None, "skip_gap": None, "skip_out": None})
    if gap_end:
        params["gapped_end"] = None
    if coordination_width:
        params.update({"coord_W": None, "coord_b": None, "coord_table": None, "coord_paths": None,
                       "coord_out": None})
    return Model(
        "segment_pair_head",
        _forward,
        init=_init,
        dims={"nI": None, "nO": None, "hidden_width": hidden_width, "skip_width": skip_width,
              "coordination_width": coordination_width},
        params=params,
        attrs={SCORER_DROPOUT: dropout, "gap_words": bool(gap_words), "skip_form": bool(skip_form),
               "gap_end": bool(gap_end), "coordination_fragment": coordination_fragment,
               "coordination_gap": coordination_gap,
               "skip_terms": SKIP_TERMS + (PARALLEL_TERMS if skip_parallel and skip_width else ())},
    )


def _n_views(model: Model) -> int:
    """from, to, start, end; and gap opens, gap closes with gap_words."""
    return 6 if model.attrs["gap_words"] else 4


def _init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> Model:
    if not model.has_dim("nO") or model.get_dim("nO") is None:
        raise ValueError("SegmentPairScorer: the number of types (nO) must be set before initializing")
    width = model.get_dim("nI")
    h, T = model.get_dim("hidden_width"), model.get_dim("nO")
    rng = np.random.default_rng(0)
    views = _n_views(model)
    limit = np.sqrt(6.0 / (width + views * h))
    model.set_param("W", rng.uniform(-limit, limit, (width, views * h)).astype(np.float32))
    model.set_param("b", np.zeros((views * h,), dtype=np.float32))
    model.set_param("U", np.zeros((h + 1, T, h + 1), dtype=np.float32))
    if model.attrs["skip_form"]:
        model.set_param("U_skip", np.zeros((h + 1, T, h + 1), dtype=np.float32))
    model.set_param("gap", np.repeat(_INITIAL_GAP_BIAS[:, None], T, axis=1))
    # start and end: a weight per view unit and type, and a bias per type
    # (last row). The start bias begins negative: segments are rare, and an
    # untrained model should predict none rather than every word.
    # (Both biases keep an untrained model's summed segment rate small: a
    # sentence of n words has about n^2 / 2 contiguous and 2^n gapped segments.)
    start = np.zeros((h + 1, T), dtype=np.float32)
    start[h] = -2.0
    model.set_param("start", start)
    model.set_param("end", np.zeros((h + 1, T), dtype=np.float32))
    if model.attrs["gap_end"]:
        # 0: an untrained gapped end changes no segment's score
        model.set_param("gapped_end", np.zeros((h + 1, T), dtype=np.float32))
    if model.attrs["gap_words"]:
        model.set_param("gap_opens", np.zeros((h + 1, T), dtype=np.float32))
        model.set_param("gap_closes", np.zeros((h + 1, T), dtype=np.float32))
    H = model.get_dim("skip_width")
    if H:
        # the output weights start at 0: an untrained skip layer adds nothing
        # to the transitions, so the gap bias alone keeps skips rare at first
        n_terms = len(model.attrs["skip_terms"])
        limit = np.sqrt(6.0 / (width + n_terms * H))
        model.set_param("skip_W", rng.uniform(-limit, limit, (width, n_terms * H)).astype(np.float32))
        model.set_param("skip_b", np.zeros((n_terms * H,), dtype=np.float32))
        model.set_param("skip_gap", np.zeros((N_GAP_BUCKETS, H), dtype=np.float32))
        model.set_param("skip_out", np.zeros((H, T), dtype=np.float32))
    Hc = model.get_dim("coordination_width")
    if Hc:
        # as the skip layer: random input weights, output weights at 0
        n_terms = len(COORDINATION_TERMS)
        limit = np.sqrt(6.0 / (width + n_terms * Hc))
        model.set_param("coord_W", rng.uniform(-limit, limit, (width, n_terms * Hc)).astype(np.float32))
        model.set_param("coord_b", np.zeros((n_terms * Hc,), dtype=np.float32))
        rows = table_rows(model.attrs["coordination_fragment"], model.attrs["coordination_gap"])
        model.set_param("coord_table", np.zeros((rows, Hc), dtype=np.float32))
        model.set_param("coord_paths", np.zeros((3 * T, Hc), dtype=np.float32))
        model.set_param("coord_out", np.zeros((Hc, T), dtype=np.float32))
    return model


def _forward(model: Model, sent_vecs: List[Floats2d], is_train: bool):
    h, T = model.get_dim("hidden_width"), model.get_dim("nO")
    gap_words, skip_form, gap_end = model.attrs["gap_words"], model.attrs["skip_form"], model.attrs["gap_end"]
    U = model.get_param("U")
    Wg, Ws, We = model.get_param("gap"), model.get_param("start"), model.get_param("end")
    U2 = U.reshape(h + 1, T * (h + 1))

    sizes, offsets, X = stack_sentences(model, sent_vecs)
    # views: from (j in j -> i), to (i), start, end[, gap opens, gap closes]
    views, bp_views = relu_views(model, X, _n_views(model), is_train)
    F1, O1, B1, E1 = views[:4]
    FU = F1 @ U2                                                # (N, T * (h + 1))
    if skip_form:
        Us2 = model.get_param("U_skip").reshape(h + 1, T * (h + 1))
        FUs = F1 @ Us2
    starts, ends = B1 @ Ws, E1 @ We                             # (N, T)
    if gap_end:
        Wge = model.get_param("gapped_end")
        gapped_ends = E1 @ Wge                                  # (N, T)
    if gap_words:
        Wo, Wc = model.get_param("gap_opens"), model.get_param("gap_closes")
        opens, closes = views[4] @ Wo, views[5] @ Wc            # (N, T)
    H = model.get_dim("skip_width")
    if H:
        skip_bias, skip_out = model.get_param("skip_gap"), model.get_param("skip_out")
        X_skip, bp_skip_dropout = apply_dropout(X, model.attrs[SCORER_DROPOUT], is_train)
        names = model.attrs["skip_terms"]
        skip_terms, bp_skip_terms = project_terms(X_skip, model.get_param("skip_W"), model.get_param("skip_b"), names)
        skip_layers = {}                                         # sentence -> (pre, terms)
    Hc = model.get_dim("coordination_width")
    if Hc:
        fragment, longest_gap = model.attrs["coordination_fragment"], model.attrs["coordination_gap"]
        coord_table, coord_paths = model.get_param("coord_table"), model.get_param("coord_paths")
        coord_out = model.get_param("coord_out")
        X_coord, bp_coord_dropout = apply_dropout(X, model.attrs[SCORER_DROPOUT], is_train)
        coord_terms, bp_coord_terms = project_terms(
            X_coord, model.get_param("coord_W"), model.get_param("coord_b"), COORDINATION_TERMS)
        coord_layers = {}                                        # sentence -> (pre, paths)

    outputs = []
    for i, n in enumerate(sizes):
        lo, hi = offsets[i], offsets[i + 1]
        out = np.zeros((T, n + 2, n + 3 if gap_end else n + 2), dtype=np.float32)
        if n:
            buckets, later = _pair_grid(n)
            pair = (FU[lo:hi].reshape(n * T, h + 1) @ O1[lo:hi].T).reshape(n, T, n)
            if skip_form:
                pair_skip = (FUs[lo:hi].reshape(n * T, h + 1) @ O1[lo:hi].T).reshape(n, T, n)
                pair = np.where(buckets[:, None, :] > 0, pair_skip, pair)
            pair = pair.transpose(1, 0, 2) + Wg[buckets].transpose(2, 0, 1)
            if gap_words and n > 2:
                # skip j -> i: word j+1 opens the gap, word i-1 closes it.
                # Row j, column i - 2 of this block: skips are its upper triangle.
                edges = opens[lo + 1:hi - 1].T[:, :, None] + closes[lo + 1:hi - 1].T[:, None, :]
                pair[:, :n - 2, 2:] += np.triu(edges)
            if H and n > 2:
                inv_gap, mask = skip_block_geometry(n)
                terms = {name: skip_terms[name][lo:hi] for name in names}
                pre, z = skip_hidden(terms, skip_bias, buckets[:n - 2, 2:], inv_gap, mask)
                if is_train:  # z is relu(pre) * mask: recomputed in backprop, half the memory
                    skip_layers[i] = (pre, terms)
                pair[:, :n - 2, 2:] += (z.reshape(-1, H) @ skip_out).T.reshape(T, n - 2, n - 2)
            out[:, 1:n + 1, 1:n + 1] = pair * later
            out[:, 0, 1:n + 1] = starts[lo:hi].T
            out[:, 1:n + 1, n + 1] = ends[lo:hi].T
            if gap_end:
                out[:, 1:n + 1, n + 2] = gapped_ends[lo:hi].T
        if Hc:
            geometry = candidate_geometry(n, fragment, longest_gap)
            candidates = geometry.candidates
            paths = path_features(out, candidates)
            terms = {name: coord_terms[name][lo:hi] for name in COORDINATION_TERMS}
            pre = coordination_hidden(terms, coord_table, coord_paths, geometry, paths)
            if is_train:
                coord_layers[i] = (pre, paths)
            out = pack_coordination(out, candidates, (np.maximum(pre, 0) @ coord_out).T)
        outputs.append(out)

    def backprop(d_scores: List[np.ndarray]):
        d_FU = np.zeros_like(FU)
        if skip_form:
            d_FUs = np.zeros_like(FUs)
        d_O1 = np.zeros_like(O1)
        d_starts = np.zeros_like(starts)
        d_ends = np.zeros_like(ends)
        if gap_end:
            d_gapped_ends = np.zeros_like(gapped_ends)
        d_Wg = np.zeros_like(Wg)
        if gap_words:
            d_opens, d_closes = np.zeros_like(opens), np.zeros_like(closes)
        if H:
            d_skip_terms = {name: np.zeros_like(skip_terms[name]) for name in names}
            d_skip_bias, d_skip_out = np.zeros_like(skip_bias), np.zeros_like(skip_out)
        if Hc:
            d_coord_terms = {name: np.zeros_like(coord_terms[name]) for name in COORDINATION_TERMS}
            d_coord_table, d_coord_paths = np.zeros_like(coord_table), np.zeros_like(coord_paths)
            d_coord_out = np.zeros_like(coord_out)
        for i, n in enumerate(sizes):
            if n == 0:
                continue
            lo, hi = offsets[i], offsets[i + 1]
            d = d_scores[i].astype(np.float32, copy=False)
            if Hc:
                geometry = candidate_geometry(n, fragment, longest_gap)
                candidates = geometry.candidates
                d, _, d_phi = coordination_parts(CoordinatedScores(d, candidates))
                if len(candidates):
                    pre, paths = coord_layers[i]
                    z = np.maximum(pre, 0)
                    d_coord_out += z.T @ d_phi.T
                    d_pre = (d_phi.T @ coord_out.T) * (pre > 0)
                    d_terms, d_table, d_paths = coordination_hidden_backprop(
                        d_pre, geometry, len(coord_table), paths)
                    for name in COORDINATION_TERMS:
                        d_coord_terms[name][lo:hi] = d_terms[name]
                    d_coord_table += d_table
                    d_coord_paths += d_paths
            buckets, later = _pair_grid(n)
            d_pair = d[:, 1:n + 1, 1:n + 1] * later                      # (T, n, n)
            d_t = np.ascontiguousarray(d_pair.transpose(1, 0, 2))          # (n, T, n)
            if skip_form:
                skip = buckets[:, None, :] > 0
                d_s = np.where(skip, d_t, 0.0).reshape(n * T, n)
                d_t = np.where(skip, 0.0, d_t)
                d_FUs[lo:hi] = (d_s @ O1[lo:hi]).reshape(n, T * (h + 1))
                d_O1[lo:hi] = d_s.T @ FUs[lo:hi].reshape(n * T, h + 1)
            d_t = d_t.reshape(n * T, n)
            d_FU[lo:hi] = (d_t @ O1[lo:hi]).reshape(n, T * (h + 1))
            d_O1[lo:hi] += d_t.T @ FU[lo:hi].reshape(n * T, h + 1)
            d_Wg += bucket_gradient(buckets, d_pair, N_GAP_BUCKETS)
            d_starts[lo:hi] = d[:, 0, 1:n + 1].T
            d_ends[lo:hi] = d[:, 1:n + 1, n + 1].T
            if gap_end:
                d_gapped_ends[lo:hi] = d[:, 1:n + 1, n + 2].T
            if gap_words and n > 2:
                d_edges = np.triu(d_pair[:, :n - 2, 2:])
                d_opens[lo + 1:hi - 1] = d_edges.sum(2).T
                d_closes[lo + 1:hi - 1] = d_edges.sum(1).T
            if H and n > 2:
                pre, terms = skip_layers[i]
                inv_gap, mask = skip_block_geometry(n)
                d_s = d_pair[:, :n - 2, 2:].reshape(T, -1).T            # (skips, T)
                z = np.maximum(pre, 0)
                z *= mask[:, :, None]
                d_skip_out += z.reshape(-1, H).T @ d_s
                d_z = (d_s @ skip_out.T).reshape(n - 2, n - 2, H)
                d_terms, d_bias = skip_hidden_backprop(
                    d_z, pre, inv_gap, mask, buckets[:n - 2, 2:], N_GAP_BUCKETS, terms
                )
                for name in names:
                    d_skip_terms[name][lo:hi] = d_terms[name]
                d_skip_bias += d_bias
        model.inc_grad("U", (F1.T @ d_FU).reshape(U.shape))
        model.inc_grad("gap", d_Wg)
        model.inc_grad("start", B1.T @ d_starts)
        model.inc_grad("end", E1.T @ d_ends)
        d_F1 = d_FU @ U2.T
        if skip_form:
            model.inc_grad("U_skip", (F1.T @ d_FUs).reshape(U.shape))
            d_F1 += d_FUs @ Us2.T
        d_E1 = d_ends @ We.T
        if gap_end:
            model.inc_grad("gapped_end", E1.T @ d_gapped_ends)
            d_E1 += d_gapped_ends @ Wge.T
        d_views = [d_F1, d_O1, d_starts @ Ws.T, d_E1]
        if gap_words:
            model.inc_grad("gap_opens", views[4].T @ d_opens)
            model.inc_grad("gap_closes", views[5].T @ d_closes)
            d_views += [d_opens @ Wo.T, d_closes @ Wc.T]
        if H:
            d_X_skip, d_skip_W, d_skip_b = bp_skip_terms(d_skip_terms)
            model.inc_grad("skip_W", d_skip_W)
            model.inc_grad("skip_b", d_skip_b)
            model.inc_grad("skip_gap", d_skip_bias)
            model.inc_grad("skip_out", d_skip_out)
        dX = bp_views(d_views)
        if H:
            dX += bp_skip_dropout(d_X_skip)
        if Hc:
            d_X_coord, d_coord_W, d_coord_b = bp_coord_terms(d_coord_terms)
            for name, grad in (("coord_W", d_coord_W), ("coord_b", d_coord_b), ("coord_table", d_coord_table),
                               ("coord_paths", d_coord_paths), ("coord_out", d_coord_out)):
                model.inc_grad(name, grad)
            dX += bp_coord_dropout(d_X_coord)
        return [dX[offsets[i]:offsets[i + 1]] for i in range(len(sizes))]

    return outputs, backprop
