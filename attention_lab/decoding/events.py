"""The step loop's events: Run, Step, Back and Reset; a click on a candidate (what if?); another model or example;
a new source or option, which redraws. No answer overwrites what a person typed after the event it answers, nor what
the page's own step loop wrote after it (page/wiring.py: each event tells the page when its answer has come whole)."""

from __future__ import annotations

import json

import gradio as gr

from ..models.examples import example_for
from .actions import DecodingActions

# The page's own step loop (road.mjs) writes the loop's outputs through gradio, in the page, with no request.
WRITE = "() => window.attentionLabRoad.written()"
# ...and reads the decoding options from gradio, which keeps them while their menu is shut.
OPTIONS = ("strategy", "beam_size", "max_len", "top_k")
READ_OPTIONS = "(...values) => { window.attentionLabRoad?.options(...values); }"
TAKE_PROPOSED = (
    "(proposal, now) => { const p = JSON.parse(proposal || '{}'); return p.sent === now ? p.proposed : now; }"
)


def wire(c: dict, wiring) -> None:
    """`c`: the step loop's components by name; `wiring`: attention_lab.page.wiring.Wiring."""
    decoding: DecodingActions = wiring.lab.decoding
    # a Run may take a moment: the Output shows that it is coming (the views redraw at once when it does)
    run = {"show_progress": "full", "show_progress_on": [c["output"]]}
    # A click while the last one's answer is still on its way (its stream ends a moment after the Output shows it)
    # is kept and sent when that answer has come whole: gradio's default for a button drops it ("once").
    kept = {"trigger_mode": "always_last", **wiring.UNDOCUMENTED}
    wiring.on(c["run"].click, decoding.run, api_name="ui_run", **run, **kept)
    for name in ("step", "back", "reset"):  # quick: a spinner on every output would cost more than the step
        wiring.on(c[name].click, getattr(decoding, name), api_name=f"ui_{name}", **kept)
    wiring.on(c["candidates"].select, decoding.force, data=wiring.picked("token"), trigger_mode="always_last")
    # the page's own writes: no progress shown on what they write (gradio's status tracker would flash over it)
    written = [c[name] for name in ("output", "status", "step", "back", "original")]
    c["road"].write(None, None, written, js=WRITE, show_progress="hidden", queue=False)
    gr.on(
        [c[name].change for name in OPTIONS],
        None,
        [c[name] for name in OPTIONS],
        None,
        js=READ_OPTIONS,
        show_progress="hidden",
        queue=False,
    )
    for name in ("source", "max_len", "top_k", "strategy"):  # a new source or option: redrawn
        wiring.on(c[name].change, lambda user, controls: user.shown, trigger_mode="always_last")
    c["examples"].change(
        None,
        [c["examples"], c["model"], c["source"]],
        [c["model"], c["source"]],
        js="(example, model, source) => (example ? JSON.parse(example) : [model, source])",
    )

    def another_model(user, *values):
        """A new model: the run of the one before is dropped; the source it was sent with stays if the model can
        read it, else the page is offered the model's first example (`proposed`)."""
        controls = wiring.controls_of(values)
        sent, controls.source = controls.source, example_for(wiring.lab.registry, controls.model, controls.source)
        proposed = json.dumps({"sent": sent, "proposed": controls.source}, ensure_ascii=False)
        for answer in wiring.streamed(user, wiring.lab.do, controls, decoding.switch, user, controls):
            yield (*answer, proposed)

    targets = [*wiring.targets(), c["proposed"]]
    switched = wiring.listen(c["model"].change, another_model, wiring.inputs, targets, from_page=True)
    # What a person typed while the answer was on its way is theirs: the example replaces only what was sent.
    switched.then(None, [c["proposed"], c["source"]], [c["source"]], js=TAKE_PROPOSED)
