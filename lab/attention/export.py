"""The attention of a decoding, exported: every head's weights as JSON, and the whole view as one HTML file that
works offline (plotly.js inlined, no CDN)."""

from __future__ import annotations

import html
import json
import tempfile
from pathlib import Path

import plotly.io

from .drawing import Drawing
from .figures import percent
from .kinds import NAMES, PAGE_ORDER


def json_file(record: dict) -> str:
    """The attention record (lab.attention.record) written to a JSON file; returns its path."""
    path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def html_file(drawing: Drawing, shown: int, model_name: str, source: str, output: str) -> str:
    """Every view of the drawing at step `shown`, written to an HTML file; returns its path."""
    likely = "".join(f"<li>{html.escape(t)}: {percent(p)}</li>" for t, p in (drawing.top_k(shown) or {}).items())
    sections = [("This step", [drawing.now(shown) + f"<ul>{likely}</ul>"])]
    sections += [(NAMES[kind].title, [drawing.view(kind, shown)]) for kind in PAGE_ORDER]
    parts, inline = [], True  # plotly.js once, inlined with the first figure, for every figure of the page
    for title, items in sections:
        parts.append(f"<h2>{html.escape(title)}</h2>")
        for item in items:
            if isinstance(item, str):  # HTML made (and escaped) by the Drawing
                parts.append(item)
                continue
            parts.append(plotly.io.to_html(item, include_plotlyjs=inline, full_html=False))
            inline = False
    head = (
        f"<h1>Attention Lab: {html.escape(model_name)}, step {shown}</h1>"
        f"<p><b>Source:</b> {html.escape(source)}</p><p><b>Output:</b> {html.escape(output)}</p>"
    )
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Attention Lab export</title></head>'
        f"<body style='font-family: sans-serif; max-width: 1200px; margin: auto'>{head}{''.join(parts)}</body></html>"
    )
    path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention-view.html"
    path.write_text(page, encoding="utf-8")
    return str(path)
