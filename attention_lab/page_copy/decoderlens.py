"""The DecoderLens's graph, one of a page copy's explanations' graphs (analyses.py): what the decoder reads from each
encoder layer (transformer.decoderlens), so that a page writes the DecoderLens of the Why tab with ONNX Runtime Web
and no server. The graph gives, for each reading (the embeddings, then each encoder layer's output), the keys and
values the decoder's cross-attention reads from it, through what follows the last layer (the encoder's closing
norm), traced from the library's own readings (reading_memories); the page decodes greedily from
every reading at once, a step of the decoder over all of them in one run of a second graph (decoderlens_step), with
the model's rules applied per step (why/in_page.mjs decoderLens), as the library's greedy_decode does with the
reading in place of the last layer's output.

    decoderlens:  source (1, S) ids, keep_encoder (Le, H) the encoder's head mask ->
                  cross_k (Le + 1, Ld, H, S, K), cross_v (Le + 1, Ld, H, S, K): for reading l (0: the embeddings),
                      each decoder layer's cross-attention keys and values (the page's encoder graph's cross_k and
                      cross_v, for the last reading)
    decoderlens_step:  tokens (R, 1) each row's last token, past_k and past_v (R, Ld, H, P, K) its cache, cross_k and
                  cross_v (R, Ld, H, S, K) its reading's, keep_self and keep_cross (Ld, H) the decoder's head masks ->
                  logits (R, V) the next token's (what is never written at -inf, as the page's decoder graph gives
                      them), next_k and next_v (R, Ld, H, P + 1, K): the decoder graph's step, a row per reading
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.contract import NextTokenRules, Seq2SeqModel
from transformer.decoderlens import reading_memories
from transformer.hooks import using

from .analyses import Analysis, kept
from .step import decoder_step

INPUTS = ("source", "keep_encoder")
OUTPUTS = ("cross_k", "cross_v")
AXES = {"source": {1: "S"}, "cross_k": {3: "S"}, "cross_v": {3: "S"}}
STEP_INPUTS = ("tokens", "past_k", "past_v", "cross_k", "cross_v", "keep_self", "keep_cross")
STEP_OUTPUTS = ("logits", "next_k", "next_v")
STEP_AXES = {
    "tokens": {0: "R"},
    "past_k": {0: "R", 3: "P"},
    "past_v": {0: "R", 3: "P"},
    "cross_k": {0: "R", 3: "S"},
    "cross_v": {0: "R", 3: "S"},
    "logits": {0: "R"},
    "next_k": {0: "R", 3: "P1"},
    "next_v": {0: "R", 3: "P1"},
}


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


class DecoderLensStep(nn.Module):
    """One greedy step of the decoder from every reading at once (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model
        # what is never written, as the library's rules hold it back (the rules of a step are the page's to apply),
        # as a mask: their in-place write on a batch of logits does not trace
        never = NextTokenRules(banned=model.rules.banned).apply(torch.zeros(model.config.tgt_vocab_size), 0)
        self.register_buffer("never", torch.isneginf(never), persistent=False)

    def forward(self, tokens, past_k, past_v, cross_k, cross_v, keep_self, keep_cross):
        model = self.model
        layers = [(past_k[:, i], past_v[:, i], cross_k[:, i], cross_v[:, i]) for i in range(past_k.size(1))]
        dec = decoder_step(model, tokens, layers, keep_self, keep_cross)
        logits = model.project(dec.hidden[:, -1]).masked_fill(self.never, -torch.inf)
        own = dec.cache.self_keys_values()
        return logits, torch.stack([k for k, _ in own], 1), torch.stack([v for _, v in own], 1)


def step_example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the step with: two readings of a short source, a cache of two steps, every head kept."""
    cfg = model.config
    with torch.no_grad():
        cross_k, cross_v = DecoderLensGraph(model)(*example_inputs(model))
    cross_k, cross_v = cross_k[:2], cross_v[:2]
    past = torch.zeros(2, cfg.n_decoder_layers, cfg.n_heads, 2, cross_k.size(-1))
    keep = torch.ones(cfg.n_decoder_layers, cfg.n_heads)
    return torch.tensor([[cfg.bos_id], [cfg.bos_id]]), past, past.clone(), cross_k, cross_v, keep, keep.clone()


DECODERLENS_STEP = Analysis(
    "decoderlens_step", DecoderLensStep, step_example_inputs, STEP_INPUTS, STEP_OUTPUTS, STEP_AXES
)
