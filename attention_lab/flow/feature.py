"""The Flow tab: the shown step's contribution graph (transformer.flow), the source at the bottom and the prediction
at the top, each edge as thick as its weight, pruned by a threshold the reader moves in the page.

The page is sent the whole decoding's edges once (record.FlowMessage: every step's graph is a part of the last
step's, as the decoder is causal), so Show step, the keys and the threshold redraw it with no request
(flow/flow.mjs); a click on a head's edge focuses that head in the Attention tab. It is slow: it answers a click with
a placeholder and is filled after it, and a decoding already read is not read again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import gradio as gr

from transformer.checkpoint import error_line
from transformer.flow import flow

from ..assets.components import drawn
from ..decoding.messages import key as decoding_key
from ..feature import DATA, Feature, Output, Ready, Screen, slow_value
from ..run.state import Run, interventions_key
from .api import ENDPOINTS
from .messages import FlowMessage, flow_message

NOTE = (
    "How the shown step's prediction was made, as routes through the residual streams (Ferrando & Voita 2024): "
    "each dot is a position's stream after a sublayer, the source's at the bottom, the decoder's above, the "
    "prediction at the top. An edge is what one stream took from another through a head (blue; cross-attention "
    "purple), the residual (grey) or the feed-forward block (orange), as ALTI+ measures it: the edges into a dot "
    "add up to 1, and the routes from the source add up to the step's source share in the Trust tab. Only the edges "
    "at or above the threshold that lead to the prediction are drawn. Click a head's edge to focus that head."
)
OUTPUTS = (Output("flow", DATA, slow="Reading every contribution of this decoding…"),)


@dataclass
class FlowState:
    """What the Flow tab keeps of a run: the last decoding it read (its key) and its message."""

    read: dict[tuple, FlowMessage] = field(default_factory=dict)


def view(s: Screen) -> dict:
    run = s.run
    session = run.session
    key = (run.entry.name, tuple(session.src_ids), tuple(session.tokens), interventions_key(session))
    state = run.states.get(FlowState)
    shown = (decoding_key(run), key)
    read = state.read.get(key)
    if read is not None:
        return {"flow": (shown, Ready(replace(read, key=decoding_key(run))))}
    return {"flow": (shown, graph_message(run, state, key))}


def graph_message(run: Run, state: FlowState, key: tuple) -> Callable[[], FlowMessage]:
    """How to make the Flow message of the run as it stands now (what it needs is taken now)."""
    pipeline, session, serial = run.pipeline, run.session, decoding_key(run)
    src_ids, tokens, interventions = list(session.src_ids), list(session.tokens), session.interventions

    def make() -> FlowMessage:
        cfg = pipeline.model.config
        layers = (cfg.n_encoder_layers, cfg.n_decoder_layers)
        empty = FlowMessage(serial, tokens, layers, cfg.n_heads, [], [], [], 0, 0, "")
        if not tokens:
            return empty
        message = slow_value(
            "The graph",
            lambda: flow_message(serial, pipeline, flow(pipeline.model, src_ids, tokens, interventions)),
            lambda line: replace(empty, error=line),
            # interventions it cannot read, a model whose sublayers it cannot
            told={(ValueError, TypeError): lambda err: f"No graph for this decoding: {error_line(err)}"},
            kept=state.read,
            key=key,
        )
        return message if message.key == serial else replace(message, key=serial)  # one kept for another version

    return make


def layout(registry, default: str) -> dict:
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    c["flow"] = drawn("flow/flow.mjs", "flow-view", classes=("lab-slow",))
    return c


FLOW = Feature(
    "flow",
    "Flow",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    endpoints=ENDPOINTS,
    state=FlowState,
    messages=(FlowMessage,),
    in_page=True,
    stylesheet=Path(__file__).with_name("flow.css"),
)
