"""The ablations graph, one of a page copy's explanations' graphs (analyses.py): what the Heads tab measures of a
head, the next-token distributions of a decoding, teacher-forced along its tokens, with heads removed, against those
with every head kept. Traced from the library's own pass (transformer.forced.run_with_cache, a batch row per set of
heads removed, each zeroed at hook_z as Interventions(rows=...) zeroes it) and its measure
(transformer.next_token.kl_divergence), so that a page measures every head (heads/in_page.mjs) with ONNX Runtime Web
and no server.

    ablations:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written), rules (T, V)
                the step rules the page applies (0, or -inf where step t may not write a token: LiveSession.ruled),
                keep_encoder (E, Le, H), keep_self and keep_cross (R, Ld, H): row r's head masks (1 keeps a
                head, 0 removes it), the encoder's of row min(r, E) for E ≤ R rows (E = 1: one for every row, the
                encoder run once, not R times, for rows that remove decoder heads alone) ->
                kl (R, T): KL(every head kept ‖ row r) of the next-token distribution at each step, nats;
                top_ids, top_probs (1, T, k): the first set's k most likely tokens at each step and their probabilities
                (Ablate's effects, one set removed throughout; the Heads tab's importance reads the KL alone)

The rules the graph cannot know are the page's, as for the attribution graph: those of a step depend on the
decoding's length limit (a token forced at the limit), so the page gives them as `rules`, added to the logits after
the model's own.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from transformer.config import n_layers
from transformer.contract import Seq2SeqModel
from transformer.forced import run_with_cache
from transformer.next_token import kl_divergence

from .analyses import Analysis, kept_per_row

TOP_K = 3  # the tokens an ablation's effect shows per step (heads/ablation.py ablation_effects' top_k)
INPUTS = ("source", "tokens", "rules", "keep_encoder", "keep_self", "keep_cross")
OUTPUTS = ("kl", "top_ids", "top_probs")
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "rules": {0: "T"},
    "keep_encoder": {0: "E"},
    "keep_self": {0: "R"},
    "keep_cross": {0: "R"},
    "kl": {0: "R", 1: "T"},
    "top_ids": {1: "T"},
    "top_probs": {1: "T"},
}


class AblationsGraph(nn.Module):
    """The reference pass and a pass per row of head masks (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, source, tokens, rules, keep_encoder, keep_self, keep_cross):
        model = self.model
        every = [torch.ones_like(keep[:1]) for keep in (keep_encoder, keep_self, keep_cross)]  # the reference row
        keeps = [torch.cat([one, keep]) for one, keep in zip(every, (keep_encoder, keep_self, keep_cross))]
        source = source.expand(keeps[0].size(0), -1)
        encoded = run_with_cache(model, source, None, hooks=kept_per_row("encoder", keeps[0])).encoded
        # decoder row r reads encoder row min(r, E) (the reference row is each one's row 0)
        rows = torch.arange(keeps[1].size(0)).clamp(max=keeps[0].size(0) - 1)
        memory, mask = encoded.memory.index_select(0, rows), encoded.src_mask.index_select(0, rows)
        shared = dataclasses.replace(encoded, memory=memory, src_mask=mask, attentions=(), values=())
        hooks = [*kept_per_row("decoder_self", keeps[1]), *kept_per_row("cross", keeps[2])]
        run = run_with_cache(model, shared, tokens, hooks=hooks)
        log_probs = (model.rules.apply(model.project(run.hidden), None) + rules).log_softmax(dim=-1)
        top, ids = log_probs[1:2].topk(min(TOP_K, log_probs.size(-1)), dim=-1)  # Ablate's row: the first set
        return kl_divergence(log_probs[:1], log_probs[1:]), ids, top.exp()


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source, three tokens, no rule of a step, two rows of the encoder's
    masks and three of the decoder's."""
    cfg, H = model.config, model.config.n_heads
    keep = [
        torch.ones(rows, n_layers(cfg, kind), H) for rows, kind in ((2, "encoder"), (3, "decoder_self"), (3, "cross"))
    ]
    keep[0][0, 0, 0] = 0.0  # fewer encoder rows than decoder rows: traced as two sizes (a page gives R or 1)
    keep[2][2, -1, -1] = 0.0
    source, tokens = torch.tensor([[5, 6, 7, cfg.eos_id]]), torch.tensor([8, 9, cfg.eos_id])
    return (source, tokens, torch.zeros(3, cfg.tgt_vocab_size), *keep)


ABLATIONS = Analysis("ablations", AblationsGraph, example_inputs, INPUTS, OUTPUTS, AXES)
