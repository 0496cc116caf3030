"""A model's page copy: what a page needs to decode it with ONNX Runtime Web, with no server. That is the two graphs
of graphs.py, the weights they share, the tokenizer, and the page's config (`page_config`: the model's sizes, ids,
limits and rules, and what the page's messages name).

The app makes each of its models' copies once, in the background as it starts, and serves them as static files
(decoding/road.mjs loads them after the page's first paint). A copy is kept in the user's cache (CACHE), in a folder
named by the model and a digest of what it is made from (the checkpoint's files and the code that exports it), so a
changed checkpoint gets a new copy and an unchanged one is never made twice; the checkpoint's own folder stays as the
Hub has it. `attention-lab export --live` writes the same files into a live page.

Only our own models have a copy here; a transformers model decodes on the server.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
import unicodedata
from concurrent.futures import Executor, Future
from pathlib import Path

from transformer import Seq2SeqPipeline, Transformer

from ..checks import known_characters
from . import graphs
from .graphs import WEIGHTS, exported
from .registry import ModelEntry, Registry

logger = logging.getLogger("attention_lab")
HEX = set("0123456789abcdef")
FILES = ("encoder.onnx", "decoder.onnx", WEIGHTS, "tokenizer.json", "config.json")  # config.json last: it marks it made
CACHE = Path(os.environ.get("ATTENTION_LAB_CACHE", Path.home() / ".cache" / "attention-lab")) / "page"
# The characters whose names a message may give (checks.describe_char): what a keyboard types in the languages
# around our models (Latin, its accents, Greek, Cyrillic, punctuation, currency, arrows, common symbols, emoji), and
# the ranges of CJK ideographs, which Unicode names by a rule (decoding/model.mjs applies it).
NAMED = [(0x20, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x2000, 0x20CF), (0x2100, 0x21FF), (0x2600, 0x27BF)]
NAMED += [(0x3000, 0x303F), (0xFF00, 0xFFEF), (0x1F300, 0x1FAFF)]


def page_config(pipeline: Seq2SeqPipeline, name: str, trained_length: int | None = None) -> dict:
    """What the page needs to know of the model beside its graphs (decoding/model.mjs's `config`)."""
    model, tokenizer = pipeline.model, pipeline.tokenizer
    c = model.config
    return {
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
    """Whether the model can have a page copy: one of ours, loaded from a folder."""
    return isinstance(pipeline.model, Transformer) and pipeline.folder is not None


def made_from(pipeline: Seq2SeqPipeline) -> str:
    """A digest of what a copy is made from: the checkpoint's files and the code that exports the graphs."""
    files = [Path(pipeline.folder) / name for name in ("config.json", "model.safetensors", "tokenizer.json")]
    code = [Path(graphs.__file__), Path(__file__)]
    return _digest(tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in [*files, *code] if p.is_file()))


@functools.lru_cache(maxsize=32)
def _digest(files: tuple[tuple[str, int, int], ...]) -> str:
    """The digest of the files' bytes; the same paths, sizes and times are read once."""
    digest = hashlib.sha256()
    for path, _, _ in files:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def home(entry: ModelEntry) -> Path:
    """Where the entry's copy is kept: in the cache, by its name and what it is made from."""
    name = "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in entry.name)
    return CACHE / f"{name}-{made_from(entry.pipeline)}"


def is_made(folder: Path) -> bool:
    return all((folder / name).is_file() for name in FILES)


def make(entry: ModelEntry, folder: Path | None = None) -> Path:
    """The entry's page copy, made into `folder` (its home by default) unless it is made already; returns the
    folder. Written into a temporary folder beside it first, so a page never loads half a copy."""
    folder = folder or home(entry)
    pipeline = entry.pipeline
    if is_made(folder):
        return folder
    made = exported(pipeline.model.eval())
    config = page_config(pipeline, entry.name, entry.trained_length)
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".page-", dir=folder.parent))
    work.chmod(0o755)  # served as it is
    try:
        (work / "encoder.onnx").write_bytes(made.encoder)
        (work / "decoder.onnx").write_bytes(made.decoder)
        (work / WEIGHTS).write_bytes(made.weights)
        shutil.copyfile(Path(pipeline.folder) / "tokenizer.json", work / "tokenizer.json")
        (work / "config.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
        if not is_made(folder):  # else another process made it meanwhile: theirs is as good
            shutil.rmtree(folder, ignore_errors=True)
            work.rename(folder)
    except OSError:
        if not is_made(folder):  # another process made it meanwhile: theirs is as good
            raise
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
            made = make(self.registry.entries[name], folder)
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
