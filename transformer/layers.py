"""Encoder and decoder layers and stacks: attention, feed-forward, residual + LayerNorm (post-LN or pre-LN).

Dimension key: B batch, H heads, S source positions, T target positions, P cached target positions, D d_model, K head width.
Masks follow the package convention (bool, True = may attend; see attention.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from .attention import HeadControl, MultiHeadAttention
from .config import TransformerConfig


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
class StateControl:
    """Changes to one layer's output (the residual stream after it) in one call, built by transformer.interventions.

    restore: (B, T) bool: in row b, position t's state is `clean`'s (1, T, D) (activation patching).
    record: called with the layer's output (B, T, D).
    """

    restore: torch.Tensor | None = None
    clean: torch.Tensor | None = None
    record: Callable[[torch.Tensor], None] | None = None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.restore is not None:
            if self.restore.size(0) != x.size(0):
                raise ValueError(f"one row of restored positions per batch row is needed (got {self.restore.size(0)})")
            x = torch.where(self.restore.to(x.device)[..., None], self.clean.to(x), x)
        if self.record is not None:
            self.record(x)
        return x


def fill_mixing(control: HeadControl | None, residual: torch.Tensor, norm: nn.Module | None) -> None:
    """Tell a sublayer's mixing record (if any) the residual stream it adds to and the norm after the sum."""
    if control is not None and control.mixing is not None:
        control.mixing.residual, control.mixing.norm = residual.detach(), norm


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
    """What the decoder stack gives: its output, each layer's weights when asked for, the caches, and each layer's
    output before the final LayerNorm when asked for."""

    hidden: torch.Tensor  # (B, T, D), after the final LayerNorm
    self_attentions: tuple[torch.Tensor, ...]  # per layer (B, H, T, P+T), or () unless asked for
    cross_attentions: tuple[torch.Tensor, ...]  # per layer (B, H, T, S), or () unless asked for
    caches: list[LayerCache]  # per layer, covering every position so far
    layer_states: tuple[torch.Tensor, ...] = ()  # per layer (B, T, D), or () unless asked for


class EncoderLayer(nn.Module):
    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.norm_first = config.norm_first
        self.self_attn = MultiHeadAttention(config.d_model, config.n_heads, config.dropout)
        self.self_attn_norm = nn.LayerNorm(config.d_model)
        self.ff = FeedForward(config.d_model, config.d_ff, config.dropout)
        self.ff_norm = nn.LayerNorm(config.d_model)
        self.dropout = nn.Dropout(config.dropout)

    def forward(
        self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = False, control: HeadControl | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        """x (B, S, D), mask (B, 1, 1, S) -> x (B, S, D), weights (B, H, S, S) or None, values (B, H, S, K)."""
        fill_mixing(control, x, None if self.norm_first else self.self_attn_norm)
        if self.norm_first:
            h, weights, v = self._self_attn_block(self.self_attn_norm(x), mask, need_weights, control)
            x = x + h
            x = x + self.dropout(self.ff(self.ff_norm(x)))
        else:
            h, weights, v = self._self_attn_block(x, mask, need_weights, control)
            x = self.self_attn_norm(x + h)
            x = self.ff_norm(x + self.dropout(self.ff(x)))
        return x, weights, v

    def _self_attn_block(self, x, mask, need_weights, control):
        q, k, v = self.self_attn.project_qkv(x)
        out, weights = self.self_attn.attend(q, k, v, mask, need_weights, control)
        return self.dropout(out), weights, v


class DecoderLayer(nn.Module):
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

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor,
        cross_mask: torch.Tensor,
        cache: LayerCache | None = None,
        need_weights: bool = False,
        controls: tuple[HeadControl | None, HeadControl | None] = (None, None),
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None, LayerCache]:
        """x (B, T, D) new target positions, memory (B, S, D), self_mask (B|1, 1, T, P+T), cross_mask (B, 1, 1, S).

        `controls` changes the (self-attention, cross-attention) heads for this call (see HeadControl).
        Returns x (B, T, D), self weights (B, H, T, P+T), cross weights (B, H, T, S), and the cache extended by T.
        """
        self_control, cross_control = controls
        fill_mixing(self_control, x, None if self.norm_first else self.self_attn_norm)
        if self.norm_first:
            h, self_weights, self_kv = self._self_attn_block(
                self.self_attn_norm(x), self_mask, cache, need_weights, self_control
            )
            x = x + h
            fill_mixing(cross_control, x, None)
            h, cross_weights, cross_kv = self._cross_attn_block(
                self.cross_attn_norm(x), memory, cross_mask, cache, need_weights, cross_control
            )
            x = x + h
            x = x + self.dropout(self.ff(self.ff_norm(x)))
        else:
            h, self_weights, self_kv = self._self_attn_block(x, self_mask, cache, need_weights, self_control)
            x = self.self_attn_norm(x + h)
            fill_mixing(cross_control, x, self.cross_attn_norm)
            h, cross_weights, cross_kv = self._cross_attn_block(
                x, memory, cross_mask, cache, need_weights, cross_control
            )
            x = self.cross_attn_norm(x + h)
            x = self.ff_norm(x + self.dropout(self.ff(x)))
        return x, self_weights, cross_weights, LayerCache(*self_kv, *cross_kv)

    def _self_attn_block(self, x, mask, cache, need_weights, control):
        q, k, v = self.self_attn.project_qkv(x)
        if cache is not None:  # earlier positions come from the cache: each step costs one position
            k = torch.cat([cache.self_k, k], dim=2)
            v = torch.cat([cache.self_v, v], dim=2)
        out, weights = self.self_attn.attend(q, k, v, mask, need_weights, control)
        return self.dropout(out), weights, (k, v)

    def _cross_attn_block(self, x, memory, mask, cache, need_weights, control):
        q = self.cross_attn.project_q(x)
        if cache is not None:  # the memory does not change while decoding, so its projection is done once
            k, v = cache.cross_k, cache.cross_v
        else:
            k, v = self.cross_attn.project_kv(memory)
        out, weights = self.cross_attn.attend(q, k, v, mask, need_weights, control)
        return self.dropout(out), weights, (k, v)


