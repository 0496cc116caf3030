"""What decoding and the readings share about a step: the length limit, the next-token logits under the model's
rules, the interventions checked against the model (transformer.decoding and transformer.beams use them), and how far
apart two next-token distributions are (kl_divergence: what removing a head changes).

Dimension key: V vocabulary.
"""

from __future__ import annotations

import torch

from .contract import Seq2SeqModel
from .interventions import Interventions


def _max_new_tokens(model: Seq2SeqModel, requested: int | None) -> int:
    limit = model.config.max_new_tokens
    if requested is None:
        return limit
    if requested < 1:
        raise ValueError(f"max_new_tokens must be at least 1 (got {requested})")
    return min(requested, limit)


def next_token_logits(
    model: Seq2SeqModel, hidden: torch.Tensor, step: int | None = None, limit: int | None = None
) -> torch.Tensor:
    """Logits (..., V) for the next token from the decoder's hidden state at decoding step `step` (0-based; None:
    positions along dim -2 are steps 0, 1, ...); what the model may not write there is -inf (see model.rules)."""
    return model.rules.apply(model.project(hidden), step, limit)


def kl_divergence(log_p: torch.Tensor, log_q: torch.Tensor) -> torch.Tensor:
    """KL(p || q) along the last axis, in nats, from log-probabilities; 0 log 0 = 0 (pad and bos are -inf in both)."""
    p = log_p.exp()
    terms = torch.where(p > 0, p * (log_p - log_q), torch.zeros_like(p))
    return terms.sum(dim=-1)


def _checked(model: Seq2SeqModel, interventions: Interventions | None) -> Interventions | None:
    if interventions:
        interventions.check(model.config)
    return interventions or None
