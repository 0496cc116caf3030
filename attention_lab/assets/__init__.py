"""The page's own code: ES modules, one per view, in the feature folder they draw for (decoding/looked_at.mjs,
attention/views.mjs, why/why.mjs...), and the shared ones here (the page's state, the decoding it holds, units and
readings, plotly helpers, the keys). The server sends data; these draw it, with plotly.js's bundle of its cartesian
traces (vendor/). Its look: the page-wide rules here (page.css) and each feature's stylesheet beside its modules
(`stylesheets`).

`mount` is how a component loads the module that draws it (assets.components.drawn makes such a component), and
`offline_page` makes a page with no server (the HTML export, survey.html) from its entry's bundle (assets.bundles:
made by esbuild at build time).
"""

from __future__ import annotations

import functools
import html
import json
from pathlib import Path

from ..messages import jsonable
from .bundles import started

PACKAGE = Path(__file__).resolve().parent.parent  # attention_lab/
# plotly.js, its partial bundle of the cartesian traces (bar, heatmap, scatter: all the page draws), kept in
# assets/vendor (its README.md says from where and why)
PLOTLY = Path(__file__).resolve().parent / "vendor" / "plotly-cartesian.min.js"
PAGE_CSS = Path(__file__).resolve().parent / "page.css"  # the rules the whole page shares
EMPTY = "<div class='lab-drawn'></div>"


def modules() -> list[Path]:
    """Every page module of the app (not the packages a live page carries: page_copy/vendor)."""
    return sorted(p for p in PACKAGE.rglob("*.mjs") if "vendor" not in p.relative_to(PACKAGE).parts)


def styles(sheets: list[Path]) -> str:
    """The stylesheets' text, in their order: what a page with no server inlines."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sheets)


def static_files() -> list[Path]:
    """What the server serves as it is (gr.set_static_paths): the page modules and plotly.js, nothing else."""
    return [*modules(), PLOTLY]


@functools.cache
def plotly_js() -> str:
    """plotly.js's text (PLOTLY), for a page with no server to inline."""
    return PLOTLY.read_text(encoding="utf-8")


def url(path: Path) -> str:
    """A served file's address, relative to the page (so that a mounted app or a Space finds it too)."""
    return f"gradio_api/file={path}"


# A component's props as its module reads them: its value, sent as JSON text (components.as_text), as data, read
# once for each text; none (gradio's empty text) as null.
READ_VALUE = (
    "((text, data) => new Proxy(props, {get(target, name) { const v = target[name];"
    " if (name !== 'value' || typeof v !== 'string') return v; if (v === '') return null;"
    " if (v !== text) [text, data] = [v, JSON.parse(v)]; return data; }}))()"
)


def mount(module: str, events: tuple[str, ...] = ()) -> str:
    """The js_on_load of a component drawn by `module` (a path under attention_lab/): import it, then mount it on
    the component with gradio's element, trigger, props and watch. Only paths go into this code, never data;
    `events` names the events of its own the module triggers (gradio listens for the names this code quotes)."""
    address = url(PACKAGE / module)
    named = "".join(f" {json.dumps(name)}" for name in events)
    return (
        f"import(new URL({address!r}, document.baseURI).href)"
        ".then((m) => m.mount({element, trigger, props: " + READ_VALUE + ", watch}))"
        ".catch((err) => console.error('attention lab: ' + err));" + (f" /* its events:{named} */" if events else "")
    )


def in_script(value) -> str:
    """JSON that can stand inside a <script> element: every "<" written as its escape, so no "</script>" or "<!--"
    in a token ends or bends it."""
    return json.dumps(jsonable(value), ensure_ascii=False).replace("<", "\\u003c")


def offline_page(title: str, body: str, entry: Path, state: object, style: str = "", body_class: str = "") -> str:
    """A page that works with no server: plotly.js inlined, `body` (HTML, escaped by the caller), then `state` as
    JSON and the page module `entry`, bundled with what it imports (assets.bundles), started on it (its
    `start(state)`)."""
    start = started(entry, "start(JSON.parse(document.getElementById('state').textContent))")
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style><script>{plotly_js()}</script></head><body class='{body_class}'>{body}"
        f"<script id='state' type='application/json'>{in_script(state)}</script>"
        f"<script>{start}</script>"
        "</body></html>"
    )
