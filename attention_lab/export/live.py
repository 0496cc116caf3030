"""attention-lab export --live MODEL [MODEL ...] [--precision P [P ...]] -o FILE.html | DIR/: models decoding in the
page, with no server.

Each MODEL is one of ours (a bundled name or a checkpoint folder) or any transformers encoder–decoder the adapter loads
(a Hub repo id or a save_pretrained folder: Marian, BART, mBART, T5, M2M100/NLLB). The page runs it with ONNX
Runtime Web (its page copy: page_copy/copies.py, the graphs of graphs.py in the precision asked for), tokenizes with
@huggingface/tokenizers from a tokenizer.json, steps through a greedy decoding as the app does (model.mjs) and sends
its views the messages the server would send (messages.mjs), so the app's own modules draw them. Several models
share one page: its Model menu lists them as the app's does, and each model's copy loads the first time it is chosen
(its parts under a folder of its name: MODEL/encoder.onnx...; one model's lie at the top, as they always have).
Written as:

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
import gzip
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from transformer import Seq2SeqPipeline, load_pretrained
from transformer.bundled import BUNDLED, bundled_names
from transformer.checkpoint import CheckpointError, error_line

from ..assets.bundles import modules
from ..checks import InputError
from ..models.registry import ModelEntry, Registry, entry_of
from ..page_copy.copies import VENDOR, copyable, make
from ..page_copy.precision import PRECISIONS
from .markup import ENTRY, PACKAGE, PAGE_MODULES, model_state, page

RUNTIME = ("ort.wasm.bundle.min.mjs", "ort-wasm-simd-threaded.wasm", "tokenizers.min.mjs")
LIMIT_MB = 50


def parts(entry: ModelEntry, precision: str | None = None) -> dict[str, bytes]:
    """The files the page loads for one model: its copy's (copied) and the runtime."""
    return {**copied(entry, precision), **runtime()}


def copied(entry: ModelEntry, precision: str | None = None, prefix: str = "") -> dict[str, bytes]:
    """The model's page copy (its graphs, their weights, the tokenizer, config.json, the tabs' own files and its
    training snapshots), the one the app keeps in its cache (made there first if it is not: page_copy/copies.py
    make), each file's name after `prefix` (its folder in a page of several models)."""
    refuse_uncopyable(entry.pipeline, entry.name)
    copy = make(entry, precision=precision, training=Registry({entry.name: entry}).snapshots)
    inside = {path.relative_to(copy).as_posix(): path for path in sorted(copy.rglob("*")) if path.is_file()}
    return {prefix + name: path.read_bytes() for name, path in inside.items()}


def prefixes(entries: list[ModelEntry]) -> list[str]:
    """Where each model's parts lie in the page: at the top for one model, else each in a folder of its name.
    InputError for two models of one name (the Model menu could not tell them apart)."""
    names = [entry.name for entry in entries]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise InputError(f"{', '.join(twice)}: a model named twice; a page lists each of its models once.")
    return [""] if len(entries) == 1 else [f"{name}/" for name in names]


def precisions(precision: str | list[str] | None, entries: list[ModelEntry]) -> list[str | None]:
    """Each model's precision: one for all (None: each model's default), or one per model in their order.
    InputError for another count."""
    asked = [precision] if precision is None or isinstance(precision, str) else list(precision)
    if len(asked) == 1:
        return asked * len(entries)
    if len(asked) != len(entries):
        raise InputError(
            f"--precision: {len(asked)} precisions for {len(entries)} models; give one for all, or one per model."
        )
    return asked


