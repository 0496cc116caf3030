"""Multi-head scaled dot-product attention that returns every head's weights.

Dimension key: B batch, H heads, T query positions, S key positions, D d_model, K head width (D // H).

Mask convention, used everywhere in this package: a mask is a bool tensor that is **True where a query may attend
to a key**, broadcastable to (B, H, T, S). It is the convention of F.scaled_dot_product_attention and the opposite of
nn.MultiheadAttention's (True there means "may NOT attend"); `transformer.masks` converts at that boundary only.
Masked cells get a weight of exactly 0.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from .hooks import HookPoint


class MultiHeadAttention(nn.Module):
    """Multi-head attention with one fused input projection, laid out like nn.MultiheadAttention's.

    `in_proj` holds the query, key and value projections stacked as rows [W_q; W_k; W_v] (3D, D), so self-attention
    projects once, cross-attention projects queries and keys/values separately, and torch's weights copy over as they are.

    Args:
        d_model: width D of queries, keys and values.
        n_heads: number of heads H; D must be divisible by H.
        dropout: dropout on the attention weights (training only). The returned weights are taken before dropout.

    Shape:
        forward(x, memory, mask): x (B, T, D), memory (B, S, D) or None for self-attention, mask (B|1, 1|H, T, S)
        -> output (B, T, D), weights (B, H, T, S) or None.

    Examples:
        >>> attn = MultiHeadAttention(d_model=16, n_heads=4, dropout=0.0)
        >>> out, weights = attn(torch.randn(2, 5, 16), need_weights=True)
        >>> weights.shape
        torch.Size([2, 4, 5, 5])
    """

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model must be divisible by n_heads (got d_model={d_model}, n_heads={n_heads})")
        self.d_model = d_model
        self.n_heads = n_heads
        self.dropout = dropout
        self.in_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        # named by the model that holds this module (hooks.name_points): encoder.layers.0.self_attn.hook_v, ...
        self.hook_q, self.hook_k, self.hook_v = HookPoint("hook_q"), HookPoint("hook_k"), HookPoint("hook_v")
        self.hook_attn_scores, self.hook_pattern = HookPoint("hook_attn_scores"), HookPoint("hook_pattern")
        self.hook_z, self.hook_result = HookPoint("hook_z"), HookPoint("hook_result")

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        return x.view(B, T, self.n_heads, D // self.n_heads).transpose(1, 2)  # (B, H, T, K)

    def project_qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Self-attention projections in one matmul: x (B, T, D) -> q, k, v, each (B, H, T, K)."""
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        return self.split_heads(q), self.split_heads(k), self.split_heads(v)

    def project_q(self, x: torch.Tensor) -> torch.Tensor:
        """Query projection alone: x (B, T, D) -> (B, H, T, K)."""
        D = self.d_model
        return self.split_heads(F.linear(x, self.in_proj.weight[:D], self.in_proj.bias[:D]))

    def project_kv(self, memory: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Key and value projections of the memory: (B, S, D) -> k, v, each (B, H, S, K)."""
        D = self.d_model
        k, v = F.linear(memory, self.in_proj.weight[D:], self.in_proj.bias[D:]).chunk(2, dim=-1)
        return self.split_heads(k), self.split_heads(v)

    def attend(
        self,
        q: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        mask: torch.Tensor | None = None,
        need_weights: bool = False,
        start: int = 0,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """softmax(q k^T / sqrt(K)) v for projected heads, then the output projection.

        q (B, H, T, K), k and v (B, H, S, K), mask (True = may attend) broadcastable to (B, H, T, S); `start` is the
        first query position (hooks tied to positions read it). The queries, keys, values, scores (before the mask),
        weights, head outputs and each head's share of the output pass through hook_q, hook_k, hook_v,
        hook_attn_scores, hook_pattern, hook_z and hook_result. Returns output (B, T, D) and, if need_weights, the
        weights (B, H, T, S) that were used (a hook's included); otherwise, and with no hook at the scores or the
        pattern, SDPA's fused kernel runs. The scores and each head's result are made only when hooked.
        """
        dropout_p = self.dropout if self.training else 0.0
        q, k, v = self.hook_q(q, start), self.hook_k(k, start), self.hook_v(v, start)
        if need_weights or self.hook_attn_scores.active() or self.hook_pattern.active():
            scores = self.hook_attn_scores((q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1)), start)  # (B, H, T, S)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = self.hook_pattern(scores.softmax(dim=-1), start)
            heads = F.dropout(weights, dropout_p, self.training) @ v  # (B, H, T, K)
        else:
            weights = None
            heads = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        heads = self.hook_z(heads, start)
        weights = weights if need_weights else None
        if self.hook_result.active():  # each head's output through its K columns of W_o: (B, H, T, D)
            return self.head_results(heads, start).sum(dim=1) + self.out_proj.bias, weights
        B, H, T, K = heads.shape
        return self.out_proj(heads.transpose(1, 2).reshape(B, T, H * K)), weights

    def head_results(self, heads: torch.Tensor, start: int = 0) -> torch.Tensor:
        """Head outputs z (B, H, T, K) -> each head's result z^h W_o^h^T (B, H, T, D), through hook_result: their
        sum over heads plus the output projection's bias is the attention's output."""
        H, K = heads.size(1), heads.size(3)
        by_head = self.out_proj.weight.view(self.out_proj.weight.size(0), H, K)  # (D, H, K)
        return self.hook_result(torch.einsum("bhtk,dhk->bhtd", heads, by_head), start)

    def value_norms(self, v: torch.Tensor) -> torch.Tensor:
        """How much each key can move the output through each head: ||v_j W_o^h|| (Kobayashi et al. 2020).

        v (B, H, S, K) projected values -> (B, H, S). W_o^h is head h's K columns of the output projection, so
        weights (B, H, T, S) times these norms is the norm of what each key adds to each query's output, ||a_ij v_j W_o^h||.
        """
        return value_norms(v, self.out_proj.weight)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if memory is None:
            q, k, v = self.project_qkv(x)
        else:
            q = self.project_q(x)
            k, v = self.project_kv(memory)
        return self.attend(q, k, v, mask, need_weights)


def value_norms(v: torch.Tensor, w_o: torch.Tensor) -> torch.Tensor:
    """||v_j W_o^h|| for projected values v (B, H, S, K) and an output projection weight w_o (D, H * K) -> (B, H, S)."""
    H, K = v.size(1), v.size(3)
    by_head = w_o.view(w_o.size(0), H, K)  # (D, H, K): W_o's input columns grouped by head
    return torch.einsum("bhsk,dhk->bhsd", v.to(by_head), by_head).norm(dim=-1)
