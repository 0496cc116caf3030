"""Interventions: change what attention heads do inside the real forward pass, to test what a head is for.

- **Ablation** removes a head: its slice of the concatenated head outputs is set to zero before the output projection,
  so the head adds nothing to the layer's output (the projection's bias stays).
- **Editing** replaces a cross-attention head's weights at one target position with weights of your choosing, such as
  1 on one source token and 0 elsewhere, in place of softmax(q k^T / sqrt(K)).
- **Recording** keeps every layer's output and every head's output (`record=Activations()`, filled by the pass).
- **Restoring** (activation patching) puts a clean run's recorded activations in place of this run's: per batch row,
  chosen layer states at chosen positions and chosen heads' outputs (`restore=Restore(...)`; transformer.patching
  sweeps it).

Each is a hook at a named point (transformer.hooks): ablation and restored or recorded heads at `hook_z`, edits at
the cross-attention's `hook_pattern`, restored or recorded layer outputs at `hook_resid_post`. An Interventions
value is an argument of Transformer.forward, greedy_decode, beam_search and DecodingSession, which hold its hooks
around their model calls (`with held(interventions):` does it around any other). It goes through the same code and
the same KV cache as ordinary decoding: nothing is re-implemented on the side.

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

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from . import hooks as hook_points
from .config import KINDS, ModelConfig, n_layers
from .hooks import At, Hook, attention_name


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
    `record` is filled with the pass's activations; `restore` patches activations from a clean run, per row.
    `hooks()` gives all of it as hooks at named points.
    """

    ablate: frozenset[Head] = frozenset()
    edits: tuple[CrossEdit, ...] = ()
    rows: tuple[frozenset[Head], ...] = ()
    record: Activations | None = None
    restore: Restore | None = None

    def __bool__(self) -> bool:
        return bool(self.ablate or self.edits or any(self.rows) or self.record is not None or self.restore)

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

    def hooks(self) -> list[Hook]:
        """The hooks that carry this out: per attention, its ablation, restored heads and record at hook_z; per
        decoder layer, its edits at the cross hook_pattern; per layer, its restored states and record at
        hook_resid_post. In that order at a name, so a record sees what ablation and restoring left."""
        found: list[Hook] = []
        for kind in KINDS:
            heads = self.ablate.union(*self.rows)
            for layer in sorted({h.layer for h in heads if h.kind == kind}):
                found.append((attention_name(kind, layer, "hook_z"), self._ablation(kind, layer)))
            restore = self.restore.heads.get(kind) if self.restore else None
            for layer in range(restore.size(1) if restore is not None else 0):
                if restore[:, layer].any():
                    clean = self.restore.clean.heads[(kind, layer)]
                    found.append((attention_name(kind, layer, "hook_z"), restoring(restore[:, layer], clean, 2)))
        for layer in sorted({edit.layer for edit in self.edits}):
            found.append((attention_name("cross", layer, "hook_pattern"), self._editing(layer)))
        for side in ("encoder", "decoder"):
            restore = getattr(self.restore, f"{side}_states") if self.restore else None
            for layer in range(restore.size(1) if restore is not None else 0):
                if restore[:, layer].any():
                    clean = getattr(self.restore.clean, f"{side}_states")[layer]
                    found.append((f"{side}.layers.{layer}.hook_resid_post", restoring(restore[:, layer], clean, 1)))
        if self.record is not None:
            found += self._recording(self.record)
        return found

    def _ablation(self, kind: str, layer: int) -> Callable[[torch.Tensor, At], torch.Tensor]:
        """Head outputs (B, H, T, K) with this layer's ablated heads' set to zero: in every row (`ablate`), and in
        row b those of rows[b]."""
        here = lambda heads: [h.head for h in heads if h.kind == kind and h.layer == layer]
        removed, per_row = here(self.ablate), [here(row) for row in self.rows]

        def ablate(z: torch.Tensor, at: At) -> torch.Tensor:
            keep = torch.ones(len(self.rows) if self.rows else 1, z.size(1), dtype=z.dtype, device=z.device)
            keep[:, removed] = 0.0
            for b, heads in enumerate(per_row):
                keep[b, heads] = 0.0
            if self.rows and keep.size(0) != z.size(0):
                raise ValueError(f"one row of kept heads per batch row is needed (got {keep.size(0)} for {z.size(0)})")
            return z * keep[:, :, None, None]

        return ablate

    def _editing(self, layer: int) -> Callable[[torch.Tensor, At], torch.Tensor]:
        """Cross weights (B, H, T, S) with this layer's edits put in at their steps' rows (step t is position t-1)."""
        edits = [edit for edit in self.edits if edit.layer == layer]

        def edit_weights(weights: torch.Tensor, at: At) -> torch.Tensor:
            T, S = weights.size(2), weights.size(3)
            here = [(edit, edit.step - 1 - at.start) for edit in edits if 0 <= edit.step - 1 - at.start < T]
            if not here:
                return weights
            weights = weights.clone()
            for edit, row in here:
                if edit.weights.numel() != S:
                    raise ValueError(f"the edit has {edit.weights.numel()} source weights, the source has {S}")
                weights[:, list(edit.heads), row] = edit.weights.to(weights)
            return weights

        return edit_weights

    @staticmethod
    def _recording(record: Activations) -> list[Hook]:
        """Hooks that keep every head's output and every layer's output in `record`."""

        found: list[Hook] = []
        for kind, pattern in hook_points.ATTENTION.items():
            prefix, suffix = pattern.split("{}")
            found.append((_layer_point(prefix, suffix + ".hook_z"), lambda x, at, k=kind: _keep_head(record, k, x, at)))
        for side, states in (("encoder", record.encoder_states), ("decoder", record.decoder_states)):
            found.append(
                (_layer_point(f"{side}.layers.", ".hook_resid_post"), lambda x, at, s=states: _keep_state(s, x, at))
            )
        return found


