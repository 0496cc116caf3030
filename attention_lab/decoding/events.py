"""The step loop's events: Run, Step, Back and Reset; a click on a candidate (what if?); another model or example;
a new source or option, which redraws."""

from __future__ import annotations

from ..models.examples import example_for
from .actions import Decoding


def wire(c: dict, wiring) -> None:
    """`c`: the page's components by name; `wiring`: attention_lab.page.wiring.Wiring."""
    decoding: Decoding = wiring.lab.decoding
    # a Run may take a moment: the Output shows that it is coming (the views redraw at once when it does)
    run = {"show_progress": "full", "show_progress_on": [c["output"]]}
    wiring.on(c["run"].click, decoding.run, api_name="ui_run", **run, **wiring.UNDOCUMENTED)
    for name in ("step", "back", "reset"):  # quick: a spinner on every output would cost more than the step
        wiring.on(c[name].click, getattr(decoding, name), api_name=f"ui_{name}", **wiring.UNDOCUMENTED)
    wiring.on(c["candidates"].select, decoding.force, data=wiring.picked("token"))
    for name in ("source", "max_len", "top_k", "strategy"):  # a new source or option: redrawn
        wiring.on(c[name].change, lambda user, controls: user.shown, trigger_mode="always_last")
    c["examples"].change(
        None,
        [c["examples"], c["model"], c["source"]],
        [c["model"], c["source"]],
        js="(example, model, source) => (example ? JSON.parse(example) : [model, source])",
    )

    def another_model(user, *values):
        """A new model: start over, with one of its examples unless the text suits it; every other control as the
        page has it."""
        controls = wiring.controls_of(values)
        controls.source = example_for(wiring.lab.registry, controls.model, controls.source)
        return (*wiring.answer(user, wiring.lab.do, decoding.reset, user, controls), controls.source)

    outputs = [*wiring.targets(), c["source"]]
    wiring.then_fill(wiring.listen(c["model"].change, another_model, wiring.inputs, outputs))
