"""The step loop's column: Model, an example, Source, Run / Step / Back / Reset, the Output with the shown step marked
(Show step), the notices, what the model looked at and its next-token candidates, and the decoding options.

Each component is named as the control it sends (attention_lab.controls) or the output it shows
(attention_lab.decoding.view.OUTPUTS); the page's modules (steps.mjs, now.mjs, candidates.mjs) draw the parts that
are not gradio's own.
"""

from __future__ import annotations

import json

import gradio as gr

from ..assets.components import drawn
from ..models.examples import examples_for_page, first_example
from ..models.registry import Registry
from ..run.search import MAX_BEAM, STRATEGIES
from .from_page import road_config

OPTIONS = {"strategy": "greedy", "beam_size": 4, "max_len": 64, "top_k": 8}  # the decoding options as the page opens


def layout(registry: Registry, default: str) -> dict:
    """The column's components by name, laid out top to bottom as they are created."""
    c = {}
    with gr.Row(elem_classes="lab-inputs"):
        c["model"] = gr.Dropdown(
            registry.names, value=default, label="Model", scale=1, min_width=120, elem_id="lab-model"
        )
        rows, labels = examples_for_page(registry)
        choices = [(label, json.dumps(row, ensure_ascii=False)) for row, label in zip(rows, labels)]
        c["examples"] = gr.Dropdown(choices, value=None, label="Examples", scale=2, min_width=160, elem_id="examples")
    start = first_example(registry, default)
    c["source"] = gr.Textbox(label="Source", lines=2, max_lines=6, value=start, elem_id="lab-source")
    c["proposed"] = gr.Textbox(visible=False, show_label=False, elem_id="lab-proposed")  # a model switch's example
    c["page"] = gr.Textbox(visible=False, show_label=False, elem_id="lab-page")  # what the page decoded (road.py)
    with gr.Row(elem_classes="lab-buttons"):
        c["run"] = gr.Button("Run", variant="primary", min_width=60, elem_id="lab-run")
        c["step"] = gr.Button("Step", min_width=60, elem_id="lab-step")
        c["back"] = gr.Button("Back", min_width=60, interactive=False, elem_id="lab-back")
        c["reset"] = gr.Button("Reset", min_width=60, elem_id="lab-reset")
    with gr.Row(elem_classes="lab-outputs"):
        c["output"] = gr.Textbox(label="Output", interactive=False, lines=1, max_lines=3, min_width=160)
        c["original"] = gr.Textbox(label="Before the what-if", interactive=False, visible=False, min_width=160)
    # where the decoding happens, in a line; the page's own step loop (road.mjs), which writes the outputs above
    road = road_config(registry, OPTIONS)
    c["road"] = drawn("decoding/in_page.mjs", "lab-road", value=road, events=("write", "open"))
    c["steps"] = drawn("decoding/steps.mjs", "lab-steps")  # Show step, the output a token a step: the decoding's value
    c["status"] = gr.Textbox(label="Notice", interactive=False, visible=False, lines=1, max_lines=3)
    c["now"] = drawn("decoding/looked_at.mjs", "now")
    c["candidates"] = drawn("decoding/candidates.mjs", "candidates", classes=("lab-hide-presenting",))
    with gr.Accordion("Decoding options", open=False, elem_classes="lab-hide-presenting"), gr.Row():
        info = "Step decodes greedily, so it is off in beam mode; Run decodes the beams."
        strategy, beam_size, max_len, top_k = OPTIONS.values()
        c["strategy"] = gr.Radio(list(STRATEGIES), value=strategy, label="Strategy", info=info, elem_id="lab-strategy")
        c["beam_size"] = gr.Slider(1, MAX_BEAM, value=beam_size, step=1, label="Beam size", elem_id="lab-beam-size")
        c["max_len"] = gr.Slider(1, 128, value=max_len, step=1, label="Max length", elem_id="lab-max-len")
        c["top_k"] = gr.Slider(1, 20, value=top_k, step=1, label="Top-k shown", elem_id="lab-top-k")
    return c
