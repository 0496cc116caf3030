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
from pathlib import Path

import plotly.io as pio

from transformer.config import KINDS, n_layers
from transformer.contract import ModelConfig

from ..attention.kinds import NAMES
from ..checks import InputError
from .figures import heads_figure, pruning_figure

SURVEY_FILE = "survey.json"
HTML_FILE = "survey.html"


def write_survey(survey: dict, out: Path) -> list[Path]:
    """survey.json and survey.html (plotly inlined: it opens offline) in `out`; returns their paths."""
    out.mkdir(parents=True, exist_ok=True)
    data, page = out / SURVEY_FILE, out / HTML_FILE
    data.write_text(json.dumps(survey, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    page.write_text(survey_html(survey), encoding="utf-8")
    return [data, page]


def survey_html(survey: dict) -> str:
    pruning = pio.to_html(pruning_figure(survey), include_plotlyjs=True, full_html=False, div_id="pruning")
    heads = pio.to_html(heads_figure(survey), include_plotlyjs=False, full_html=False, div_id="heads")
    lines = "".join(f"<li>{line}</li>" for line in summary_lines(survey))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Head survey: {_escape(survey['model'])}</title>"
        "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:1em auto;padding:0 1em}</style>"
        f"</head><body><h1>Head survey: {_escape(survey['model'])}</h1><ul>{lines}</ul>{pruning}{heads}</body></html>"
    )


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
    kept = max((p["fraction"] for p in survey["pruning"] if p["score"] >= 0.9 * base), default=0.0)
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
    try:
        survey = json.loads(Path(path).read_text(encoding="utf-8"))
        heads, score = survey["heads"], survey["score"]
        survey["pruning"], survey["pruning_by_kind"], survey["sentences"]
        float(score["value"])
        for kind in KINDS:  # every cell has its numbers
            for cell in (cell for row in heads[kind] for cell in row):
                sum(float(cell[name]) for name in ("entropy", "special", "offset", "importance"))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as err:
        raise InputError(f"{Path(path).name} is not a survey.json written by python -m lab.survey ({err})") from None
    if config is not None:
        for kind in KINDS:
            grid = heads.get(kind) if isinstance(heads, dict) else None
            shape = (len(grid), {len(row) for row in grid}) if isinstance(grid, list) and grid else None
            if shape != (n_layers(config, kind), {config.n_heads}):
                raise InputError(
                    f"{Path(path).name} surveys {survey.get('model')!r}, whose {NAMES[kind].name} heads are not this "
                    f"model's {n_layers(config, kind)} layers × {config.n_heads}"
                )
    return survey
