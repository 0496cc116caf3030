"""attention-lab export --live MODEL -o FILE.html | DIR/: one of our models decoding in the page, with no server.

The page runs the model with ONNX Runtime Web (the graphs of graphs.py), tokenizes with @huggingface/tokenizers
from the checkpoint's tokenizer.json, steps through a greedy decoding as the app does (model.mjs) and sends its
views the messages the server would send (messages.mjs), so the app's own modules draw them. Written as:

- one HTML file (FILE.html) that works opened from disk with no network: plotly.js, the runtime and its WebAssembly,
  the graphs, their weights and the tokenizer inside, each gzip-compressed and base64-encoded (the weights are
  float32, stored once for both graphs);
- a folder (DIR/) for static hosting: index.html and those parts as files beside it, and a README.md whose front
  matter makes it a static Hugging Face Space (`sdk: static`).

The runtime and the tokenizer library are the npm packages onnxruntime-web 1.30.0 (MIT) and
@huggingface/tokenizers 0.2.0 (Apache-2.0), kept in decoding/vendor/ (see its README.md).
"""

from __future__ import annotations

import argparse
import base64
import functools
import gzip
import html
import sys
import tempfile
from pathlib import Path

from transformer import DecodingSession, Seq2SeqPipeline, Transformer, load_pretrained
from transformer.bundled import BUNDLED
from transformer.checkpoint import CheckpointError

from ..assets import PAGE_CSS, bundle, bundle_name, in_script, styles
from ..attention import payload
from ..attention.kinds import PAGE_ORDER
from ..attention.looks import Look, names
from ..checks import InputError, check_source
from ..decoding.messages import Full, Key
from ..decoding.state import shown_step
from ..models.examples import first_example
from ..models.graphs import WEIGHTS, exported
from ..models.page_copy import page_config
from ..models.registry import Registry, entry_of

HERE = Path(__file__).resolve().parent
ENTRY = HERE / "live.mjs"
PACKAGE = HERE.parent
VENDOR = PACKAGE / "decoding" / "vendor"
STYLESHEETS = [
    PAGE_CSS,
    PACKAGE / "decoding" / "decoding.css",
    PACKAGE / "attention" / "attention.css",
    PACKAGE / "decoding" / "lesson.css",
    HERE / "live.css",
]
RUNTIME = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.wasm", "tokenizers.min.mjs")
LIMIT_MB = 50


def parts(pipeline: Seq2SeqPipeline) -> dict[str, bytes]:
    """The files the page loads: the graphs, their weights, the tokenizer and the runtime."""
    if not isinstance(pipeline.model, Transformer) or pipeline.folder is None:
        raise InputError("Only our own models can be exported as a live page (the Hub's run in the app).")
    graphs = exported(pipeline.model.eval())
    files = {"encoder.onnx": graphs.encoder, "decoder.onnx": graphs.decoder, WEIGHTS: graphs.weights}
    files["tokenizer.json"] = (Path(pipeline.folder) / "tokenizer.json").read_bytes()
    for name in RUNTIME:
        packed = VENDOR / f"{name}.gz"
        files[name] = gzip.decompress(packed.read_bytes()) if packed.exists() else (VENDOR / name).read_bytes()
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
  const code = new Blob([await bytes(name)], {type: "text/javascript"});
  return import(URL.createObjectURL(code));
}
const [ort, tokenizers] = await Promise.all([load("ort.wasm.bundle.min.mjs"), load("tokenizers.min.mjs")]);
performance.mark("live:runtime");
await %s.start(state, {ort, Tokenizer: tokenizers.Tokenizer, bytes});
"""


def page(pipeline: Seq2SeqPipeline, name: str, inside: dict[str, bytes] | None = None) -> str:
    """The live page's HTML; `inside`: the parts it carries (one file), or None (a folder: they lie beside it)."""
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
        "config": page_config(pipeline, name),
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
        f"<title>{html.escape(title)}</title><style>{styles(STYLESHEETS)}</style>"
        f"<script>{get_plotlyjs()}</script></head><body class='lab-export lab-live' data-busy='true'>"
        f"{controls(name)}"
        + "".join(f"<div data-part='{p}' class='lab-view'></div>" for p in ("lab-steps", "now", "candidates", "views"))
        + f"<script id='state' type='application/json'>{in_script(state)}</script><script>{bundle(ENTRY)}\n"
        f"{bundle_name(ENTRY)}.open(JSON.parse(document.getElementById('state').textContent));</script>{packed}"
        f"<script type='module'>{BOOT % bundle_name(ENTRY)}</script></body></html>"
    )


def controls(name: str) -> str:
    """The step loop's controls, with the app's labels."""
    button = "<button type='button' id='lab-{0}' class='lab-button{2}' disabled>{1}</button>"
    return (
        f"<h1>Attention Lab <small>{html.escape(name)}, decoding in this page</small></h1>"
        "<div class='live-controls'>"
        f"<label class='live-field'><span>Model</span><select id='lab-model'><option>{html.escape(name)}</option>"
        "</select></label>"
        "<label class='live-field live-source'><span>Source</span><textarea id='lab-source' rows='2'></textarea></label>"
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
license: mit
---

Attention Lab's {name} model decoding in the browser with ONNX Runtime Web: every head's encoder self-, decoder
self- and cross-attention at every step. Nothing runs on a server. Made with `attention-lab export --live {name} -o DIR/`.
"""


def write(model: str, out: Path) -> Path:
    """The live page of `model` (a bundled model's name, a checkpoint folder or a Hub repo id) as one file (out ends
    in .html) or a folder; returns what it wrote (the file, or the folder's index.html)."""
    folder = BUNDLED / model if (BUNDLED / model).is_dir() else model
    pipeline = load_pretrained(folder)
    name = model if (BUNDLED / model).is_dir() else Path(str(model).rstrip("/")).name
    files = parts(pipeline)
    if out.suffix.lower() in (".html", ".htm"):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page(pipeline, name, files), encoding="utf-8")
        return out
    out.mkdir(parents=True, exist_ok=True)
    for file, data in files.items():
        (out / file).write_bytes(data)
    (out / "README.md").write_text(SPACE_README.format(name=name), encoding="utf-8")
    (out / "index.html").write_text(page(pipeline, name), encoding="utf-8")
    return out / "index.html"


@functools.lru_cache(maxsize=4)
def live_page(pipeline: Seq2SeqPipeline, name: str) -> str:
    """The live page of a loaded model, as one file in a fresh temporary folder; its path (made once per model)."""
    path = Path(tempfile.mkdtemp(prefix="attention-")) / f"attention-lab-live-{name.replace('/', '-')}.html"
    path.write_text(page(pipeline, name, parts(pipeline)), encoding="utf-8")
    return str(path)


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.export.live") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument(
        "--live",
        required=True,
        metavar="MODEL",
        help="a bundled model's name (de-en, reverse) or a folder in our format",
    )
    parser.add_argument("-o", "--out", type=Path, required=True, help="FILE.html (one file) or DIR/ (a folder)")
    args = parser.parse_args(argv)
    try:
        path = write(args.live, args.out)
    except (InputError, CheckpointError, OSError, ValueError) as err:
        print(f"attention-lab export --live: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in path.parent.iterdir()) if path.name == "index.html" else path.stat().st_size
    print(f"{path}: the live page of {args.live} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
