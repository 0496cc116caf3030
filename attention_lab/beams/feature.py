"""The Beams tab: the live beams and their log-probabilities at each step of the run's beam search, a table the
server fills (gradio's own Dataframe)."""

from __future__ import annotations

import gradio as gr

from ..feature import TABLE, Feature, Output, Screen
from ..run.state import Run, loop

HEADERS = ("step", "rank", "hypothesis", "log-prob")


def rows(run: Run) -> list[list]:
    """The table: step, rank, hypothesis, log-probability."""
    decode = run.pipeline.tokenizer.decode
    return [
        [i + 1, rank + 1, decode(tokens), round(score, 3)]
        for i, beams in enumerate(loop(run).beams)
        for rank, (tokens, score) in enumerate(beams)
    ]


def view(s: Screen) -> dict:
    run = s.run
    return {"beams": ((run.serial, run.version if loop(run).beams else 0), lambda: rows(run))}


def layout(registry, default: str) -> dict:
    label = "Beam search: the live beams (Decoding options: strategy beam, then Run)"
    return {"beams": gr.Dataframe(headers=list(HEADERS), interactive=False, label=label)}


BEAMS = Feature("beams", "Beams", layout=layout, outputs=(Output("beams", TABLE),), view=view)
