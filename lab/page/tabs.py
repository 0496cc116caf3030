"""The page's tabs, one entry each: its id, title and note, its outputs, and its view, the function that says what
those outputs show while it is open. page.py lays the tabs out from this table, app.py wires them, and lab.page.render
draws the open one; adding a tab is an entry here and its view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..attention.kinds import NAMES, PAGE_ORDER
from ..decoding.actions import beam_rows
from ..heads import tab as heads_tab
from ..snapshots import tab as snapshots_tab
from .outputs import DECODING, MARKDOWN, PLOT, SLIDER, TABLE, TEXT, Output
from .screen import Screen

View = Callable[[Screen], dict]  # -> {output name: (key, how to make its value)}: equal keys, equal values


@dataclass(frozen=True)
class Tab:
    id: str
    title: str
    outputs: tuple[Output, ...]
    view: View
    note: str = ""  # Markdown above its outputs
    needs_run: bool = True  # with no run, its outputs are blank (the Training tab decodes the source itself)


def attention_view(kind: str) -> View:
    """Every head of one kind of attention at the shown step, and the focused head large."""

    def view(s: Screen) -> dict:
        when = (s.run.serial,) if kind == "encoder" else s.at  # the encoder does not change with the step
        return {kind: ((*when, s.look), lambda: s.drawing.view(kind, s.shown))}

    return view


def heads_view(s: Screen) -> dict:
    return {
        "heads": (heads_tab.summary_key(s.run), lambda: heads_tab.summary(s.run)),
        "effects": ((s.run.serial, s.run.version), lambda: heads_tab.effects(s.run)),
    }


def training_view(s: Screen) -> dict:
    c = s.controls
    return snapshots_tab.outputs(s.snapshots, c.model, c.source, s.max_len, c.snapshot, s.look)


def beams_view(s: Screen) -> dict:
    return {"beams": ((s.run.serial, s.run.version if s.run.beams else 0), lambda: beam_rows(s.run))}


def compare_view(s: Screen) -> dict:
    run = s.run
    return {
        "compare": ((*s.at, s.look), lambda: s.drawing.compare(run.original, run.forced_at) if run.original else None)
    }


ATTENTION_VIEW = ("attention-view",)  # the class the browser code finds tiles by (lab/assets/page.js)
TABS = (
    *(Tab(kind, NAMES[kind].title, (Output(kind, PLOT, ATTENTION_VIEW),), attention_view(kind)) for kind in PAGE_ORDER),
    Tab(
        "heads",
        "Heads",
        (Output("heads", PLOT, ("heads-view",)), Output("effects", PLOT)),
        heads_view,
        heads_tab.NOTE,
    ),
    Tab(
        "training",
        "Training",
        (
            Output("snapshot", SLIDER),
            Output("snapshot_info", MARKDOWN),
            Output("snapshot_output", TEXT),
            Output("snapshot_chart", PLOT),
            Output("snapshot_view", PLOT, ATTENTION_VIEW),
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
        (Output("compare", PLOT),),
        compare_view,
        "After a what-if, an ablation or an edit: the cross-attention of the decoding before, beside the new one.",
    ),
)
BY_ID = {tab.id: tab for tab in TABS}
OUTPUTS = (*DECODING, *(output for tab in TABS for output in tab.outputs))  # every output, in the page's order
