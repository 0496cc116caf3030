"""The component a page module draws into: a gr.HTML whose template never changes (so the DOM the module builds is
left alone), whose value is the data the server sends for it, and whose js_on_load imports the module and mounts it,
once plotly.js (in the document's head) has loaded.

The value travels as JSON text (as_text: the page's wiring sends every data output so), which the module reads as
data (assets.mount). gradio copies a component's value whole (a deep snapshot) whenever it updates the component's
other properties, such as its loading status at every answer; a decoding's weights as data took it 130 ms of a
Heads-tab Run, as text nothing."""

from __future__ import annotations

from typing import Any

import gradio as gr
import orjson

from . import EMPTY, PLOTLY, mount, url


def as_text(value: Any) -> str | None:
    """A drawn component's value as the page is sent it: JSON text, as gradio writes an answer (numpy's values as
    numbers, NaN as null)."""
    return None if value is None else orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode()


def drawn(
    module: str, elem_id: str, value=None, classes: tuple[str, ...] = (), events: tuple[str, ...] = (), **options
) -> gr.HTML:
    """A component that `module` draws into from the data the server sends it as its value (`events`: the events of
    its own the module triggers, each then a listener of the component: component.fill(...))."""
    return gr.HTML(
        as_text(value),
        html_template=EMPTY,
        js_on_load=mount(module, events),
        head=f'<script src="{url(PLOTLY)}"></script>',
        elem_id=elem_id,
        elem_classes=["lab-view", *classes],
        **options,
    )
