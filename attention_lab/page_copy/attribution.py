"""The attribution graph, one of a page copy's explanations' graphs (analyses.py): what the Why tab's two methods
without gradients (occlusion, value zeroing: attention_lab.attribution) and the decoder's lens (transformer.lens)
read, for every step of a decoding at once, traced from the library's own passes (transformer.forced.run_with_cache
with each method's hooks), so that a page makes the Why tab's message with ONNX Runtime Web and no server. The page's
own work is choosing, signs, sums and rounding (why/in_page.mjs).

    attribution:  source (1, S) ids, tokens (T,) the tokens written (the end token included if written),
                  keep_encoder, keep_self and keep_cross (layers, H) the head masks, rules (T, V) the step rules the
                  page applies (0, or -inf where step t may not write a token: LiveSession.ruled),
                  occluded_source (N,), occluded_prefix (M,), zeroed_source (N',), zeroed_prefix (M',): the
                      positions each method changes, all of them (0..S-1, 0..T-1) for the method the page shows
                      and none for the other, whose passes then cost a row each ->
                  log_prob (T,): log p of the token written at each step, nothing changed;
                  occlusion_source (N, T), occlusion_prefix (M, T): how far step t's log p falls when source token
                      occluded_source[i]'s embedding, or decoder input occluded_prefix[i]'s, is set to zero (its
                      position kept; row i, column t; a decoder input is read by the steps from its own on);
                  zeroing_source (N', T), zeroing_prefix (M', T): the same when a token's value vector is zeroed in
                      every cross head, or a decoder input's in every decoder self head (transformer.value_zeroing);
                  lens_ids (Ld, T, k) and lens_probs (Ld, T, k): the k tokens each decoder layer's state would
                      write at each step, most likely first, and their probabilities; lens_written (Ld, T): the
                      probability it gives the token written

Each is a batched pass as the library makes it, one row per token changed and a first row changing nothing, the
reference its falls are read against (Captum's Occlusion with a window of one token's embedding and a baseline of
zero, and value_zeroing's pass, do the same, a pass per step or per method). A decoder input is changed in the pass
over the whole prefix: the decoder is causal, so step t's reading is that of the prefix up to it. The encoder runs in
the source's occlusion pass alone: the other passes leave it as it is and read its unchanged row. The lens reads that
row's decoder layers, through the model's final norm and output layer (transformer.lens).

Head masks multiply each head's output (hook_z), as the decoding graphs' do (graphs.kept) and
transformer.Interventions(ablate=...) does. The rules the graph cannot know are the page's: those of a step depend on
the decoding's length limit (a token forced at the limit), so the page gives them as `rules`, added to the logits
after the model's own (NextTokenRules.apply over the prefix); a forced step's row is -inf but at the token forced,
which gives the library's log p of 0 and probability of 1 there.
"""

from __future__ import annotations

import torch
from torch import nn

from transformer.config import n_layers
from transformer.contract import EncoderOutput, Seq2SeqModel
from transformer.forced import run_with_cache
from transformer.value_zeroing import every_head, zeroing_hooks

from .analyses import Analysis, kept

LENS_TOP_K = 5  # the tokens the lens shows per layer (the Why tab's, which reads it from here)

METHODS = ("occlusion", "value_zeroing")  # the attribution methods (attention_lab.attribution.methods) it reads
INPUTS = (
    "source",
    "tokens",
    "keep_encoder",
    "keep_self",
    "keep_cross",
    "rules",
    "occluded_source",
    "occluded_prefix",
    "zeroed_source",
    "zeroed_prefix",
)
OUTPUTS = (
    "log_prob",
    "occlusion_source",
    "occlusion_prefix",
    "zeroing_source",
    "zeroing_prefix",
    "lens_ids",
    "lens_probs",
    "lens_written",
)
AXES = {
    "source": {1: "S"},
    "tokens": {0: "T"},
    "rules": {0: "T"},
    "occluded_source": {0: "N"},
    "occluded_prefix": {0: "M"},
    "zeroed_source": {0: "Nz"},
    "zeroed_prefix": {0: "Mz"},
    "log_prob": {0: "T"},
    "occlusion_source": {0: "N", 1: "T"},
    "occlusion_prefix": {0: "M", 1: "T"},
    "zeroing_source": {0: "Nz", 1: "T"},
    "zeroing_prefix": {0: "Mz", 1: "T"},
    "lens_ids": {1: "T"},
    "lens_probs": {1: "T"},
    "lens_written": {1: "T"},
}


