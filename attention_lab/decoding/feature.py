"""The step loop as a feature: its column, its outputs and their view, its events, its endpoint, its stylesheet and
what it keeps of a run."""

from __future__ import annotations

from pathlib import Path

from ..feature import Feature
from ..run.state import LoopState
from .api import TRANSLATE
from .events import wire
from .layout import layout
from .messages import MESSAGES
from .view import OUTPUTS, view

LOOP = Feature(
    "decoding",
    "Decoding",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    publishes=("model", "page", "now", "candidates"),  # the model chosen, the decoding the page shows, its views
    endpoints=(TRANSLATE,),
    state=LoopState,
    messages=MESSAGES,
    stylesheet=Path(__file__).with_name("decoding.css"),
)
