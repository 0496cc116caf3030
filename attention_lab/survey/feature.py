"""The Survey tab: a saved survey of the model over a corpus ("Over the corpus"), with the Heads tab's click-to-focus.
The survey is the one the user chose for the model, else the survey.json in its folder. The page copy carries the
folder's, as the grid the page draws (PAGE_FILE): the page shows it with no request (survey/corpus.mjs) until the user
chooses another, which the server reads."""

from __future__ import annotations

import json
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

import gradio as gr

from ..assets.components import drawn
from ..checks import InputError
from ..controls import Controls
from ..core import grids
from ..core.grids import Summary
from ..feature import DATA, Feature, Output, Screen
from ..messages import Nothing, jsonable
from ..models.registry import ModelEntry
from ..page_copy.extras import register
from ..run.state import UserState
from . import data, report
from .data import survey_data
from .report import SURVEY_FILE, Report, read_survey

logger = logging.getLogger(__name__)
PAGE_FILE = "corpus.json"  # the page copy's grid of the survey saved beside the model (Summary, as JSON)


@dataclass
class ChosenSurveys:
    """What the tab keeps for a user: the survey.json they chose, per model."""

    paths: dict[str, str] = field(default_factory=dict)


def saved_survey(pipeline) -> Path | None:
    """The survey saved next to the model's checkpoint, or None."""
    saved = Path(pipeline.folder) / SURVEY_FILE if pipeline.folder else None
    return saved if saved is not None and saved.is_file() else None


def survey_path(entry: ModelEntry, chosen: ChosenSurveys) -> Path | None:
    """The survey the user chose for this model, else the one saved next to its checkpoint, else None."""
    if entry.name in chosen.paths:
        return Path(chosen.paths[entry.name])
    return saved_survey(entry.pipeline)


def corpus(entry: ModelEntry, path: Path | None) -> Summary | Nothing:
    """The corpus survey's grid for the page, or what to do to have one."""
    if path is None:
        text = (
            f"No survey of {entry.name} over a corpus yet: run python -m attention_lab.survey --model {entry.name} "
            "--data FILE --out DIR, then choose its survey.json below."
        )
        return Nothing(text)
    try:
        return survey_data(read_survey(path, entry.pipeline.model.config))
    except InputError as err:
        logger.info("survey not shown: %s", err)
        return Nothing(str(err))
    except Exception:  # a survey that passed the checks and still cannot be read costs its view, not the page
        logger.exception("survey not read: %s", path)
        return Nothing(f"{path.name} could not be read: see the server log.")


def page_copy_file(pipeline) -> bytes | None:
    """The grid of the survey saved beside the model, as its page copy carries it; None without one (or one that
    cannot be read: the server says why)."""
    path = saved_survey(pipeline)
    if path is None:
        return None
    try:
        return json.dumps(jsonable(survey_data(read_survey(path, pipeline.model.config)))).encode("utf-8")
    except InputError:
        return None


register(PAGE_FILE, page_copy_file, tuple(Path(m.__file__) for m in (sys.modules[__name__], data, report, grids)))


def view(s: Screen) -> dict:
    """The survey of the model the controls name: it needs no run (a Reset leaves it drawn, a Run does not redraw
    it)."""
    entry = s.run.entry if s.run is not None else s.shared.registry.entries.get(s.controls.model)
    if entry is None:
        return {"survey": (None, lambda: None)}
    path = survey_path(entry, s.user.states.get(ChosenSurveys))
    stamp = path.stat().st_mtime_ns if path is not None and path.is_file() else None
    return {"survey": ((entry.name, str(path), stamp), lambda: corpus(entry, path))}


def layout(registry, default: str) -> dict:
    c = {"survey": drawn("survey/corpus.mjs", "survey-view")}
    label = "Choose a survey.json (python -m attention_lab.survey)"
    c["survey_file"] = gr.File(label=label, file_types=[".json"], height=120, elem_id="survey-file")
    return c


def chooser(registry):
    """The action of a survey.json chosen for the controls' model: shown from now on if it is a survey of this
    model's shape, else InputError, and nothing is lost. The step shown stays."""

    def choose(user: UserState, controls: Controls, path: object) -> int | None:
        if not path:
            raise InputError("Choose a survey.json written by python -m attention_lab.survey.")
        entry = registry.entry(controls.model)
        read_survey(Path(str(path)), entry.pipeline.model.config)  # refused here, before it is kept
        user.states.get(ChosenSurveys).paths[entry.name] = str(path)
        return user.shown

    return choose


def wire(c: dict, wiring) -> None:
    wiring.on(c["survey_file"].upload, chooser(wiring.lab.registry), extra=[c["survey_file"]])


SURVEY = Feature(
    "survey",
    "Survey",
    layout=layout,
    outputs=(Output("survey", DATA),),
    view=view,
    wire=wire,
    needs_run=False,
    user_state=ChosenSurveys,
    messages=(Summary, Report),
    in_page=True,
)
