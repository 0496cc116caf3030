"""attention-lab export --live MODEL [--precision P] -o FILE.html | DIR/: a model decoding in the page, with no server.

MODEL is one of ours (a bundled name or a checkpoint folder) or any transformers encoder–decoder the adapter loads
(a Hub repo id or a save_pretrained folder: Marian, BART, mBART, T5, M2M100/NLLB). The page runs it with ONNX
Runtime Web (its page copy: page_copy/copies.py, the graphs of graphs.py in the precision asked for), tokenizes with
@huggingface/tokenizers from a tokenizer.json, steps through a greedy decoding as the app does (model.mjs) and sends
its views the messages the server would send (messages.mjs), so the app's own modules draw them. Written as:

- one HTML file (FILE.html) that works opened from disk with no network: plotly.js, the page's modules bundled
  (assets.bundles: a page from disk cannot load modules by URL), the runtime and its WebAssembly, the graphs, their
  weights and the tokenizer inside, each gzip-compressed and base64-encoded; only while it stays under LIMIT_MB (a
  bigger model is refused in one line that says to write a folder);
- a folder (DIR/) for static hosting: index.html, the page's modules as they are (in lab/, by their paths under
  attention_lab/, imported by relative path) and those parts as files beside it, and a README.md whose front matter
  makes it a static Hugging Face Space (`sdk: static`), with the headers of cross-origin isolation, under which the
  runtime decodes on several threads.

The runtime and the tokenizer library are the npm packages onnxruntime-web 1.30.0 (MIT) and
@huggingface/tokenizers 0.2.0 (Apache-2.0), kept in page_copy/vendor/ (see its README.md).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import html
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from transformer import DecodingSession, Seq2SeqPipeline, load_pretrained
from transformer.bundled import BUNDLED, bundled_names
from transformer.checkpoint import CheckpointError, error_line

from ..assets import PAGE_CSS, in_script, styles
from ..assets.bundles import NAME, modules, started
from ..checks import InputError, check_source
from ..core import payload
from ..core.kinds import PAGE_ORDER
from ..core.looks import Look, names
from ..decoding.messages import Full, Key
from ..models.examples import first_example
from ..models.registry import ModelEntry, Registry, entry_of
from ..page_copy.copies import VENDOR, copyable, make
from ..page_copy.precision import PRECISIONS
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
RUNTIME = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.wasm", "tokenizers.min.mjs")
LIMIT_MB = 50
PAGE_MODULES = "lab"  # a folder's page modules, by their paths under attention_lab/
OPEN = "open(JSON.parse(document.getElementById('state').textContent))"  # draws the example as the page opens


def parts(entry: ModelEntry, precision: str | None = None) -> dict[str, bytes]:
    """The files the page loads: the model's page copy (its graphs, their weights, the tokenizer, config.json, the
    tabs' own files and its training snapshots), the one the app keeps in its cache (made there first if it is not:
    page_copy/copies.py make), and the runtime."""
    refuse_uncopyable(entry.pipeline, entry.name)
    copy = make(entry, precision=precision, training=Registry({entry.name: entry}).snapshots)
    inside = {path.relative_to(copy).as_posix(): path for path in sorted(copy.rglob("*")) if path.is_file()}
    return {**{name: path.read_bytes() for name, path in inside.items()}, **runtime()}


def refuse_uncopyable(pipeline: Seq2SeqPipeline, name: str) -> None:
    if not copyable(pipeline):
        raise InputError(f"{name}: only a model loaded from a folder or the Hub can be exported as a live page.")


def runtime() -> dict[str, bytes]:
    """The runtime's and the tokenizer library's files, as a page loads them."""
    files = {}
    for part in RUNTIME:
        packed = VENDOR / f"{part}.gz"
        files[part] = gzip.decompress(packed.read_bytes()) if packed.exists() else (VENDOR / part).read_bytes()
    return files


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
async function load(name) {
  if (!document.getElementById("part:" + name)) return import(new URL(name, document.baseURI).href);
  const code = new Blob([await bytes(name)], {type: "text/javascript"});
  return import(URL.createObjectURL(code));
}
const [ort, tokenizers] = await Promise.all([load("ort.wasm.bundle.min.mjs"), load("tokenizers.min.mjs")]);
performance.mark("live:runtime");
await %s.start(state, {ort, Tokenizer: tokenizers.Tokenizer, bytes});
"""


