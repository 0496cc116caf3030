"""The decoder's lens: what the model would write if its decoder stopped after each layer.

Each decoder layer's hidden state is read as the model reads its last one: through its own final norm (the identity
for a model without one) and its own output layer (with its bias and scaling), then the same next-token rules as
decoding, so the last layer's reading is the model's own next-token distribution (nostalgebraist 2020, "interpreting
GPT: the logit lens", here for an encoder-decoder's decoder). It runs the decoder once over the whole prefix, recording each layer's output at its hook point
(decoder.layers.{l}.hook_resid_post, transformer.hooks).

Not the DecoderLens (transformer.decoderlens, Langedijk et al. 2024), which changes what the decoder reads, an earlier
*encoder* layer's output, and lets the whole decoder write a text from it; this lens reads each *decoder* layer.

Dimension key: L decoder layers, T steps, k tokens shown per layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .contract import Seq2SeqModel
from .decoding import next_token_logits
from .forced import run_with_cache
from .interventions import Interventions


@dataclass
class LensReading:
    top_ids: torch.Tensor  # (L, T, k): at step t, the k tokens layer l's state would write, most likely first
    top_probs: torch.Tensor  # (L, T, k): their probabilities
    written_probs: torch.Tensor  # (L, T): the probability layer l's state gives the token written at step t
    settled: list[int | None]  # per step: the first layer (0-based) from which on the written token is the top one
    # at every layer; None where even the last layer's top is another token (the token was forced)


@torch.no_grad()
def decoder_lens(
    model: Seq2SeqModel,
    src_ids: list[int],
    tokens: list[int],
    k: int = 5,
    max_new_tokens: int | None = None,
    interventions: Interventions | None = None,
) -> LensReading:
    """The lens over a decoding of `src_ids` that wrote `tokens` (step t's decoder input is bos and tokens[:t]).

    `max_new_tokens` is the decoding's length limit (a token some models force at the limit needs it);
    `interventions` are those the decoding held (ablated heads stay ablated here too).
    """
    if not tokens:
        raise ValueError("nothing was written: decode a step first")
    device = next(model.parameters()).device
    cfg = model.config
    names = [f"decoder.layers.{layer}.hook_resid_post" for layer in range(cfg.n_decoder_layers)]
    states = run_with_cache(model, src_ids, tokens, names, interventions).cache
    written = torch.tensor(tokens, device=device)
    limit = max_new_tokens or cfg.max_new_tokens
    top_ids, top_probs, written_probs = [], [], []
    for state in (states[name] for name in names):  # one layer at a time: (T, V) at most, whatever the vocabulary
        probs = next_token_logits(model, model.final_norm(state[0]), None, limit).softmax(dim=-1)
        best_probs, best_ids = probs.topk(min(k, probs.size(-1)))
        top_ids.append(best_ids)
        top_probs.append(best_probs)
        written_probs.append(probs.gather(-1, written[:, None])[:, 0])
    top_ids_t = torch.stack(top_ids).cpu()
    return LensReading(
        top_ids_t, torch.stack(top_probs).cpu(), torch.stack(written_probs).cpu(), _settled(top_ids_t[..., 0], tokens)
    )


def _settled(top: torch.Tensor, tokens: list[int]) -> list[int | None]:
    """top (L, T): each layer's top token per step -> per step, the first layer from which on it is the written one."""
    settled: list[int | None] = []
    for t, token in enumerate(tokens):
        first = None
        for layer in range(top.size(0) - 1, -1, -1):
            if int(top[layer, t]) != token:
                break
            first = layer
        settled.append(first)
    return settled
