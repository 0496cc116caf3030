"""The patching graph, one of a page copy's explanations' graphs (analyses.py): the Patch tab's whole sweep, every
component restored from the clean run on its own, traced from the library's own transformer.patching (Pair, its
sweep with each site in one batched pass), so that a page computes the tab's message with ONNX Runtime Web and no
server. The page feeds it and reads it; it computes nothing the library does not (the page's own work is cutting
each step out, rounding and the model's rule for the last step: patch/in_page.mjs).

    patching:  source (1, S) the clean source's ids, corrupted (1, S) the corrupted one's (the clean ids where only
               noise corrupts it), noise (S,) 1 at the positions whose embeddings get noise and 0 elsewhere,
               tokens (T,) the clean output (the end token included if written) ->
               clean_logp, corrupted_logp (T,): the clean token's log p in the clean and in the corrupted run;
               encoder_states (Le, S, T), decoder_states (Ld, T, T) ([l, p, t], NaN where p > t),
               encoder_heads (Le, H, T), self_heads (Ld, H, T), cross_heads (Ld, H, T): r of each component at each
                   step (transformer.patching.Patching), NaN where there is nothing to restore;
               cross_k, cross_v (Ld, H, S, K): the corrupted encoder's output as the decoder graph reads it, so that
                   the page decodes the corrupted source (its noise included) greedily

The noise is the library's (noise_rows: seeded, a row per noisy position in order), held in the graph as a constant
of max_len rows. The log ps follow the model's next-token rules but the one that needs the decoding's limit (a token
forced at the last step it allows, NextTokenRules.forced_last): the graph reads no limit, so that rule is the
page's. The model is read as it is: the decoding's interventions are not patched (the server's tab says so too).
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.config import KINDS
from transformer.contract import Seq2SeqModel
from transformer.patching import Pair, noise_rows

from .analyses import Analysis

INPUTS = ("source", "corrupted", "noise", "tokens")
HEADS = {"encoder": "encoder_heads", "decoder_self": "self_heads", "cross": "cross_heads"}  # kind -> output
OUTPUTS = (
    "clean_logp",
    "corrupted_logp",
    "encoder_states",
    "decoder_states",
    *(HEADS[kind] for kind in KINDS),
    "cross_k",
    "cross_v",
)
AXES = {
    "source": {1: "S"},
    "corrupted": {1: "S"},
    "noise": {0: "S"},
    "tokens": {0: "T"},
    "clean_logp": {0: "T"},
    "corrupted_logp": {0: "T"},
    "encoder_states": {1: "S", 2: "T"},
    "decoder_states": {1: "T", 2: "T"},
    **{HEADS[kind]: {2: "T"} for kind in KINDS},
    "cross_k": {2: "S"},
    "cross_v": {2: "S"},
}


class PatchingGraph(nn.Module):
    """The pair of runs and the whole sweep (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("rows", noise_rows(model), persistent=False)  # the library's seeded noise (seed 0)

    def forward(self, source, corrupted, noise, tokens):
        model = self.model
        pair = Pair(model, source, tokens, corrupted, noise > 0, rows=self.rows)
        swept = pair.sweep(rows_per_pass=None)
        kv = model.cross_keys_values(pair.encoded.memory)
        cross_k, cross_v = torch.stack([k[0] for k, _ in kv]), torch.stack([v[0] for _, v in kv])
        heads = [swept.heads[kind] for kind in KINDS]
        states = (swept.encoder_states, swept.decoder_states)
        return (swept.clean_logp, swept.corrupted_logp, *states, *heads, cross_k, cross_v)


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source, another of its length, noise on one position, three tokens."""
    eos = model.config.eos_id
    return (
        torch.tensor([[5, 6, 7, eos]]),
        torch.tensor([[5, 8, 7, eos]]),
        torch.tensor([0, 0, 1, 0]),
        torch.tensor([8, 9, eos]),
    )


PATCHING = Analysis("patching", PatchingGraph, example_inputs, INPUTS, OUTPUTS, AXES)