def page(pipeline: Seq2SeqPipeline, name: str, config: dict, inside: dict[str, bytes] | None = None) -> str:
    """The live page's HTML, for the copy whose config is `config`; `inside`: the parts it carries (one file: with
    the page's modules bundled), or None (a folder: they lie beside it, and the modules in PAGE_MODULES/)."""
    from plotly.offline import get_plotlyjs

    text = example(pipeline, name)
    session = DecodingSession(pipeline.model, check_source(pipeline, text)[0])
    session.run()
    state = {
        "names": names(),
        "kind": PAGE_ORDER[0],
        "look": Look(),
        "example": text,
        "first": Full(
            Key(0, 0), shown_step(session, None), payload.full(session, pipeline.tokenizer, name)
        ),  # drawn as the page opens
        "output": pipeline.tokenizer.decode(session.tokens),
        "config": config,
        "here": offered(json.loads(IN_PAGE.read_text(encoding="utf-8")), config) if config.get("analyses") else {},
    }
    packed = "".join(
        f"<script type='application/octet-stream' id='part:{file}'>"
        f"{base64.b64encode(gzip.compress(data, 6, mtime=0)).decode('ascii')}</script>"
        for file, data in (inside or {}).items()
    )
    title = f"Attention Lab live: {name}"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{styles(stylesheets(state['here']))}</style>"
        f"<script>{get_plotlyjs()}</script></head><body class='lab-export lab-live' data-busy='true'>"
        f"{controls(name, config['precision'])}"
        + "".join(f"<div data-part='{p}' class='lab-view'></div>" for p in ("lab-steps", "now", "candidates"))
        + tab_row(state["here"])
        + f"<script id='state' type='application/json'>{in_script(state)}</script>{scripts(inside is not None, packed)}"
        "</body></html>"
    )


def offered(here: dict, config: dict) -> dict:
    """The tabs the page makes (`here`: assets/in_page.json) that the copy whose config is `config` can: Training
    only where it carries the model's training snapshots (page_copy/snapshots.py), Survey where it carries the
    survey saved beside the model (survey/feature.py PAGE_FILE, a file the copy lists)."""
    left = [] if config.get("snapshots") else ["training"]
    left += [] if "corpus.json" in config.get("files", []) else ["survey"]
    return {
        **here,
        "tabs": [tab for tab in here["tabs"] if tab not in left],
        "titles": {tab: title for tab, title in here["titles"].items() if tab not in left},
    }


def stylesheets(here: dict) -> list[Path]:
    """The page's stylesheets: its own, then those of the tabs it makes (`here`)."""
    return [*STYLESHEETS, *(PACKAGE / path for path in here.get("stylesheets", []))]


