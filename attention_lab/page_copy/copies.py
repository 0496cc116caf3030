"""A model's page copy: what a page needs to decode it with ONNX Runtime Web, with no server. That is the two graphs
of graphs.py, the weights they share (in the copy's precision: precision.py), the tokenizer as a tokenizer.json, and
the page's config (`page_config`: the model's sizes, ids, limits and rules, what the page's messages name, and the
precision with what it changes against float32).

The app makes each of its models' copies once, in the background as it starts, and serves them as static files
(decoding/in_page.mjs loads them after the page's first paint). A copy is kept in the user's cache (CACHE), in a folder
named by the model and a digest of what it is made from (the checkpoint's files and the code that exports it), so a
changed checkpoint gets a new copy and an unchanged one is never made twice; the checkpoint's own folder stays as the
Hub has it. `attention-lab export --live` writes the same files into a live page.

Our own models and the transformers encoder–decoders the adapter loads have one (`copyable`). Ours are float32 by
default.
Another's copy is, by default, the smallest of int8 and float16 (precision.py says what each changes) whose greedy
outputs equal float32's on at least KEPT of the 50 drift sentences, else float32: int8 is a quarter of the size, and
where it changes what the model writes, the drawing would not be the model's.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.metadata
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import unicodedata
from concurrent.futures import Executor, Future
from pathlib import Path

from filelock import FileLock

import transformer.contributions
import transformer.decoderlens
import transformer.flow
import transformer.forced
import transformer.patching
import transformer.value_zeroing
from transformer import Seq2SeqPipeline, Transformer
from transformer.checkpoint import error_line
from transformer.snapshots import PATTERNS as SNAPSHOT_FILES
from transformer.tokenizer import Tokenizer

from ..checks import InputError, check_source, known_characters
from ..models.registry import ModelEntry, Registry
from ..models.snapshots import SnapshotModels
from . import analyses, differentiated, explanations, extras, graph_decoding, graphs, readings, snapshots, step
from . import precision as precision_code
from .analyses import graph_file, packed
from .graphs import WEIGHTS, exported
from .precision import PRECISIONS, converted, drift, reference_decodings
from .snapshots import loaded, snapshot_files

VENDOR = Path(__file__).resolve().parent / "vendor"  # the runtime and the tokenizer library (see its README.md)

logger = logging.getLogger("attention_lab")
HEX = set("0123456789abcdef")
FILES = ("encoder.onnx", "decoder.onnx", WEIGHTS, "tokenizer.json", "config.json")  # config.json last: it marks it made
# beside them, the explanations' graphs the model has, {name}.onnx.gz (analyses.py graph_file; config.json's
# "analyses"), and the files the tabs' page code reads that it has (extras.py; config.json's "files")
REDUCED = ("int8", "float16")  # tried in this order for a transformers model's copy (see the module's docstring)
KEPT = 0.9  # the share of the drift sentences a reduced precision must decode as float32 does, to be the default
# the libraries whose versions a copy depends on: a copy made under others is made again
LIBRARIES = ("torch", "onnx", "onnxruntime", "transformers", "tokenizers", "sentencepiece")
DRIFT_TOKENS = 48  # the most tokens a drift sentence is decoded to (a translation of one is shorter; a model that
# never writes eos would otherwise take its whole limit, 511 tokens for opus-mt, on each)
CACHE = Path(os.environ.get("ATTENTION_LAB_CACHE", Path.home() / ".cache" / "attention-lab")) / "page"
# The characters whose names a message may give (checks.describe_char): what a keyboard types in the languages
# around our models (Latin, its accents, Greek, Cyrillic, punctuation, currency, arrows, common symbols, emoji), and
# the ranges of CJK ideographs, which Unicode names by a rule (page_copy/model.mjs applies it).
NAMED = [(0x20, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x2000, 0x20CF), (0x2100, 0x21FF), (0x2600, 0x27BF)]
NAMED += [(0x3000, 0x303F), (0xFF00, 0xFFEF), (0x1F300, 0x1FAFF)]


def page_config(
    pipeline: Seq2SeqPipeline, name: str, trained_length: int | None = None, alignment: str | None = None
) -> dict:
    """What the page needs to know of the model beside its graphs (page_copy/model.mjs's `config`); `trained_length`
    and `alignment` (a gold alignment, models/alignments.py) from its card."""
    model, tokenizer = pipeline.model, pipeline.tokenizer
    c = model.config
    return {
        "head_dim": model.sublayer("cross", 0).w_o.size(1) // c.n_heads,
        "special_ids": sorted(model.special_ids),
        "rules": dataclasses.asdict(model.rules),  # what the model may write at each step (NextTokenRules)
        "marks_source": not isinstance(tokenizer, Tokenizer),  # its tokenizer.json adds eos and any other marker
        "name": name,
        "n_encoder_layers": c.n_encoder_layers,
        "n_decoder_layers": c.n_decoder_layers,
        "n_heads": c.n_heads,
        "d_model": c.d_model,
        "tgt_vocab_size": c.tgt_vocab_size,
        "pad_id": c.pad_id,
        "bos_id": c.bos_id,
        "eos_id": c.eos_id,
        "unk_id": tokenizer.unk_id,
        "max_len": c.max_len,
        "max_new_tokens": c.max_new_tokens,
        "trained_length": trained_length,
        "gold_alignment": alignment,
        "banned": sorted(model.rules.banned),
        "character_level": bool(tokenizer.is_character_level),
        "alphabet": known_characters(tokenizer),
        "ideographs": ideographs(),
        "names": named_characters(),
    }


@functools.cache
def named_characters() -> dict[str, str]:
    return {
        chr(i): unicodedata.name(chr(i)).lower()
        for start, end in NAMED
        for i in range(start, end + 1)
        if unicodedata.name(chr(i), "")
    }


@functools.cache
def ideographs() -> tuple[tuple[int, int], ...]:
    """The code ranges Unicode names by rule, "CJK UNIFIED IDEOGRAPH-" and the code (as this Python knows them)."""
    ranges: list[tuple[int, int]] = []
    for code in range(0x3400, 0x32400):
        if unicodedata.name(chr(code), "").startswith("CJK UNIFIED IDEOGRAPH-"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return tuple(ranges)


def copyable(pipeline: Seq2SeqPipeline) -> bool:
    """Whether the model can have a page copy: one loaded from a folder whose family gives the graphs' tensors (ours,
    and the adapter's transformers models)."""
    return pipeline.folder is not None and hasattr(pipeline.model, "cross_keys_values")


def made_from(pipeline: Seq2SeqPipeline, precision: str = "float32") -> str:
    """A digest of what a copy is made from: the checkpoint's files, the code that exports the graphs, and the
    precision."""
    files = sorted(p for p in Path(pipeline.folder).iterdir() if p.is_file() and not p.name.startswith("."))
    # its training snapshots' checkpoint files (those a package carries: transformer.snapshots.PATTERNS)
    files += sorted({p for pattern in SNAPSHOT_FILES for p in Path(pipeline.folder).glob(pattern) if p.is_file()})
    code = [
        Path(m.__file__)
        for m in (graphs, differentiated, step, analyses, explanations, readings, precision_code, graph_decoding)
        + (sys.modules[__name__], snapshots)
    ]
    code += [Path(__file__).with_name("drift_sentences.txt"), Path(inspect.getfile(type(pipeline.model)))]
    code += [
        Path(m.__file__)
        for m in (transformer.flow, transformer.contributions, transformer.forced, transformer.patching)
    ]  # what the explanations' graphs are traced through
    code.append(Path(transformer.value_zeroing.__file__))  # the attribution graph's hooks
    code.append(Path(transformer.decoderlens.__file__))  # the DecoderLens graph's readings
    code += [Path(inspect.getfile(graph.module)) for graph in explanations.ANALYSES]  # and their modules
    code += extras.sources()
    if not isinstance(pipeline.tokenizer, Tokenizer):  # its tokenizer.json is converted
        from ..adapters.hf import page_tokenizer as conversion

        code.append(Path(conversion.__file__))
    versions = " ".join(f"{package}={_version(package)}" for package in LIBRARIES)

    def key(p: Path) -> tuple[str, int, int]:
        return str(p), p.stat().st_size, p.stat().st_mtime_ns

    return _digest((f"{precision} {versions}", *(key(p) for p in [*files, *code])))


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "none"


@functools.lru_cache(maxsize=32)
def _digest(key: tuple) -> str:
    """The digest of the precision and the files' bytes; the same paths, sizes and times are read once."""
    digest = hashlib.sha256(key[0].encode())
    for path, _, _ in key[1:]:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def home(entry: ModelEntry, precision: str | None = None) -> Path:
    """Where the entry's copy is kept: in the cache, by its name and what it is made from."""
    name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in entry.name)
    return CACHE / f"{name}-{made_from(entry.pipeline, precision or 'default')}"


