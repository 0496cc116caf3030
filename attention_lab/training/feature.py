"""The Training tab, and the /training API's answer: a model's snapshots decoding the user's source. The server
sends every snapshot's decoding once (slow: filled after the click that opened the tab); the page draws the shown
one, plays through them and draws the chart of the measures (training/film.mjs), with no request."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import gradio as gr

from ..assets.components import drawn
from ..checks import InputError, check_source
from ..core import payload
from ..core.payload import Decoding
from ..feature import DATA, Feature, Output, Ready, Screen
from .api import TRAINING_ENDPOINT
from .decodings import SnapshotDecoding, Snapshots

NOTE = (
    "The same model at snapshots taken during its training, from the untrained start (step 0) to the model the other "
    "tabs show, decoding this source. Slide or play: the cross-attention below goes from a blur to the alignment it "
    "learned, while the chart shows the validation loss fall and, where the gold alignment is known (reversal), the "
    "best cross head's alignment on this source rise."
)
SCORES = {"exact_match": ("validation exact match", 100), "bleu": ("validation BLEU", 1)}  # name, factor


@dataclass
class Frame:
    """One snapshot's decoding of the source, as the film shows it."""

    step: int  # the training step it was taken at
    info: str  # one line on it: its step and what was measured there
    output: str
    data: Decoding | None  # its attention; null: it could not be loaded or decoded (see error)
    error: str
    loss: float | None
    alignment: float | None
    scores: dict[str, float | None]  # by their names in the chart


@dataclass
class Film:
    snapshots: list[Frame]  # in training order
    model: str = ""
    factors: dict[str, float] = field(default_factory=dict)  # each score's factor in the chart (100 for a share)
    message: str = ""  # why there is no film ("" when there is one)
    op: Literal["film"] = "film"


def view(s: Screen) -> dict:
    """The film: every snapshot's decoding of the source, for the page to draw (slow), or why there is none."""
    c, snapshots = s.controls, s.shared.store(Snapshots)
    try:
        snapshots.listed(c.model)
        check_source(snapshots.registry.entry(c.model).pipeline, c.source)
    except InputError as err:
        message = str(err)
        return {"film": (("none", message), Ready(Film([], message=message)))}
    make = lambda: film(snapshots, c.model, c.source, s.max_len)
    return {
        "film": (
            (c.model, c.source, s.max_len),
            Ready(make()) if snapshots.kept(c.model, c.source, s.max_len) else make,
        )
    }


def ahead(s: Screen):
    """The film of what the controls say, decoded while the tab is shut (the tab opens on it made)."""
    c, snapshots = s.controls, s.shared.store(Snapshots)
    try:
        snapshots.listed(c.model)
        check_source(snapshots.registry.entry(c.model).pipeline, c.source)
    except InputError:
        return None
    if snapshots.kept(c.model, c.source, s.max_len):
        return None
    return lambda: snapshots.decodings(c.model, c.source, s.max_len)


def film(snapshots: Snapshots, model: str, text: str, max_len: int | None) -> Film:
    """Every snapshot's decoding of the source, as the page draws it: the step it was taken at, its line of
    measures, its output, its attention (attention_lab.core.payload), or why it has none; and what the chart
    plots."""
    decoded = snapshots.decodings(model, text, max_len)
    tokenizer = snapshots.registry.entries[model].pipeline.tokenizer  # every snapshot shares the model's tokenizer
    frames = [
        Frame(
            step=d.snapshot.step,
            info=describe(decoded, i, model),
            output=d.output_text or "",
            data=payload.full(d.session, tokenizer, model) if d.session is not None else None,
            error=d.error,
            loss=d.loss,
            alignment=d.alignment,
            scores={name: d.snapshot.metrics.get(key) for key, (name, _) in SCORES.items()},
        )
        for i, d in enumerate(decoded)
    ]
    return Film(frames, model, {name: factor for name, factor in SCORES.values()})


HEAD = "Step {step}"  # a snapshot's line: its step (written with commas), then what was measured there
THE_MODEL = "{head} (the {model} model the other tabs show)"
SILENT = "it writes nothing: </s> comes first"
MEASURES = {  # what the line says of each measure the snapshot has, in this order
    "valid_loss": "validation loss {value:.3f}",
    "exact_match": "validation exact match {value:.1%}",
    "bleu": "validation BLEU {value:.2f}",
}
ALIGNED = "best cross head's alignment on this source {value:.0%}"
# the words the page's film (training/in_page.mjs) writes its lines and chart with
TEXTS = {
    "head": HEAD,
    "the_model": THE_MODEL,
    "silent": SILENT,
    "measures": MEASURES,
    "aligned": ALIGNED,
    "scores": {key: list(named) for key, named in SCORES.items()},
}


def describe(decoded: list[SnapshotDecoding], i: int, model: str) -> str:
    """One line on the shown snapshot: its step and what was measured there, or why it cannot be shown."""
    shown = decoded[i]
    head = HEAD.format(step=f"{shown.snapshot.step:,}")
    if shown.snapshot.is_checkpoint:
        head = THE_MODEL.format(head=head, model=model)
    if shown.error:
        return f"{head}: {shown.error}"
    metrics = shown.snapshot.metrics
    parts = [head, SILENT] if shown.output_text == "" else [head]
    parts += [said.format(value=metrics[key]) for key, said in MEASURES.items() if metrics.get(key) is not None]
    if shown.alignment is not None:
        parts.append(ALIGNED.format(value=shown.alignment))
    return " · ".join(parts)


def layout(registry, default: str) -> dict:
    gr.Markdown(NOTE, elem_classes="note")
    return {"film": drawn("training/film.mjs", "film", classes=("lab-slow",))}


FILM = Output("film", DATA, slow="Decoding this source with every snapshot…")
TRAINING = Feature(
    "training",
    "Training",
    layout=layout,
    outputs=(FILM,),
    view=view,
    needs_run=False,
    endpoints=(TRAINING_ENDPOINT,),
    store=Snapshots,
    ahead=ahead,
    messages=(Film,),
    stylesheet=Path(__file__).with_name("training.css"),
    in_page=True,
    texts=TEXTS,
)
