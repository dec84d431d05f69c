"""`spacy_struct.MorphScorer.v1`: a score for every possible morph of every word.

A word of m characters has a cut position before each character and after
the last (0..m); a morph is a piece [i, j) between two of them, and the
partition structure (`structs.partitions`) sums piece scores. The scorer
reads the word in its sentence:

    docs ──► sentence encoder ──► word vector ──┐ (projected, appended to each character)
    word's characters ──► char embedding ───────┴─► char BiLSTM ──► boundary vectors

- characters: an embedding of each character plus one of its lowercase form
  (so case is seen but does not split the statistics), between a begin and
  an end marker;
- context: the word's vector from the shared sentence encoder (tok2vec and
  an optional BiLSTM over the sentence) goes into every character's input,
  so "saw" can be cut differently as a noun and as a verb, and agreement
  with neighbouring words is visible;
- boundary k: the forward state after character k and the backward state
  before character k + 1, i.e. what lies on each side of the cut;
- piece [i, j): a biaffine form of a start view of boundary i and an end
  view of boundary j (with linear terms and a bias, as the span scorer
  scores spans), plus a learned bias per piece length, plus (`lexicon_rows`)
  a learned score of the piece's string itself, hashed: a memory of the
  morphs seen in training, which character states learn only slowly.

Every piece of a word is scored, O(m^2) per word from O(m) vectors; words
of one length are scored in one batched product.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional, Tuple

import numpy as np
from spacy.util import registry
from thinc.api import Model

from .batch import SentenceBatch
from .bilstm import BiLSTM
from .dropout import SCORER_DROPOUT, check_dropout, dropout as apply_dropout
from .encoder import build_sentence_encoder, default_model_config
from .views import relu_views

#: the default `[model]` of the supervised morph segmenter (on the default tok2vec)
DEFAULT_MORPH_SCORER_MODEL = default_model_config("""
[model]
@architectures = "spacy_struct.MorphScorer.v1"
char_width = 64
char_rows = 4096
word_width = 64
char_context_width = 128
hidden_width = 64
lexicon_rows = 131072
context_width = 0
dropout = 0.2
""")

#: the model attribute holding the longest word (in characters) given piece
#: scores; a longer word's output is None (its owner leaves it whole). The
#: component sets it from its max_word_length setting; 0: no limit.
MAX_WORD_LENGTH_ATTR = "max_word_length"
#: pieces longer than this share the last length bias
MAX_LENGTH_BUCKET = 16
_BEGIN, _END = 0, 1  # the marker rows of the character table


@lru_cache(maxsize=200_000)
def _characters(text: str, rows: int) -> Tuple[np.ndarray, np.ndarray]:
    """Row ids of [begin, c1..cm, end] and of their lowercase forms (read-only)."""
    free = rows - 2
    ids = np.array([_BEGIN, *(2 + ord(c) % free for c in text), _END], dtype=np.int64)
    lower = np.array([_BEGIN, *(2 + ord(c.lower()[:1] or c) % free for c in text), _END], dtype=np.int64)
    ids.flags.writeable = lower.flags.writeable = False
    return ids, lower


@lru_cache(maxsize=200_000)
def _piece_rows(text: str, rows: int) -> np.ndarray:
    """(m+1, m+1) row of each piece's string in the lexicon table (0 below
    the diagonal, where no piece is); lowercase, so case does not split it."""
    low = text.lower() if len(text.lower()) == len(text) else text
    m = len(text)
    encoded = [c.encode("utf8") for c in low]
    out = np.zeros((m + 1, m + 1), dtype=np.int64)
    for i in range(m):
        # the hash runs over the bytes, so each longer piece from i extends
        # the last one's: O(m^2) for the word, not O(m^3)
        h = _FNV_OFFSET
        for j in range(i, m):
            h = _extend_hash(h, encoded[j])
            out[i, j + 1] = h % rows
    out.flags.writeable = False
    return out


_FNV_OFFSET = 1469598103934665603


def _extend_hash(h: int, data: bytes) -> int:
    """FNV-1a over `data`, continuing from `h`: a hash of a string that does
    not change between processes (Python's `hash` of a str is salted per
    process, and the table is saved)."""
    for byte in data:
        h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


@lru_cache(maxsize=256)
def _length_buckets(m: int) -> np.ndarray:
    """(m+1, m+1) length bucket of piece [i, j), 0 where j <= i (unused)."""
    length = np.arange(m + 1)[None, :] - np.arange(m + 1)[:, None]
    out = np.clip(length, 0, MAX_LENGTH_BUCKET).astype(np.int64)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=256)
def _pieces_mask(m: int) -> np.ndarray:
    """(m+1, m+1) float32: 1 where j > i (a piece)."""
    out = np.triu(np.ones((m + 1, m + 1), dtype=np.float32), 1)
    out.flags.writeable = False
    return out


@registry.architectures("spacy_struct.MorphScorer.v1")
def build_morph_scorer(
    tok2vec: Model,
    char_width: int = 64,
    char_rows: int = 4096,
    word_width: int = 64,
    char_context_width: int = 128,
    hidden_width: int = 64,
    lexicon_rows: int = 131072,
    context_width: int = 0,
    dropout: float = 0.2,
) -> Model[SentenceBatch, List[np.ndarray]]:
    """Scores of every piece of every word of the batch's sentences.

    tok2vec: docs to one vector per token (a listener or a layer of its own).
    char_width: size of the character embedding.
    char_rows: rows of the character table (code points are taken modulo it).
    word_width: size of the word-in-context vector appended to each character.
    char_context_width: output width of the BiLSTM over each word's
        characters (half per direction).
    hidden_width: size of the start and end views of each boundary.
    lexicon_rows: rows of the hashed table of piece strings; 0 for none.
    context_width: output width of a BiLSTM over each sentence's words
        before the word vectors are taken; 0 for none.
    dropout: the scorer's own rate, on the LSTMs' inputs and the views.
    RETURNS: a Model from a SentenceBatch to one (m+1, m+1) float32 array per
        token of every sentence in order, [i, j] the score of the piece
        [i, j) of its characters, 0 where j <= i; None for a token longer
        than the model's MAX_WORD_LENGTH_ATTR attribute. Ref "output" (the layer
        that holds nO, always 1: one kind of piece) and "tok2vec".
    """
    for name, value in (("char_width", char_width), ("word_width", word_width),
                        ("hidden_width", hidden_width)):
        if value < 1:
            raise ValueError(f"{name} must be positive, not {value}")
    if char_rows < 3:
        raise ValueError(f"char_rows must be at least 3, not {char_rows}")
    if lexicon_rows < 0:
        raise ValueError(f"lexicon_rows must be 0 (none) or positive, not {lexicon_rows}")
    check_dropout(dropout)
    encoder = build_sentence_encoder(tok2vec, 0, context_width, 1, dropout)
    chars = BiLSTM(char_context_width, dropout=dropout)
    params = {"E": None, "Wp": None, "bp": None, "W": None, "b": None, "U": None, "length": None}
    if lexicon_rows:
        params["lexicon"] = None
    model = Model(
        "morph_scorer",
        _forward,
        init=_init,
        layers=[encoder, chars],
        dims={"nO": None, "hidden_width": hidden_width, "char_width": char_width,
              "char_rows": char_rows, "word_width": word_width, "lexicon_rows": lexicon_rows},
        params=params,
        attrs={SCORER_DROPOUT: dropout, MAX_WORD_LENGTH_ATTR: 0},
    )
    model.set_ref("encoder", encoder)
    model.set_ref("characters", chars)
    model.set_ref("output", model)
    for name in encoder.ref_names:
        if encoder.has_ref(name):
            model.set_ref(name, encoder.get_ref(name))
    return model


def _init(model: Model, X: Optional[SentenceBatch] = None, Y=None) -> Model:
    encoder, chars = model.layers
    encoder.initialize(X=X)
    h, D, P = (model.get_dim(d) for d in ("hidden_width", "char_width", "word_width"))
    width = encoder.get_dim("nO")
    chars.set_dim("nI", D + P, force=True)
    chars.initialize()
    C = chars.get_dim("nO")
    rng = np.random.default_rng(0)
    model.set_param("E", rng.normal(0.0, 0.1, (model.get_dim("char_rows"), D)).astype(np.float32))
    limit = np.sqrt(6.0 / (width + P))
    model.set_param("Wp", rng.uniform(-limit, limit, (width, P)).astype(np.float32))
    model.set_param("bp", np.zeros((P,), dtype=np.float32))
    limit = np.sqrt(6.0 / (C + 2 * h))
    model.set_param("W", rng.uniform(-limit, limit, (C, 2 * h)).astype(np.float32))
    model.set_param("b", np.zeros((2 * h,), dtype=np.float32))
    model.set_param("U", np.zeros((h + 1, h + 1), dtype=np.float32))
    model.set_param("length", np.zeros((MAX_LENGTH_BUCKET + 1,), dtype=np.float32))
    if model.get_dim("lexicon_rows"):
        model.set_param("lexicon", np.zeros((model.get_dim("lexicon_rows"),), dtype=np.float32))
    return model


def token_texts(batch: SentenceBatch) -> List[str]:
    """The text of every token of the batch's sentences, in output order."""
    return [batch.docs[d][t].text for d, s, e in batch.sents for t in range(s, e)]


