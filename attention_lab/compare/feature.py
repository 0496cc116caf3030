"""The Compare tab: drawn in the page (compare.mjs) from the decoding it holds, which carries the one before."""

from __future__ import annotations

import gradio as gr

from ..assets.components import drawn
from ..feature import Feature

NOTE = "After a what-if, an ablation or an edit: the cross-attention of the decoding before, beside the new one."


def layout(registry, default: str) -> dict:
    gr.Markdown(NOTE, elem_classes="note")
    return {"compare": drawn("compare/compare.mjs", "compare-view")}


COMPARE = Feature("compare", "Compare", layout=layout)
