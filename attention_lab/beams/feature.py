"""The Beams tab: the live beams and their log-probabilities at each step of the run's beam search, as a table
(beams/beams.mjs draws it). While the page decodes, the page makes it from its own beam search (beams/in_page.mjs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..assets.components import drawn
from ..feature import DATA, Feature, Output, Screen
from ..messages import Nothing
from ..run.state import Run, loop

HEADERS = ("step", "rank", "hypothesis", "log-prob")
LABEL = "Beam search: the live beams after each step, best first"
NONE = "No beam search yet: choose the strategy beam (under Decoding options in the app), then Run."
TEXTS = {"label": LABEL, "headers": list(HEADERS), "none": NONE}  # what the page writes into the table it makes


@dataclass
class BeamRows:
    """The live beams after each step of a beam search: step, rank, hypothesis, log-probability (3 places)."""

    headers: list[str]
    rows: list[list]
    op: Literal["beams"] = "beams"


def rows(run: Run) -> list[list]:
    """The table: step, rank, hypothesis, log-probability."""
    decode = run.pipeline.tokenizer.decode
    return [
        [i + 1, rank + 1, decode(tokens), round(score, 3)]
        for i, beams in enumerate(loop(run).beams)
        for rank, (tokens, score) in enumerate(beams)
    ]


def table(run: Run) -> BeamRows | Nothing:
    """The table as the page draws it; a hint while the run has no beam search."""
    found = rows(run)
    return BeamRows(list(HEADERS), found) if found else Nothing(NONE)


def view(s: Screen) -> dict:
    run = s.run
    return {"beams": ((run.serial, run.version if loop(run).beams else 0), lambda: table(run))}


def layout(registry, default: str) -> dict:
    return {"beams": drawn("beams/beams.mjs", "beams-view", value=Nothing(NONE))}


BEAMS = Feature(
    "beams",
    "Beams",
    layout=layout,
    outputs=(Output("beams", DATA),),
    view=view,
    messages=(BeamRows,),
    stylesheet=Path(__file__).with_name("beams.css"),
    in_page=True,
    texts=TEXTS,
)
