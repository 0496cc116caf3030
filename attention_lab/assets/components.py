"""The component a page module draws into: a gr.HTML whose template never changes (so the DOM the module builds is
left alone), whose value is the data the server sends for it, and whose js_on_load imports the module and mounts it,
once plotly.js (in the document's head) has loaded."""

from __future__ import annotations

import gradio as gr

from . import EMPTY, PLOTLY, mount, url


def drawn(
    module: str, elem_id: str, value=None, classes: tuple[str, ...] = (), events: tuple[str, ...] = (), **options
) -> gr.HTML:
    """A component that `module` draws into from the data the server sends it as its value (`events`: the events of
    its own the module triggers, each then a listener of the component: component.fill(...))."""
    return gr.HTML(
        value,
        html_template=EMPTY,
        js_on_load=mount(module, events),
        head=f'<script src="{url(PLOTLY)}"></script>',
        elem_id=elem_id,
        elem_classes=["lab-view", *classes],
        **options,
    )
