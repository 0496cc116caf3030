"""The flow's graph, one of a page copy's explanations' graphs (analyses.py): the Flow tab's edges, every sublayer's,
traced from the library's own reading (transformer.flow), over one teacher-forced pass of a source and the tokens a
decoding wrote, for the query rows from a first position on, so that a page that has explained a decoding explains a
step more by computing only the new step's rows (flow/in_page.mjs keeps the rows it has).

    flow:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written), keep_encoder,
           keep_self and keep_cross (layers, H) the head masks, first_source and first_step () the first encoder and
           decoder positions whose rows are wanted (each window one row at least:
           ONNX Runtime Web 1.30 fails on a window of none, which Python's 1.32 gives) ->
           encoder_residual (Le, S'), encoder_heads (Le, S', H, S), encoder_ffn (Le, S'): each encoder layer's flow
               edges into the positions first_source.. (S' of them; transformer.flow.Split: the residual's weight,
               each head's from each key, the ffn node's residual share);
           self_residual (Ld, T'), self_heads (Ld, T', H, T), cross_residual (Ld, T'), cross_heads (Ld, T', H, S),
               decoder_ffn (Ld, T'): each decoder layer's into the positions first_step.. (T' of them)

A row reads only its own position's query and the keys, which a longer decoding leaves as they were (the decoder is
causal; transformer.contributions.Sublayer.window), so the rows of a step are the same in every decoding that shares
its prefix: the page runs the graph on a Step for that step's rows alone, and on a new source for them all. The pass
itself is the whole prefix's (a few milliseconds); the readings of a row (ALTI's norms of each key's term, split over
the heads) are what grows with the rows. Head masks multiply the heads' weights (analyses.masked), as in the
readings' graph (readings.py), and the shares are computed in float32 there too.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.config import n_layers
from transformer.contract import Seq2SeqModel
from transformer.contributions import Mixing, computed_in
from transformer.flow import flow_of, flow_points
from transformer.forced import run_with_cache

from .analyses import Analysis, masks

INPUTS = ("source", "tokens", "keep_encoder", "keep_self", "keep_cross", "first_source", "first_step")
OUTPUTS = (
    "encoder_residual",
    "encoder_heads",
    "encoder_ffn",
    "self_residual",
    "self_heads",
    "cross_residual",
    "cross_heads",
    "decoder_ffn",
)
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "encoder_residual": {1: "S_rows"},
    "encoder_heads": {1: "S_rows", 3: "S"},
    "encoder_ffn": {1: "S_rows"},
    "self_residual": {1: "T_rows"},
    "self_heads": {1: "T_rows", 3: "T"},
    "cross_residual": {1: "T_rows"},
    "cross_heads": {1: "T_rows", 3: "S"},
    "decoder_ffn": {1: "T_rows"},
}


class FlowGraph(nn.Module):
    """The teacher-forced pass and the flow's rows from the first positions asked (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel, dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        self.model = model
        self.dtype = dtype  # what the shares are computed in (readings.py says why float32)

    def forward(self, source, tokens, keep_encoder, keep_self, keep_cross, first_source, first_step):
        model, mixing = self.model, Mixing()
        hooks = [*masks(keep_encoder, keep_self, keep_cross), *mixing.hooks(model)]  # the masks before the mixing's
        seen = run_with_cache(model, source, tokens, flow_points(model), hooks=hooks).cache
        first = lambda name: first_source if name.startswith("encoder") else first_step
        mixing.sublayers = {key: s.window(first(key[0])) for key, s in mixing.sublayers.items()}
        seen = {name: value[:, first(name) :] for name, value in seen.items()}
        with computed_in(self.dtype):
            found = flow_of(model, mixing, seen, source[0], tokens)
        encoder = [(s["self"].residual, s["self"].heads, s["ffn"].residual) for s in found.encoder]
        decoder = [
            (s["self"].residual, s["self"].heads, s["cross"].residual, s["cross"].heads, s["ffn"].residual)
            for s in found.decoder
        ]
        return tuple(torch.stack(parts) for parts in (*zip(*encoder), *zip(*decoder)))


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source and three tokens, every head kept, the rows from the second
    position on (a first position of 0 would trace as no window at all)."""
    cfg, H = model.config, model.config.n_heads
    source = torch.tensor([[5, 6, 7, cfg.eos_id]])
    keep = [torch.ones(n_layers(cfg, kind), H) for kind in ("encoder", "decoder_self", "cross")]
    return (source, torch.tensor([8, 9, cfg.eos_id]), *keep, torch.tensor(1), torch.tensor(1))


FLOW = Analysis("flow", FlowGraph, example_inputs, INPUTS, OUTPUTS, AXES)
