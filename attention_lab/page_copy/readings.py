"""The readings' graph, one of a page copy's explanations' graphs (analyses.py): one teacher-forced pass over a
source and the tokens a decoding wrote, traced from the library's own readings (transformer.contributions), so that a
page computes what the app's explanation tabs draw with ONNX Runtime Web and no server. The page feeds it and reads
it; it computes nothing the library does not (the page's own work is sums and thresholds: trust/in_page.mjs). The
Flow tab's edges are a graph of their own (flow.py), computed a step's rows at a time.

    readings:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written), keep_encoder,
               keep_self and keep_cross (layers, H) the head masks ->
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
from transformer.forced import run_with_cache
from transformer.hooks import attention_name
from transformer.next_token import next_token_logits

from .analyses import Analysis, masks

INPUTS = ("source", "tokens", "keep_encoder", "keep_self", "keep_cross")
OUTPUTS = ("alti_source", "alti_prefix", "log_probs", "cross_mean")
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "alti_source": {0: "T", 1: "S"},
    "alti_prefix": {0: "T", 1: "T"},
    "log_probs": {0: "T"},
    "cross_mean": {1: "T", 2: "S"},
}


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
        hooks = [*read, *masks(keep_encoder, keep_self, keep_cross), *mixing.hooks(model)]  # masks after the reading
        run = run_with_cache(model, source, tokens, hooks=hooks)
        alti = alti_of(model, mixing)
        log_probs = next_token_logits(model, run.hidden[0]).log_softmax(dim=-1).gather(-1, tokens[:, None])[:, 0]
        cross_mean = torch.stack([cross[name] for name in weights])
        return (alti.source.float(), alti.prefix.float(), log_probs, cross_mean)


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source and three tokens, every head kept."""
    cfg, H = model.config, model.config.n_heads
    source = torch.tensor([[5, 6, 7, cfg.eos_id]])
    keep = [torch.ones(n_layers(cfg, kind), H) for kind in ("encoder", "decoder_self", "cross")]
    return (source, torch.tensor([8, 9, cfg.eos_id]), *keep)


READINGS = Analysis("readings", ReadingsGraph, example_inputs, INPUTS, OUTPUTS, AXES)
