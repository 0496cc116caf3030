"""The Attention tab's Export: the whole view as one HTML file that works offline, every head's weights as JSON,
and the model's live page (the model decoding in the browser, made from its page copy: export/live.py). (The focused
head as PNG or SVG is the page's own: the buttons beside the Focus head.)"""

from __future__ import annotations

import json

import gradio as gr

from transformer import CheckpointError
from transformer.checkpoint import error_line

from ..checks import InputError
from ..controls import Controls
from ..core import payload
from ..core.attention_export import attention_record
from ..core.looks import names
from ..export.lesson import Lesson, look_of, page, written
from ..export.live import live_page
from ..messages import jsonable
from ..run.state import Run, UserState, loop, shown_step

# How the page looks as the export is asked for: sent in place of the views' value by the page itself.
# The page's look, and the decoding it shows when it decodes itself (attention_lab.decoding.from_page).
LOOKED = (
    "(user, views, page) => [user, {look: attentionLab.look, shown: attentionLab.shown, kind: attentionLab.kind},"
    " window.attentionLabRoad ? window.attentionLabRoad.decoded() : page]"
)
DECODED = "(user, page) => [user, window.attentionLabRoad ? window.attentionLabRoad.decoded() : page]"


def layout() -> dict:
    c = {}
    with gr.Accordion("Export", open=False, elem_classes="lab-hide-presenting"), gr.Row():
        c["export_html"] = gr.Button("Whole view as HTML (works offline)", min_width=120)
        c["export_json"] = gr.Button("Attention as JSON", min_width=120)
        c["export_live"] = gr.Button("Live page: this model in your browser", min_width=120)
    c["export_file"] = gr.File(label="Download", visible=False)
    return c


def as_html(user: UserState, sent: object) -> str:
    """The page's views of the user's run, as the page looked (`sent`), in one HTML file; its path."""
    shown, kind, look = look_of(sent)
    with user.lock:
        run = decoded(user)
        session, tokenizer = run.session, run.pipeline.tokenizer
        data = payload.full(session, tokenizer, run.entry.name, loop(run).before)
        output, lesson = tokenizer.decode(session.tokens), Lesson(data, shown_step(session, shown), kind, look, names())
    return written(page(lesson, run.entry.name, run.text, output), "attention-view.html")


def as_json(user: UserState) -> str:
    """The run's attention record (the /attention API's answer) in a JSON file; its path."""
    with user.lock:
        run = decoded(user)
        record = jsonable(attention_record(run.session, run.pipeline.tokenizer, run.entry.name))
    return written(json.dumps(record), "attention.json")


def live(registry):
    def as_live(model: str) -> str:
        """The live page of the model shown (one HTML file that decodes in the browser); its path. Made once per
        model."""
        return live_page(registry.entry(model))

    return as_live


def decoded(user: UserState) -> Run:
    if user.run is None or not user.run.session.steps:
        raise InputError("Nothing to export yet: Run or Step first.")
    return user.run


def wire(c: dict, wiring) -> None:
    def file(make):
        def event(*args):
            try:
                return gr.update(value=make(*args), visible=True)
            except (InputError, CheckpointError, ValueError) as err:  # a model that cannot be copied says why
                gr.Warning(error_line(err))
                return gr.skip()

        return event

    def of_page(make):
        """`make` on the decoding the page shows (sent last): the server takes it as the run first."""

        def made(user, *args):
            *args, sent = args
            with user.lock:
                wiring.lab.take(user, Controls(page=sent))
            return make(user, *args)

        return made

    state, shows, out = wiring.state, c["page"], [c["export_file"]]
    wiring.listen(c["export_html"].click, file(of_page(as_html)), [state, c["views"], shows], out, js=LOOKED)
    wiring.listen(c["export_json"].click, file(of_page(as_json)), [state, shows], out, js=DECODED)
    wiring.listen(c["export_live"].click, file(live(wiring.lab.registry)), [c["model"]], [c["export_file"]])
