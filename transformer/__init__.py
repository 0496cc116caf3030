"""Attention Lab: a from-scratch encoder-decoder Transformer that shows every attention map it computes."""

from .checkpoint import CheckpointError
from .config import TransformerConfig
from .decoding import DecodingSession, beam_search, greedy_decode
from .hub import Seq2SeqPipeline, load_pretrained
from .interventions import CrossEdit, Head, Interventions
from .model import Attentions, Seq2SeqOutput, Transformer

__all__ = [
    "Attentions",
    "CheckpointError",
    "CrossEdit",
    "DecodingSession",
    "Head",
    "Interventions",
    "Seq2SeqOutput",
    "Seq2SeqPipeline",
    "Transformer",
    "TransformerConfig",
    "beam_search",
    "greedy_decode",
    "load_pretrained",
]
