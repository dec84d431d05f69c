"""thinc layers shared by the scorers of several components."""
from .bilstm import BiLSTM

__all__ = ["BiLSTM"]