def all_parts(entries: list[ModelEntry], precision: str | list[str] | None = None) -> dict[str, bytes]:
    """The files a page of `entries` loads: each model's copy under its prefix, in its precision (`precision`: one
    for all, or one per model), and the runtime once."""
    files = {}
    for entry, prefix, chosen in zip(entries, prefixes(entries), precisions(precision, entries), strict=True):
        files.update(copied(entry, chosen, prefix))
    return {**files, **runtime()}


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
`attention-lab export --live {models}{precision_flag} -o DIR/`.
"""


def load(model: str) -> ModelEntry:
    """The entry of `model` (a bundled model's name, a folder, or a Hub repo id), named as the page shows it, with
    what its card says (as the app's)."""
    if model in bundled_names():
        return entry_of(model, load_pretrained(BUNDLED / model), BUNDLED / model)
    name = Path(str(model).rstrip("/")).name  # a folder's name, or a Hub repo's
    return entry_of(name, load_pretrained(model), model)


def states(entries: list[ModelEntry], files: dict[str, bytes]) -> list[dict]:
    """Each model's model_state, from its config.json among `files` (taken out of them: the page's state says it)."""
    return [
        model_state(entry, json.loads(files.pop(f"{prefix}config.json")), prefix, len(entries) > 1)
        for entry, prefix in zip(entries, prefixes(entries), strict=True)
    ]


def one_file(
    entries: ModelEntry | list[ModelEntry], precision: str | list[str] | None = None, files: dict | None = None
) -> str:
    """The live page of one model or several as one HTML file with every part inside (`files`: the parts, made
    already); InputError if the parts are over LIMIT_MB."""
    entries = [entries] if isinstance(entries, ModelEntry) else list(entries)
    files = dict(files or all_parts(entries, precision))
    models = states(entries, files)
    size = sum(len(data) for data in files.values()) / 1e6
    if size > LIMIT_MB:
        said = ", ".join(f"{model['name']} in {model['config']['precision']['name']}" for model in models)
        raise InputError(
            f"{said}: {size:.0f} MB, over the {LIMIT_MB} MB a one-file page carries: write a folder (-o DIR/) or "
            "choose a smaller --precision."
        )
    return page(models, files)


def precision_flag(precision: str | list[str] | None, named: set[str]) -> str:
    """The --precision that makes the page again: as asked, else the models' one precision (none if they differ)."""
    if precision:
        return " --precision " + " ".join([precision] if isinstance(precision, str) else precision)
    return f" --precision {named.pop()}" if len(named) == 1 else ""


def write(models: str | list[str], out: Path, precision: str | list[str] | None = None) -> Path:
    """The live page of `models` (each a bundled model's name, a folder or a Hub repo id; one, or a list) in
    `precision` (each model's default if None; one for all, or a list of one per model) as one file (out ends in .html) or a folder; returns what it wrote
    (the file, or the folder's index.html). Everything is made before anything is written, and written beside its
    place first, so a failure leaves nothing half-written."""
    wanted = [models] if isinstance(models, str) else list(models)
    entries = [load(model) for model in wanted]
    prefixes(entries)  # two of one name, or a precision too many, refused before any copy is made
    precisions(precision, entries)
    if out.suffix.lower() in (".html", ".htm"):
        text = one_file(entries, precision)
        out.parent.mkdir(parents=True, exist_ok=True)
        _placed(out, lambda path: path.write_text(text, encoding="utf-8"))
        return out
    files = all_parts(entries, precision)
    models_now = states(entries, dict(files))  # config.json stays beside each copy's files
    said = {model["config"]["precision"]["said"] for model in models_now}
    named = {model["config"]["precision"]["name"] for model in models_now}
    files["README.md"] = SPACE_README.format(
        name=", ".join(entry.name for entry in entries),
        models=" ".join(wanted),
        precision=" ".join(sorted(f"{text}." for text in said)),
        precision_flag=precision_flag(precision, named),
        license=licence(entries),
    ).encode("utf-8")
    files["index.html"] = page(models_now).encode("utf-8")
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


def licence(entries: list[ModelEntry]) -> str:
    """The licence of the Space: its models' own where they agree, else "other" (each model's card says its own)."""
    found = {license_of(entry.pipeline) for entry in entries}
    return found.pop() if len(found) == 1 else "other"


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
    path = Path(tempfile.mkdtemp(prefix="attention-")) / f"attention-lab-live-{entry.name.replace('/', '-')}.html"
    path.write_text(one_file(entry, files=parts(entry)), encoding="utf-8")
    _LIVE_PAGES[id(entry)] = str(path)
    return str(path)


def main(argv: list[str] | None = None, prog: str = "python -m attention_lab.export.live") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0].split(": ", 1)[1])
    parser.add_argument(
        "--live",
        required=True,
        nargs="+",
        metavar="MODEL",
        help="one or more models, each a bundled model's name (de-en, reverse), a checkpoint folder (ours or "
        "transformers') or a Hub repo id: the page's Model menu lists them",
    )
    parser.add_argument(
        "--precision",
        choices=PRECISIONS,
        nargs="+",
        help="the weights' precision: one for every model, or one per model in --live's order (default: float32 for "
        "our models; for a transformers model, int8 or else float16 if it decodes 90%% of 50 sentences as float32 "
        "does, else float32)",
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
    print(f"{path}: the live page of {', '.join(args.live)} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
