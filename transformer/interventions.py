"""Interventions: change what attention heads do inside the real forward pass, to test what a head is for.

- **Ablation** removes a head: its slice of the concatenated head outputs is set to zero before the output projection,
  so the head adds nothing to the layer's output (the projection's bias stays).
- **Editing** replaces a cross-attention head's weights at one target position with weights of your choosing, such as
  1 on one source token and 0 elsewhere, in place of softmax(q k^T / sqrt(K)).

An Interventions value is an argument of Transformer.encode / decode / forward, greedy_decode, beam_search and
DecodingSession. It
goes through the same code and the same KV cache as ordinary decoding: nothing is re-implemented on the side.

Heads are named by Head(kind, layer, head), 0-based, with kind one of KINDS. An edit is tied to a target position
(step t of decoding is position t - 1), so it acts at that step only, whether the decoder runs one position at a time
with the cache or over the whole prefix at once.

Examples:
    >>> from transformer import Transformer, TransformerConfig, greedy_decode
    >>> cfg = TransformerConfig(src_vocab_size=12, tgt_vocab_size=12, d_model=16, n_heads=4,
    ...                         n_encoder_layers=2, n_decoder_layers=2, d_ff=32, max_len=16)
    >>> model = Transformer(cfg).eval()
    >>> src = torch.tensor([[5, 6, 7, 2]])
    >>> no_cross = Interventions(ablate=frozenset(Head("cross", l, h) for l in range(2) for h in range(4)))
    >>> tokens = greedy_decode(model, src, interventions=no_cross)  # decoded without seeing the source
    >>> look_at_7 = Interventions(edits=(CrossEdit.point(layer=1, heads=(0, 1), step=1, position=2, source_length=4),))
    >>> tokens = greedy_decode(model, src, interventions=look_at_7)  # step 1 of layer 2's heads 1, 2 read token 7
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .attention import HeadControl
from .config import KINDS, ModelConfig, n_layers


@dataclass(frozen=True, order=True)
class Head:
    """One attention head: kind in KINDS, 0-based layer and head."""

    kind: str
    layer: int
    head: int


@dataclass(frozen=True)
class CrossEdit:
    """At decoding step `step` (1-based: its query is target position step - 1), cross-attention heads `heads` of
    `layer` (0-based) attend with `weights` (S,) instead of their own."""

    layer: int
    heads: tuple[int, ...]
    step: int
    weights: torch.Tensor  # (S,), non-negative, summing to 1

    @classmethod
    def point(cls, layer: int, heads: tuple[int, ...], step: int, position: int, source_length: int) -> CrossEdit:
        """Weight 1 on source position `position` (0-based) and 0 elsewhere."""
        if not 0 <= position < source_length:
            raise ValueError(f"position must be in 0..{source_length - 1} (got {position})")
        weights = torch.zeros(source_length)
        weights[position] = 1.0
        return cls(layer, tuple(heads), step, weights)


@dataclass(frozen=True)
class Interventions:
    """Heads to ablate throughout, and cross-attention edits tied to steps. The default changes nothing.

    `rows` tests many ablations in one batched pass: row b of the batch also ablates the heads in rows[b].
    """

    ablate: frozenset[Head] = frozenset()
    edits: tuple[CrossEdit, ...] = ()
    rows: tuple[frozenset[Head], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.ablate or self.edits or any(self.rows))

    def check(self, config: ModelConfig) -> None:
        """Raise ValueError naming the first head, layer or step that this model does not have."""
        for head in self.ablate.union(*self.rows):
            if head.kind not in KINDS:
                raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {head.kind!r})")
            _check_index("layer", head.layer, n_layers(config, head.kind))
            _check_index("head", head.head, config.n_heads)
        for edit in self.edits:
            _check_index("layer", edit.layer, config.n_decoder_layers)
            for h in edit.heads:
                _check_index("head", h, config.n_heads)
            if not 1 <= edit.step <= config.max_new_tokens:
                raise ValueError(f"step must be in 1..{config.max_new_tokens} (got {edit.step})")
            if edit.weights.dim() != 1 or (edit.weights < 0).any():
                raise ValueError("an edit's weights must be one non-negative weight per source position")

    def encoder_controls(self, config: ModelConfig) -> list[HeadControl | None] | None:
        """One HeadControl (or None) per encoder layer; None when nothing changes in the encoder."""
        if not any(h.kind == "encoder" for h in self.ablate.union(*self.rows)):
            return None
        return [self._control("encoder", layer, config.n_heads) for layer in range(config.n_encoder_layers)]

    def decoder_controls(
        self, config: ModelConfig, start: int, n_queries: int, n_source: int
    ) -> list[tuple[HeadControl | None, HeadControl | None]] | None:
        """Per decoder layer, the (self, cross) controls for a call over target positions start..start+n_queries-1."""
        if not self:
            return None
        controls = []
        for layer in range(config.n_decoder_layers):
            self_control = self._control("decoder_self", layer, config.n_heads)
            cross_control = self._control("cross", layer, config.n_heads)
            weights = self._edited_weights(layer, config.n_heads, start, n_queries, n_source)
            if weights is not None:
                cross_control = HeadControl(cross_control.keep if cross_control else None, weights)
            controls.append((self_control, cross_control))
        return controls

    def _control(self, kind: str, layer: int, n_heads: int) -> HeadControl | None:
        """keep (H,) for the heads ablated in every row, or (B, H) when `rows` adds some per row."""
        here = lambda heads: [h.head for h in heads if h.kind == kind and h.layer == layer]
        removed, per_row = here(self.ablate), [here(row) for row in self.rows]
        if not removed and not any(per_row):
            return None
        keep = torch.ones(len(self.rows), n_heads) if self.rows else torch.ones(n_heads)
        keep[..., removed] = 0.0
        for b, heads in enumerate(per_row):
            keep[b, heads] = 0.0
        return HeadControl(keep=keep)

    def _edited_weights(self, layer: int, n_heads: int, start: int, n_queries: int, n_source: int):
        """(1, H, T, S) replacement weights, NaN where the computed ones stay; None if no edit falls in this call."""
        weights = None
        for edit in self.edits:
            row = edit.step - 1 - start
            if edit.layer != layer or not 0 <= row < n_queries:
                continue
            if edit.weights.numel() != n_source:
                raise ValueError(f"the edit has {edit.weights.numel()} source weights, the source has {n_source}")
            if weights is None:
                weights = torch.full((1, n_heads, n_queries, n_source), float("nan"))
            weights[0, list(edit.heads), row] = edit.weights
        return weights


def _check_index(name: str, value: int, size: int) -> None:
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in 0..{size - 1} (got {value})")
