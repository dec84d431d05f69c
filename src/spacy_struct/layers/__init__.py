"""thinc layers shared by the scorers of several components."""
from .bilstm import BiLSTM
from .encoder import DEFAULT_TOK2VEC_CONFIG, initialize_encoder, with_characters

__all__ = ["BiLSTM", "DEFAULT_TOK2VEC_CONFIG", "initialize_encoder", "with_characters"]
