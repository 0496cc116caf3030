"""What an ablation changed at each step, as the Heads tab draws it (heads/effects.mjs)."""

from __future__ import annotations

NO_EFFECTS = {"op": "none", "text": "Choose heads to ablate and press Ablate: each step's change shows here."}


def effects_data(effects: list, label, held: str) -> dict:
    """KL(original ‖ ablated) at each step of the original decoding (teacher-forced, so every step sees the original
    prefix), whether the top token changes, and the ablated top 3. `label` names a token."""
    steps = [
        {
            "step": e.step,
            "label": label(e.token),
            "kl": round(e.kl, 4),
            "changed": bool(e.changed),
            "top": [[label(t), round(p, 6)] for t, p in zip(e.top_ids, e.top_probs)],
        }
        for e in effects
    ]
    return {"op": "effects", "held": held, "steps": steps}
