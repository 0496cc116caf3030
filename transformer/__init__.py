"""Attention Lab: a from-scratch encoder-decoder Transformer that shows every attention map it computes.

transformer.contract states what decoding and the readings need of any model and tokenizer; the Transformer here
meets it natively, and attention_lab.adapters wraps other model families to meet it.

"Decoding" here always means writing the output one token at a time: greedy_decode, beam_search and a
DecodingSession (transformer.decoding). At each step it calls model.decode, one pass of the decoder stack over the
prefix (the encode / decode pair of the paper); tokenizer.decode turns ids back into text.
"""

from .bundled import bundled
from .checkpoint import CheckpointError
from .config import TransformerConfig
from .contract import KINDS, NextTokenRules, Seq2SeqModel, Seq2SeqTokenizer
from .decoding import DecodingSession, beam_search, greedy_decode
from .forced import ForcedRun, run_with_cache
from .hub import Seq2SeqPipeline, load_pretrained
from .interventions import CrossEdit, Head, Interventions
from .model import Attentions, Seq2SeqOutput, Transformer

__all__ = [
    "KINDS",
    "Attentions",
    "CheckpointError",
    "CrossEdit",
    "DecodingSession",
    "ForcedRun",
    "Head",
    "Interventions",
    "NextTokenRules",
    "Seq2SeqModel",
    "Seq2SeqOutput",
    "Seq2SeqPipeline",
    "Seq2SeqTokenizer",
    "Transformer",
    "TransformerConfig",
    "beam_search",
    "bundled",
    "greedy_decode",
    "load_pretrained",
    "run_with_cache",
]
