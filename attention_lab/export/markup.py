"""The live page's markup (export/live.py writes it): the state it opens with (each model's example, decoded by
the library, its copy's config and the tabs it makes), the Model menu and the step loop's controls with the app's
labels, the row of tabs, and the scripts that start live.mjs, bundled in one file or imported as they are in a
folder."""

from __future__ import annotations

import base64
import gzip
import html
import json
from pathlib import Path

from transformer import DecodingSession, Seq2SeqPipeline

from ..assets import PAGE_CSS, in_script, plotly_js, styles
from ..assets.bundles import NAME, started
from ..checks import check_source
from ..controls import Controls
from ..core import payload
from ..core.kinds import PAGE_ORDER
from ..core.looks import Look, names
from ..decoding.messages import Full, Key
from ..models.examples import first_example
from ..models.registry import ModelEntry, Registry, entry_of
from ..run.state import shown_step

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent
ENTRY = PACKAGE / "tabs.mjs"  # live.mjs, with the tabs whose messages the page makes (above the features, as tabs.py)
IN_PAGE = PACKAGE / "assets" / "in_page.json"  # what the page is told of those tabs (written by attention_lab.schema)
STYLESHEETS = [
    PAGE_CSS,
    PACKAGE / "decoding" / "decoding.css",
    PACKAGE / "core" / "views.css",
    PACKAGE / "export" / "lesson.css",
    HERE / "live.css",
]
PAGE_MODULES = "lab"  # a folder's page modules, by their paths under attention_lab/
OPEN = "open(JSON.parse(document.getElementById('state').textContent))"  # draws the example as the page opens


def example(pipeline: Seq2SeqPipeline, name: str) -> str:
    """The example the page opens with, decoded: the app's first for the model (models.examples)."""
    return first_example(Registry({name: entry_of(name, pipeline, pipeline.folder)}), name) or "attention"


BOOT = """
const state = JSON.parse(document.getElementById("state").textContent);
async function bytes(name) {
  const inside = document.getElementById("part:" + name);
  if (!inside) return new Uint8Array(await (await fetch(name)).arrayBuffer());
  const text = inside.textContent;
  const packed = Uint8Array.fromBase64 ? Uint8Array.fromBase64(text) : Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
async function address(name) {
  if (!document.getElementById("part:" + name)) return new URL(name, document.baseURI).href;
  return URL.createObjectURL(new Blob([await bytes(name)], {type: "text/javascript"}));
}
const [runtime, tokenizer] = await Promise.all(["ort.wasm.bundle.min.mjs", "tokenizers.min.mjs"].map(address));
const [ort, tokenizers] = await Promise.all([import(runtime), import(tokenizer)]);
performance.mark("live:runtime");
await %s.start(state, {ort, Tokenizer: tokenizers.Tokenizer, bytes, runtime});
"""


def model_state(entry: ModelEntry, config: dict, prefix: str, several: bool = False) -> dict:
    """What the page is told of one model: its name, where its parts lie (`prefix`), its copy's config, the tabs it
    makes, and the example it opens with, decoded by the library (drawn at once when it is chosen, before its copy
    has loaded)."""
    pipeline, name = entry.pipeline, entry.name
    text = example(pipeline, name)
    session = DecodingSession(pipeline.model, check_source(pipeline, text)[0])
    session.run()
    return {
        "name": name,
        "prefix": prefix,
        "example": text,
        "first": Full(Key(0, 0), shown_step(session, None), payload.full(session, pipeline.tokenizer, name)),
        "output": pipeline.tokenizer.decode(session.tokens),
        "config": config,
        "here": offered(json.loads(IN_PAGE.read_text(encoding="utf-8")), config, several)
        if config.get("analyses")
        else {},
    }


def page(models: list[dict], inside: dict[str, bytes] | None = None) -> str:
    """The live page's HTML for `models` (model_state each: the first is shown as it opens); `inside`: the parts it
    carries (one file: with the page's modules bundled), or None (a folder: they lie beside it, and the modules in
    PAGE_MODULES/)."""
    here = joined([model["here"] for model in models])
    state = {"names": names(), "kind": PAGE_ORDER[0], "look": Look(), "models": models, "here": here}
    state["options"] = LIVE_OPTIONS
    packed = "".join(
        f"<script type='application/octet-stream' id='part:{file}'>"
        f"{base64.b64encode(gzip.compress(data, 6, mtime=0)).decode('ascii')}</script>"
        for file, data in (inside or {}).items()
    )
    title = f"Attention Lab live: {', '.join(model['name'] for model in models)}"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'><link rel='icon' href='data:,'>"
        f"<title>{html.escape(title)}</title><style>{styles(stylesheets(here))}</style>"
        f"<script>{plotly_js()}</script></head><body class='lab-export lab-live' data-busy='true'>"
        f"{controls(models)}"
        + "".join(f"<div data-part='{p}' class='lab-view'></div>" for p in ("lab-steps", "now", "candidates"))
        + tab_row(here, [model["name"] for model in models])
        + f"<script id='state' type='application/json'>{in_script(state)}</script>{scripts(inside is not None, packed)}"
        "</body></html>"
    )


