"""The Two models tab: for now a note on what it will show, and /compare_models (api.py), which it will draw."""

from __future__ import annotations

import gradio as gr

from ..feature import Feature
from .api import ENDPOINTS

NOTE = (
    "Two models on one sentence: each model's cross-attention, word by word, side by side, with how far apart the "
    "two attend at each word their outputs share. Compare our model with a transformers model, two checkpoints, "
    "or a training snapshot with the finished model. For now, ask /compare_models in the API; the view comes here."
)


def layout(registry, default: str) -> dict:
    gr.Markdown(NOTE, elem_classes="note")
    return {}


TWO_MODELS = Feature("two_models", "Two models", layout=layout, endpoints=ENDPOINTS)
