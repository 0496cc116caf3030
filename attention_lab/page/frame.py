"""The page's frame: the header, the step loop's column, and beside it the tabs, each laid out by its feature from
the tab table. At a phone's width the columns stack."""

from __future__ import annotations

import json
from pathlib import Path

import gradio as gr

from ..assets import PACKAGE
from ..assets.components import drawn
from ..core.looks import names
from ..core.text import READINGS_NOTE, WORDS_NOTE
from ..feature import Feature
from ..messages import jsonable
from ..models.registry import Registry
from ..run.state import UserState

STATE_TTL_S = 3600  # an idle session's decoding is dropped after an hour
STYLESHEET = Path(__file__).with_name("frame.css")  # the header, the columns, presenter mode
OPEN_LINK = "() => window.attentionLabAddress.opened()"  # a link's model and source, written by the page itself
# a window at least this wide holds every tab on one line (the tab row: about 0.58 of it; the tabs need 945 px)
ONE_ROW_PX = 1700
PHONE_PX = 640  # at most this wide, the tab row is a line per group


def build(registry: Registry, default: str, loop: Feature, tabs: tuple[Feature, ...]) -> tuple[dict, gr.State, dict]:
    """Lay the page out, inside a gr.Blocks; returns every component by name, the user's state, and each feature's
    own components by its id."""
    components = {
        "header": drawn("page/header.mjs", "lab-header", value=jsonable(names())),  # the names, sent once
        "ask": drawn("page/fill.mjs", "lab-ask", events=("fill",)),  # asks for what the views still wait for
        # a link's tab, model and source (?tab=...&model=...&source=...), followed as the page opens; the address kept
        "address": drawn("assets/address.mjs", "lab-address", value=known(registry, tabs), events=("open",)),
        # the tabs whose messages the page can make itself, known before their modules load
        "here": drawn("assets/here.mjs", "lab-here", value=in_page(tabs)),
    }
    if registry.errors:
        gr.Markdown("\n".join(f"**{n} could not be loaded:** {e}" for n, e in registry.errors.items()))
    state = gr.State(UserState(), time_to_live=STATE_TTL_S)  # copied fresh into each session
    laid = {}
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
                with gr.Tab(tab.title, id=tab.id, elem_id=f"tab-{tab.id}"):
                    for feature in tab.every():
                        laid[feature.id] = feature.layout(registry, default) if feature.layout else {}
    for own in laid.values():
        components.update(own)
    return components, state, laid


def in_page(tabs: tuple[Feature, ...]) -> dict:
    """What the page is told of the tabs it can make the messages of (Feature.in_page; assets/here.mjs): their ids,
    their stylesheets (under attention_lab/), and by id their titles and the texts each writes into its messages. A live page is told the same
    (assets/in_page.json, written by `python -m attention_lab.schema`)."""
    made = [tab for tab in tabs if any(f.in_page for f in tab.every())]
    return {
        "tabs": [tab.id for tab in made],
        "titles": {tab.id: tab.title for tab in made},
        "stylesheets": [
            f.stylesheet.relative_to(PACKAGE).as_posix()
            for tab in made
            for f in tab.every()
            if f.stylesheet is not None
        ],
        # the tabs the server sends nothing to (Attention, Compare): drawn from the decoding the page holds, whoever
        # made it
        "drawn": [tab.id for tab in tabs if not any(f.outputs for f in tab.every())],
        # every tab's that has texts: a maker written before its tab is made in the page is tested with them
        "texts": {tab.id: texts for tab in tabs if (texts := {k: v for f in tab.every() for k, v in f.texts.items()})},
    }


def known(registry: Registry, tabs: tuple[Feature, ...]) -> dict:
    """What a link may ask for (assets/address.mjs): the models and the tabs' ids."""
    return {"models": list(registry.names), "tabs": [tab.id for tab in tabs]}


def follow_links(components: dict) -> None:
    """A link's model and source, written into Model and Source by the page itself (no request), which then presses
    Run as a person would (assets/address.mjs)."""
    components["address"].open(
        None,
        None,
        [components["model"], components["source"]],
        js=OPEN_LINK,
        queue=False,
        show_progress="hidden",
    )


def grouped(tabs: tuple[Feature, ...], groups: dict[str, str], one_row_px: int = ONE_ROW_PX) -> str:
    """The tab row's groups as a stylesheet (gradio's keeps media queries, not container queries): a gap before each
    group's first tab with the group's heading as a small caption over it (hidden from assistive technology, where
    the tabs keep their own names); in a window narrower than `one_row_px`, a line break between the first half of
    the groups and the second; at a phone's width, a line per group (a grid as wide as the largest group), so that
    no group is cut in two or runs on under another's caption."""
    rules, group, sizes = [], 0, []
    for tab in tabs:
        if tab.id in groups:
            group += 1
            sizes.append(0)
            caption = json.dumps(groups[tab.id])
            rules.append(f"#tab-{tab.id}-button::before {{ content: {caption} / ''; }}")
            if group > 1:
                rules.append(f"#tab-{tab.id}-button {{ margin-left: 14px; }}")
        if sizes:  # a tab before the first group's belongs to none
            sizes[-1] += 1
        rules.append(f"#tab-{tab.id}-button {{ order: {2 * group}; }}")
    if len(sizes) > 1:
        split = 2 * (len(sizes) // 2) + 1  # after the first half of the groups
        rules.append(
            f"@media (max-width: {one_row_px}px) {{ #lab-tabs [role='tablist']::before "
            f"{{ content: ''; order: {split}; flex-basis: 100%; height: 0; position: static; }} }}"
        )
        firsts = ", ".join(f"#tab-{first}-button" for first in groups if any(tab.id == first for tab in tabs))
        rules.append(
            f"@media (max-width: {PHONE_PX}px) {{ #lab-tabs [role='tablist'] {{ display: grid; row-gap: 20px; "
            f"grid-template-columns: repeat({max(sizes)}, minmax(0, 1fr)); }} "
            f"#lab-tabs [role='tablist']::before {{ display: none; }} "
            f"#lab-tabs button[role='tab'] {{ padding-left: 4px; padding-right: 4px; }} "
            f"{firsts} {{ grid-column-start: 1; margin-left: 0; }} }}"
        )
    return "\n".join(rules)
