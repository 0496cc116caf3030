"""A decoding step from a cache given as tensors: what the page's decoder graph (graphs.py DecoderGraph, a batch of
one) and the DecoderLens's batched step (decoderlens.py DecoderLensStep, a row per encoder reading) trace, so that
the two run the decoder the one same way: page_copy's one call of the decoder (tests/test_structure.py allows it
here, and the encoder graph's call of the encoder in graphs.py)."""

from __future__ import annotations

import torch

from transformer import hooks as hook_points
from transformer.contract import DecoderOutput, Seq2SeqModel

from .analyses import kept


def decoder_step(
    model: Seq2SeqModel,
    tokens: torch.Tensor,
    layers: list[tuple[torch.Tensor, ...]],
    keep_self: torch.Tensor,
    keep_cross: torch.Tensor,
    output_attentions: bool = False,
) -> DecoderOutput:
    """The decoder over `tokens` (B, 1) after the cache `layers` (per decoder layer: self_k, self_v (B, H, P, K),
    cross_k, cross_v (B, H, S, K)), each head's output of the decoder's self- and cross-attention multiplied by
    `keep_self` and `keep_cross` (layers, H); its output carries the cache with this step's keys and values."""
    cache = model.cache_from(layers)
    B, S = tokens.size(0), layers[0][2].size(2)
    memory = layers[0][2].new_zeros(B, S, model.config.d_model)  # read from the cache: only its length counts
    src_mask = torch.ones(B, 1, 1, S, dtype=torch.bool)
    with hook_points.using([*kept("decoder_self", keep_self), *kept("cross", keep_cross)]):
        return model.decode(tokens, memory, src_mask, cache, use_cache=True, output_attentions=output_attentions)
