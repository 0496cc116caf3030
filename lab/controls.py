"""What the page's controls say, by name: every event sends all of them, and every action reads them from here.

The page (page.py) has one component per field, under the field's own name, and sends them in CONTROLS' order; an
event turns them back into Controls by name (Controls.of).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

FOCUS_MEAN = "Mean of all heads"  # the Focus head choice that averages every head


@dataclass
class Controls:
    """The controls' values, under the names of the page's components."""

    model: str = ""
    source: str = ""
    strategy: str = "greedy"  # "greedy" or "beam"
    beam_size: int = 4
    max_len: int = 64
    top_k: int = 8  # the "Top-k shown" slider: candidates kept at each step
    shown: int | None = None  # the "Show step" slider
    words: bool = True  # "Merge pieces into words"
    hide_specials: bool = False
    scale: str = "linear"  # the "Colour scale"
    focus: str = FOCUS_MEAN  # "Focus head": FOCUS_MEAN or "Layer l · Head h"
    reading: str = "weights"  # the "Reading": a key of lab.attention.looks.READINGS
    snapshot: int | None = None  # the Training tab's slider: which snapshot (None: the first)
    method: str = "input_x_gradient"  # the Why tab's attribution method: a key of lab.why.attribution.METHODS

    @classmethod
    def of(cls, values) -> Controls:
        """The page's values, sent in CONTROLS' order, by name."""
        return cls(**dict(zip(CONTROLS, values, strict=True)))


CONTROLS = tuple(field.name for field in fields(Controls))