def restoring(mask: torch.Tensor, clean: torch.Tensor, dims: int) -> Callable[[torch.Tensor, At], torch.Tensor]:
    """A hook that puts `clean` (1, ..., positions, ...) in place of what `mask` marks: (B, H) heads (dims 2: the
    positions are dim 2 of (B, H, T, K)) or (B, positions) states (dims 1: of (B, T, D)), at the call's positions."""

    def restore(x: torch.Tensor, at: At) -> torch.Tensor:
        if mask.size(0) != x.size(0):
            what = "heads" if dims == 2 else "positions"
            raise ValueError(f"one row of restored {what} per batch row is needed (got {mask.size(0)})")
        positions = slice(at.start, at.start + x.size(dims))
        if dims == 2:
            where, theirs = mask.to(x.device)[:, :, None, None], clean[:, :, positions]
        else:
            where, theirs = mask[:, positions].to(x.device)[..., None], clean[:, positions]
        return torch.where(where, theirs.to(x), x)

    return restore


def _layer_point(prefix: str, suffix: str) -> Callable[[str], bool]:
    """A predicate on names: prefix, a layer number, suffix."""
    return lambda name: name.startswith(prefix) and name.endswith(suffix) and name[len(prefix) : -len(suffix)].isdigit()


def _layer_of(name: str) -> int:
    return int(name.split(".")[2])


def _keep_head(record: Activations, kind: str, z: torch.Tensor, at: At) -> None:
    record.heads[(kind, _layer_of(at.name))] = z.detach()


def _keep_state(states: dict, x: torch.Tensor, at: At) -> None:
    states[_layer_of(at.name)] = x.detach()


@contextlib.contextmanager
def held(interventions: Interventions | None) -> Iterator[None]:
    """Hold the hooks of `interventions` (None or an empty one: nothing) for the scope."""
    if not interventions:
        yield
        return
    with hook_points.using(interventions.hooks()):
        yield


def _check_index(name: str, value: int, size: int) -> None:
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in 0..{size - 1} (got {value})")