class Encoder(nn.Module):
    """A stack of encoder layers with a final LayerNorm, as in torch.nn.Transformer (needed by pre-LN)."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(config) for _ in range(config.n_encoder_layers))
        self.norm = nn.LayerNorm(config.d_model)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        need_weights: bool = False,
        controls: list[HeadControl | None] | None = None,
        state_controls: list[StateControl | None] | None = None,
    ) -> EncoderStackOutput:
        """x (B, S, D) -> x (B, S, D), and if need_weights each layer's weights (B, H, S, S) and values (B, H, S, K).
        `state_controls` change or record each layer's output (see StateControl)."""
        attentions, values = [], []
        for i, layer in enumerate(self.layers):
            x, weights, v = layer(x, mask, need_weights, controls[i] if controls else None)
            if state_controls and state_controls[i] is not None:
                x = state_controls[i](x)
            attentions.append(weights)
            values.append(v)
        if not need_weights:
            return EncoderStackOutput(self.norm(x))
        return EncoderStackOutput(self.norm(x), tuple(attentions), tuple(values))


class Decoder(nn.Module):
    """A stack of decoder layers with a final LayerNorm, as in torch.nn.Transformer."""

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(config) for _ in range(config.n_decoder_layers))
        self.norm = nn.LayerNorm(config.d_model)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_mask: torch.Tensor,
        cross_mask: torch.Tensor,
        caches: list[LayerCache] | None = None,
        need_weights: bool = False,
        controls: list[tuple[HeadControl | None, HeadControl | None]] | None = None,
        keep_states: bool = False,
        state_controls: list[StateControl | None] | None = None,
    ) -> DecoderStackOutput:
        """x (B, T, D) -> the output norm(x), the weights if need_weights, the caches, and if keep_states each
        layer's output (B, T, D) before the final norm. `state_controls` change or record each layer's output."""
        self_attentions, cross_attentions, new_caches, states = [], [], [], []
        for i, layer in enumerate(self.layers):
            cache = caches[i] if caches is not None else None
            layer_controls = controls[i] if controls else (None, None)
            x, self_weights, cross_weights, new_cache = layer(
                x, memory, self_mask, cross_mask, cache, need_weights, layer_controls
            )
            if state_controls and state_controls[i] is not None:
                x = state_controls[i](x)
            self_attentions.append(self_weights)
            cross_attentions.append(cross_weights)
            new_caches.append(new_cache)
            states.append(x)
        kept = tuple(states) if keep_states else ()
        if not need_weights:
            return DecoderStackOutput(self.norm(x), (), (), new_caches, kept)
        return DecoderStackOutput(self.norm(x), tuple(self_attentions), tuple(cross_attentions), new_caches, kept)
