"""The step loop as a feature: its column, its outputs and their view, its events."""

from __future__ import annotations

from ..feature import Feature
from .events import wire
from .layout import layout
from .view import OUTPUTS, view

LOOP = Feature("decoding", "Decoding", layout=layout, outputs=OUTPUTS, view=view, wire=wire)
