"""The Training tab's chart: validation loss and scores against training step, the shown snapshot marked.
A pure function over the snapshots' decodings: no server, no gradio."""

from __future__ import annotations

import plotly.graph_objects as go

from ..attention.figures import figure
from .decodings import SnapshotDecoding

LOSS_COLOUR, ALIGN_COLOUR, SCORE_COLOUR, MARK = "#1f4e79", "#c0392b", "#2e8b57", "#f39c12"
SCORES = {"exact_match": ("validation exact match", 100), "bleu": ("validation BLEU", 1)}


def training_chart(decoded: list[SnapshotDecoding], current: int, model: str) -> go.Figure:
    """Validation loss (left axis) and, in percent (right axis), the best cross head's alignment on this source and
    the validation score, one point per snapshot; the snapshots are evenly spaced, as they were taken (log-spaced)."""
    x = list(range(len(decoded)))
    steps = [f"{f.snapshot.step:,}" for f in decoded]
    data = [_line(x, [f.loss for f in decoded], "validation loss", LOSS_COLOUR, "y", steps, "{:.3f}")]
    if any(f.alignment is not None for f in decoded):
        alignment = [None if f.alignment is None else 100 * f.alignment for f in decoded]
        data.append(_line(x, alignment, "best cross head's alignment, this source (%)", ALIGN_COLOUR, "y2", steps))
    for key, (name, factor) in SCORES.items():
        values = [f.snapshot.metrics.get(key) for f in decoded]
        if any(v is not None for v in values):
            scaled = [None if v is None else factor * v for v in values]
            unit = " (%)" if factor == 100 else ""
            data.append(_line(x, scaled, name + unit, SCORE_COLOUR, "y2", steps))
    marked = decoded[current].snapshot.step
    layout = {
        "title": {"text": f"{model} across training: step {marked:,} shown", "font": {"size": 13}},
        "height": 300,
        "margin": {"l": 60, "r": 60, "t": 40, "b": 80},
        "xaxis": {
            "tickvals": x,
            "ticktext": steps,
            "title": {"text": "training step (snapshots at roughly log-spaced steps)"},
            "range": [-0.5, len(decoded) - 0.5],
        },
        "yaxis": {"title": {"text": "validation loss"}, "rangemode": "tozero", "color": LOSS_COLOUR},
        "yaxis2": {"title": {"text": "%"}, "overlaying": "y", "side": "right", "range": [0, 105], "showgrid": False},
        "legend": {"orientation": "h", "y": -0.45, "x": 0},
        "shapes": [
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": current - 0.4,
                "x1": current + 0.4,
                "y0": 0,
                "y1": 1,
                "fillcolor": MARK,
                "opacity": 0.25,
                "line": {"width": 0},
            }
        ],
        "plot_bgcolor": "white",
        "hovermode": "x unified",
    }
    return figure(data, layout)


def _line(x, y, name: str, colour: str, axis: str, steps: list[str], number: str = "{:.1f}") -> dict:
    text = ["" if v is None else number.format(v) for v in y]
    return {
        "type": "scatter",
        "mode": "lines+markers",
        "x": x,
        "y": y,
        "name": name,
        "yaxis": axis,
        "line": {"color": colour},
        "customdata": steps,
        "text": text,
        "hovertemplate": f"{name}: %{{text}}<extra>step %{{customdata}}</extra>",
        "connectgaps": False,
    }