def page_tokenizer(pipeline: Seq2SeqPipeline, name: str) -> bytes:
    """The model's tokenizer as a tokenizer.json for @huggingface/tokenizers: ours as its checkpoint keeps it, a
    transformers model's as the adapter gives it (converted where it has only sentencepiece files)."""
    if isinstance(pipeline.tokenizer, Tokenizer):
        return (Path(pipeline.folder) / "tokenizer.json").read_bytes()
    from ..adapters.hf.page_tokenizer import tokenizer_json

    return tokenizer_json(pipeline.tokenizer, name).encode("utf-8")


def precision_said(precision: dict) -> str:
    """A copy's precision, and what it changes against float32, in the words the page shows beside the model's name
    (decoding/in_page.mjs, the live page's header)."""
    if precision["name"] == "float32":
        return "float32: the model's own weights"
    same = round(precision["identical"] * precision["n"])
    explained = ""
    if precision.get("max_source_share") or precision.get("max_flow_edge"):
        explained = (
            f"; source share within {precision['max_source_share']:.2g}, flow edges within "
            f"{precision['max_flow_edge']:.2g}"
        )
    return (
        f"{precision['name']}: {same} of {precision['n']} sentences decode as in float32; attention within "
        f"{precision['max_attention']:.2g}{explained}"
    )


