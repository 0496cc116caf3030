"""The Heads tab: every head of every kind summarised and tested over this decoding, the heads to ablate with
Ablate and what that changed at each step, and the heads a click on a source word edits. The summary and the
effects are slow (every head ablated in turn; the ablation's effect on every step): each answers the click with a
placeholder and is made after it, from what it took of the run when it was asked for."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial
from pathlib import Path

import gradio as gr

from ..assets.components import drawn
from ..core.grids import METRICS, Summary, summary_data
from ..core.kinds import NAMES
from ..core.naming import HEADS_SAID, head_choices
from ..core.summaries import head_summaries
from ..core.units import token_label
from ..feature import DATA, Feature, Output, Ready, Screen
from ..messages import Nothing
from ..run.state import ABLATED, HOLDING, Run, interventions_status, loop
from .ablation import ablation_effects, importance
from .actions import HeadTests
from .api import ENDPOINTS
from .effects import NO_EFFECTS, Effects, effects_data
from .state import HeadsState
from .summary_cache import Summaries

NOTE = (
    "Every head of every kind, summarised over this decoding; click a cell to focus that head in its view. "
    "Attention weights alone do not say what a head does (Jain & Wallace 2019; Wiegreffe & Pinter 2019), so the last "
    "row *tests* each head: it is removed from the real forward pass and the next-token distribution compared. Below, "
    "ablate any set of heads and see, step by step, what changes."
)
OUTPUTS = (
    Output("heads", DATA, slow="Measuring every head: each is removed in turn from the forward pass…"),
    Output("effects", DATA, slow="Measuring what the ablation changed at every step…"),
)
TITLE = "Every head, over this source's decoding without ablations or edits"
NOTHING = "Step or Run first: every head is summarised over the decoding."
# What the page writes into the messages it makes itself (in_page.mjs, while it decodes: the summary, Ablate and its
# effects; editing is the server's): the server's title, hints and rows (core/grids.py METRICS), and the words the
# step loop says an ablation in (run/state.py interventions_status), each written once
TEXTS = {
    "title": TITLE,
    "nothing": NOTHING,
    "metrics": {key: list(metric) for key, metric in METRICS.items()},
    "short": {kind: names.short for kind, names in NAMES.items()},
    "no_effects": NO_EFFECTS.text,
    "holding": HOLDING,
    "ablated": ABLATED,
    "heads": HEADS_SAID,
    "kinds": {kind: names.name for kind, names in NAMES.items()},  # in the library's order (describe_heads)
}
# The chosen heads, told to the page's road as they change (heads/ablate.mjs: the page ablates them itself)
CHOSEN = "(heads) => { globalThis.attentionLabHeads?.chose(heads); }"


def layout(registry, default: str) -> dict:
    config = registry.entry(default).pipeline.model.config
    c = {}
    gr.Markdown(NOTE, elem_classes="note")
    c["heads"] = drawn("heads/summary.mjs", "heads-summary", classes=("lab-slow",))
    with gr.Row(elem_classes="ablate"):
        info = "Each is removed from the forward pass: its output is zeroed before W_o."
        c["ablate_heads"] = gr.Dropdown(
            head_choices(config), value=[], multiselect=True, label="Heads to ablate", info=info, scale=4
        )
        c["ablate"] = gr.Button("Ablate", min_width=80, scale=1, elem_id="heads-ablate")
    c["effects"] = drawn("heads/effects.mjs", "heads-effects", value=NO_EFFECTS, classes=("lab-slow",))
    info = "Click a source word under “What the model looked at”: at the shown step these heads look only at it."
    choices = head_choices(config, ("cross",))
    c["edit_heads"] = gr.Dropdown(choices, value=["cross:*:*"], multiselect=True, label="Heads to edit", info=info)
    return c


def view(s: Screen) -> dict:
    run, kept = s.run, s.shared.store(Summaries)
    return {"heads": (summary_key(run), summary(run, kept)), "effects": ((run.serial, run.version), effects(run))}


def summary_key(run: Run) -> tuple:
    """What the summary depends on: the model, the source, the plain decoding's tokens (an Ablate decodes the same
    plain tokens again, and does not redraw it) and its length limit."""
    plain = run.states.get(HeadsState).plain or run.session
    return (run.entry.name, tuple(plain.src_ids), tuple(plain.tokens), plain.max_new_tokens)


def summary(run: Run, kept: Summaries) -> Callable[[], Summary | Nothing]:
    """How to make the summary of the decoding without interventions (after an ablation or edit, the one before
    it), as it stands now: later steps of the run change nothing in it. One made already is taken as it is."""
    session = copy.copy(run.states.get(HeadsState).plain or run.session)
    session.steps = list(session.steps)
    alignment, key = run.entry.alignment, summary_key(run)

    def measured() -> Summary:
        tokens = [step.token for step in session.steps]
        grid = importance(session.model, session.src_ids, tokens, session.max_new_tokens)
        return summary_data(head_summaries(session, alignment), grid, TITLE)

    def make() -> Summary | Nothing:
        if not session.steps:
            return Nothing(NOTHING)
        return kept.made(key, measured)

    made = kept.get(key) if session.steps else None
    return make if made is None else Ready(made)


def effects(run: Run) -> Callable[[], dict]:
    """How to make, per step of the decoding before the last ablation, what the ablation changed (a hint while
    there is none)."""
    ablated, before = run.states.get(HeadsState).ablated, loop(run).before
    if not ablated or before is None:
        return Ready(NO_EFFECTS)
    model, src_ids, limit = run.session.model, list(run.session.src_ids), run.session.max_new_tokens
    tokens, holding = [s.token for s in before.steps], interventions_status(run)
    label = partial(token_label, run.pipeline.tokenizer, special_ids=model.special_ids)
    return lambda: effects_data(ablation_effects(model, src_ids, tokens, ablated, 3, limit), label, holding)


def wire(c: dict, wiring) -> None:
    tests = HeadTests(wiring.lab.decoding)
    wiring.on(c["ablate"].click, tests.ablate, extra=[c["ablate_heads"]], show_progress_on=[c["effects"]])
    quiet = {"show_progress": "hidden", "queue": False}
    c["ablate_heads"].change(None, [c["ablate_heads"]], None, js=CHOSEN, **quiet)

    wiring.on(c["now"].select, tests.edit, extra=[c["edit_heads"]], data=wiring.picked("pieces"))

    def choices(name):
        config = wiring.lab.registry.entry(name).pipeline.model.config
        ablate = gr.update(choices=head_choices(config), value=[])
        return ablate, gr.update(choices=head_choices(config, ("cross",)), value=["cross:*:*"])

    wiring.listen(c["model"].change, choices, [c["model"]], [c["ablate_heads"], c["edit_heads"]])


HEADS = Feature(
    "heads",
    "Heads",
    layout=layout,
    outputs=OUTPUTS,
    view=view,
    wire=wire,
    listens=("now", "model"),  # a click on what the model looked at (an edit); another model (its heads)
    endpoints=ENDPOINTS,
    state=HeadsState,
    stylesheet=Path(__file__).with_name("heads.css"),
    messages=(Summary, Effects),
    store=Summaries,
    in_page=True,
    in_page_outputs=("heads", "effects"),
    texts=TEXTS,
)
