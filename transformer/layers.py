"""Encoder and decoder layers and stacks: attention, feed-forward, residual + LayerNorm (post-LN or pre-LN).

Dimension key: B batch, H heads, S source positions, T target positions, P cached target positions, D d_model, K head width.
Masks follow the package convention (bool, True = may attend; see attention.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .attention import MultiHeadAttention
from .config import TransformerConfig
from .hooks import HookPoint


class FeedForward(nn.Module):
    """Position-wise feed-forward: linear -> ReLU -> dropout -> linear, (B, T, D) -> (B, T, D)."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.dropout(torch.relu(self.linear1(x))))


@dataclass
class LayerCache:
    """One decoder layer's cached keys and values: self-attention grows by a position a step, cross-attention is fixed."""

    self_k: torch.Tensor  # (B, H, P, K)
    self_v: torch.Tensor  # (B, H, P, K)
    cross_k: torch.Tensor  # (B, H, S, K)
    cross_v: torch.Tensor  # (B, H, S, K)


@dataclass
class EncoderStackOutput:
    """What the encoder stack gives: the memory, and each layer's weights and values when they were asked for."""

    hidden: torch.Tensor  # (B, S, D), after the final LayerNorm
    attentions: tuple[torch.Tensor, ...] = ()  # per layer (B, H, S, S)
    values: tuple[torch.Tensor, ...] = ()  # per layer (B, H, S, K)


@dataclass
class DecoderStackOutput:
    """What the decoder stack gives: its output, each layer's weights when asked for, and the caches."""

    hidden: torch.Tensor  # (B, T, D), after the final LayerNorm
    self_attentions: tuple[torch.Tensor, ...]  # per layer (B, H, T, P+T), or () unless asked for
    cross_attentions: tuple[torch.Tensor, ...]  # per layer (B, H, T, S), or () unless asked for
    caches: list[LayerCache]  # per layer, covering every position so far


