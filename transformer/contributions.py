"""Source and target contributions to each prediction: ALTI+ (Ferrando et al. 2022, "Towards Opening the Black Box of
Neural Machine Translation: Source and Target Contributions to the Model's Predictions"), built on ALTI (Ferrando,
Gállego & Costa-jussà 2022, "Measuring the Mixing of Contextual Information in the Transformer").

An attention sublayer's output at query i is a sum of one term per input. Term j is what key j adds through every
head, sum_h a_ij^h v_j^h W_o^h. In self-attention the residual stream is added to the query's own term; in
cross-attention it is a term of its own, the target prefix's way into the sum. A LayerNorm after the sum (post-LN)
is linear once its standard deviation is fixed at the whole sum's, so each term goes through it as
L(t) = gamma * (t - mean(t)) / sigma. Term j's contribution is how close it is to the whole y, the sum of the terms:
max(0, ||y||_1 - ||y - t_j||_1), normalised over j to add up to 1. The biases belong to no token and are left out of
y; the feed-forward layers and final norms act on each position alone and leave contributions as they are.

Contributions go through the layers by matrix products. The encoder's give each encoder output's contributions from
the source tokens. In the decoder, self-attention mixes the prefix positions' contributions, and cross-attention
mixes the residual's (the prefix's) with the encoder outputs' (the source's). Each step's row adds up to 1: its
source part is the source's share of the prediction, its prefix part the target prefix's.

The terms are read from the model's own forward pass (Interventions(mixing=...)), so any model that meets the
contract (transformer.contract) gets them: ours, and other families through the adapters beside this library.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import nn

from .attention import Sublayer
from .config import n_layers
from .contract import Seq2SeqModel
from .interventions import Interventions, Mixing


@dataclass
class Contributions:
    """Per step (row t - 1 is step t, 1-based), each source token's and each decoder input's contribution to the
    prediction; step t reads the decoder inputs 0..t-1 (the start token, then the tokens written before)."""

    source: torch.Tensor  # (T, S)
    prefix: torch.Tensor  # (T, T), zero above the diagonal

    @property
    def source_share(self) -> torch.Tensor:
        """(T,): the source's share of each step's prediction (the prefix has the rest)."""
        return self.source.sum(dim=-1)


def closeness(terms: torch.Tensor) -> torch.Tensor:
    """ALTI's contributions of terms (..., N, D) to their sum: max(0, ||y||_1 - ||y - t_j||_1) over j, normalised
    to add up to 1 -> (..., N)."""
    whole = terms.sum(dim=-2, keepdim=True)
    near = (whole.abs().sum(dim=-1) - (whole - terms).abs().sum(dim=-1)).clamp(min=0)
    return near / near.sum(dim=-1, keepdim=True).clamp(min=torch.finfo(near.dtype).tiny)


def through_norm(terms: torch.Tensor, whole: torch.Tensor, norm: nn.Module | None) -> torch.Tensor:
    """Terms (T, N, D) as a LayerNorm after their sum passes them on, its scale fixed by what it received, `whole`
    (T, D): gamma * (t - mean(t)) / sigma(whole). A pre-LN sublayer (norm None) passes them as they are."""
    if norm is None:
        return terms
    if not isinstance(norm, nn.LayerNorm):
        raise TypeError(f"contributions read a LayerNorm after the residual sum, not {type(norm).__name__}")
    sigma = (whole.var(dim=-1, unbiased=False) + norm.eps).sqrt()  # (T,)
    gamma = torch.ones_like(whole[0]) if norm.weight is None else norm.weight.detach().to(whole)
    return (terms - terms.mean(dim=-1, keepdim=True)) * gamma / sigma[:, None, None]


def sublayer_contributions(sublayer: Sublayer, cross: bool) -> torch.Tensor:
    """One sublayer's contributions (batch row 0): self-attention (T, T); cross-attention (T, 1 + S), the residual
    (the prefix) first, then each source position."""
    if sublayer.weights is None or sublayer.residual is None:
        raise ValueError("the model did not fill every attention sublayer's mixing record")
    parts = sublayer.parts()[0].double()  # (T, S, D)
    residual = sublayer.residual[0].double()  # (T, D)
    whole = residual + parts.sum(dim=1)
    if sublayer.b_o is not None:
        whole = whole + sublayer.b_o.double()
    if cross:
        terms = torch.cat([residual[:, None], parts], dim=1)
    else:
        terms = parts.clone()
        own = torch.arange(terms.size(0), device=terms.device)
        terms[own, own] += residual  # the residual stream joins the query's own term
    return closeness(through_norm(terms, whole, sublayer.norm))


def alti_plus(
    model: Seq2SeqModel, src_ids: list[int], tokens: list[int], interventions: Interventions | None = None
) -> Contributions:
    """ALTI+ for a decoding of `src_ids` that wrote `tokens` (the end token included, if written), with the
    interventions it held: per step, the contributions of each source token and each decoder input."""
    if interventions is not None and (interventions.restore is not None or any(interventions.rows)):
        raise ValueError("contributions read one run as it is: restored activations and per-row ablations are not read")
    device = next(model.parameters()).device
    mixing = Mixing()
    held = dataclasses.replace(interventions or Interventions(), mixing=mixing)
    src = torch.tensor([src_ids], device=device)
    tgt = torch.tensor([[model.config.bos_id, *tokens[:-1]]], device=device)
    with torch.no_grad():
        enc = model.encode(src, interventions=held)
        model.decode(tgt, enc.memory, enc.src_mask, interventions=held)
    S, T = src.size(1), tgt.size(1)
    rows = torch.eye(S, dtype=torch.float64, device=device)
    for layer in range(n_layers(model.config, "encoder")):
        rows = sublayer_contributions(mixing.sublayers[("encoder", layer)], cross=False) @ rows
    from_source = torch.cat([rows, rows.new_zeros(S, T)], dim=1)  # each encoder output over [source | prefix]
    state = torch.cat([rows.new_zeros(T, S), torch.eye(T, dtype=rows.dtype, device=device)], dim=1)
    for layer in range(n_layers(model.config, "decoder_self")):
        state = sublayer_contributions(mixing.sublayers[("decoder_self", layer)], cross=False) @ state
        cross = sublayer_contributions(mixing.sublayers[("cross", layer)], cross=True)
        state = cross[:, :1] * state + cross[:, 1:] @ from_source
    return Contributions(state[:, :S].float().cpu(), state[:, S:].float().cpu())
