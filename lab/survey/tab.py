"""The Heads tab's "over the corpus": a saved survey of the model beside the summary of this sentence, with the same
click-to-focus. The survey is the one the user chose for the model, else the survey.json in its folder."""

from __future__ import annotations

import logging
from pathlib import Path

import plotly.graph_objects as go

from ..attention.figures import empty_figure
from ..checks import InputError
from ..decoding.run import Run, UserState
from ..models.registry import ModelEntry
from .figures import heads_figure
from .report import SURVEY_FILE, read_survey

logger = logging.getLogger(__name__)


def survey_path(entry: ModelEntry, chosen: dict[str, str]) -> Path | None:
    """The survey the user chose for this model, else the one saved next to its checkpoint, else None."""
    if entry.name in chosen:
        return Path(chosen[entry.name])
    saved = Path(entry.pipeline.folder) / SURVEY_FILE if entry.pipeline.folder else None
    return saved if saved is not None and saved.is_file() else None


def output(run: Run, chosen: dict[str, str]) -> tuple:
    """(key, how to draw it): the corpus survey's head grid for the run's model, or what to do to have one."""
    entry = run.entry
    path = survey_path(entry, chosen)
    stamp = path.stat().st_mtime_ns if path is not None and path.is_file() else None
    return (entry.name, str(path), stamp), lambda: corpus_figure(entry, path)


def corpus_figure(entry: ModelEntry, path: Path | None) -> go.Figure:
    if path is None:
        return empty_figure(
            f"No survey of {entry.name} over a corpus yet: run python -m lab.survey --model {entry.name} "
            "--data FILE --out DIR, then choose its survey.json below.",
            height=160,
        )
    try:
        return heads_figure(read_survey(path, entry.pipeline.model.config))
    except InputError as err:
        logger.info("survey not shown: %s", err)
        return empty_figure(str(err), height=160)
    except Exception:  # a survey that passed the checks and still cannot be drawn costs its view, not the page
        logger.exception("survey not drawn: %s", path)
        return empty_figure(f"{path.name} could not be drawn: see the server log.", height=160)


def choose(user: UserState, c, path: object, entry: ModelEntry) -> int | None:
    """Show the survey at `path` (an uploaded survey.json) for the controls' model; InputError when it is not a
    survey of this model's shape. The step shown stays."""
    if not path:
        raise InputError("Choose a survey.json written by python -m lab.survey.")
    heads_figure(read_survey(Path(str(path)), entry.pipeline.model.config))  # drawn once before it is kept
    user.surveys[entry.name] = str(path)
    return c.shown