def joined(heres: list[dict]) -> dict:
    """The tabs a page of several models makes (each model's `here`): those any of them makes, in the declared
    order, with what each says of them (the page hides a tab while the model chosen does not make it)."""
    full = json.loads(IN_PAGE.read_text(encoding="utf-8"))
    made = {tab for here in heres for tab in here.get("tabs", [])}
    if not made:
        return {}
    return {
        **full,
        "tabs": [tab for tab in full["tabs"] if tab in made],
        "titles": {tab: title for tab, title in full["titles"].items() if tab in made},
    }


def offered(here: dict, config: dict, several: bool = False) -> dict:
    """The tabs the page makes (`here`: assets/in_page.json) that the copy whose config is `config` can: Training
    only where it carries the model's training snapshots (page_copy/snapshots.py), Survey where it carries the
    survey saved beside the model (survey/feature.py PAGE_FILE, a file the copy lists), Two models in a page of
    `several` models (its side B is another of them)."""
    left = [] if config.get("snapshots") else ["training"]
    left += [] if "corpus.json" in config.get("files", []) else ["survey"]
    left += [] if several else ["two_models"]
    return {
        **here,
        "tabs": [tab for tab in here["tabs"] if tab not in left],
        "titles": {tab: title for tab, title in here["titles"].items() if tab not in left},
    }


def stylesheets(here: dict) -> list[Path]:
    """The page's stylesheets: its own, then those of the tabs it makes (`here`)."""
    return [*STYLESHEETS, *(PACKAGE / path for path in here.get("stylesheets", []))]


def tab_row(here: dict, models: list[str]) -> str:
    """The Attention tab, then each tab whose messages the page makes (`here`: assets/in_page.json), as a row of
    tabs marked up as gradio marks up the app's (assets/dom.mjs reads which is open) and a panel each; Two models'
    with its menu of side B, the page's `models` (two_models/in_page.mjs reads it as the app's Side B)."""
    pick = "".join(f"<option>{html.escape(name)}</option>" for name in models)
    controls = {
        "two_models": "<label class='live-field live-side-b' id='two-models-second'><span>Side B</span>"
        f"<select><option value=''>none</option>{pick}</select></label>"
    }
    titles = {"attention": "Attention", **here.get("titles", {})}
    button = "<button type='button' role='tab' data-tab-id='{0}' aria-selected='{2}' class='live-tab'>{1}</button>"
    row = "".join(
        button.format(tab, html.escape(title), str(tab == "attention").lower()) for tab, title in titles.items()
    )
    panels = "<div data-panel='attention' class='live-panel'><div data-part='views' class='lab-view'></div></div>"
    panels += "".join(
        f"<div data-panel='{tab}' class='live-panel' hidden>{controls.get(tab, '')}"
        f"<div data-part='tab-{tab}' class='lab-view'></div></div>"
        for tab in titles
        if tab != "attention"
    )
    return f"<div id='lab-tabs' role='tablist' class='live-tabs'>{row}</div>{panels}"


def scripts(bundled: bool, packed: str) -> str:
    """The page's code: one file's, its modules bundled and run at once, then the packed parts; a folder's, its
    modules imported as they are."""
    if bundled:
        return f"<script>{started(ENTRY, OPEN)}</script>{packed}<script type='module'>{BOOT % NAME}</script>"
    where = f"./{PAGE_MODULES}/{ENTRY.relative_to(PACKAGE).as_posix()}"
    return f"<script type='module'>import * as {NAME} from {json.dumps(where)};\n{NAME}.{OPEN};\n{BOOT % NAME}</script>"


# The live page decodes as the app does with its controls as they open (controls.py): the candidates kept at each
# step, the length limit, and the beam size when Strategy is beam search (export/live.mjs)
LIVE_OPTIONS = {"topK": Controls.top_k, "maxNew": Controls.max_len, "beamSize": Controls.beam_size}


def controls(models: list[dict]) -> str:
    """The step loop's controls, with the app's labels, under the models' names and the first one's precision (the
    page says the chosen model's)."""
    button = "<button type='button' id='lab-{0}' class='lab-button{2}' disabled>{1}</button>"
    said = ", ".join(model["name"] for model in models)
    options = "".join(f"<option>{html.escape(model['name'])}</option>" for model in models)
    return (
        f"<h1>Attention Lab <small>{html.escape(said)}, decoding in this page</small></h1>"
        f"<p class='live-precision'>{html.escape(models[0]['config']['precision']['said'])}.</p>"
        "<div class='live-controls'>"
        f"<label class='live-field'><span>Model</span><select id='lab-model'>{options}</select></label>"
        "<label class='live-field live-source'><span>Source</span><textarea id='lab-source' rows='2'></textarea></label>"
        "<label class='live-field'><span>Strategy</span><select id='lab-strategy'><option value='greedy'>greedy"
        f"</option><option value='beam'>beam search, {LIVE_OPTIONS['beamSize']} beams</option></select></label>"
        "<div class='live-buttons'>"
        + button.format("run", "Run", " primary")
        + button.format("step", "Step", "")
        + button.format("back", "Back", "")
        + button.format("reset", "Reset", "")
        + "</div><label class='live-field live-output'><span>Output</span>"
        "<textarea id='lab-output' rows='2' readonly></textarea></label>"
        "<p id='live-message' class='live-message' role='status' aria-live='polite'></p></div>"
    )
