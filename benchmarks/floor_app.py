"""The framework's floor for the browser benchmark: a bare Gradio app that redraws one tiled plotly heatmap per click.

    python benchmarks/floor_app.py        # serves on GRADIO_SERVER_PORT (default 7861)

It does what any Gradio app with one heatmap must do on a click: a round trip, a text update and one plotly redraw,
with no model behind it. Its heatmap is the size of the de-en cross-attention overview at step 12 (3 layers x 4
heads of 12 x 16 cells, tiled into one trace), with fresh numbers each click so that plotly redraws every cell.
"""

from __future__ import annotations

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr
import numpy as np

LAYERS, HEADS, ROWS, COLS, GAP = 3, 4, 12, 16, 1


def tiled_heatmap(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    z = np.full((LAYERS * (ROWS + GAP) - GAP, HEADS * (COLS + GAP) - GAP), np.nan)
    for layer in range(LAYERS):
        for head in range(HEADS):
            tile = rng.dirichlet(np.ones(COLS), size=ROWS)
            top, left = layer * (ROWS + GAP), head * (COLS + GAP)
            z[top : top + ROWS, left : left + COLS] = tile
    rows = [[None if np.isnan(v) else round(float(v), 3) for v in row] for row in z]
    trace = {"type": "heatmap", "z": rows, "zmin": 0, "zmax": 1, "colorscale": "Blues", "hoverongaps": False}
    layout = {"height": 420, "margin": {"l": 10, "r": 10, "t": 30, "b": 10}, "title": {"text": f"click {seed}"}}
    layout["yaxis"] = {"autorange": "reversed", "showticklabels": False}
    layout["xaxis"] = {"showticklabels": False}
    import plotly.graph_objects as go

    return go.Figure({"data": [trace], "layout": layout})


def build() -> gr.Blocks:
    with gr.Blocks(title="floor") as demo:
        count = gr.State(0)
        button = gr.Button("Step")
        text = gr.Textbox(label="Output")
        plot = gr.Plot(show_label=False)

        def click(n: int):
            return n + 1, f"click {n + 1}", tiled_heatmap(n + 1)

        button.click(click, [count], [count, text, plot])
    return demo


if __name__ == "__main__":
    build().launch(server_name="127.0.0.1", server_port=int(os.environ.get("GRADIO_SERVER_PORT", "7861")))
