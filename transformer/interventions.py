"""Interventions: change what attention heads do inside the real forward pass, to test what a head is for.

- **Ablation** removes a head: its slice of the concatenated head outputs is set to zero before the output projection,
  so the head adds nothing to the layer's output (the projection's bias stays).
- **Editing** replaces a cross-attention head's weights at one target position with weights of your choosing, such as
  1 on one source token and 0 elsewhere, in place of softmax(q k^T / sqrt(K)).
- **Recording** keeps every layer's output and every head's output (`record=Activations()`, filled by the pass).
- **Restoring** (activation patching) puts a clean run's recorded activations in place of this run's: per batch row,
  chosen layer states at chosen positions and chosen heads' outputs (`restore=Restore(...)`; transformer.patching
  sweeps it).

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

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .attention import HeadControl, Sublayer
from .config import KINDS, ModelConfig, n_layers
from .layers import StateControl


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


@dataclass
class Activations:
    """What one encode and one whole-prefix decode computed, as `Interventions(record=...)` fills it, by layer
    (0-based). A decode with a cache records the positions of that call only."""

    encoder_states: dict[int, torch.Tensor] = field(default_factory=dict)  # (B, S, D) after each encoder layer
    decoder_states: dict[int, torch.Tensor] = field(default_factory=dict)  # (B, T, D) after each decoder layer
    heads: dict[tuple[str, int], torch.Tensor] = field(default_factory=dict)  # (kind, layer) -> (B, H, T, K): each
    # head's output as it goes into the output projection (T is S for the encoder's)


@dataclass
class Mixing:
    """What every attention sublayer of one encode and one whole-prefix decode mixed, key by key, as
    `Interventions(mixing=...)` fills it: (kind, layer) -> Sublayer (transformer.contributions reads it)."""

    sublayers: dict[tuple[str, int], Sublayer] = field(default_factory=dict)

    def sublayer(self, kind: str, layer: int) -> Sublayer:
        return self.sublayers.setdefault((kind, layer), Sublayer())


def keeper(where: dict, key) -> Callable[[torch.Tensor], None]:
    """A record for a control: keeps what it is given in `where`[key]."""

    def keep(tensor: torch.Tensor) -> None:
        where[key] = tensor.detach()

    return keep


@dataclass(frozen=True)
class Restore:
    """Activation patching: in row b of the batch, what the masks mark is taken from `clean` (a batch-1 run of the
    same shapes, recorded) in place of this run's own. Decoder positions are counted from the prefix's first (a call
    with a cache restores the positions it covers)."""

    clean: Activations
    encoder_states: torch.Tensor | None = None  # (B, encoder layers, S) bool
    decoder_states: torch.Tensor | None = None  # (B, decoder layers, T) bool
    heads: dict[str, torch.Tensor] = field(default_factory=dict)  # kind -> (B, layers, H) bool

    @property
    def rows(self) -> int:
        masks = [m for m in (self.encoder_states, self.decoder_states, *self.heads.values()) if m is not None]
        return masks[0].size(0) if masks else 0


@dataclass(frozen=True)
class Interventions:
    """Heads to ablate throughout, and cross-attention edits tied to steps. The default changes nothing.

    `rows` tests many ablations in one batched pass: row b of the batch also ablates the heads in rows[b].
    `record` is filled with the pass's activations; `restore` patches activations from a clean run, per row;
    `mixing` is filled with what each attention sublayer mixed (transformer.contributions).
    """

    ablate: frozenset[Head] = frozenset()
    edits: tuple[CrossEdit, ...] = ()
    rows: tuple[frozenset[Head], ...] = ()
    record: Activations | None = None
    restore: Restore | None = None
    mixing: Mixing | None = None

    def __bool__(self) -> bool:
        recorded = self.record is not None or self.mixing is not None
        return bool(self.ablate or self.edits or any(self.rows) or recorded or self.restore)

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
        if self.restore:
            self._check_restore(config)

    def _check_restore(self, config: ModelConfig) -> None:
        r = self.restore
        expected = [("encoder_states", r.encoder_states, config.n_encoder_layers, r.clean.encoder_states)]
        expected.append(("decoder_states", r.decoder_states, config.n_decoder_layers, r.clean.decoder_states))
        for kind, mask in r.heads.items():
            if kind not in KINDS:
                raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
            if mask.dim() != 3 or mask.size(1) != n_layers(config, kind) or mask.size(2) != config.n_heads:
                raise ValueError(f"restored {kind} heads must be (rows, layers, heads) (got {tuple(mask.shape)})")
            if any((kind, layer) not in r.clean.heads for layer in range(mask.size(1)) if mask[:, layer].any()):
                raise ValueError(f"the clean run recorded no {kind} heads: record it with Interventions(record=...)")
        for name, mask, layers, clean in expected:
            if mask is None:
                continue
            if mask.dim() != 3 or mask.size(1) != layers:
                raise ValueError(f"restored {name} must be (rows, layers, positions) (got {tuple(mask.shape)})")
            if any(layer not in clean for layer in range(layers) if mask[:, layer].any()):
                raise ValueError(f"the clean run recorded no {name}: record it with Interventions(record=...)")
        if len({m.size(0) for m in (r.encoder_states, r.decoder_states, *r.heads.values()) if m is not None}) > 1:
            raise ValueError("every restored mask must have the same number of rows")

    def encoder_controls(self, config: ModelConfig) -> list[HeadControl | None] | None:
        """One HeadControl (or None) per encoder layer; None when nothing changes in the encoder."""
        if not any(h.kind == "encoder" for h in self.ablate.union(*self.rows)) and not self._touches("encoder"):
            return None
        return [self._control("encoder", layer, config.n_heads) for layer in range(config.n_encoder_layers)]

    def encoder_states(self, config: ModelConfig) -> list[StateControl | None] | None:
        """One StateControl (or None) per encoder layer: what is recorded or restored after it; None if nothing."""
        return self._states("encoder_states", config.n_encoder_layers, slice(None))

    def decoder_states(self, config: ModelConfig, start: int, n_queries: int) -> list[StateControl | None] | None:
        """Per decoder layer, the StateControl for a call over target positions start..start+n_queries-1."""
        return self._states("decoder_states", config.n_decoder_layers, slice(start, start + n_queries))

    def _states(self, name: str, layers: int, positions: slice) -> list[StateControl | None] | None:
        """Per layer of a stack, what is recorded or restored after it (`name`: the Restore and Activations field),
        at the call's `positions`; None when nothing is."""
        restore = getattr(self.restore, name) if self.restore else None
        if self.record is None and restore is None:
            return None
        controls: list[StateControl | None] = []
        for layer in range(layers):
            control = StateControl()
            if restore is not None and restore[:, layer].any():
                control.restore = restore[:, layer, positions]
                control.clean = getattr(self.restore.clean, name)[layer][:, positions]
            if self.record is not None:
                control.record = keeper(getattr(self.record, name), layer)
            controls.append(control if control.restore is not None or control.record is not None else None)
        return controls

    def _touches(self, kind: str) -> bool:
        """Whether heads of `kind` are recorded or restored."""
        restored = self.restore is not None and kind in self.restore.heads
        return self.record is not None or self.mixing is not None or restored

    def decoder_controls(
        self, config: ModelConfig, start: int, n_queries: int, n_source: int
    ) -> list[tuple[HeadControl | None, HeadControl | None]] | None:
        """Per decoder layer, the (self, cross) controls for a call over target positions start..start+n_queries-1."""
        if not self:
            return None
        controls = []
        positions = slice(start, start + n_queries)
        for layer in range(config.n_decoder_layers):
            self_control = self._control("decoder_self", layer, config.n_heads, positions)
            cross_control = self._control("cross", layer, config.n_heads, positions)
            weights = self._edited_weights(layer, config.n_heads, start, n_queries, n_source)
            if weights is not None:
                cross_control = cross_control or HeadControl()
                cross_control.weights = weights
            controls.append((self_control, cross_control))
        return controls

    def _control(self, kind: str, layer: int, n_heads: int, positions: slice = slice(None)) -> HeadControl | None:
        """keep (H,) for the heads ablated in every row, or (B, H) when `rows` adds some per row; the heads restored
        from the clean run's outputs at the call's `positions`, and the record."""
        control = HeadControl()
        here = lambda heads: [h.head for h in heads if h.kind == kind and h.layer == layer]
        removed, per_row = here(self.ablate), [here(row) for row in self.rows]
        if removed or any(per_row):
            keep = torch.ones(len(self.rows), n_heads) if self.rows else torch.ones(n_heads)
            keep[..., removed] = 0.0
            for b, heads in enumerate(per_row):
                keep[b, heads] = 0.0
            control.keep = keep
        restore = self.restore.heads.get(kind) if self.restore else None
        if restore is not None and restore[:, layer].any():
            control.restore = restore[:, layer]
            control.clean = self.restore.clean.heads[(kind, layer)][:, :, positions]
        if self.record is not None:
            control.record = keeper(self.record.heads, (kind, layer))
        if self.mixing is not None:
            control.mixing = self.mixing.sublayer(kind, layer)
        unchanged = control.keep is None and control.restore is None and control.record is None
        unchanged = unchanged and control.mixing is None
        return None if unchanged else control

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
