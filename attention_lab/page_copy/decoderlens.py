"""The DecoderLens's graph, one of a page copy's explanations' graphs (analyses.py): what the decoder reads from each
encoder layer (transformer.decoderlens), so that a page writes the DecoderLens of the Why tab with ONNX Runtime Web
and no server. The graph gives, for each reading (the embeddings, then each encoder layer's output), the keys and
values the decoder's cross-attention reads from it, through what follows the last layer (the encoder's closing
norm), traced from the library's own readings (reading_memories); the page decodes greedily from
each with its own decoder graph and rules (why/in_page.mjs decoderLens, page_copy/model.mjs LiveSession), as the
library's greedy_decode does with the reading in place of the last layer's output.

    decoderlens:  source (1, S) ids, keep_encoder (Le, H) the encoder's head mask ->
                  cross_k (Le + 1, Ld, H, S, K), cross_v (Le + 1, Ld, H, S, K): for reading l (0: the embeddings),
                      each decoder layer's cross-attention keys and values (the page's encoder graph's cross_k and
                      cross_v, for the last reading)
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.contract import Seq2SeqModel
from transformer.decoderlens import reading_memories
from transformer.hooks import using

from .analyses import Analysis, kept

INPUTS = ("source", "keep_encoder")
OUTPUTS = ("cross_k", "cross_v")
AXES = {"source": {1: "S"}, "cross_k": {3: "S"}, "cross_v": {3: "S"}}


class DecoderLensGraph(nn.Module):
    """The cross-attention's keys and values of each encoder reading (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, source: torch.Tensor, keep_encoder: torch.Tensor):
        model = self.model
        with using(kept("encoder", keep_encoder)):
            kv = model.cross_keys_values(reading_memories(model, source))
        return torch.stack([k for k, _ in kv], 1), torch.stack([v for _, v in kv], 1)


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source, every head kept."""
    cfg = model.config
    return torch.tensor([[5, 6, 7, cfg.eos_id]]), torch.ones(cfg.n_encoder_layers, cfg.n_heads)


DECODERLENS = Analysis("decoderlens", DecoderLensGraph, example_inputs, INPUTS, OUTPUTS, AXES)
