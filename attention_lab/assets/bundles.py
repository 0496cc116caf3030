"""The page modules that a page with no server starts, each bundled with what it imports into one classic script by
esbuild at build time, and kept in assets/bundled/ (`python -m attention_lab.assets.build` remakes them; a test
fails when they differ from a fresh build). A served page (a live folder) loads the modules as they are, by relative
path: `modules` names those an entry needs.

Why a bundler, and this way: a page opened from disk (file://) cannot load a module script by URL, and an import map
cannot stand in, since a module held as a data: or blob: URL has no base for its relative imports to resolve against;
so the modules are joined by esbuild, the maintained bundler, which reads the whole module grammar. It runs at build
time from the npm package that package.json pins, so the app and `export --live` need nothing but Python: on PyPI,
`esbuild` downloads its binary when run and `esbuild-py` only transforms, and Deno's 42 MB wheel is a whole runtime.
"""

from __future__ import annotations

import json
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # attention_lab/
BUNDLED = PACKAGE / "assets" / "bundled"
MODULES = BUNDLED / "modules.json"  # each entry's modules, as paths under attention_lab/
ENTRIES = [PACKAGE / "export" / "lesson.mjs", PACKAGE / "survey" / "report.mjs", PACKAGE / "tabs.mjs"]
NAME = "lab"  # the variable a bundle's script sets to its entry's exports
REMAKE = "python -m attention_lab.assets.build"  # run from the repository, after npm ci


def bundle_file(entry: Path) -> Path:
    """Where the bundle of `entry` (a page module under attention_lab/) is kept: its path, as one file name."""
    return BUNDLED / (entry.resolve().relative_to(PACKAGE).with_suffix("").as_posix().replace("/", "-") + ".js")


def script(entry: Path) -> str:
    """The bundle of `entry`: a classic script that sets `lab` (NAME) to the entry's exports."""
    path = bundle_file(entry)
    if not path.is_file():
        raise FileNotFoundError(f"no bundle of {entry.name} in {BUNDLED}: run {REMAKE}")
    return path.read_text(encoding="utf-8")


def started(entry: Path, call: str) -> str:
    """The bundle of `entry`, then `lab.<call>`: a script that starts the page (call: JavaScript, for example
    "start(state)")."""
    return f"{script(entry)}\n{NAME}.{call};"


def modules(entry: Path) -> list[Path]:
    """The page modules `entry` imports, itself among them (what a served page needs beside it)."""
    listed = json.loads(MODULES.read_text(encoding="utf-8"))[entry.resolve().relative_to(PACKAGE).as_posix()]
    return [PACKAGE / path for path in listed]
