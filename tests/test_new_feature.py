"""A feature owns what it adds: a throwaway feature folder (a tab with a button, a control and a view, one endpoint, a
stylesheet, a state type, a page message), its two lines of the tab table (the import and its place) and its section
of docs/tabs.md, in a copy of the project, and nothing else edited but the API page its generator writes: the app served from the copy has the tab on its page, the endpoint in its API with its limits and lane, the
stylesheet on its page, the message in its schema, its control sent by every decoding event, and the feature's state
kept apart from every other feature's; and the project's own checks (CHECKS: the structure, the names, the API, the
load benchmark's controls, the docs), run on the copy, pass as they are."""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BUILT, built_folder

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

FEATURE = '''"""Notes: a throwaway tab, one endpoint, a stylesheet and a state of its own."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import gradio as gr

from ..assets.components import drawn
from ..request import Request
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
    pressed, loud = s.run.states.get(NotesState).pressed, bool(s.controls.option("notes_loud"))
    text = f"pressed {pressed} times" + ("!" if loud else "")
    return {"note": ((pressed, loud), lambda: Note(text))}


def layout(registry, default: str) -> dict:
    return {
        "note": drawn("notes/notes.mjs", "notes-view"),
        "press": gr.Button("Press me"),
        "notes_loud": gr.Checkbox(False, label="Loudly"),
    }


def wire(c: dict, wiring) -> None:
    wiring.on(c["press"].click, press)


NOTES = Feature(
    "notes",
    "Notes",
    layout=layout,
    outputs=(Output("note", DATA),),
    view=view,
    wire=wire,
    controls=("notes_loud",),
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
# What the copy's app shows of the feature: run in the copy beside the project's own checks (CHECKS), on one served
# app (tests/conftest.py, served_app).
NOTES_TEST = r"""
import pytest

from attention_lab import app, schema
from attention_lab.controls import Controls
from attention_lab.run.state import UserState
from attention_lab.notes.feature import NotesState, press
from benchmarks.load import Request, buttons

pytestmark = pytest.mark.slow


def test_the_notes_feature_is_on_the_page_in_the_api_and_in_the_schema(served_app):
    url, registry, demo = served_app
    tabs = [block.label for block in demo.blocks.values() if type(block).__name__ == "Tab"]
    assert tabs[-1] == "Notes"  # its tab, on the page
    endpoint = next(fn for fn in demo.fns.values() if fn.api_name == "length")
    assert (endpoint.concurrency_id, endpoint.concurrency_limit) == ("heavy", 1)  # its endpoint, in its lane,
    assert endpoint.api_description.startswith("The source's tokens, counted. At most 12 source tokens")  # limits
    assert app.endpoints(app.make_lab(registry)).length("reverse", "abcd") == "5"  # answering (4 characters, </s>)
    assert app.launch_options()["css_paths"][-1].parts[-2:] == ("notes", "notes.css")  # its stylesheet
    assert "Note" in schema.page_schema()["$defs"]  # its message


def test_the_notes_feature_keeps_its_state_apart_and_reads_its_control(served_app):
    url, registry, demo = served_app
    lab, user, c = app.make_lab(registry), UserState(), Controls("reverse", "abc")
    lab.do(lab.decoding.run, user, c)
    before = {kind.__name__ for kind in user.run.states.kinds()}
    assert lab.open_tab(user, c, "notes").get("note") == {"text": "pressed 0 times", "op": "note"}  # drawn as opened
    loud = Controls("reverse", "abc", options={"notes_loud": True})
    assert lab.do(press, user, loud).get("note") == {"text": "pressed 1 times!", "op": "note"}
    after = {kind.__name__ for kind in user.run.states.kinds()}
    assert "NotesState" not in before and after - before == {"NotesState"}  # its state, apart
    assert user.run.states.get(NotesState).pressed == 1


def test_a_script_sends_the_notes_control_by_name(served_app):
    from gradio_client import Client

    client = Client(served_app[0], verbose=False)
    assert buttons(client).values["notes_loud"] is False
    assert Request("run", "reverse", "abc").call(client, notes_loud=True)["output"] == "cba"
"""
NOTES_SECTION = "\n## Notes\n\nHow often Press me was pressed; `/length` counts a source's tokens.\n"
# The project's own checks, run on the copy as they are (a pytest node id each).
CHECKS = (
    "tests/test_structure.py",
    "tests/test_names.py",  # its folder, id, section of the guide and endpoint
    "tests/test_api.py::test_the_api_page_documents_the_api_endpoints_only",
    "tests/test_api.py::test_the_load_test_sends_every_control_by_name",  # the load benchmark's controls
    "tests/test_docs.py::test_the_api_page_is_the_declarations_own",  # docs/api.md, as its generator writes it
    "tests/test_docs.py::test_every_link_of_the_pages_resolves",
)
UNUSED_PLUGINS = ("cacheprovider", "xdist", "xdist.looponfail", "hypothesispytest", "benchmark", "anyio")
LEFT_OUT = {".git", "checkpoints", "data", "node_modules", "__pycache__", ".pytest_cache", ".ruff_cache"}


def copied(repo: Path, copy: Path) -> None:
    """The project as it is, in `copy`: its files, the bundled checkpoints linked (the served app's models)."""
    shutil.copytree(repo, copy, ignore=lambda folder, names: [n for n in names if n in LEFT_OUT or n == "screenshots"])
    (copy / "checkpoints").symlink_to(repo / "checkpoints")
    (copy / "docs" / "screenshots").symlink_to(repo / "docs" / "screenshots")  # the pages' pictures, for their links


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
    guide = copy / "docs" / "tabs.md"  # its section of the guide, headed by its title (tests/test_names.py)
    guide.write_text(guide.read_text(encoding="utf-8") + NOTES_SECTION, encoding="utf-8")


def edits(original: Path, copy: Path) -> list[str]:
    """Every file of the copy that differs from the original's, and the lines changed in it."""
    changed = []
    for path in sorted(copy.rglob("*")):
        if not path.is_file() or path.is_symlink() or "__pycache__" in path.parts:
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


def test_a_new_tab_is_a_folder_two_lines_of_the_table_and_a_section_of_the_guide(tmp_path, tmp_path_factory):
    copy = tmp_path / "repo"
    copied(REPO, copy)
    added(copy)
    assert edits(REPO, copy) == [
        "new: attention_lab/notes/__init__.py",
        "new: attention_lab/notes/feature.py",
        "new: attention_lab/notes/notes.css",
        "new: attention_lab/notes/notes.mjs",
        "attention_lab/tabs.py: +from .notes.feature import NOTES",
        "attention_lab/tabs.py: +    NOTES,",
        "docs/tabs.md: +",
        "docs/tabs.md: +## Notes",
        "docs/tabs.md: +",
        "docs/tabs.md: +How often Press me was pressed; `/length` counts a source's tokens.",
    ]
    (copy / "tests" / "test_notes_added.py").write_text(NOTES_TEST)
    env = {**os.environ, "PYTHONPATH": str(copy), "GRADIO_ANALYTICS_ENABLED": "False", "HF_HUB_OFFLINE": "1"}
    # the checks' served app reads this run's copies of the bundled models (the tab changes neither those models nor
    # how a copy is made), rather than exporting them again in that run (98 s of the test's 100 s)
    env[BUILT] = str(built_folder(tmp_path_factory))
    # what a developer runs after adding an endpoint, as for the messages' schema: the API page is generated
    subprocess.run([sys.executable, "-m", "attention_lab.api_page"], cwd=copy, env=env, check=True, timeout=120)
    assert "## `/length`" in (copy / "docs" / "api.md").read_text(encoding="utf-8")
    ran = ["tests/test_notes_added.py", *CHECKS]
    # in one process, without the plugins these checks do not use (hypothesis's alone takes seconds to import)
    plugins = [arg for name in UNUSED_PLUGINS for arg in ("-p", f"no:{name}")]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *plugins, "-q", "-rA", *ran],
        cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    passed = [line.split()[1] for line in done.stdout.splitlines() if line.startswith("PASSED ")]
    assert all(any(test.startswith(check) for test in passed) for check in ran), passed  # each of them ran
