"""A feature owns what it adds: a throwaway feature folder (a tab with a button and a view, one endpoint, a stylesheet,
a state type, a page message) and its line in the tab table, in a copy of the package, and nothing else edited: the
app built from the copy has the tab on its page, the endpoint in its API with its limits and lane, the stylesheet on
its page, the message in its schema, and the feature's state kept apart from every other feature's."""

from __future__ import annotations

import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

FEATURE = '''"""Notes: a throwaway tab, one endpoint, a stylesheet and a state of its own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import gradio as gr

from ..assets.components import drawn
from ..decoding.request import Request
from ..feature import DATA, HEAVY, Endpoint, Feature, Limits, Output, Screen


@dataclass
class NotesState:
    """What the tab keeps of a run: how often its button was pressed."""

    pressed: int = 0


@dataclass
class Note:
    text: str
    op: Literal["note"] = "note"


def length(request: Request, model: str, text: str) -> str:
    """The number of source tokens."""
    request.within(model, text)
    return str(len(request.entry(model).pipeline.tokenizer.encode(text)))


def press(user, c):
    user.run.states.get(NotesState).pressed += 1
    return user.shown


def view(s: Screen) -> dict:
    pressed = s.run.states.get(NotesState).pressed
    return {"note": (pressed, lambda: Note(f"pressed {pressed} times"))}


def layout(registry, default: str) -> dict:
    return {"note": drawn("notes/notes.mjs", "notes-view"), "press": gr.Button("Press me")}


def wire(c: dict, wiring) -> None:
    wiring.on(c["press"].click, press)


NOTES = Feature(
    "notes",
    "Notes",
    layout=layout,
    outputs=(Output("note", DATA),),
    view=view,
    wire=wire,
    endpoints=(Endpoint("length", length, str, "The source's tokens, counted.", Limits(12), lane=HEAVY),),
    stylesheet=Path(__file__).with_name("notes.css"),
    state=NotesState,
    messages=(Note,),
)
'''
MODULE = """// Notes: draws its note.
import {root} from "../assets/dom.mjs";

export function mount({element, props, watch}) {
  const box = root(element);
  const draw = () => { box.textContent = props.value ? props.value.text : ""; };
  watch("value", draw);
  draw();
}
"""
STYLESHEET = "#notes-view { font-style: italic; }\n"
CHECK = r"""
import json, sys
import attention_lab.app as app
from attention_lab import schema
from attention_lab.controls import Controls
from attention_lab.decoding.state import UserState
from attention_lab.models.registry import Registry
from tests.conftest import tiny_pipelines

registry = Registry.of(tiny_pipelines())
demo = app.build_demo(registry)
lab = app.make_lab(registry)
fns = {fn.api_name: fn for fn in demo.fns.values() if fn.api_name}
tabs = [block.label for block in demo.blocks.values() if type(block).__name__ == "Tab"]
endpoint = fns["length"]
user, c = UserState(), Controls("reverse", "abc")
lab.do(lab.decoding.run, user, c)
before = [kind.__name__ for kind in user.run.states.kinds()]
opened = lab.open_tab(user, c, "notes")
from attention_lab.notes.feature import NotesState, press
pressed = lab.do(press, user, c)
print(json.dumps({
    "tabs": tabs,
    "lane": [endpoint.concurrency_id, endpoint.concurrency_limit],
    "description": endpoint.api_description,
    "answer": app.endpoints(lab).length("reverse", "abcd"),
    "css": [str(p) for p in app.launch_options()["css_paths"]],
    "schema": "Note" in schema.page_schema()["$defs"],
    "opened": opened.get("note"),
    "pressed": pressed.get("note"),
    "states": [before, [kind.__name__ for kind in user.run.states.kinds()]],
    "count": user.run.states.get(NotesState).pressed,
}))
"""


def added(copy: Path) -> None:
    """The throwaway feature: its folder, and its line in the tab table (with the import that names it)."""
    folder = copy / "attention_lab" / "notes"
    folder.mkdir()
    (folder / "__init__.py").write_text('"""Notes."""\n')
    (folder / "feature.py").write_text(FEATURE)
    (folder / "notes.mjs").write_text(MODULE)
    (folder / "notes.css").write_text(STYLESHEET)
    tabs = copy / "attention_lab" / "tabs.py"
    text = tabs.read_text(encoding="utf-8")
    text = text.replace(
        "from .heads.feature import HEADS\n", "from .heads.feature import HEADS\nfrom .notes.feature import NOTES\n"
    )
    tabs.write_text(text.replace(",\n)\n", ",\n    NOTES,\n)\n", 1), encoding="utf-8")  # the table's last line


def edits(original: Path, copy: Path) -> list[str]:
    """Every file of the copy's package that differs from the original's, and the lines changed in it."""
    changed = []
    for path in sorted((copy / "attention_lab").rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        before = original / path.relative_to(copy)
        if not before.exists():
            changed.append(f"new: {path.relative_to(copy)}")
        elif before.read_bytes() != path.read_bytes():
            lines = difflib.unified_diff(before.read_text().splitlines(), path.read_text().splitlines(), n=0)
            changed += [
                f"{path.relative_to(copy)}: {line}"
                for line in lines
                if line[:1] in "+-" and line[:3] not in ("+++", "---")
            ]
    return changed


def test_a_new_feature_is_a_folder_and_its_line_in_the_table(tmp_path):
    copy = tmp_path / "repo"
    for part in ("attention_lab", "transformer", "training", "tests"):
        shutil.copytree(REPO / part, copy / part, ignore=shutil.ignore_patterns("__pycache__", "screenshots"))
    added(copy)
    assert edits(REPO, copy) == [
        "new: attention_lab/notes/__init__.py",
        "new: attention_lab/notes/feature.py",
        "new: attention_lab/notes/notes.css",
        "new: attention_lab/notes/notes.mjs",
        "attention_lab/tabs.py: +from .notes.feature import NOTES",
        "attention_lab/tabs.py: +    NOTES,",
    ]
    env = {**os.environ, "PYTHONPATH": str(copy), "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], cwd=copy, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["tabs"][-1] == "Notes"  # its tab, on the page
    assert found["lane"] == ["heavy", 1]  # its endpoint, in its lane,
    assert found["answer"] == "5"  # answering (4 characters, </s>)
    assert found["description"].startswith("The source's tokens, counted. At most 12 source tokens")  # its limits
    assert found["css"][-1] == str(copy / "attention_lab" / "notes" / "notes.css") and found["schema"]
    assert found["opened"] == {"text": "pressed 0 times", "op": "note"}  # drawn as its tab opens
    assert found["pressed"] == {"text": "pressed 1 times", "op": "note"} and found["count"] == 1
    before, after = found["states"]
    assert "NotesState" not in before and set(after) - set(before) == {"NotesState"}  # its state, apart
