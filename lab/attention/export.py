"""The attention of a decoding, exported: every head's weights as JSON, and the page's views as one HTML file that
works offline. The HTML file is the page's own drawing code (lab/assets/views.js) with the decoding and plotly.js
inlined: its step, head, unit, scale and reading can still be changed, as on the page, with no server."""

from __future__ import annotations

import html
import json
import tempfile
from pathlib import Path

from plotly.offline import get_plotlyjs

from ..controls import Controls
from .figures import STYLE
from .kinds import NAMES, PAGE_ORDER
from .looks import READINGS, SCALES

ASSETS = Path(__file__).resolve().parent.parent / "assets"


def json_file(record: dict) -> str:
    """The attention record (lab.attention.record) written to a JSON file; returns its path."""
    path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


def in_script(value) -> str:
    """JSON that can stand inside a <script> element: every "<" written as its escape, so no "</script>" or "<!--"
    in a token ends or bends it."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def page_config() -> dict:
    """What the page's drawing code is told once: the views' colours, the kinds' names and the readings."""
    kinds = {kind: {"title": names.title, "axes": list(names.axes)} for kind, names in NAMES.items()}
    return {"style": STYLE, "kinds": kinds, "readings": READINGS}


def html_file(data: dict, c: Controls, shown: int, model_name: str, source: str, output: str) -> str:
    """The views of a decoding (lab.attention.payload.full's `data`) at step `shown`, as the controls `c` look at them,
    in one HTML file; returns its path."""
    heads = [f"Layer {layer + 1} · Head {h + 1}" for layer in range(max(data["layers"])) for h in range(data["heads"])]
    state = {
        "decoding": data,
        "config": page_config(),
        "shown": shown,
        "focuses": heads,
        "look": {
            "words": c.words,
            "hideSpecials": c.hide_specials,
            "scale": c.scale,
            "focus": c.focus,
            "reading": c.reading,
        },
        "scales": SCALES,
    }
    sections = "".join(
        f"<h2>{html.escape(NAMES[kind].title)}</h2><div id='{kind}-view' class='attention-view'></div>"
        for kind in PAGE_ORDER
    )
    style = (ASSETS / "page.css").read_text(encoding="utf-8")
    page = (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Attention Lab export</title>'
        f"<style>{style}</style><script>{get_plotlyjs()}</script></head>"
        "<body style='font-family: sans-serif; max-width: 1200px; margin: auto'>"
        f"<h1>Attention Lab: {html.escape(model_name)}</h1>"
        f"<p><b>Source:</b> {html.escape(source)}</p><p><b>Output:</b> {html.escape(output)}</p>"
        "<div id='controls' class='export-controls'></div>"
        "<div id='now'><div class='lab-now'></div></div><div id='candidates'><div class='lab-candidates'></div></div>"
        f"{sections}"
        f"<script id='decoding' type='application/json'>{in_script(state)}</script>"
        f"<script>{(ASSETS / 'views.js').read_text(encoding='utf-8')}</script>"
        f"<script>{(ASSETS / 'export.js').read_text(encoding='utf-8')}</script>"
        "</body></html>"
    )
    path = Path(tempfile.mkdtemp(prefix="attention-")) / "attention-view.html"
    path.write_text(page, encoding="utf-8")
    return str(path)
