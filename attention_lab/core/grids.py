"""Every head of every kind summarised as the page draws it (the Heads tab's summary and the survey over a corpus):
one row of grids per measure, layers down and heads across. A pure function over numbers and labels."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .kinds import NAMES

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


Grid = list[list[float | None]]  # [layer][head], None where a head has no value


@dataclass
class Metric:
    key: str
    name: str
    note: str  # what it means, in one line
    colouring: str  # "share" (0 to 100%), "size" (white to the row's largest) or "signed" (blue below 0, red above)
    grids: dict[str, Grid]  # per kind


@dataclass
class Summary:
    """Every head of every kind, one row of grids per measure."""

    title: str
    kinds: list[str]
    short: dict[str, str]  # each kind's name above its block
    layers: int
    heads: int
    metrics: list[Metric]
    op: Literal["summary"] = "summary"


def summary_data(
    summaries: dict, importance: dict[str, np.ndarray] | None = None, title: str = "", metrics: dict = METRICS
) -> Summary:
    """One row per metric (by default entropy, special, alignment where known, importance) that has a value, each a
    grid per kind (layers down, heads across, None where a head has none). `importance` gives the importance row's
    grids; otherwise each row reads its cells' values."""
    kinds = list(summaries)
    n_heads = len(summaries[kinds[0]][0])
    n_layers = max(len(summaries[k]) for k in kinds)
    rows = []
    for metric, (name, note, colouring) in metrics.items():
        grids = {
            k: _pad(importance[k], n_layers)
            if metric == "importance" and importance is not None
            else _grid(summaries[k], metric, n_layers, n_heads)
            for k in kinds
        }
        if all(np.isnan(grid).all() for grid in grids.values()):
            continue
        cells = {
            k: [[None if math.isnan(v) else round(float(v), 4) for v in row] for row in g] for k, g in grids.items()
        }
        rows.append(Metric(metric, name, note, colouring, cells))
    short = {k: NAMES[k].short for k in kinds}
    return Summary(title, kinds, short, n_layers, n_heads, rows)


def _grid(summary: list, metric: str, n_layers: int, n_heads: int) -> np.ndarray:
    z = np.full((n_layers, n_heads), np.nan)
    for layer, heads in enumerate(summary):
        for h, cell in enumerate(heads):
            z[layer, h] = np.nan if cell.get(metric) is None else cell[metric]
    return z


def _pad(grid: np.ndarray, n_layers: int) -> np.ndarray:
    z = np.full((n_layers, grid.shape[1]), np.nan)
    z[: grid.shape[0]] = grid
    return z
