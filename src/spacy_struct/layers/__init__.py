"""thinc layers shared by the scorers of several components."""
from .bilstm import BiLSTM
from .encoder import initialize_encoder

__all__ = ["BiLSTM", "initialize_encoder"]