def tab_row(here: dict) -> str:
    """The Attention tab, then each tab whose messages the page makes (`here`: assets/in_page.json), as a row of
    tabs marked up as gradio marks up the app's (assets/dom.mjs reads which is open) and a panel each."""
    titles = {"attention": "Attention", **here.get("titles", {})}
    button = "<button type='button' role='tab' data-tab-id='{0}' aria-selected='{2}' class='live-tab'>{1}</button>"
    row = "".join(
        button.format(tab, html.escape(title), str(tab == "attention").lower()) for tab, title in titles.items()
    )
    panels = "<div data-panel='attention' class='live-panel'><div data-part='views' class='lab-view'></div></div>"
    panels += "".join(
        f"<div data-panel='{tab}' class='live-panel' hidden><div data-part='tab-{tab}' class='lab-view'></div></div>"
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


LIVE_BEAM = 4  # the live page's beam size (export/live.mjs), the app's first


def controls(name: str, precision: dict) -> str:
    """The step loop's controls, with the app's labels, under the model's name and precision."""
    button = "<button type='button' id='lab-{0}' class='lab-button{2}' disabled>{1}</button>"
    return (
        f"<h1>Attention Lab <small>{html.escape(name)}, decoding in this page</small></h1>"
        f"<p class='live-precision'>{html.escape(precision['said'])}.</p>"
        "<div class='live-controls'>"
        f"<label class='live-field'><span>Model</span><select id='lab-model'><option>{html.escape(name)}</option>"
        "</select></label>"
        "<label class='live-field live-source'><span>Source</span><textarea id='lab-source' rows='2'></textarea></label>"
        "<label class='live-field'><span>Strategy</span><select id='lab-strategy'><option value='greedy'>greedy"
        f"</option><option value='beam'>beam search, {LIVE_BEAM} beams</option></select></label>"
        "<div class='live-buttons'>"
        + button.format("run", "Run", " primary")
        + button.format("step", "Step", "")
        + button.format("back", "Back", "")
        + button.format("reset", "Reset", "")
        + "</div><label class='live-field live-output'><span>Output</span>"
        "<textarea id='lab-output' rows='2' readonly></textarea></label>"
        "<p id='live-message' class='live-message' role='status' aria-live='polite'></p></div>"
    )


SPACE_README = """---
title: Attention Lab live ({name})
emoji: 🔍
colorFrom: blue
colorTo: indigo
sdk: static
app_file: index.html
pinned: false
license: {license}
custom_headers:
  cross-origin-embedder-policy: require-corp
  cross-origin-opener-policy: same-origin
  cross-origin-resource-policy: cross-origin
---

{name} decoding in the browser with ONNX Runtime Web: every head's encoder self-, decoder
self- and cross-attention at every step. Nothing runs on a server. {precision} Made with
`attention-lab export --live {name} --precision {precision_name} -o DIR/`.
"""


def load(model: str) -> ModelEntry:
    """The entry of `model` (a bundled model's name, a folder, or a Hub repo id), named as the page shows it, with
    what its card says (as the app's)."""
    if model in bundled_names():
        return entry_of(model, load_pretrained(BUNDLED / model), BUNDLED / model)
    name = Path(str(model).rstrip("/")).name  # a folder's name, or a Hub repo's
    return entry_of(name, load_pretrained(model), model)


def one_file(entry: ModelEntry, precision: str | None = None, files: dict | None = None) -> str:
    """The live page as one HTML file with every part inside (`files`: the parts, made already); InputError if the
    parts are over LIMIT_MB."""
    pipeline, name = entry.pipeline, entry.name
    files = dict(files or parts(entry, precision))
    config = json.loads(files.pop("config.json"))
    size = sum(len(data) for data in files.values()) / 1e6
    if size > LIMIT_MB:
        raise InputError(
            f"{name} in {config['precision']['name']} is {size:.0f} MB, over the {LIMIT_MB} MB a one-file page "
            "carries: write a folder (-o DIR/) or choose a smaller --precision."
        )
    return page(pipeline, name, config, files)


def write(model: str, out: Path, precision: str | None = None) -> Path:
    """The live page of `model` (a bundled model's name, a folder or a Hub repo id) in `precision` (the model's
    default if None) as one file (out ends in .html) or a folder; returns what it wrote (the file, or the folder's
    index.html). Everything is made before anything is written, and written beside its place first, so a failure
    leaves nothing half-written."""
    entry = load(model)
    pipeline, name = entry.pipeline, entry.name
    if out.suffix.lower() in (".html", ".htm"):
        text = one_file(entry, precision)
        out.parent.mkdir(parents=True, exist_ok=True)
        _placed(out, lambda path: path.write_text(text, encoding="utf-8"))
        return out
    files = parts(entry, precision)
    config = json.loads(files["config.json"])
    files["README.md"] = SPACE_README.format(
        name=name,
        precision=config["precision"]["said"] + ".",
        precision_name=config["precision"]["name"],
        license=license_of(pipeline),
    ).encode("utf-8")
    files["index.html"] = page(pipeline, name, config).encode("utf-8")
    files.update(
        {f"{PAGE_MODULES}/{path.relative_to(PACKAGE).as_posix()}": path.read_bytes() for path in modules(ENTRY)}
    )
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    older = out.with_name(f".{out.name}-older")
    try:
        for file, data in files.items():
            (work / file).parent.mkdir(parents=True, exist_ok=True)
            (work / file).write_bytes(data)
        work.chmod(0o755)  # served as it is
        if out.exists():  # the folder written before goes whole, once the new one is whole
            shutil.rmtree(older, ignore_errors=True)
            out.rename(older)
        work.rename(out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(older, ignore_errors=True)
    return out / "index.html"


def license_of(pipeline: Seq2SeqPipeline) -> str:
    """The licence its model card gives (the page carries the model's weights), "other" when it gives none."""
    from huggingface_hub import ModelCard

    card = Path(pipeline.folder) / "README.md"
    try:
        return str(ModelCard.load(card).data.license or "other") if card.is_file() else "other"
    except Exception:  # noqa: BLE001 - a card that cannot be read gives no licence
        return "other"


def _placed(path: Path, write) -> None:
    """write(a temporary path beside `path`), then move it into place."""
    temporary = path.with_name(f".{path.name}.part")
    try:
        write(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


_LIVE_PAGES: dict[int, str] = {}  # the live page made for each entry (by its id: an entry lives as long as the app)


def live_page(entry: ModelEntry) -> str:
    """The live page of a model the app serves, as one file in a fresh temporary folder, made from its page copy (the
    one the app makes as it starts: page_copy/copies.py); its path (made once per model)."""
    if id(entry) in _LIVE_PAGES:
        return _LIVE_PAGES[id(entry)]
    files = parts(entry)
    path = Path(tempfile.mkdtemp(prefix="attention-")) / f"attention-lab-live-{entry.name.replace('/', '-')}.html"
    path.write_text(one_file(entry, files=files), encoding="utf-8")
    _LIVE_PAGES[id(entry)] = str(path)
    return str(path)


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.export.live") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument(
        "--live",
        required=True,
        metavar="MODEL",
        help="a bundled model's name (de-en, reverse), a checkpoint folder (ours or transformers') or a Hub repo id",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        help="the weights' precision (default: float32 for our models; for a transformers model, int8 or else float16 "
        "if it decodes 90%% of 50 sentences as float32 does, else float32)",
    )
    parser.add_argument("-o", "--out", type=Path, required=True, help="FILE.html (one file) or DIR/ (a folder)")
    args = parser.parse_args(argv)
    try:
        path = write(args.live, args.out, args.precision)
    except (InputError, CheckpointError, OSError, ValueError) as err:
        print(f"attention-lab export --live: {error_line(err)}", file=sys.stderr)
        return 2
    size = (
        sum(p.stat().st_size for p in path.parent.rglob("*") if p.is_file())
        if path.name == "index.html"
        else path.stat().st_size
    )
    print(f"{path}: the live page of {args.live} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
