"""The step loop's events: Run, Step, Back and Reset; a click on a candidate (what if?); another model or example;
a new source or option, which redraws."""

from __future__ import annotations

from ..controls import Controls
from ..models.examples import example_for
from .actions import Decoding

# The buttons' endpoints stay out of the API page, but the benchmarks and the load test drive them by name.
UNDOCUMENTED = {"api_visibility": "undocumented"}


def wire(c: dict, wiring) -> None:
    """`c`: the page's components by name; `wiring`: attention_lab.page.wiring.Wiring."""
    decoding: Decoding = wiring.lab.decoding
    # a Run may take a moment: the Output shows that it is coming (the views redraw at once when it does)
    run = {"show_progress": "full", "show_progress_on": [c["output"]]}
    wiring.on(c["run"].click, decoding.run, api_name="ui_run", **run, **UNDOCUMENTED)
    for name in ("step", "back", "reset"):  # quick: a spinner on every output would cost more than the step
        wiring.on(c[name].click, getattr(decoding, name), api_name=f"ui_{name}", **UNDOCUMENTED)
    wiring.on(c["candidates"].select, decoding.force, data=picked("token"))
    for name in ("source", "max_len", "top_k", "strategy"):  # a new source or option: redrawn
        wiring.on(c[name].change, lambda user, controls: user.shown, trigger_mode="always_last")
    c["examples"].change(
        None,
        [c["examples"], c["model"], c["source"]],
        [c["model"], c["source"]],
        js="(example, model, source) => (example ? JSON.parse(example) : [model, source])",
    )

    def another_model(user, name, text):
        """A new model: start over, with one of its examples unless the text suits it."""
        source = example_for(wiring.lab.registry, name, text)
        controls = Controls(model=name, source=source)
        return (*wiring.answer(user, wiring.lab.do, decoding.reset, user, controls), source)

    inputs, outputs = [wiring.state, c["model"], c["source"]], [*wiring.targets(), c["source"]]
    wiring.then_fill(wiring.listen(c["model"].change, another_model, inputs, outputs))


def picked(name: str):
    """The event data's `name` as the action's argument, and its step shown as the controls' (a click in the page)."""

    def read(c: Controls, data: dict) -> list:
        c.shown = data.get("shown")
        return [data.get(name)]

    return read