def drift_sources(pipeline: Seq2SeqPipeline) -> list[list[int]]:
    """The 50 sources a reduced precision is measured on: everyday sentences in English, German, French and Spanish
    (drift_sentences.txt), those the model can read."""
    sources = []
    for text in Path(__file__).with_name("drift_sentences.txt").read_text(encoding="utf-8").splitlines():
        try:
            sources.append(check_source(pipeline, text.strip())[0])
        except InputError:
            continue
    return sources


def copy_files(
    pipeline: Seq2SeqPipeline,
    name: str,
    precision: str | None = None,
    trained_length: int | None = None,
    alignment: str | None = None,
    training: list | str | None = None,
) -> dict[str, bytes]:
    """The files of the model's page copy (FILES): its graphs in `precision` (the model's default if None: see the
    module's docstring), their weights, its tokenizer.json and the page's config, which states the precision and,
    for any but float32, what it changes (precision.drift, measured here against the float32 graphs); and, for a
    float32 copy, the `training` snapshots (snapshots.py: each with its model, or why it could not be loaded; or why the
    model has none)."""
    if precision is not None and precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)} (got {precision!r})")
    try:
        made = exported(pipeline.model.eval())
    except Exception as err:  # the tracer and onnx raise many kinds: the model is named, with the first line of why
        raise ValueError(f"{name}: its graphs cannot be exported to ONNX ({error_line(err)})") from err
    config = page_config(pipeline, name, trained_length, alignment)
    config["precision"] = {"name": "float32"}
    if precision is None and not isinstance(pipeline.model, Transformer):
        tried = REDUCED
    else:
        tried = () if precision in (None, "float32") else (precision,)
    sources = drift_sources(pipeline) if tried else []
    if tried and not sources:
        if precision is not None:
            raise ValueError(f"{name}: reads none of the 50 sentences {precision} is measured on, so it stays float32")
        tried = ()  # nothing to measure a reduced precision on: float32, the model's own
    measured = {**config, "max_new_tokens": min(config["max_new_tokens"], DRIFT_TOKENS)}
    wanted = reference_decodings(made, measured, sources) if tried else []
    for candidate in tried:
        try:
            reduced = converted(made, candidate)
            changed = drift(made, reduced, measured, sources, wanted)
        except Exception as err:  # onnxruntime's quantizer and sessions raise many kinds: named, with the first line
            raise ValueError(f"{name}: its graphs cannot be made {candidate} ({error_line(err)})") from err
        if precision is not None or changed.identical >= KEPT:
            config["precision"] = {"name": candidate, **dataclasses.asdict(changed)}
            made = reduced
            break
    config["precision"]["said"] = precision_said(config["precision"])
    config["analyses"] = list(made.analyses)  # the explanations' graphs it has
    extra = extras.extra_files(pipeline)
    config["files"] = list(extra)  # the tabs' own files it has
    trained = {}
    if isinstance(training, str):  # why the model has no snapshots, in the server's words
        config["untrained"] = training
    elif training and config["precision"]["name"] == "float32":
        config["snapshots"], trained = snapshot_files(made.encoder, made.decoder, made.weights, training)
    return {
        **trained,
        "encoder.onnx": made.encoder,
        "decoder.onnx": made.decoder,
        WEIGHTS: made.weights,
        "tokenizer.json": page_tokenizer(pipeline, name),
        **{graph_file(name): packed(graph) for name, graph in made.analyses.items()},
        **extra,
        "config.json": json.dumps(config, ensure_ascii=False).encode("utf-8"),
    }


