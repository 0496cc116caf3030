"""The JSON Schema of every message the page is sent, generated from the typed records (attention_lab.messages)
that the features declare (Feature.messages) and that every page shares (the decoding's messages, the names, a
lesson file's state, a slow view's placeholder); the page's modules read exactly these.

    python -m attention_lab.schema           # write attention_lab/assets/messages.schema.json
    python -m attention_lab.schema --check   # exit 1 if the records and the file differ (tests/test_schema.py)

It writes beside it what a live page is told of the tabs whose messages the page makes (assets/in_page.json:
page.frame.in_page of the tab table), which export/live.py reads: the export sits below the features, so it reads
the table's declaration as data.
"""

from __future__ import annotations

import argparse
import json
import sys

from .assets import PACKAGE
from .core.looks import Names
from .export.lesson import Lesson
from .feature import Feature
from .messages import Ask, Computing, Nothing, json_schema, jsonable
from .page.frame import in_page
from .tabs import TABS, features

SCHEMA = PACKAGE / "assets" / "messages.schema.json"
IN_PAGE = PACKAGE / "assets" / "in_page.json"
SHARED = (Names, Lesson, Computing, Nothing, Ask)  # what every page may be sent, whichever features it has


def page_messages(tabs: tuple[Feature, ...] = TABS) -> tuple[type, ...]:
    return tuple(dict.fromkeys([*SHARED, *(kind for feature in features(tabs) for kind in feature.messages)]))


def page_schema(tabs: tuple[Feature, ...] = TABS) -> dict:
    description = (
        'Every message the Attention Lab page is sent, each a record with its own "op": generated from the '
        "typed records of attention_lab (python -m attention_lab.schema); do not edit by hand."
    )
    return json_schema(page_messages(tabs), "Attention Lab page messages", description)


def text(schema: dict) -> str:
    return json.dumps(schema, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_lab.schema", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the checked-in schema is current")
    args = parser.parse_args(argv)
    schema = kept(SCHEMA, text(page_schema()), args.check)
    return kept(IN_PAGE, text(jsonable(in_page(TABS))), args.check) or schema


def kept(path, wanted: str, check: bool, stale: str = "out of date") -> int:
    """A generated file written (exit 0), or with `check` only compared: 0 when current, else 1 and `stale` said."""
    if check:
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        print(f"{path.name}: {'current' if current == wanted else stale}")
        return 0 if current == wanted else 1
    path.write_text(wanted, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