def points(module: nn.Module, names: tuple[str, ...]) -> None:
    """Give `module` a HookPoint per name (hooks.name_points prefixes each with the module's path)."""
    for name in names:
        setattr(module, name, HookPoint(name))


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each with a residual and a LayerNorm (after the sum, or before: norm_first).
    Hook points: hook_resid_pre, hook_attn_out, hook_resid_mid, hook_ff_out, hook_resid_post (see transformer.hooks)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.self_attn_norm = nn.LayerNorm(config.d_model)
        self.ff = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.ff_norm = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        points(self, ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_ff_out", "hook_resid_post"))

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """x (B, S, D), mask (B, 1, 1, S) -> x (B, S, D), weights (B, H, S, S) or None, values (B, H, S, K)."""
        x = self.hook_resid_pre(x)
        if self.norm_first:
            h, weights, v = self._self_attn_block(self.self_attn_norm(x), mask, need_weights)
            x = self.hook_resid_mid(x + h)
            x = x + self.dropout(self.hook_ff_out(self.ff(self.ff_norm(x))))
        else:
            h, weights, v = self._self_attn_block(x, mask, need_weights)
            x = self.hook_resid_mid(self.self_attn_norm(x + h))
            x = self.ff_norm(x + self.dropout(self.hook_ff_out(self.ff(x))))
        return self.hook_resid_post(x), weights, v

    def _self_attn_block(self, x, mask, need_weights):
        q, k, v = self.self_attn.project_qkv(x)
        out, weights = self.self_attn.attend(q, k, v, mask, need_weights)
        return self.dropout(self.hook_attn_out(out)), weights, v


class DecoderLayer(nn.Module):
    """Self-attention, cross-attention, then feed-forward, each with a residual and a LayerNorm. Hook points:
    hook_resid_pre, hook_attn_out, hook_resid_mid, hook_cross_attn_out, hook_resid_mid_cross, hook_ff_out,
    hook_resid_post (see transformer.hooks)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.self_attn_norm = nn.LayerNorm(config.d_model)
        self.cross_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.cross_attn_norm = nn.LayerNorm(config.d_model)
        self.ff = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.ff_norm = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        points(self, ("hook_resid_pre", "hook_attn_out", "hook_resid_mid", "hook_cross_attn_out"))
        points(self, ("hook_resid_mid_cross", "hook_ff_out", "hook_resid_post"))

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor,
        cross_mask: torch.Tensor,
        cache: LayerCache | None = None,
        need_weights: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, LayerCache]:
        """x (B, T, D) new target positions, memory (B, S, D), self_mask (B|1, 1, T, P+T), cross_mask (B, 1, 1, S).

        Returns x (B, T, D), self weights (B, H, T, P+T), cross weights (B, H, T, S), and the cache extended by T.
        Hooks see `start` = P, the first position of this call.
        """
        P = cache.self_k.size(2) if cache is not None else 0
        x = self.hook_resid_pre(x, P)
        if self.norm_first:
            h, self_weights, self_kv = self._self_attn_block(self.self_attn_norm(x), self_mask, cache, need_weights)
            x = self.hook_resid_mid(x + h, P)
            h, cross_weights, cross_kv = self._cross_attn_block(
                self.cross_attn_norm(x), memory, cross_mask, cache, need_weights, P
            )
            x = self.hook_resid_mid_cross(x + h, P)
            x = x + self.dropout(self.hook_ff_out(self.ff(self.ff_norm(x)), P))
        else:
            h, self_weights, self_kv = self._self_attn_block(x, self_mask, cache, need_weights)
            x = self.hook_resid_mid(self.self_attn_norm(x + h), P)
            h, cross_weights, cross_kv = self._cross_attn_block(x, memory, cross_mask, cache, need_weights, P)
            x = self.hook_resid_mid_cross(self.cross_attn_norm(x + h), P)
            x = self.ff_norm(x + self.dropout(self.hook_ff_out(self.ff(x), P)))
        return self.hook_resid_post(x, P), self_weights, cross_weights, LayerCache(*self_kv, *cross_kv)

    def _self_attn_block(self, x, mask, cache, need_weights):
        q, k, v = self.self_attn.project_qkv(x)
        P = 0
        if cache is not None:  # earlier positions come from the cache: each step costs one position
            P = cache.self_k.size(2)
            k = torch.cat([cache.self_k, k], dim=2)
            v = torch.cat([cache.self_v, v], dim=2)
        out, weights = self.self_attn.attend(q, k, v, mask, need_weights, P)  # the cache keeps the un-hooked values
        return self.dropout(self.hook_attn_out(out, P)), weights, (k, v)

    def _cross_attn_block(self, x, memory, mask, cache, need_weights, P):
        q = self.cross_attn.project_q(x)
        if cache is not None:  # the memory does not change while decoding, so its projection is done once
            k, v = cache.cross_k, cache.cross_v
        else:
            k, v = self.cross_attn.project_kv(memory)
        out, weights = self.cross_attn.attend(q, k, v, mask, need_weights, P)
        return self.dropout(self.hook_cross_attn_out(out, P)), weights, (k, v)


class Encoder(nn.Module):
    """A stack of encoder layers with a final LayerNorm, as in torch.nn.Transformer (needed by pre-LN). Its
    hook_embed point reads the token embeddings before positions (Transformer.encode calls it)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.hook_embed = HookPoint("hook_embed")

    def forward(self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = False) -> EncoderStackOutput:
        """x (B, S, D) -> x (B, S, D), and if need_weights each layer's weights (B, H, S, S) and values (B, H, S, K)."""
        attentions, values = [], []
        for layer in self.layers:
            x, weights, v = layer(x, mask, need_weights)
            attentions.append(weights)
            values.append(v)
        if not need_weights:
            return EncoderStackOutput(self.norm(x))
        return EncoderStackOutput(self.norm(x), tuple(attentions), tuple(values))


class Decoder(nn.Module):
    """A stack of decoder layers with a final LayerNorm, as in torch.nn.Transformer; hook_embed as the Encoder's."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.hook_embed = HookPoint("hook_embed")

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor,
        cross_mask: torch.Tensor,
        caches: list[LayerCache] | None = None,
        need_weights: bool = False,
    ) -> DecoderStackOutput:
        """x (B, T, D) -> the output norm(x), the weights if need_weights, and the caches."""
        self_attentions, cross_attentions, new_caches = [], [], []
        for i, layer in enumerate(self.layers):
            cache = caches[i] if caches is not None else None
            x, self_weights, cross_weights, new_cache = layer(x, memory, self_mask, cross_mask, cache, need_weights)
            self_attentions.append(self_weights)
            cross_attentions.append(cross_weights)
            new_caches.append(new_cache)
        if not need_weights:
            return DecoderStackOutput(self.norm(x), (), (), new_caches)
        return DecoderStackOutput(self.norm(x), tuple(self_attentions), tuple(cross_attentions), new_caches)
