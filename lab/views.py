"""Plotly figures of what a DecodingSession saw. Pure functions: no server, no gradio.

Attention arrives as numpy arrays (L layers, H heads, Q queries, K keys). Every heatmap shares one colour axis from
0 to 1. Token text is escaped before it reaches plotly (which renders a subset of HTML in labels and hovers), so a
token such as "<b>" is shown as text, never interpreted.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.colors
import plotly.graph_objects as go

from transformer import DecodingSession
from transformer.tokenizer import Tokenizer

# White (weight 0) to dark blue (weight 1), spelled out: plotly.js's own "Blues" runs the other way round.
COLORSCALE = [
    [i / (len(plotly.colors.sequential.Blues) - 1), colour] for i, colour in enumerate(plotly.colors.sequential.Blues)
]
HIGHLIGHT = "#e4572e"  # the current step, everywhere
CELL_PX = 18  # height of one token row in a heatmap
MAX_LABEL = 16  # characters of a token shown on an axis; longer ones are cut with "…" so the grid stays readable


def escape_token(token: str) -> str:
    """Plotly-safe display text: markup becomes visible text, and an empty token is still visible."""
    return html.escape(token, quote=False) if token else "∅"


def template_text(token: str) -> str:
    """A token to put inside a hovertemplate: escaped, and with "%" as an entity so "%{x}" in it stays text."""
    return escape_token(token).replace("%", "&#37;")


def axis_labels(tokens: Sequence[str]) -> list[str]:
    """Escaped tokens (cut to MAX_LABEL characters) made unique, so that a categorical axis keeps repeats apart.

    Repeats get trailing zero-width spaces: invisible on screen and in hovers, but distinct categories.
    """
    seen: dict[str, int] = {}
    labels = []
    for token in tokens:
        text = escape_token(token if len(token) <= MAX_LABEL else token[: MAX_LABEL - 1] + "…")
        labels.append(text + "\u200b" * seen.get(text, 0))
        seen[text] = seen.get(text, 0) + 1
    return labels


@dataclass
class View:
    """Which part of the (L, H, Q, K) attention to draw: a layer index or "all"; a head index, "all" or "mean"."""

    layers: int | str = "all"
    heads: int | str = "all"

    def select(self, weights: np.ndarray) -> tuple[np.ndarray, list[str], list[str]]:
        """weights (L, H, Q, K) -> (rows, cols, Q, K) with row (layer) and column (head) titles."""
        n_layers, n_heads = weights.shape[:2]
        # A layer or head this stack does not have (the encoder may be deeper than the decoder) shows them all.
        layer_ok = self.layers != "all" and 0 <= int(self.layers) < n_layers
        layers = [int(self.layers)] if layer_ok else list(range(n_layers))
        chosen = weights[layers]
        if self.heads == "mean":
            chosen, head_names = chosen.mean(axis=1, keepdims=True), ["mean of heads"]
        elif self.heads == "all":
            head_names = [f"head {h + 1}" for h in range(n_heads)]
        elif 0 <= int(self.heads) < n_heads:
            chosen, head_names = chosen[:, [int(self.heads)]], [f"head {int(self.heads) + 1}"]
        else:
            head_names = [f"head {h + 1}" for h in range(n_heads)]
        return chosen, [f"layer {layer + 1}" for layer in layers], head_names


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A plotly Figure from plain dicts, skipping plotly's per-property validation (the slow part of building)."""
    return go.Figure(data=data, layout=layout, _validate=False)


def _colour_axis() -> dict:
    return {
        "colorscale": COLORSCALE,
        "cmin": 0.0,
        "cmax": 1.0,
        "colorbar": {"title": {"text": "weight"}, "thickness": 12},
    }


@dataclass
class _Grid:
    """Where each cell of a rows x cols grid of subplots sits on the figure's paper (0-1 in both directions)."""

    n_rows: int
    n_cols: int
    height: int  # pixels

    @property
    def gaps(self) -> tuple[float, float]:
        return 0.03 + 0.04 / self.n_cols, min(90 / self.height, 0.3 / self.n_rows)

    def cell(self, r: int, c: int) -> tuple[float, float, float, float]:
        """(left, right, bottom, top) of cell (r, c)."""
        h_gap, v_gap = self.gaps
        width = (1 - h_gap * (self.n_cols - 1)) / self.n_cols
        cell_height = (1 - v_gap * (self.n_rows - 1)) / self.n_rows
        left, top = c * (width + h_gap), 1 - r * (cell_height + v_gap)
        return left, left + width, max(top - cell_height, 0), top


