"""Plotly figures of the head tests: a per-head summary (layers x heads for each kind), and what an ablation changed at
each step. Pure functions over numbers and labels: no server, no gradio.

Every cell of the summary carries "kind|Layer l · Head h" as its customdata, which a click turns into the Focus head
(lab/assets/page.js).
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go

from ..attention.figures import COLORSCALE, HIGHLIGHT, empty_figure, escape_token, figure, percent
from ..attention.kinds import NAMES

# Each row of the summary: its name, what it means, and how it is coloured ("share": 0 to 100%; "size": white to the
# row's largest value; "signed": blue below zero, red above).
METRICS = {
    "entropy": ("entropy (nats)", "low: it looks at few tokens", "size"),
    "special": (
        "weight on special tokens",
        "the model's own (pad, start, end, language codes); a head parked on </s> often does little",
        "share",
    ),
    "alignment": ("alignment accuracy", "steps whose top weight is on the gold source token", "share"),
    "importance": ("KL when ablated", "mean KL(original ‖ this head alone ablated), next token", "size"),
}
CELL_PX = 30


def summary_figure(
    summaries: dict, importance: dict[str, np.ndarray] | None = None, title: str = "", metrics: dict = METRICS
) -> go.Figure:
    """One row per metric (by default entropy, special, alignment where known, importance), one block per kind
    (layers down, heads across); the value is written in each cell, coloured as METRICS says. `importance` gives
    the importance row's grids; otherwise each row reads its cells' values."""
    kinds = list(summaries)
    n_heads = len(summaries[kinds[0]][0])
    n_layers = max(len(summaries[k]) for k in kinds)
    grids = {
        metric: {
            k: _pad(importance[k], n_layers)
            if metric == "importance" and importance is not None
            else _grid(summaries[k], metric, n_layers, n_heads)
            for k in kinds
        }
        for metric in metrics
    }
    metrics = {m: metrics[m] for m in metrics if not all(np.isnan(grid).all() for grid in grids[m].values())}
    row_px = n_layers * CELL_PX
    total = len(metrics) * (row_px + 44)
    data, layout, notes = [], {}, []
    for i, metric in enumerate(metrics):
        suffix = "" if i == 0 else str(i + 1)
        data.append(_metric_trace(metrics[metric], grids[metric], n_layers, n_heads, f"y{suffix}"))
        low = 1 - (i * (row_px + 44) + 30 + row_px) / total
        layout[f"yaxis{suffix}"] = _layers_axis(n_layers, [low, low + row_px / total])
        notes.append(_note(metrics[metric], low + row_px / total))
    width = len(kinds) * (n_heads + 1) - 1
    ticks = [
        (b * (n_heads + 1) + h, f"{NAMES[k].short} h1" if h == 0 else f"h{h + 1}")
        for b, k in enumerate(kinds)
        for h in range(n_heads)
    ]
    layout.update(
        {
            "height": total + 90,
            "margin": {"l": 40, "r": 10, "t": 80, "b": 10},
            "title": {"text": html.escape(title), "font": {"size": 12}, "x": 0, "xanchor": "left", "y": 0.995},
            "plot_bgcolor": "white",
            "annotations": notes,
            "xaxis": {
                "tickvals": [t for t, _ in ticks],
                "ticktext": [label for _, label in ticks],
                "side": "top",
                "anchor": "free",  # at the top of the figure, above the first metric's note
                "position": 1,
                "showgrid": False,
                "zeroline": False,
                "range": [-0.5, width - 0.5],
            },
            "hovermode": "closest",
            "dragmode": False,
        }
    )
    return figure(data, layout)


def _metric_trace(metric: tuple, grids: dict[str, np.ndarray], n_layers: int, n_heads: int, yaxis: str) -> dict:
    """One metric's blocks (one per kind, a column of gap between) as one heatmap with its values written in;
    `metric` is its (name, note, colouring)."""
    name, _, colouring = metric
    width = len(grids) * (n_heads + 1) - 1
    z = np.full((n_layers, width), np.nan)
    where = np.full((n_layers, width), None, dtype=object)
    for b, (kind, grid) in enumerate(grids.items()):
        left = b * (n_heads + 1)
        z[:, left : left + n_heads] = grid
        for layer, h in zip(*np.nonzero(~np.isnan(grid))):
            where[layer, left + h] = f"{kind}|Layer {layer + 1} · Head {h + 1}"
    top = 1.0 if colouring == "share" or np.isnan(z).all() else max(float(np.nanmax(np.abs(z))), 1e-9)
    return {
        "type": "heatmap",
        "z": [[None if math.isnan(v) else round(v, 4) for v in row] for row in z.tolist()],
        "text": [["" if math.isnan(v) else _short(v, colouring) for v in row] for row in z.tolist()],
        "texttemplate": "%{text}",
        "textfont": {"size": 10},
        "customdata": where.tolist(),
        "colorscale": "RdBu" if colouring == "signed" else COLORSCALE,
        "zmin": -top if colouring == "signed" else 0.0,
        "zmax": top,
        "showscale": False,
        "xaxis": "x",
        "yaxis": yaxis,
        "hovertemplate": f"%{{customdata}}<br>{html.escape(name)}: %{{z:.3f}}<extra></extra>",
        "xgap": 1,
        "ygap": 1,
    }


def _layers_axis(n_layers: int, domain: list[float]) -> dict:
    return {
        "domain": domain,
        "tickvals": list(range(n_layers)),
        "ticktext": [f"L{n + 1}" for n in range(n_layers)],
        "autorange": "reversed",
        "showgrid": False,
        "zeroline": False,
        "anchor": "x",
    }


def _note(metric: tuple, y: float) -> dict:
    """The metric's name and what it means, above its row."""
    name, note, _ = metric
    return {
        "text": f"<b>{html.escape(name)}</b>: {html.escape(note)}",
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": y,
        "yanchor": "bottom",
        "xanchor": "left",
        "showarrow": False,
        "font": {"size": 11},
    }


