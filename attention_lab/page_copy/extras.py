"""The files a page copy carries beside its graphs for a tab's page code (the Trust tab's correct translations,
trust/reference.py: reference.json). The feature registers each from its own module (`register`), so that page_copy
imports no feature; copies.py writes those a model has into its copy, lists them in its config.json ("files") and
makes the copy again when what they are made from changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from transformer import Seq2SeqPipeline


@dataclass(frozen=True)
class Extra:
    make: Callable[[Seq2SeqPipeline], bytes | None]  # the file for a model, or None: the model has none
    sources: tuple[Path, ...]  # what it is made from: its code and its data


EXTRAS: dict[str, Extra] = {}  # by the file's name in the copy


def register(name: str, make: Callable[[Seq2SeqPipeline], bytes | None], sources: tuple[Path, ...]) -> None:
    """Every copy made from now on carries `name`, `make(pipeline)`, where the model has one."""
    EXTRAS[name] = Extra(make, tuple(sources))


def extra_files(pipeline: Seq2SeqPipeline) -> dict[str, bytes]:
    """The registered files the model has, by name."""
    made = {name: extra.make(pipeline) for name, extra in sorted(EXTRAS.items())}
    return {name: data for name, data in made.items() if data is not None}


def sources() -> list[Path]:
    """What the registered files are made from (the files of it that exist), each once, in one order whatever order
    the features registered them in (a copy's name is a digest of them: copies.py made_from)."""
    return sorted({path for extra in EXTRAS.values() for path in extra.sources if path.is_file()})
