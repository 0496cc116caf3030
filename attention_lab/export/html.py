"""A decoding's views in one HTML file that works offline: the app's own page modules (bundled into one script),
plotly.js and the decoding inlined. Its step, kind, head, words, specials, colour scale and reading can still be
changed, as on the page, with no server."""

from __future__ import annotations

import html
import json
import tempfile
from pathlib import Path

from plotly.offline import get_plotlyjs

from ..assets import CSS, PACKAGE, bundle, bundle_name
from ..attention.kinds import PAGE_ORDER
from ..attention.looks import READINGS, SCALES

OFFLINE = PACKAGE / "export" / "offline.mjs"


def in_script(value) -> str:
    """JSON that can stand inside a <script> element: every "<" written as its escape, so no "</script>" or "<!--"
    in a token ends or bends it."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c")


def look_of(sent: object) -> dict:
    """How the page looked, as it sent it, kept to what the views know (anything else: their default)."""
    sent = sent if isinstance(sent, dict) else {}
    look = sent.get("look") if isinstance(sent.get("look"), dict) else {}
    focus = look.get("focus")
    focus = focus if isinstance(focus, list) and len(focus) == 2 and all(isinstance(i, int) for i in focus) else None
    shown = sent.get("shown")
    return {
        "shown": shown if isinstance(shown, int) and shown >= 0 else None,
        "kind": sent.get("kind") if sent.get("kind") in PAGE_ORDER else PAGE_ORDER[0],
        "look": {
            "words": look.get("words") is not False,
            "hideSpecials": look.get("hideSpecials") is True,
            "scale": look.get("scale") if look.get("scale") in SCALES else "linear",
            "focus": focus,
            "reading": look.get("reading") if look.get("reading") in READINGS else "weights",
        },
    }


def page(data: dict, looked: dict, shown: int, model_name: str, source: str, output: str) -> str:
    """The HTML of the views of a decoding (attention_lab.attention.payload.full's `data`) at step `shown`, as the
    page looked (look_of)."""
    state = {"decoding": data, "shown": shown, "kind": looked["kind"], "look": looked["look"]}
    parts = "".join(f"<div id='{name}' class='lab-view'></div>" for name in ("lab-steps", "now", "candidates", "views"))
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Attention Lab export</title>'
        f"<style>{CSS.read_text(encoding='utf-8')}</style><script>{get_plotlyjs()}</script></head>"
        "<body class='lab-export'>"
        f"<h1>Attention Lab: {html.escape(model_name)}</h1>"
        f"<p><b>Source:</b> {html.escape(source)}</p><p><b>Output:</b> {html.escape(output)}</p>{parts}"
        f"<script id='decoding' type='application/json'>{in_script(state)}</script>"
        f"<script>{bundle(OFFLINE)}\n"
        f"{bundle_name(OFFLINE)}.start(JSON.parse(document.getElementById('decoding').textContent));</script>"
        "</body></html>"
    )


def written(text: str, name: str) -> str:
    """`text` written to a fresh temporary folder as `name`; returns its path."""
    path = Path(tempfile.mkdtemp(prefix="attention-")) / name
    path.write_text(text, encoding="utf-8")
    return str(path)
