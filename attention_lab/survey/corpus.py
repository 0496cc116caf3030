"""A survey's corpus: a TSV file of sources and, optionally, references (one pair per line, tab-separated).

It is read as training.evaluate --data reads its pairs (training.data.read_tsv): lines split at "\\n" only, the
source before the first tab and the reference after it, neither stripped; so both score the same sentences.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..checks import InputError


@dataclass(frozen=True)
class Corpus:
    sources: list[str]
    references: list[str] | None  # None when the file gives none


def read_corpus(path: Path, limit: int | None = None) -> Corpus:
    """The non-blank lines of `path` (the first `limit` of them), each a source and optionally a tab and its
    reference; every line has a reference or none does. InputError says what is wrong, in one line."""
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"{path} is not UTF-8 text ({err.reason} at byte {err.start})") from None
    except OSError as err:
        raise InputError(f"{path} cannot be read ({err.strerror})") from None
    rows = [(n, line.split("\t", 1)) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    rows = rows[:limit] if limit else rows
    if not rows:
        raise InputError(f"{path} has no sentences")
    for n, fields in rows:
        if not fields[0].strip():
            raise InputError(f"{path}, line {n}: the source (before the tab) is empty")
    given = [len(fields) > 1 for _, fields in rows]
    if any(given) and not all(given):
        n = rows[given.index(False)][0]
        raise InputError(f"{path}, line {n} has no reference where others have one: give every line one, or none")
    references = [fields[1] for _, fields in rows] if all(given) else None
    return Corpus([fields[0] for _, fields in rows], references)
