"""What the server still draws with plotly, and what the page's drawing code (lab/assets/views.js) is told of it.

The attention views themselves are drawn in the page (views.js): every kind of attention as an overview, every head
of every layer as small multiples tiled into ONE heatmap trace, and a focus, one head large with its tokens on the
axes. Their colours and sizes are set here, once, and sent to the page (STYLE). The server draws the figures that are
not attention weights: the head summary and an ablation's effects (lab.heads.figures), the training chart
(lab.snapshots.chart), and placeholders.

Token text is escaped before it reaches plotly (which renders a subset of HTML in labels and hovers), so a token such
as "<b>" is shown as text, never interpreted.
"""

from __future__ import annotations

import html

import plotly.colors
import plotly.graph_objects as go

# White (weight 0) to dark blue (weight 1), spelled out: plotly.js's own "Blues" runs the other way round.
COLORSCALE = [
    [i / (len(plotly.colors.sequential.Blues) - 1), colour] for i, colour in enumerate(plotly.colors.sequential.Blues)
]
HIGHLIGHT = "#e4572e"  # the current step, everywhere
FOCUS_LINE = "#222222"  # the focused head's tile in an overview
STYLE = {"colorscale": COLORSCALE, "highlight": HIGHLIGHT, "focusLine": FOCUS_LINE}  # for views.js


def escape_token(token: str) -> str:
    """Plotly-safe display text: markup becomes visible text, and an empty token is still visible."""
    return html.escape(token, quote=False) if token else "∅"


def percent(p: float) -> str:
    """A probability as people read it: "42%", "0.3%", "<0.01%"."""
    if p >= 0.1:
        return f"{100 * p:.0f}%"
    if p >= 0.0001:
        return f"{100 * p:.2g}%"
    return "<0.01%"


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A plotly Figure from plain dicts, skipping plotly's per-property validation (the slow part of building)."""
    return go.Figure(data=data, layout=layout, _validate=False)


def empty_figure(message: str, height: int = 160) -> go.Figure:
    """A blank figure that says why it is blank (or what is being computed)."""
    note = {"text": html.escape(message, quote=False), "showarrow": False, "font": {"size": 14, "color": "#555"}}
    hidden = {"visible": False}
    layout = {"height": height, "xaxis": hidden, "yaxis": hidden, "annotations": [note], "plot_bgcolor": "white"}
    return figure([], {**layout, "margin": {"l": 10, "r": 10, "t": 10, "b": 10}})
