"""The page's own code: ES modules, one per view, in the feature folder they draw for (decoding/now.mjs,
attention/views.mjs, why/why.mjs...), and the shared ones here (the page's state, the decoding it holds, units and
readings, plotly helpers, the keys). The server sends data; these draw it, with the plotly.js that ships with
plotly.py. Its look: the page-wide rules here (page.css) and each feature's stylesheet beside its modules
(`stylesheets`).

`mount` is how a component loads the module that draws it (assets.components.drawn makes such a component); `bundle`
joins modules into one script, and `offline_page` makes a page with no server of it (the HTML export, survey.html).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import plotly
from plotly.offline import get_plotlyjs

from ..records import jsonable

PACKAGE = Path(__file__).resolve().parent.parent  # attention_lab/
PLOTLY = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
PAGE_CSS = Path(__file__).resolve().parent / "page.css"  # the rules the whole page shares
EMPTY = "<div class='lab-drawn'></div>"


def modules() -> list[Path]:
    """Every page module of the app (not the packages a live page carries: decoding/vendor)."""
    return sorted(p for p in PACKAGE.rglob("*.mjs") if "vendor" not in p.relative_to(PACKAGE).parts)


def styles(sheets: list[Path]) -> str:
    """The stylesheets' text, in their order: what a page with no server inlines."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sheets)


def static_files() -> list[Path]:
    """What the server serves as it is (gr.set_static_paths): the page modules and plotly.js, nothing else."""
    return [*modules(), PLOTLY]


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


IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"(\.[^"]+)";[ \t]*$', re.MULTILINE)
EXPORT = re.compile(r"^export\s+(?:async\s+)?(?:function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)", re.MULTILINE)


def bundle(*entries: Path) -> str:
    """The modules `entries` and every module they import, as one classic script: each module's code runs in a
    scope of its own, after the modules it imports, and its exports are the properties of one constant named after
    its path (bundle_name). Modules must import as `import {a, b as c} from "./x.mjs";` and export declarations."""
    order: list[Path] = []

    def visit(path: Path, trail: tuple[Path, ...]) -> None:
        if path in order:
            return
        if path in trail:
            raise ValueError(f"page modules import each other in a cycle: {' -> '.join(p.name for p in trail)}")
        for _, target in IMPORT.findall(path.read_text(encoding="utf-8")):
            visit((path.parent / target).resolve(), (*trail, path))
        order.append(path)

    for entry in entries:
        visit(entry.resolve(), ())
    return "\n".join(_scoped(path) for path in order)


def bundle_name(path: Path) -> str:
    """The constant a bundled module's exports are kept in: its path under attention_lab/ (or its name, for a module
    elsewhere), as an identifier."""
    path = path.resolve()
    where = path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else Path(path.name)
    return "lab_" + re.sub(r"\W", "_", str(where.with_suffix("")))


def _scoped(path: Path) -> str:
    code = path.read_text(encoding="utf-8")
    names = EXPORT.findall(code)

    def imported(found: re.Match) -> str:
        pairs = [part.strip().split(" as ") for part in found[1].split(",") if part.strip()]
        fields = ", ".join(p[0] if len(p) == 1 else f"{p[0].strip()}: {p[1].strip()}" for p in pairs)
        return f"const {{{fields}}} = {bundle_name((path.parent / found[2]).resolve())};"

    body = re.sub(r"^export\s+", "", IMPORT.sub(imported, code), flags=re.MULTILINE)
    return f"const {bundle_name(path)} = (() => {{\n{body}\nreturn {{{', '.join(names)}}};\n}})();"


def in_script(value) -> str:
    """JSON that can stand inside a <script> element: every "<" written as its escape, so no "</script>" or "<!--"
    in a token ends or bends it."""
    return json.dumps(jsonable(value), ensure_ascii=False).replace("<", "\\u003c")


def offline_page(title: str, body: str, entry: Path, state: object, style: str = "", body_class: str = "") -> str:
    """A page that works with no server: plotly.js inlined, `body` (HTML, escaped by the caller), then `state` as
    JSON and the page module `entry`, bundled with what it imports, started on it (its `start(state)`)."""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{style}</style><script>{get_plotlyjs()}</script></head><body class='{body_class}'>{body}"
        f"<script id='state' type='application/json'>{in_script(state)}</script>"
        f"<script>{bundle(entry)}\n"
        f"{bundle_name(entry)}.start(JSON.parse(document.getElementById('state').textContent));</script>"
        "</body></html>"
    )