def _grid(summary: list, metric: str, n_layers: int, n_heads: int) -> np.ndarray:
    z = np.full((n_layers, n_heads), np.nan)
    for layer, heads in enumerate(summary):
        for h, cell in enumerate(heads):
            z[layer, h] = np.nan if cell[metric] is None else cell[metric]
    return z


def _pad(grid: np.ndarray, n_layers: int) -> np.ndarray:
    z = np.full((n_layers, grid.shape[1]), np.nan)
    z[: grid.shape[0]] = grid
    return z


def _short(value: float, colouring: str) -> str:
    if colouring == "share":
        return f"{100 * value:.0f}%"
    sign = "+" if colouring == "signed" and value > 0 else "-" if value < 0 else ""
    size = abs(value)
    if size == 0:
        return "0"
    if size < 0.001:  # a head that barely matters: its size still shows (1.2e-4)
        return sign + f"{size:.1e}".replace("e-0", "e-")
    if size < 0.1:
        return sign + f"{size:.3f}"
    return sign + (f"{size:.2f}" if size < 10 else f"{size:.0f}")


def no_effects() -> go.Figure:
    return empty_figure("Choose heads to ablate and press Ablate: each step's change shows here.", height=120)


def effects_figure(effects: list, label, held: str) -> go.Figure:
    """KL(original ‖ ablated) at each step of the original decoding (teacher-forced, so every step sees the original
    prefix); red bars where the ablated model's top token differs. Hover: the ablated top 3. `label` names a token."""
    labels = [f"{e.step}: {escape_token(label(e.token))}" for e in effects]
    hover = [
        "<br>".join(f"{escape_token(label(t))} {percent(p)}" for t, p in zip(e.top_ids, e.top_probs)) for e in effects
    ]
    data = []
    for changed, colour, name in ((False, "#6baed6", "same top token"), (True, HIGHLIGHT, "top token changes")):
        picked = [i for i, e in enumerate(effects) if e.changed == changed]
        data.append(
            {
                "type": "bar",
                "x": [labels[i] for i in picked],
                "y": [round(effects[i].kl, 4) for i in picked],
                "customdata": [hover[i] for i in picked],
                "marker": {"color": colour},
                "name": name,
                "hovertemplate": "step %{x}<br>KL %{y:.3f} nats<br>ablated top 3:<br>%{customdata}<extra></extra>",
            }
        )
    n_changed = sum(e.changed for e in effects)
    title = f"{html.escape(held)}<br>KL(original ‖ ablated) per step, original prefix: top token changes at {n_changed} of {len(effects)} steps"
    layout = {
        "title": {"text": title, "font": {"size": 12}, "x": 0, "xanchor": "left"},
        "height": 300,
        "margin": {"l": 50, "r": 10, "t": 70, "b": 80},
        "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": labels, "tickangle": -45},
        "yaxis": {"title": {"text": "KL (nats)"}, "rangemode": "tozero"},
        "barmode": "overlay",
        "plot_bgcolor": "white",
        "legend": {"orientation": "h", "y": -0.35},
    }
    return figure(data, layout)
