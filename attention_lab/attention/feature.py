"""The Attention tab: every kind of attention at the shown step, drawn in the page (views.mjs) from the decoding it
holds; nothing here reaches the server."""

from __future__ import annotations

from pathlib import Path

from ..assets.components import drawn
from ..feature import Feature


def layout(registry, default: str) -> dict:
    return {"views": drawn("core/views.mjs", "views", classes=("attention-view",))}


ATTENTION = Feature(
    "attention",
    "Attention",
    layout=layout,
    publishes=("views",),  # the views as the page draws them (an export sends how they look)
    stylesheet=Path(__file__).parent.parent / "core" / "views.css",
)