def _heatmap_cell(z: np.ndarray, xs: list[str], ys: list[str], suffix: str, title: str, hover: str) -> dict:
    return {
        "type": "heatmap",
        "z": np.round(z, 4),
        "x": xs,
        "y": ys,
        "xaxis": f"x{suffix}",
        "yaxis": f"y{suffix}",
        "coloraxis": "coloraxis",
        "hovertemplate": f"{hover}<extra>{title}</extra>",
    }


def _category_axis(labels: list[str], domain: list[float], anchor: str, **extra) -> dict:
    """A categorical axis that keeps the tokens in their order (repeats included)."""
    axis = {"domain": domain, "anchor": anchor, "type": "category", "categoryorder": "array"}
    return {**axis, "categoryarray": labels, "tickfont": {"size": 10}, **extra}


def _cell_title(text: str, x: float, y: float) -> dict:
    position = {"x": x, "y": y, "xref": "paper", "yref": "paper", "xanchor": "center", "yanchor": "bottom"}
    return {"text": text, **position, "showarrow": False, "font": {"size": 11}}


def _row_outline(suffix: str, row: int, n_keys: int) -> dict:
    line = {"color": HIGHLIGHT, "width": 2}
    box = {"x0": -0.5, "x1": n_keys - 0.5, "y0": row - 0.5, "y1": row + 0.5}
    return {"type": "rect", "xref": f"x{suffix}", "yref": f"y{suffix}", **box, "line": line}


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    view: View | None = None,
    highlight_row: int | None = None,
    query_title: str = "query",
    key_title: str = "key",
) -> go.Figure:
    """A grid of heatmaps, layers down and heads across, with tokens on the axes and one 0-1 colour scale.

    Hover shows the query token, the key token and the weight. `highlight_row` outlines one query row in every cell.
    """
    chosen, layer_names, head_names = (view or View()).select(np.asarray(weights, dtype=np.float32))
    n_rows, n_cols, n_queries, n_keys = chosen.shape
    ys, xs = axis_labels(query_tokens), axis_labels(key_tokens)
    height = min(120 + max(140, CELL_PX * n_queries + 70) * n_rows, 4000)
    grid = _Grid(n_rows, n_cols, height)
    hover = f"{query_title}: %{{y}}<br>{key_title}: %{{x}}<br>weight: %{{z:.3f}}"
    data, annotations, shapes = [], [], []
    margin = {"l": 10, "r": 10, "t": 40, "b": 10}
    layout = {"coloraxis": _colour_axis(), "height": height, "margin": margin, "plot_bgcolor": "white"}
    for r in range(n_rows):
        for c in range(n_cols):
            k = r * n_cols + c + 1
            suffix = "" if k == 1 else str(k)
            title = f"{layer_names[r]} · {head_names[c]}"
            left, right, bottom, top = grid.cell(r, c)
            data.append(_heatmap_cell(chosen[r, c], xs, ys, suffix, title, hover))
            layout[f"xaxis{suffix}"] = _category_axis(xs, [left, right], f"y{suffix}", tickangle=-60)
            layout[f"yaxis{suffix}"] = _category_axis(ys, [bottom, top], f"x{suffix}", autorange="reversed")
            annotations.append(_cell_title(title, (left + right) / 2, top))
            if highlight_row is not None and 0 <= highlight_row < n_queries:
                shapes.append(_row_outline(suffix, highlight_row, n_keys))
    return figure(data, {**layout, "annotations": annotations, "shapes": shapes})


