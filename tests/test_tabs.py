"""The page contract: a tab is one entry of the tabs table and its view. Built into the page, wired and drawn by the
table alone, with no other edit."""

from __future__ import annotations

import gradio as gr
import pytest

import app
import page
from lab.controls import CONTROLS, Controls
from lab.decoding.run import UserState
from lab.models.registry import Registry
from lab.page import lab as lab_module
from lab.page import render, tabs
from lab.page.lab import Lab
from lab.page.outputs import PLOT, Output
from tests.conftest import tiny_pipelines


def notes_view(s) -> dict:
    """A new tab's view: the step shown, as a one-bar figure."""
    return {"notes": ((s.shown,), lambda: {"data": [{"type": "bar", "y": [s.shown]}], "layout": {}})}


NOTES = tabs.Tab("notes", "Notes", (Output("notes", PLOT),), notes_view, note="The step shown, as a bar.")


@pytest.fixture
def with_notes(monkeypatch):
    """The table with one entry more, as an edit of lab/page/tabs.py would make it (the modules that read the table
    took their names from it when imported)."""
    table = (*tabs.TABS, NOTES)
    by_id = {tab.id: tab for tab in table}
    outputs = (*tabs.OUTPUTS, *NOTES.outputs)
    for module in (tabs, page, app, render, lab_module):
        for name, value in (("TABS", table), ("BY_ID", by_id), ("OUTPUTS", outputs)):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, value)


def test_a_new_tab_is_laid_out_wired_and_drawn_from_its_entry_alone(with_notes):
    registry = Registry.of(tiny_pipelines())
    lab = Lab(registry)
    with gr.Blocks():
        built = page.Page(registry, lab.default)
        assert "notes" in built.tabs and isinstance(built.notes, gr.Plot)
        assert len(built.outputs()) == 1 + len(app.OUTPUTS) and built.outputs()[-1] is built.notes
    user, c = UserState(), Controls("reverse", "abc", max_len=8)
    ran = lab.do(lab.decoding.run, user, c)
    assert "notes" not in ran  # closed: not drawn
    opened = lab.open_tab(user, c, "notes")
    shown = user.shown
    assert set(opened) == {"notes"} and opened["notes"]["data"][0]["y"] == [shown]
    assert lab.open_tab(user, c, "notes") == {}  # drawn once
    update = app.updates(opened)
    assert update[-1] == opened["notes"] and all(u == gr.skip() for u in update[:-1])


def test_every_output_of_the_table_has_its_component_and_every_control_its_input():
    registry = Registry.of(tiny_pipelines())
    lab = Lab(registry)
    with gr.Blocks():
        built = page.Page(registry, lab.default)
    assert [getattr(built, output.name) for output in tabs.OUTPUTS] == built.outputs()[1:]
    assert [getattr(built, name) for name in CONTROLS] == built.inputs()[1:]
    assert len({output.name for output in tabs.OUTPUTS}) == len(tabs.OUTPUTS)  # each output named once
    assert set(built.tabs) == set(tabs.BY_ID)


def test_what_the_page_is_told_is_always_a_named_output():
    """The decoding's outputs and every tab's view use the names of the table (a renamed output would otherwise
    silently stop being updated)."""
    names = {output.name for output in tabs.OUTPUTS}
    lab = Lab(Registry.of(tiny_pipelines()))
    for tab in tabs.TABS:
        for run in (False, True):
            user, c = UserState(), Controls("reverse", "abc", max_len=8)
            user.tab = tab.id
            if run:
                lab.do(lab.decoding.run, user, c)
            told = render.wanted(user, c, None, lab.snapshots, 8)
            assert set(told) <= names and {o.name for o in tab.outputs} <= set(told), (tab.id, set(told) - names)
