"""The Attention tab: every kind of attention at the shown step, drawn in the page (views.mjs) from the decoding it
holds, with nothing asked of the server; under it, Export (export.py: the whole view as a lesson file, the weights
as JSON, the model's live page) and /attention, the JSON export as an endpoint (api.py)."""

from __future__ import annotations

from pathlib import Path

from ..assets.components import drawn
from ..feature import Feature
from . import export
from .api import ATTENTION_EXPORT


def layout(registry, default: str) -> dict:
    return {"views": drawn("core/views.mjs", "views", classes=("attention-view",)), **export.layout()}


ATTENTION = Feature(
    "attention",
    "Attention",
    layout=layout,
    wire=export.wire,
    listens=("page", "model"),  # the decoding the page shows and the model chosen: what Export exports
    endpoints=(ATTENTION_EXPORT,),
    stylesheet=Path(__file__).parent.parent / "core" / "views.css",
)
