"""Plotly figures of attention. Pure functions over numpy arrays and labels: no server, no gradio.

Every kind of attention is drawn twice: an overview, every head of every layer as small multiples tiled into ONE
heatmap trace (gaps between the tiles), and a focus, one head large with its tokens on the axes. Drawing one trace
instead of a subplot per head is what keeps a redraw in the browser cheap.

Token text is escaped before it reaches plotly (which renders a subset of HTML in labels and hovers), so a token such
as "<b>" is shown as text, never interpreted.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go

# White (weight 0) to dark blue (weight 1), spelled out: plotly.js's own "Blues" runs the other way round.
COLORSCALE = [
    [i / (len(plotly.colors.sequential.Blues) - 1), colour] for i, colour in enumerate(plotly.colors.sequential.Blues)
]
HIGHLIGHT = "#e4572e"  # the current step, everywhere
FOCUS_LINE = "#222222"  # the focused head's tile in an overview
ROW_PX = 18  # height of one token row in a focus view
MAX_ROWS_SHOWN = 40  # a focus view taller than this scrolls inside itself (pan), around the current step
MAX_LABEL = 16  # characters of a token shown on an axis; longer ones are cut with "…"
OVERVIEW_MAX_PX = 520  # every head of a kind fits on one screen
LOG_FLOOR = 1e-4
SCALES = {"linear": "linear", "log": "log", "row": "per-row max"}


def escape_token(token: str) -> str:
    """Plotly-safe display text: markup becomes visible text, and an empty token is still visible."""
    return html.escape(token, quote=False) if token else "∅"


def unique(labels: Sequence[str]) -> list[str]:
    """Labels made unique: repeats get trailing zero-width spaces, invisible on screen but distinct categories."""
    seen: dict[str, int] = {}
    out = []
    for text in labels:
        out.append(text + "\u200b" * seen.get(text, 0))
        seen[text] = seen.get(text, 0) + 1
    return out


def axis_labels(tokens: Sequence[str]) -> list[str]:
    """Escaped tokens (cut to MAX_LABEL characters) made unique, so that a categorical axis keeps repeats apart."""
    return unique([escape_token(t if len(t) <= MAX_LABEL else t[: MAX_LABEL - 1] + "…") for t in tokens])


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
    """A blank figure that says why it is blank."""
    note = {"text": html.escape(message, quote=False), "showarrow": False, "font": {"size": 14, "color": "#555"}}
    hidden = {"visible": False}
    layout = {"height": height, "xaxis": hidden, "yaxis": hidden, "annotations": [note], "plot_bgcolor": "white"}
    return figure([], {**layout, "margin": {"l": 10, "r": 10, "t": 10, "b": 10}})


@dataclass(frozen=True)
class Scale:
    """How weights map to colour: "linear" (0 to 1), "log" (log10, from 1e-4) or "row" (each row over its max)."""

    name: str = "linear"
    renormalised: bool = False  # specials hidden, rows renormalised: said in the legend
    quantity: str = "weight"  # what the colour stands for, in the legend ("value-weighted share", "rollout")

    def apply(self, z: np.ndarray) -> np.ndarray:
        if self.name == "log":
            return np.log10(np.maximum(z, LOG_FLOOR))
        if self.name == "row":
            top = z.max(axis=-1, keepdims=True)
            return np.divide(z, top, out=np.zeros_like(z), where=top > 0)
        return z

    def unit(self, z: np.ndarray) -> np.ndarray:
        """The colour of each weight as a share of the scale, 0 to 1."""
        scaled = self.apply(z)
        return (scaled - math.log10(LOG_FLOOR)) / -math.log10(LOG_FLOOR) if self.name == "log" else scaled

    def colour_axis(self) -> dict:
        what = f"renormalised {self.quantity}" if self.renormalised else self.quantity
        if self.name == "log":
            ticks = list(range(int(math.log10(LOG_FLOOR)), 1))
            bar = {"title": {"text": f"{what} (log)"}, "tickvals": ticks, "ticktext": [f"{10.0**t:g}" for t in ticks]}
            low, high = math.log10(LOG_FLOOR), 0.0
        elif self.name == "row":
            bar, low, high = {"title": {"text": f"{what} / row max"}}, 0.0, 1.0
        else:
            bar, low, high = {"title": {"text": what}}, 0.0, 1.0
        return {"colorscale": COLORSCALE, "cmin": low, "cmax": high, "colorbar": {**bar, "thickness": 12}}


def _rounded(z: np.ndarray) -> list:
    """A float array as JSON-ready lists with 3 decimals, NaN as null (a gap); small payloads draw fast."""
    return [[None if math.isnan(v) else v for v in row] for row in np.round(z.astype(np.float64), 3).tolist()]


def _outline(x0: float, x1: float, y0: float, y1: float, colour: str, width: float) -> dict:
    return {"type": "rect", "x0": x0, "x1": x1, "y0": y0, "y1": y1, "line": {"color": colour, "width": width}}


def _tiles(weights: np.ndarray, scale: Scale, row: int | None, focus: tuple[int, int] | None):
    """(L, H, Q, K) tiled into one array with NaN gaps; the outlines of the current row and the focused tile."""
    n_layers, n_heads, n_q, n_k = weights.shape
    gap_q, gap_k = max(1, round(0.12 * n_q)), max(1, round(0.12 * n_k))
    z = np.full((n_layers * (n_q + gap_q) - gap_q, n_heads * (n_k + gap_k) - gap_k), np.nan)
    shapes = []
    for layer in range(n_layers):
        for head in range(n_heads):
            top, left = layer * (n_q + gap_q), head * (n_k + gap_k)
            z[top : top + n_q, left : left + n_k] = scale.apply(weights[layer, head])
            if row is not None and 0 <= row < n_q:
                shapes.append(_outline(left - 0.5, left + n_k - 0.5, top + row - 0.5, top + row + 0.5, HIGHLIGHT, 1))
            if focus == (layer, head):
                shapes.append(_outline(left - 0.5, left + n_k - 0.5, top - 0.5, top + n_q - 0.5, FOCUS_LINE, 2.5))
    ticks_x = [h * (n_k + gap_k) + (n_k - 1) / 2 for h in range(n_heads)]
    ticks_y = [lay * (n_q + gap_q) + (n_q - 1) / 2 for lay in range(n_layers)]
    return z, shapes, ticks_x, ticks_y


def _label_px(labels: Sequence[str], per_char: float = 6.5) -> int:
    """Room for the longest label, in pixels (explicit margins: plotly's automargin redraws a figure several times)."""
    return int(per_char * max((len(label.rstrip("\u200b")) for label in labels), default=1)) + 14


def _spikes() -> dict:
    """Hovering a cell draws a line across its row and down its column."""
    return {
        "showspikes": True,
        "spikemode": "across",
        "spikethickness": 1,
        "spikecolor": HIGHLIGHT,
        "spikedash": "solid",
    }


@dataclass(frozen=True)
class Focus:
    """The one head drawn large: its (Q, K) weights, token labels, name and axis titles."""

    weights: np.ndarray
    rows: Sequence[str]
    cols: Sequence[str]
    name: str
    axis_titles: tuple[str, str] = ("from", "to")


def kind_figure(
    weights: np.ndarray, head: Focus, scale: Scale, title: str, row: int | None, focus: tuple[int, int] | None
) -> go.Figure:
    """One kind of attention in one figure: every head as small multiples (layers x heads) in one tiled trace on
    top, the focused head large below with its tokens on the axes.

    `row` (the current step) is outlined in every tile and in the focus; `focus` (layer, head) outlines its tile.
    Hovering the focus gives the weight and crosses its row and column. A focus of more than MAX_ROWS_SHOWN rows
    shows that many around `row` and pans (drag) to the rest.
    """
    z, shapes, ticks_x, ticks_y = _tiles(np.asarray(weights, dtype=np.float32), scale, row, focus)
    n_q, n_k = head.weights.shape
    ys, xs = axis_labels(head.rows), axis_labels(head.cols)
    overview_px = int(max(90, min(1000 / z.shape[1], OVERVIEW_MAX_PX / z.shape[0], 22) * z.shape[0]))
    labels_px = min(_label_px(xs, 4.6), 110) + 46
    shown = min(n_q, MAX_ROWS_SHOWN)
    focus_px = ROW_PX * shown
    area = overview_px + labels_px + focus_px
    tiles = {"type": "heatmap", "z": _rounded(z), "coloraxis": "coloraxis", "hoverinfo": "none"}  # clicks still count
    hover = (
        f"{head.axis_titles[0]}: %{{y}}<br>{head.axis_titles[1]}: %{{x}}<br>weight: %{{customdata:.3f}}<extra></extra>"
    )
    large = {
        "type": "heatmap",
        "z": _rounded(scale.apply(np.asarray(head.weights, dtype=np.float32))),
        "customdata": np.round(np.asarray(head.weights, dtype=np.float64), 4).tolist(),
        "x": xs,
        "y": ys,
        "xaxis": "x2",
        "yaxis": "y2",
        "coloraxis": "coloraxis",
        "hovertemplate": hover,
    }
    plain = {"showgrid": False, "zeroline": False}
    rows_axis = {"type": "category", "autorange": "reversed", "tickfont": {"size": 11}, "domain": [0, focus_px / area]}
    if n_q > shown:  # the rows around the current step; drag to pan
        first = 0 if row is None else min(max(0, row - shown // 2), n_q - shown)
        rows_axis = {**rows_axis, "autorange": False, "range": [first + shown - 0.5, first - 0.5]}
    if row is not None and 0 <= row < n_q:
        shapes.append({**_outline(-0.5, n_k - 0.5, row - 0.5, row + 0.5, HIGHLIGHT, 2), "xref": "x2", "yref": "y2"})
    layout = {
        "title": {"text": title, "font": {"size": 12}, "y": 1, "yanchor": "top", "pad": {"t": 8}},
        "height": area + 94,
        "margin": {"l": min(_label_px(ys), 140) + 30, "r": 10, "t": 74, "b": 20},
        "coloraxis": scale.colour_axis(),
        "plot_bgcolor": "white",
        "xaxis": {**plain, "tickvals": ticks_x, "ticktext": [f"head {h + 1}" for h in range(len(ticks_x))]},
        "yaxis": {
            **plain,
            "tickvals": ticks_y,
            "ticktext": [f"layer {n + 1}" for n in range(len(ticks_y))],
            "autorange": "reversed",
            "domain": [(focus_px + labels_px) / area, 1],
        },
        "xaxis2": {"type": "category", "side": "top", "tickangle": -45, "anchor": "y2", **_spikes()},
        "yaxis2": {**rows_axis, "anchor": "x2", **_spikes(), "title": {"text": head.name, "standoff": 4}},
        "shapes": shapes,
        "dragmode": "pan",
        "hovermode": "closest",
        "modebar": {"orientation": "v"},  # beside the figure, not over its title
    }
    layout["xaxis"]["side"] = "top"
    return figure([tiles, large], layout)


def top_k(labels: Sequence[str], probs: Sequence[float]) -> dict:
    """The k most likely next tokens as gr.Label's value: {"label": probability}; repeats kept apart."""
    return {label: round(float(p), 4) for label, p in zip(unique(labels), probs)}


def shade(weight: float) -> str:
    """The CSS colours of a word shaded by its weight (0-1) on the heatmaps' blue scale."""
    text = "#fff" if weight > 0.55 else "#111"
    return f"background: rgba(8, 81, 156, {weight:.3f}); color: {text}"


def now_html(
    words: Sequence[str],
    weights: Sequence[float],
    shades: Sequence[float],
    heading: str,
    note: str,
    pieces: Sequence[Sequence[int]] = (),
) -> str:
    """This step's cross-attention as the source sentence, each word shaded by its weight; hover gives the value.

    `heading` and `note` are HTML the caller has escaped; the words are escaped here. `pieces` (the source positions
    of each word) go into data-pieces, which a click sends to the edit (lab/assets/page.js).
    """
    where = [f' data-pieces="{",".join(map(str, g))}"' for g in pieces] or [""] * len(words)
    spans = " ".join(
        f'<span class="word" style="{shade(float(s))}" title="weight {w:.3f}"{p}>{html.escape(t, quote=False)}</span>'
        for t, w, s, p in zip(words, weights, shades, where)
    )
    return f'<div class="now-view"><div class="now-heading">{heading}</div><div class="words">{spans}</div>' + (
        f'<div class="now-note">{note}</div></div>'
    )


def side_by_side(
    left: np.ndarray, right: np.ndarray, rows: tuple[Sequence[str], Sequence[str]], cols: Sequence[str], row: int
) -> go.Figure:
    """Two decodings' cross-attention (steps x source, one head) side by side, the forced step outlined in both."""
    xs = axis_labels(cols)
    data, shapes = [], []
    for i, (z, names, label) in enumerate(((left, rows[0], "original"), (right, rows[1], "what-if"))):
        suffix = "" if i == 0 else "2"
        data.append(
            {
                "type": "heatmap",
                "z": _rounded(z),
                "x": xs,
                "y": [f"{label} {n + 1}: {t}" for n, t in enumerate(axis_labels(names))],
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
                "coloraxis": "coloraxis",
                "hovertemplate": "%{y} → %{x}<br>weight: %{z:.3f}<extra></extra>",
            }
        )
        box = _outline(-0.5, len(xs) - 0.5, row - 0.5, row + 0.5, HIGHLIGHT, 2)  # same step in both
        shapes.append({**box, "xref": f"x{suffix}", "yref": f"y{suffix}"})
    category = {"type": "category", "side": "top", "tickangle": -45}
    rows_axis = {"type": "category", "autorange": "reversed", "tickfont": {"size": 10}}
    side = min(_label_px([*data[0]["y"], *data[1]["y"]], 6), 180)  # each panel's labels on its left
    top = min(_label_px(xs, 4.6), 110) + 30
    layout = {
        "height": ROW_PX * min(max(len(rows[0]), len(rows[1])), MAX_ROWS_SHOWN) + top + 20,
        "margin": {"l": side, "r": 10, "t": top, "b": 10},
        "coloraxis": Scale().colour_axis(),
        "xaxis": {**category, "domain": [0, 0.4]},
        "xaxis2": {**category, "domain": [0.6, 1], "anchor": "y2"},
        "yaxis": rows_axis,
        "yaxis2": {**rows_axis, "anchor": "x2"},
        "shapes": shapes,
        "plot_bgcolor": "white",
    }
    return figure(data, layout)
