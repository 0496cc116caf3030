"""A survey drawn with plotly: every head over the corpus (the head summary's grid, with the score each head's
ablation costs), and the pruning curves. Pure functions of survey.json's contents."""

from __future__ import annotations

import html

import plotly.graph_objects as go

from ..attention.figures import figure
from ..attention.kinds import NAMES
from ..heads.figures import METRICS, summary_figure

CURVE_COLOURS = {"all": "#222222", "encoder": "#1f77b4", "decoder_self": "#2ca02c", "cross": "#d62728"}


def survey_metrics(score_name: str) -> dict:
    """The summary's rows for a survey: entropy, special, offset, alignment, and the score lost without the head."""
    return {
        "entropy": METRICS["entropy"],
        "special": METRICS["special"],
        "offset": (
            "offset of the top weight",
            "mean key − query position of each row's largest weight: −1 the previous token, +1 the next",
            "signed",
        ),
        "alignment": METRICS["alignment"],
        "lost": (
            f"{score_name} lost when ablated",
            f"the corpus {score_name} minus its {score_name} with this head alone ablated",
            "size",
        ),
    }


def heads_figure(survey: dict) -> go.Figure:
    """The survey's head grid; each cell carries "kind|Layer l · Head h", so a click focuses that head."""
    base = survey["score"]["value"]
    cells = {
        kind: [[{**cell, "lost": round(base - cell["importance"], 4)} for cell in layer] for layer in grid]
        for kind, grid in survey["heads"].items()
    }
    name = survey["score"]["name"]
    title = f"Every head over {survey['sentences']} sentences ({name} {base:.2f}): {survey['model']}"
    return summary_figure(cells, title=title, metrics=survey_metrics(name))


def pruning_figure(survey: dict) -> go.Figure:
    """The score against the share of heads pruned, least needed first: over all heads, and each kind alone."""
    name = survey["score"]["name"]
    lines = {"all": survey["pruning"], **survey["pruning_by_kind"]}
    data = []
    for kind, points in lines.items():
        total = points[-1]["heads"] or 1
        label = "all heads" if kind == "all" else f"{NAMES[kind].name} heads only"
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"{label} ({total})",
                "x": [round(100 * p["heads"] / total, 1) for p in points],
                "y": [p["score"] for p in points],
                "customdata": [p["heads"] for p in points],
                "line": {"color": CURVE_COLOURS[kind], "width": 3 if kind == "all" else 2},
                "hovertemplate": f"%{{customdata}} heads pruned (%{{x}}%)<br>{html.escape(name)} %{{y:.2f}}"
                + "<extra>"
                + html.escape(label)
                + "</extra>",
            }
        )
    layout = {
        "title": {
            "text": f"Pruning heads least needed first: {html.escape(survey['model'])}, {survey['sentences']} sentences",
            "font": {"size": 13},
            "x": 0,
            "xanchor": "left",
        },
        "height": 360,
        "margin": {"l": 55, "r": 10, "t": 50, "b": 50},
        "xaxis": {"title": {"text": "heads pruned (%)"}, "range": [-2, 102], "dtick": 10},
        "yaxis": {"title": {"text": html.escape(name)}, "rangemode": "tozero"},
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": -0.22},
        "hovermode": "closest",
    }
    return figure(data, layout)
