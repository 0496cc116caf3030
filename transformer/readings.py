"""Readings of recorded attention beyond the raw weights, as pure functions of what a forward pass recorded.

- value_weighted: weights times ||v_j W_o^h||, the size of what each key adds to each query (Kobayashi et al. 2020,
  "Attention is Not Only a Weight"). The norms come from MultiHeadAttention.value_norms.
- rollout: attention through the layers, with the residual stream counted as attention to oneself (Abnar & Zuidema
  2020, "Quantifying Attention Flow in Transformers").

Dimension key: H heads, T queries, S keys.
"""

from __future__ import annotations

import torch


def value_weighted(weights: torch.Tensor, norms: torch.Tensor) -> torch.Tensor:
    """weights (..., H, T, S) and norms (..., H, S) -> ||a_ij v_j W_o^h|| (..., H, T, S)."""
    return weights * norms[..., None, :]


def rollout(layer_weights: list[torch.Tensor]) -> list[torch.Tensor]:
    """Attention rollout of a self-attention stack: per layer (H, S, S) weights -> per layer (S, S) rollout so far.

    Each layer's heads are averaged and the residual is added as 0.5 I + 0.5 A (rows renormalised); the rollout
    through layer l is the product A_l ... A_1, so row i says how much of position i's state at layer l comes from
    each input token.
    """
    result, rolled = None, []
    for weights in layer_weights:
        S = weights.size(-1)
        eye = torch.eye(S, dtype=weights.dtype, device=weights.device)
        step = 0.5 * weights.mean(dim=0) + 0.5 * eye
        step = step / step.sum(dim=-1, keepdim=True)
        result = step if result is None else step @ result
        rolled.append(result)
    return rolled