def step_cross_attention(
    session: DecodingSession, tokenizer: Tokenizer, step: int, view: View | None = None
) -> go.Figure:
    """The spotlight: one step's cross-attention over the source, a row per (layer, head), in one heatmap."""
    record = session.steps[step]
    weights = np.stack([w.numpy() for w in record.cross_attention])[:, :, None, :]  # (L, H, 1, S)
    chosen, layer_names, head_names = (view or View()).select(weights)
    rows = [f"{layer} · {head}" for layer in layer_names for head in head_names]
    xs = axis_labels(tokenizer.tokens(session.src_ids))
    token = tokenizer.id_to_token(record.token)
    output = escape_token(token)
    data = [
        {
            "type": "heatmap",
            "z": np.round(chosen.reshape(len(rows), -1), 4),
            "x": xs,
            "y": rows,
            "coloraxis": "coloraxis",
            "hovertemplate": (
                f"step {step + 1} → {template_text(token)}<br>source: %{{x}}<br>"
                "%{y}<br>weight: %{z:.3f}<extra></extra>"
            ),
        }
    ]
    layout = {
        "title": {
            "text": f"Step {step + 1} wrote <b>{output}</b>: where it looked in the source",
            "font": {"size": 15},
        },
        "coloraxis": _colour_axis(),
        "height": max(220, 24 * len(rows) + 140),
        "margin": {"l": 10, "r": 10, "t": 50, "b": 10},
        "xaxis": {"type": "category", "categoryorder": "array", "categoryarray": xs, "tickangle": -60, "side": "top"},
        "yaxis": {"type": "category", "autorange": "reversed"},
    }
    return figure(data, layout)


def top_k_figure(session: DecodingSession, tokenizer: Tokenizer, step: int) -> go.Figure:
    """Bar chart of the k most likely next tokens at `step`, the token actually taken in the highlight colour."""
    record = session.steps[step]
    labels = axis_labels(tokenizer.tokens(record.top_ids))
    data = [
        {
            "type": "bar",
            "x": record.top_probs,
            "y": labels,
            "orientation": "h",
            "marker": {"color": [HIGHLIGHT if i == record.token else "#4a7ab5" for i in record.top_ids]},
            "hovertemplate": "%{y}: %{x:.3f}<extra></extra>",
            "text": [f"{p:.2f}" for p in record.top_probs],
            "textposition": "auto",
        }
    ]
    taken = escape_token(tokenizer.id_to_token(record.token))
    how = " (not the most likely)" if record.forced else ""
    layout = {
        "title": {"text": f"Step {step + 1}: next-token probabilities; took <b>{taken}</b>{how}", "font": {"size": 13}},
        "height": max(200, 26 * len(labels) + 80),
        "margin": {"l": 10, "r": 10, "t": 40, "b": 10},
        "xaxis": {"range": [0, 1], "title": {"text": "probability"}},
        "yaxis": {"type": "category", "autorange": "reversed"},
    }
    return figure(data, layout)


def decoder_matrices(session: DecodingSession, upto: int) -> tuple[np.ndarray, np.ndarray]:
    """Decoder self-attention (L, H, n, n) and cross-attention (L, H, n, S) for steps 0..upto, from the recorded rows.

    Row i is step i's query; self-attention rows are zero beyond position i (the causal mask made them exactly 0).
    """
    n = upto + 1
    first = session.steps[0]
    n_layers, n_heads = len(first.self_attention), first.self_attention[0].shape[0]
    self_attn = np.zeros((n_layers, n_heads, n, n), dtype=np.float32)
    cross = np.zeros((n_layers, n_heads, n, len(session.src_ids)), dtype=np.float32)
    for i, step in enumerate(session.steps[:n]):
        for layer in range(n_layers):
            self_attn[layer, :, i, : i + 1] = step.self_attention[layer].numpy()
            cross[layer, :, i] = step.cross_attention[layer].numpy()
    return self_attn, cross


def session_figures(session: DecodingSession, tokenizer: Tokenizer, step: int, view: View) -> dict[str, go.Figure]:
    """Every figure of the app for `step` (0-based) of `session`."""
    src_tokens = tokenizer.tokens(session.src_ids)
    encoder = np.stack([w.numpy() for w in session.encoder_attention])
    figures = {
        "encoder": attention_grid(
            encoder, src_tokens, src_tokens, view, query_title="source query", key_title="source key"
        )
    }
    if not session.steps:
        return figures
    step = min(step, len(session.steps) - 1)
    self_attn, cross = decoder_matrices(session, step)
    inputs = tokenizer.tokens([session.model.config.bos_id, *session.tokens[:step]])
    outputs = [f"{t} ({i + 1})" for i, t in enumerate(tokenizer.tokens(session.tokens[: step + 1]))]
    figures["decoder_self"] = attention_grid(
        self_attn, outputs, inputs, view, highlight_row=step, query_title="step (output)", key_title="decoder input"
    )
    figures["cross"] = attention_grid(
        cross, outputs, src_tokens, view, highlight_row=step, query_title="step (output)", key_title="source"
    )
    figures["spotlight"] = step_cross_attention(session, tokenizer, step, view)
    figures["top_k"] = top_k_figure(session, tokenizer, step)
    return figures
