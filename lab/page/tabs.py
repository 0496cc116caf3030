"""The page's tabs, one entry each: its id, title and note, its outputs, and its view, the function that says what
those outputs show while it is open. page.py lays the tabs out from this table, app.py wires them, and lab.page.render
draws the open one; adding a tab is an entry here and its view.

The attention tabs and Compare are drawn in the page (lab/assets/views.js) from the decoding the page holds: they
have no outputs and no view here, and page.py gives each a container for the page's drawing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..attention.figures import empty_figure
from ..attention.kinds import NAMES, PAGE_ORDER
from ..decoding.actions import beam_rows
from ..heads import tab as heads_tab
from ..snapshots import tab as snapshots_tab
from ..survey import tab as survey_tab
from ..why import tab as why_tab
from .outputs import DECODING, MARKDOWN, MESSAGE, PLOT, SLIDER, TABLE, Output
from .screen import Screen

View = Callable[[Screen], dict]  # -> {output name: (key, how to make its value)}: equal keys, equal values


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    outputs: tuple[Output, ...] = ()
    view: View | None = None  # None: drawn in the page from the decoding it holds
    note: str = ""  # Markdown above its outputs
    needs_run: bool = True  # with no run, its outputs are blank (the Training tab decodes the source itself)

    @property
    def in_page(self) -> bool:
        return self.view is None


def heads_view(s: Screen) -> dict:
    return {
        "heads": (heads_tab.summary_key(s.run), heads_tab.summary(s.run)),
        "effects": ((s.run.serial, s.run.version), heads_tab.effects(s.run)),
        "survey": survey_tab.output(s.run, s.surveys),
    }


def why_view(s: Screen) -> dict:
    return why_tab.outputs(s.run, s.controls.method)


def training_view(s: Screen) -> dict:
    c = s.controls
    return snapshots_tab.outputs(s.snapshots, c.model, c.source, s.max_len, c.snapshot)


def beams_view(s: Screen) -> dict:
    return {"beams": ((s.run.serial, s.run.version if s.run.beams else 0), lambda: beam_rows(s.run))}


HEADS_PLACEHOLDER = "Measuring every head: each is removed in turn from the forward pass…"
TABS = (
    *(Tab(kind, NAMES[kind].title) for kind in PAGE_ORDER),
    Tab(
        "why",
        "Why",
        (
            Output("why", MESSAGE, slow="Attributing every step and reading every layer…"),
            Output("deletion", MARKDOWN, ("why-deletion",), slow=why_tab.DELETION_SLOW),
        ),
        why_view,
        why_tab.NOTE,
    ),
    Tab(
        "heads",
        "Heads",
        (
            Output("heads", PLOT, ("heads-view",), slow=HEADS_PLACEHOLDER),
            Output("effects", PLOT, slow="Measuring what the ablation changed at every step…"),
            Output("survey", PLOT, ("heads-view", "survey-view")),
        ),
        heads_view,
        heads_tab.NOTE,
    ),
    Tab(
        "training",
        "Training",
        (
            Output("snapshot", SLIDER),
            Output("film", MESSAGE, slow="Decoding this source with every snapshot…"),
            Output("snapshot_chart", PLOT, slow="Decoding this source with every snapshot…"),
        ),
        training_view,
        snapshots_tab.NOTE,
        needs_run=False,
    ),
    Tab(
        "beams",
        "Beams",
        (
            Output(
                "beams", TABLE, headers=("step", "rank", "hypothesis", "log-prob"), label="Beam search: the live beams"
            ),
        ),
        beams_view,
    ),
    Tab(
        "compare",
        "Compare",
        note="After a what-if, an ablation or an edit: the cross-attention of the decoding before, beside the new one.",
    ),
)
BY_ID = {tab.id: tab for tab in TABS}
OUTPUTS = (*DECODING, *(output for tab in TABS for output in tab.outputs))  # every output, in the page's order
SLOW = {output.name: output.slow for output in OUTPUTS if output.slow}
SLOW_OUTPUTS = tuple(output for output in OUTPUTS if output.slow)  # what Lab.fill sends, in the page's order


def placeholder(name: str):
    """What a slow output shows while it is computed."""
    kind = next(output.kind for output in OUTPUTS if output.name == name)
    if kind == MESSAGE:
        return {"op": "computing", "text": SLOW[name]}
    if kind == MARKDOWN:
        return f"*{SLOW[name]}*"
    return empty_figure(SLOW[name])
