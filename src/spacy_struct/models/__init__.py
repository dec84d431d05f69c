"""Registered thinc architectures: the shared sentence encoder and the heads
that the components' scorers chain onto it.

- `encoder.py`: `spacy_struct.SentenceEncoder.v1` (tok2vec, characters,
  BiLSTM, per-sentence gather/scatter); `bilstm.py`: `spacy_struct.BiLSTM.v1`.
- `arc_scorer.py`: `spacy_struct.BiaffineArcScorer.v1` (dependency arcs);
  `edge_labeler.py`: the second-stage arc labeler; `distance.py`: the
  signed, bucketed head-dependent distance both weigh;
  `edge_features.py`: `spacy_struct.EdgeFeatures.v1` (sparse arc features).
- `span_scorer.py`: `spacy_struct.SpanScorer.v1` (labeled spans).
- `segment_scorer.py`: `spacy_struct.SegmentPairScorer.v2` and `.v1`
  (transitions of gapped segments; v2 with the skip layer of
  `skip_layer.py` by default).
- `morph_scorer.py`: `spacy_struct.MorphScorer.v1` (the morphs of each word,
  from its characters and its vector in context).
- `detached_listener.py`: `spacy_struct.DetachedListener.v1` (the shared
  tok2vec's vectors for a component that must not train it: the EWT
  senter).
- `scorer.py`: `encoder_and_head`, the composition every scorer uses;
  `views.py`: the word views and distance-bucket biases the biaffine
  heads share.
"""
from .arc_scorer import ParseScores, build_biaffine_arc_scorer
from .batch import SentenceBatch
from .bilstm import BiLSTM
from .detached_listener import build_detached_listener
from .edge_features import build_edge_features
from .encoder import DEFAULT_TOK2VEC_CONFIG, build_sentence_encoder, default_model_config, per_sentence, with_characters
from .scorer import encoder_and_head
from .morph_scorer import build_morph_scorer
from .segment_scorer import build_segment_pair_scorer, build_segment_pair_scorer_v2
from .span_scorer import build_span_scorer

__all__ = [
    "BiLSTM",
    "DEFAULT_TOK2VEC_CONFIG",
    "ParseScores",
    "SentenceBatch",
    "build_biaffine_arc_scorer",
    "build_detached_listener",
    "build_edge_features",
    "build_morph_scorer",
    "build_segment_pair_scorer",
    "build_segment_pair_scorer_v2",
    "build_sentence_encoder",
    "build_span_scorer",
    "default_model_config",
    "encoder_and_head",
    "per_sentence",
    "with_characters",
]
