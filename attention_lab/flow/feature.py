"""The Flow tab: the shown step's contribution graph (transformer.flow), the source at the bottom and the prediction
at the top, each edge as thick as its weight, pruned by a threshold the reader moves in the page.

The page is sent the whole decoding's edges once (record.FlowMessage: every step's graph is a part of the last
step's, as the decoder is causal), so Show step, the keys and the threshold redraw it with no request
(flow/flow.mjs); a click on a head's edge focuses that head in the Attention tab. It is slow: it answers a click with
a placeholder and is filled after it, and a decoding already read is not read again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import gradio as gr

from transformer.flow import flow

from ..assets.components import drawn
from ..decoding.messages import key as decoding_key
from ..decoding.state import Run, interventions_key
from ..feature import DATA, Feature, Output, Ready, Screen
from .api import ENDPOINTS
from .record import FlowMessage, flow_message

NOTE = (
    "How the shown step's prediction was made, as routes through the residual streams (Ferrando & Voita 2024): "
    "each dot is a position's stream after a sublayer, the source's at the bottom, the decoder's above, the "
    "prediction at the top. An edge is what one stream took from another through a head (blue; cross-attention "
    "purple), the residual (grey) or the feed-forward block (orange), as ALTI+ measures it: the edges into a dot "
    "add up to 1, and the routes from the source add up to the step's source share in the Trust tab. Only the edges "
    "at or above the threshold that lead to the prediction are drawn. Click a head's edge to focus that head."
)
OUTPUTS = (Output("flow", DATA, slow="Reading every contribution of this decoding…"),)
logger = logging.getLogger("attention_lab")


@dataclass
class FlowState:
    """What the Flow tab keeps of a run: the last decoding it read and its message."""

    read: tuple[tuple, FlowMessage] | None = None


def view(s: Screen) -> dict:
    run = s.run
    session = run.session
    key = (run.entry.name, tuple(session.src_ids), tuple(session.tokens), interventions_key(session))
    state = run.states.get(FlowState)
    shown = (decoding_key(run), key)
    if state.read is not None and state.read[0] == key:
        return {"flow": (shown, Ready(replace(state.read[1], key=decoding_key(run))))}
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
        try:
            message = flow_message(serial, pipeline, flow(pipeline.model, src_ids, tokens, interventions))
        except (ValueError, TypeError) as err:  # interventions it cannot read, a model whose sublayers it cannot
            empty.error = f"No graph for this decoding: {err}"
            return empty
        except Exception as err:  # said in the tab, which would otherwise say "computing" for good
            logger.exception("the contribution graph failed")
            empty.error = f"The graph failed: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
            return empty
        state.read = (key, message)
        return message

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
    stylesheet=Path(__file__).with_name("flow.css"),
)
