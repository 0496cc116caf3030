"""Masks, in the package's one convention: bool, True where a query may attend to a key (see attention.py).

Shapes are chosen to broadcast against attention scores (B, H, T, S).
"""

from __future__ import annotations

import torch


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, S) token ids -> (B, 1, 1, S): True at real tokens, False at padding."""
    return (ids != pad_id)[:, None, None, :]


def causal_mask(n_queries: int, n_keys: int, device: torch.device | None = None) -> torch.Tensor:
    """(1, 1, T, S) lower-triangular mask for the last T of S positions.

    Query i sits at absolute position S - T + i and may attend to keys 0..S - T + i. With T == S this is the usual
    square causal mask; with a KV cache (T new positions after S - T cached ones) it is the bottom rows of it.
    """
    offset = n_keys - n_queries
    q = torch.arange(n_queries, device=device)[:, None]
    k = torch.arange(n_keys, device=device)[None, :]
    return (k <= q + offset)[None, None]


def to_torch_key_padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, S) ids -> (B, S) mask in nn.MultiheadAttention's convention: True where a key may NOT be attended."""
    return ids == pad_id


def to_torch_causal_mask(size: int, device: torch.device | None = None) -> torch.Tensor:
    """(T, T) causal mask in nn.Transformer's convention: True above the diagonal (may NOT attend)."""
    return ~causal_mask(size, size, device)[0, 0]