def is_made(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def make(
    entry: ModelEntry, folder: Path | None = None, precision: str | None = None, training: SnapshotModels | None = None
) -> Path:
    """The entry's page copy, made into `folder` (its home by default) unless it is made already, with its training
    snapshots where `training` (the registry's) has them; returns the folder. Written into a temporary folder beside it first, so a page never loads half a copy; made under a lock, so
    that processes asking for the same copy at once (two apps, a test's workers) make it once and share it."""
    folder = folder or home(entry, precision)
    if is_made(folder):
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        if is_made(folder):  # another process made it while this one waited
            return folder
        snapshot_models = loaded(training, entry.name) if training is not None else None
        files = copy_files(
            entry.pipeline, entry.name, precision, entry.trained_length, entry.alignment, snapshot_models
        )
        work = Path(tempfile.mkdtemp(prefix=".page-", dir=folder.parent))
        work.chmod(0o755)  # served as it is
        try:
            for file in sorted(files, key=lambda f: f == "config.json"):  # config.json last
                (work / file).parent.mkdir(parents=True, exist_ok=True)
                (work / file).write_bytes(files[file])
            shutil.rmtree(folder, ignore_errors=True)  # half a copy, from a process that stopped
            work.rename(folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return folder


class PageCopies:
    """The page copies of a registry's models: where each is (or will be), made in the background one at a time."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.folders = {name: home(e) for name, e in registry.entries.items() if copyable(e.pipeline)}
        self.made: dict[str, Future] = {}

    def start(self, executor: Executor) -> None:
        """Make every copy that is not made yet, in the background; a failure is logged and its model decodes on
        the server."""
        for name, folder in self.folders.items():
            self.made[name] = executor.submit(self._make, name, folder)

    def _make(self, name: str, folder: Path) -> Path | None:
        try:
            made = make(self.registry.entries[name], folder, training=self.registry.snapshots)
            stem = folder.name.rsplit("-", 1)[0]
            for older in folder.parent.glob(f"{stem}-*"):  # the model's copies made from an older checkpoint or code
                digest = older.name[len(stem) + 1 :]
                if older != folder and older.is_dir() and len(digest) == 16 and all(c in HEX for c in digest):
                    shutil.rmtree(older, ignore_errors=True)
            return made
        except Exception:
            logger.exception("the page copy of %s could not be made: it decodes on the server", name)
            return None

    def static(self) -> list[Path]:
        """The folders the app serves as they are."""
        return list(self.folders.values())
