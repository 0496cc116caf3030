"""The whole view as one self-contained HTML file: plotly.js inlined, so it opens offline, with no CDN."""

from __future__ import annotations

import html
import tempfile
from pathlib import Path

import plotly.io

from .actions import Controls, Lab
from .checks import InputError
from .drawing import KINDS, Drawing
from .session import UserState
from .views import percent


def page_html(lab: Lab, user: UserState, c: Controls) -> str:
    """Every view of the user's run at the shown step, written to an HTML file; returns its path."""
    with user.lock:
        run = user.run
        if run is None or not run.session.steps:
            raise InputError("Nothing to export yet: Run or Step first.")
        session = run.session
        tokenizer = lab.registry.models[run.model_name].tokenizer
        shown = lab.shown_step(session, c.shown)
        drawing = Drawing.of(session, tokenizer, c.look)
        likely = "".join(f"<li>{html.escape(t)}: {percent(p)}</li>" for t, p in (drawing.top_k(shown) or {}).items())
        sections = [("This step", [drawing.now(shown) + f"<ul>{likely}</ul>"])]
        sections += [(title, [drawing.view(k, shown)]) for k, title in KINDS.items()]
        source, output = run.text, tokenizer.decode(session.tokens)
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
        f"<h1>Attention Lab: {html.escape(run.model_name)}, step {shown}</h1>"
        f"<p><b>Source:</b> {html.escape(source)}</p><p><b>Output:</b> {html.escape(output)}</p>"
    )
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Attention Lab export</title></head>'
        f"<body style='font-family: sans-serif; max-width: 1200px; margin: auto'>{head}{''.join(parts)}</body></html>"
    )
    path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention-view.html"
    path.write_text(page, encoding="utf-8")
    return str(path)