def _forward(model: Model, batch: SentenceBatch, is_train: bool):
    encoder, chars = model.layers
    rate = model.attrs[SCORER_DROPOUT]
    rows = model.get_dim("char_rows")
    lexicon_rows = model.get_dim("lexicon_rows")
    E, Wp, bp, U, Lb = (model.get_param(p) for p in ("E", "Wp", "bp", "U", "length"))

    sent_vecs, bp_encoder = encoder(batch, is_train)
    sent_sizes = [len(v) for v in sent_vecs]
    texts = token_texts(batch)
    if not texts:
        return [], lambda d: batch
    V = np.concatenate(sent_vecs).astype(np.float32, copy=False)           # (T, width)
    pre_p = V @ Wp + bp
    P, bp_drop_p = apply_dropout(np.maximum(pre_p, 0), rate, is_train)      # (T, word_width)

    lengths = np.array([len(t) for t in texts], dtype=np.int64)
    ids, lower = zip(*(_characters(t, rows) for t in texts))
    ids, lower = np.concatenate(ids), np.concatenate(lower)                # (sum m+2,)
    token_of_row = np.repeat(np.arange(len(texts)), lengths + 2)
    Xc = np.concatenate([E[ids] + E[lower], P[token_of_row]], axis=1)
    H_list, bp_chars = chars(np.split(Xc, np.cumsum(lengths + 2)[:-1]), is_train)
    H = np.concatenate(H_list)                                             # (sum m+2, C)
    half = H.shape[1] // 2
    # boundary k of a word: forward state at row k, backward state at row k+1
    starts = np.concatenate([[0], np.cumsum(lengths + 2)[:-1]])
    k_rows = np.repeat(starts, lengths + 1) + _ranges(lengths + 1)
    B = np.concatenate([H[k_rows, :half], H[k_rows + 1, half:]], axis=1)    # (sum m+1, C)
    (S1, E1), bp_views = relu_views(model, B, 2, is_train)
    SU = S1 @ U                                                            # (sum m+1, h+1)
    b_starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])

    outputs: List[Optional[np.ndarray]] = [None] * len(texts)
    groups: Dict[int, np.ndarray] = {}
    longest = model.attrs.get(MAX_WORD_LENGTH_ATTR) or 0
    for m in np.unique(lengths).tolist():
        if longest and m > longest:
            continue  # no (m+1)^2 scores: the output stays None
        words = np.flatnonzero(lengths == m)
        rows_g = b_starts[words][:, None] + np.arange(m + 1)[None, :]       # (k, m+1)
        S = np.matmul(SU[rows_g], E1[rows_g].transpose(0, 2, 1))            # (k, m+1, m+1)
        S = S + Lb[_length_buckets(m)]
        if lexicon_rows:
            lex_rows = np.stack([_piece_rows(texts[w], lexicon_rows) for w in words])
            S = S + model.get_param("lexicon")[lex_rows]
        else:
            lex_rows = None
        S *= _pieces_mask(m)
        groups[m] = (words, rows_g, lex_rows)
        for w, s in zip(words.tolist(), S):
            outputs[w] = s

    def backprop(d_scores: List[np.ndarray]) -> SentenceBatch:
        d_SU = np.zeros_like(SU)
        d_E1 = np.zeros_like(E1)
        d_Lb = np.zeros_like(Lb)
        d_lex = np.zeros((lexicon_rows,), dtype=np.float32) if lexicon_rows else None
        for m, (words, rows_g, lex_rows) in groups.items():
            dS = np.stack([np.asarray(d_scores[w], dtype=np.float32) for w in words]) * _pieces_mask(m)
            d_SU[rows_g] = np.matmul(dS, E1[rows_g])          # each boundary is in one word
            d_E1[rows_g] = np.matmul(dS.transpose(0, 2, 1), SU[rows_g])
            d_Lb += np.bincount(
                np.broadcast_to(_length_buckets(m), dS.shape).ravel(), weights=dS.ravel(),
                minlength=MAX_LENGTH_BUCKET + 1,
            ).astype(np.float32)
            if lexicon_rows:
                d_lex += np.bincount(lex_rows.ravel(), weights=dS.ravel(), minlength=lexicon_rows).astype(np.float32)
        model.inc_grad("U", S1.T @ d_SU)
        model.inc_grad("length", d_Lb)
        if lexicon_rows:
            model.inc_grad("lexicon", d_lex)
        d_B = bp_views([d_SU @ U.T, d_E1])
        d_H = np.zeros_like(H)
        d_H[k_rows, :half] += d_B[:, :half]       # each row is one boundary's forward part
        d_H[k_rows + 1, half:] += d_B[:, half:]   # and one boundary's backward part
        d_Xc = np.concatenate(bp_chars(np.split(d_H, np.cumsum(lengths + 2)[:-1])))
        d_E = np.zeros_like(E)
        d_chars = d_Xc[:, :E.shape[1]]   # each row read E twice: its character and its lowercase
        np.add.at(d_E, np.concatenate([ids, lower]), np.concatenate([d_chars, d_chars]))
        model.inc_grad("E", d_E)
        d_P = np.zeros_like(P)
        np.add.at(d_P, token_of_row, d_Xc[:, E.shape[1]:])
        d_pre_p = bp_drop_p(d_P) * (pre_p > 0)
        model.inc_grad("Wp", V.T @ d_pre_p)
        model.inc_grad("bp", d_pre_p.sum(0))
        d_V = d_pre_p @ Wp.T
        bp_encoder(np.split(d_V, np.cumsum(sent_sizes)[:-1]))
        return batch

    return outputs, backprop


def _ranges(counts: np.ndarray) -> np.ndarray:
    """[0..c0-1, 0..c1-1, ...] for the counts."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts
