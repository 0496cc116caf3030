"""What an ablation changed at each step, as the Heads tab draws it (heads/effects.mjs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..messages import Nothing

NO_EFFECTS = Nothing("Choose heads to ablate and press Ablate: each step's change shows here.")


@dataclass
class EffectStep:
    step: int
    label: str  # the token the original decoding wrote
    kl: float  # KL(original ‖ ablated), nats
    changed: bool  # whether the ablated top token is another
    top: list[tuple[str, float]]  # the ablated top 3: label, probability


@dataclass
class Effects:
    held: str  # the interventions, in words
    steps: list[EffectStep]
    op: Literal["effects"] = "effects"


def effects_data(effects: list, label, held: str) -> Effects:
    """KL(original ‖ ablated) at each step of the original decoding (teacher-forced, so every step sees the original
    prefix), whether the top token changes, and the ablated top 3. `label` names a token."""
    steps = [
        EffectStep(
            e.step,
            label(e.token),
            round(e.kl, 4),
            bool(e.changed),
            [(label(t), round(p, 6)) for t, p in zip(e.top_ids, e.top_probs)],
        )
        for e in effects
    ]
    return Effects(held, steps)
