"""A survey's files and words: survey.json (the contract below), a self-contained survey.html, a terminal summary,
and reading a saved survey back for a model.

survey.json: {"model", "sentences", "score": {"name", "value"},
              "heads": {"encoder"|"decoder_self"|"cross": [layer][head] -> {"entropy", "special", "offset",
                        "alignment" (null where no gold alignment is known), "importance"}},
              "pruning": [{"fraction", "heads", "score"}], "pruning_by_kind": {kind: [...]},
              "pruning_order": [{"kind", "layer", "head"}], "seconds", "processes", "device", "dtype"}
importance is the corpus score with that head alone ablated; score.value is the plain greedy decoding's.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from transformer.config import KINDS, n_layers
from transformer.contract import ModelConfig

from ..assets import PACKAGE, offline_page
from ..checks import InputError
from ..core.grids import Summary
from ..core.kinds import NAMES
from .data import survey_data

CONTRACT_KEYS = ("model", "sentences", "score", "heads", "pruning", "pruning_by_kind")
CELL_NUMBERS = ("entropy", "special", "offset", "importance")
SURVEY_FILE = "survey.json"
HTML_FILE = "survey.html"
REPORT = PACKAGE / "survey" / "report.mjs"  # draws survey.html, with the app's own summary of heads
STYLE = "body{font-family:system-ui,sans-serif;max-width:1100px;margin:1em auto;padding:0 1em}"
SUMMARY_STYLE = PACKAGE / "core" / "views.css"  # the summary of heads' grid, as the app draws it


@dataclass
class Report:
    """What survey.html draws: the survey (survey.json, its contract above) and its head grid."""

    survey: dict[str, Any]
    grid: Summary
    op: Literal["report"] = "report"


def write_survey(survey: dict, out: Path) -> list[Path]:
    """survey.json and survey.html (plotly inlined: it opens offline) in `out`; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    data, page = out / SURVEY_FILE, out / HTML_FILE
    data.write_text(json.dumps(survey, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page.write_text(survey_html(survey), encoding="utf-8")
    return [data, page]


def survey_html(survey: dict) -> str:
    """A page that opens offline: the summary lines, the pruning curves and the head grid, drawn by the app's own
    page modules (survey/report.mjs) with plotly.js inlined."""
    lines = "".join(f"<li>{_escape(line)}</li>" for line in summary_lines(survey))
    title = f"Head survey: {survey['model']}"
    body = f"<h1>{_escape(title)}</h1><ul>{lines}</ul><div id='pruning'></div><div id='heads'></div>"
    state = Report(survey, survey_data(survey))
    return offline_page(title, body, REPORT, state, style=STYLE + SUMMARY_STYLE.read_text(encoding="utf-8"))


def summary_lines(survey: dict, shown: int = 3) -> list[str]:
    """What the survey found, in a few lines: the score, the most and least needed heads, and the pruning curve."""
    name, base = survey["score"]["name"], survey["score"]["value"]
    ranked = sorted(
        (
            (cell["importance"], kind, layer, h)
            for kind, grid in survey["heads"].items()
            for layer, row in enumerate(grid)
            for h, cell in enumerate(row)
        ),
    )
    label = lambda s, kind, layer, h: f"{NAMES[kind].short} L{layer + 1} H{h + 1} ({s:.2f})"
    curve = ", ".join(f"{100 * p['fraction']:.0f}%: {p['score']:.2f}" for p in survey["pruning"])
    kept = 0.0  # the most pruned before the curve first falls below 90% of the plain score
    for point in survey["pruning"]:
        if base <= 0 or point["score"] < 0.9 * base:
            break
        kept = point["fraction"]
    return [
        f"{survey['sentences']} sentences, {name} of the plain greedy decoding: {base:.2f}",
        f"{name} without each head alone, most needed: " + ", ".join(label(*r) for r in ranked[:shown]),
        "least needed: " + ", ".join(label(*r) for r in ranked[::-1][:shown]),
        f"pruning least needed first ({name}): {curve}",
        f"up to {100 * kept:.0f}% of the heads can go keeping 90% of the {name}",
    ]


def _escape(text: str) -> str:
    return html.escape(str(text))


def read_survey(path: Path, config: ModelConfig | None = None) -> dict:
    """A saved survey.json; InputError in one line when it is not one, or, given a model's config, not of its
    shape (every kind's layers and heads)."""
    name = Path(path).name
    try:
        survey = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(f"{name} is not a survey.json written by python -m attention_lab.survey ({err})") from None
    problem = survey_problem(survey)
    if problem:
        raise InputError(f"{name} is not a survey.json written by python -m attention_lab.survey ({problem})")
    if config is not None:
        for kind in KINDS:
            grid = survey["heads"][kind]
            if (len(grid), {len(row) for row in grid}) != (n_layers(config, kind), {config.n_heads}):
                raise InputError(
                    f"{name} surveys {survey['model']!r}, whose {NAMES[kind].name} heads are not this model's "
                    f"{n_layers(config, kind)} layers × {config.n_heads}"
                )
    return survey


def survey_problem(survey: object) -> str | None:
    """What makes `survey` other than survey.json's contract (every field the pages read, numbers finite), or
    None."""
    if not isinstance(survey, dict) or not all(key in survey for key in CONTRACT_KEYS):
        return f"it needs {', '.join(CONTRACT_KEYS)}"
    score, heads = survey["score"], survey["heads"]
    if not isinstance(survey["model"], str) or not isinstance(score, dict) or not isinstance(score.get("name"), str):
        return "the model and the score's name must be text"
    if not _number(score.get("value")) or not isinstance(heads, dict) or set(heads) != set(KINDS):
        return f"the score needs a value and heads one grid for each of {', '.join(KINDS)}"
    for kind in KINDS:
        rows = heads[kind] if isinstance(heads[kind], list) and heads[kind] else None
        if rows is None or not all(isinstance(row, list) and row for row in rows):
            return f"heads.{kind} must be a list of layers, each a list of heads"
        for cell in (cell for row in rows for cell in row):
            if not isinstance(cell, dict) or not all(_number(cell.get(key)) for key in CELL_NUMBERS):
                return f"every {kind} head needs {', '.join(CELL_NUMBERS)} as numbers"
            if cell.get("alignment") is not None and not _number(cell["alignment"]):
                return f"a {kind} head's alignment must be a number or null"
    if not isinstance(survey["pruning_by_kind"], dict):
        return "pruning_by_kind must give each kind's curve"
    curves = [survey["pruning"], *survey["pruning_by_kind"].values()]
    for points in curves:
        if not isinstance(points, list) or not all(
            isinstance(p, dict) and all(_number(p.get(key)) for key in ("fraction", "heads", "score")) for p in points
        ):
            return "every pruning point needs a fraction, heads and a score"
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
