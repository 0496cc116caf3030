"""Editing: a cross-attention head made to look where the user points, at one step, in the real forward pass; and
where two decodings part."""

from __future__ import annotations

import torch

from transformer import CrossEdit, DecodingSession, Head, Interventions

from .ablation import fresh


def edit_session(session: DecodingSession, step: int, weights: torch.Tensor, heads: frozenset[Head]) -> DecodingSession:
    """A new session that takes the session's first step - 1 tokens, then at `step` points the listed cross heads at
    `weights` (S,), and decodes on greedily with no further edits. Ablations of `session` stay held, and so do its
    edits of earlier steps (they made the prefix); its edits of this step or later are dropped."""
    by_layer: dict[int, list[int]] = {}
    for head in sorted(heads, key=lambda h: (h.layer, h.head)):
        by_layer.setdefault(head.layer, []).append(head.head)
    edits = tuple(CrossEdit(layer, tuple(hs), step, weights) for layer, hs in by_layer.items())
    held = session.interventions or Interventions()
    earlier = tuple(e for e in held.edits if e.step < step)
    edited = fresh(session, Interventions(ablate=held.ablate, edits=earlier + edits))
    for kept in session.steps[: step - 1]:
        edited.step(force=kept.token)
    edited.step()
    edited.run()
    return edited


def point_weights(n_source: int, positions: list[int]) -> torch.Tensor:
    """Weight spread evenly over `positions` (0-based; one position: weight 1 there), 0 elsewhere."""
    weights = torch.zeros(n_source)
    weights[positions] = 1.0 / len(positions)
    return weights