def occluding(name: str, positions: torch.Tensor) -> tuple:
    """A hook at `name` (encoder.hook_embed or decoder.hook_embed, (1 + n, length, D)) that sets the embedding at
    positions[i] to zero in row 1 + i, row 0 (the reference) kept: occlusion's window of one token, baseline zero."""

    def occlude(x: torch.Tensor, at) -> torch.Tensor:
        hit = positions[:, None] == torch.arange(x.size(1))[None, :]  # (n, length), by comparison as zeroing does
        keep = torch.cat([hit.new_ones((1, hit.size(1))), ~hit])  # row 0, the reference, keeps each (n may be 0)
        return x * keep.to(x.dtype)[..., None]

    return (name, occlude)


class AttributionGraph(nn.Module):
    """The passes and the lens of a decoding (see the module's docstring)."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model
        self.lens_names = [f"decoder.layers.{layer}.hook_resid_post" for layer in range(model.config.n_decoder_layers)]

    def forward(
        self,
        source,
        tokens,
        keep_encoder,
        keep_self,
        keep_cross,
        rules,
        occluded_source,
        occluded_prefix,
        zeroed_source,
        zeroed_prefix,
    ):
        model = self.model
        heads = [*kept("encoder", keep_encoder), *kept("decoder_self", keep_self), *kept("cross", keep_cross)]
        every = every_head(model.config, ("cross", "decoder_self"))  # value zeroing's heads (value_zeroing's default)
        # the source's occlusion, whose unchanged row gives the encoder's output for the other passes and the lens
        rows = source.expand(1 + occluded_source.size(0), -1)
        occlude = occluding("encoder.hook_embed", occluded_source)
        run = run_with_cache(model, rows, tokens, self.lens_names, hooks=[*heads, occlude])
        memory, mask = run.encoded.memory[:1], run.encoded.src_mask[:1]

        def changed(positions: torch.Tensor, hooks: list) -> torch.Tensor:
            R = 1 + positions.size(0)
            given = EncoderOutput(memory.expand(R, -1, -1), mask.expand(R, -1, -1, -1), ())
            return run_with_cache(model, given, tokens, hooks=[*heads, *hooks]).hidden

        passes = [  # in the order of OUTPUTS
            run.hidden,
            changed(occluded_prefix, [occluding("decoder.hook_embed", occluded_prefix)]),
            changed(zeroed_source, zeroing_hooks(every, ("encoder", "cross"), zeroed_source)),
            changed(zeroed_prefix, zeroing_hooks(every, ("decoder_self",), zeroed_prefix)),
        ]
        log_probs = [self.written(hidden, tokens, rules) for hidden in passes]
        falls = [logp[:1] - logp[1:] for logp in log_probs]
        lens = [self.lens(run.cache[name][0], tokens, rules) for name in self.lens_names]
        return (log_probs[0][0], *falls, *(torch.stack(parts) for parts in zip(*lens)))

    def ruled(self, hidden: torch.Tensor, rules: torch.Tensor) -> torch.Tensor:
        """Next-token logits (..., T, V) from decoder states, under the model's rules and the page's."""
        return self.model.rules.apply(self.model.project(hidden), None) + rules

    def written(self, hidden: torch.Tensor, tokens: torch.Tensor, rules: torch.Tensor) -> torch.Tensor:
        """(R, T): each row's log p of the token written at each step (value_zeroing's reading of a pass)."""
        logp = self.ruled(hidden, rules).log_softmax(dim=-1)
        return logp.gather(-1, tokens.expand(hidden.size(0), -1)[..., None])[..., 0]

    def lens(self, state: torch.Tensor, tokens: torch.Tensor, rules: torch.Tensor) -> tuple:
        """A decoder layer's state (T, D) read as the last one is (transformer.lens.decoder_lens): its top tokens,
        their probabilities and the written token's."""
        probs = self.ruled(self.model.final_norm(state), rules).softmax(dim=-1)
        top_probs, top_ids = probs.topk(min(LENS_TOP_K, probs.size(-1)))
        return top_ids, top_probs, probs.gather(-1, tokens[:, None])[:, 0]


def example_inputs(model: Seq2SeqModel) -> tuple:
    """Inputs to trace the graph with: a short source and three tokens, every head kept, no rule of a step, each
    method changing positions of its own (none tied to another input's length)."""
    cfg, H = model.config, model.config.n_heads
    source = torch.tensor([[5, 6, 7, cfg.eos_id]])
    keep = [torch.ones(n_layers(cfg, kind), H) for kind in ("encoder", "decoder_self", "cross")]
    changed = [torch.tensor(p) for p in ([0, 2], [1], [3, 1, 0], [2, 0])]
    return (source, torch.tensor([8, 9, cfg.eos_id]), *keep, torch.zeros(3, cfg.tgt_vocab_size), *changed)


ATTRIBUTION = Analysis("attribution", AttributionGraph, example_inputs, INPUTS, OUTPUTS, AXES)
