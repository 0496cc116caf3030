"""The page's frame: the header, the step loop's column, and beside it the tabs, each laid out by its feature from
the tab table. At a phone's width the columns stack."""

from __future__ import annotations

from pathlib import Path

import gradio as gr

from ..assets.components import drawn
from ..core.looks import names
from ..core.text import READINGS_NOTE, WORDS_NOTE
from ..feature import Feature
from ..messages import jsonable
from ..models.registry import Registry
from ..run.state import UserState

STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
STYLESHEET = Path(__file__).with_name("frame.css")  # the header, the columns, presenter mode


def build(
    registry: Registry, default: str, loop: Feature, tabs: tuple[Feature, ...]
) -> tuple[dict, gr.State, dict, dict]:
    """Lay the page out, inside a gr.Blocks; returns every component by name, the user's state, the tabs by id, and
    each feature's own components by its id."""
    components = {
        "header": drawn("page/header.mjs", "lab-header", value=jsonable(names())),  # the names, sent once
        "ask": drawn("page/fill.mjs", "lab-ask", events=("fill",)),  # asks for what the views still wait for
    }
    if registry.errors:
        gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
    state = gr.State(UserState(), time_to_live=STATE_TTL_S)  # copied fresh into each session
    opened, laid = {}, {}
    with gr.Row(elem_id="lab-main", equal_height=False):
        with gr.Column(scale=4, min_width=300, elem_id="lab-loop"):
            laid[loop.id] = loop.layout(registry, default)
            with gr.Accordion("How to read this", open=False, elem_classes="lab-hide-presenting"):
                gr.Markdown(WORDS_NOTE + "\n\n" + READINGS_NOTE, elem_classes="note")
        # Every tab in sight: the row wraps onto a second line (gradio's "wrap"), never into a "more" menu.
        with (
            gr.Column(scale=6, min_width=300, elem_id="lab-views"),
            gr.Tabs(elem_id="lab-tabs", overflow_behavior="wrap"),
        ):
            for tab in tabs:
                with gr.Tab(tab.title, id=tab.id, elem_id=f"tab-{tab.id}") as opened[tab.id]:
                    for feature in tab.every():
                        laid[feature.id] = feature.layout(registry, default) if feature.layout else {}
    for own in laid.values():
        components.update(own)
    return components, state, opened, laid


def grouped(groups: dict[str, str]) -> str:
    """The tab row's groups as a stylesheet: a gap and a rule before each group's first tab, its heading as the
    button's tooltip-free caption above it (hidden from assistive technology: the tabs keep their own names)."""
    return "\n".join(
        f'#tab-{first}-button {{ margin-left: 14px; }} #tab-{first}-button::before {{ content: "{heading}" / ""; }}'
        for first, heading in groups.items()
    )
