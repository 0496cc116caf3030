"""The readings' graph, one of a page copy's explanations' graphs (analyses.py): one teacher-forced pass over a
source and the tokens a decoding wrote, traced from the library's own readings (transformer.flow,
transformer.contributions), so that a page computes what the app's explanation tabs draw with ONNX Runtime Web and no
server. The page feeds it and reads it; it computes nothing the library does not (the page's own work is cutting,
pruning and summing: flow/in_page.mjs).

    readings:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written), keep_encoder,
               keep_self and keep_cross (layers, H) the head masks ->
               encoder_residual (Le, S), encoder_heads (Le, S, H, S), encoder_ffn (Le, S): each encoder layer's
                   flow edges (transformer.flow.Split: the residual's weight, each head's from each key, the ffn
                   node's residual share);
               self_residual (Ld, T), self_heads (Ld, T, H, T), cross_residual (Ld, T), cross_heads (Ld, T, H, S),
                   decoder_ffn (Ld, T): each decoder layer's;
               alti_source (T, S), alti_prefix (T, T): ALTI+'s contributions of each source token and each decoder
                   input to each step's prediction (transformer.contributions.Contributions);
               log_probs (T,): each written token's log p under the model's rules for a whole prefix
                   (NextTokenRules.apply with no limit: a token forced at a decoding's limit is the page's to apply);
               cross_mean (Ld, T, S): each decoder layer's cross-attention at each step, mean over heads (the
                   weights the model computed, an ablated head's included, as the server's scoring reads them)

A head mask multiplies the head's weights (hook_pattern), which ablates it as transformer.Interventions(ablate=...)
does at hook_z (its output is its weights times its values) and leaves it out of the mixing read, as the library's
readings leave an ablated head. The graph computes the readings in float32 (transformer.contributions.computed_in),
where the library computes them in float64: ONNX Runtime Web's float64 kernels took 886 ms where float32's took 41
(de-en, a 21-token source and 16 tokens, one thread). On our trained models the two agree within 4e-6; a model
whose attention sums are far larger than its parts (the tests' tiny random Marian, made with large weights) loses
ALTI's differences of large sums in float32, up to 0.04 of a head's edge. Its weights are the page copy's own
(graphs.shared_weights stores each once for all the copy's graphs).
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.config import n_layers
from transformer.contract import Seq2SeqModel
from transformer.contributions import Mixing, alti_of, computed_in
from transformer.flow import flow_of, flow_points
from transformer.forced import run_with_cache
from transformer.hooks import attention_name
from transformer.next_token import next_token_logits

from .analyses import Analysis

INPUTS = ("source", "tokens", "keep_encoder", "keep_self", "keep_cross")
FLOW_OUTPUTS = (
    "encoder_residual",
    "encoder_heads",
    "encoder_ffn",
    "self_residual",
    "self_heads",
    "cross_residual",
    "cross_heads",
    "decoder_ffn",
)
OUTPUTS = (*FLOW_OUTPUTS, "alti_source", "alti_prefix", "log_probs", "cross_mean")
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "encoder_residual": {1: "S"},
    "encoder_heads": {1: "S", 3: "S"},
    "encoder_ffn": {1: "S"},
    "self_residual": {1: "T"},
    "self_heads": {1: "T", 3: "T"},
    "cross_residual": {1: "T"},
    "cross_heads": {1: "T", 3: "S"},
    "decoder_ffn": {1: "T"},
    "alti_source": {0: "T", 1: "S"},
    "alti_prefix": {0: "T", 1: "T"},
    "log_probs": {0: "T"},
    "cross_mean": {1: "T", 2: "S"},
}


def masked(kind: str, keep: torch.Tensor) -> list:
    """Hooks that multiply each head's weights of attention `kind` in every layer by `keep` (layers, heads)."""
    return [
        (attention_name(kind, layer, "hook_pattern"), lambda w, at, layer=layer: w * keep[layer][None, :, None, None])
        for layer in range(keep.size(0))
    ]


class ReadingsGraph(nn.Module):
    """The teacher-forced pass and the readings made from it (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.model = model
        self.dtype = dtype  # what the readings are computed in (see the module's docstring)

    def forward(self, source, tokens, keep_encoder, keep_self, keep_cross):
        with computed_in(self.dtype):
            return self.read(source, tokens, keep_encoder, keep_self, keep_cross)

    def read(self, source, tokens, keep_encoder, keep_self, keep_cross):
        model = self.model
        mixing, cross = Mixing(), {}
        Ld = n_layers(model.config, "cross")
        weights = [attention_name("cross", layer, "hook_pattern") for layer in range(Ld)]
        read = [(name, lambda w, at: cross.__setitem__(at.name, w[0].mean(dim=0))) for name in weights]
        heads = [*masked("encoder", keep_encoder), *masked("decoder_self", keep_self), *masked("cross", keep_cross)]
        hooks = [*read, *heads, *mixing.hooks(model)]  # the masks after the weights' reading, before the mixing's
        run = run_with_cache(model, source, tokens, flow_points(model), hooks=hooks)
        seen = run.cache
        found = flow_of(model, mixing, seen, source[0], tokens)
        encoder = [(s["self"].residual, s["self"].heads, s["ffn"].residual) for s in found.encoder]
        decoder = [
            (s["self"].residual, s["self"].heads, s["cross"].residual, s["cross"].heads, s["ffn"].residual)
            for s in found.decoder
        ]
        stacked = [torch.stack(parts) for parts in (*zip(*encoder), *zip(*decoder))]
        alti = alti_of(model, mixing)
        log_probs = next_token_logits(model, run.hidden[0]).log_softmax(dim=-1).gather(-1, tokens[:, None])[:, 0]
        cross_mean = torch.stack([cross[name] for name in weights])
        return (*stacked, alti.source.float(), alti.prefix.float(), log_probs, cross_mean)


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source and three tokens, every head kept."""
    cfg, H = model.config, model.config.n_heads
    source = torch.tensor([[5, 6, 7, cfg.eos_id]])
    keep = [torch.ones(n_layers(cfg, kind), H) for kind in ("encoder", "decoder_self", "cross")]
    return (source, torch.tensor([8, 9, cfg.eos_id]), *keep)


READINGS = Analysis("readings", ReadingsGraph, example_inputs, INPUTS, OUTPUTS, AXES)
