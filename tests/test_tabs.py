"""The page contract: a tab is a feature (attention_lab.feature) and one line in the tab table. Laid out, wired, sent
its controls and drawn from that line alone, with no other edit."""

from __future__ import annotations

import gradio as gr
import pytest

from attention_lab import tabs
from attention_lab.app import build_demo, make_lab
from attention_lab.controls import DECODING_CONTROLS, Controls
from attention_lab.feature import MARKDOWN, Feature, Output
from attention_lab.models.registry import Registry
from attention_lab.page.wiring import NotListened, handed
from attention_lab.run.state import UserState
from tests.conftest import tiny_pipelines


def layout(registry, default: str) -> dict:
    return {"notes": gr.Markdown(elem_id="lab-notes"), "detail": gr.Checkbox(False, label="In detail")}


def view(s) -> dict:
    """A new tab's view: the step shown, in more words when its own control asks."""
    text = f"step {s.shown}" + (" of the decoding" if s.controls.option("detail") else "")
    return {"notes": ((text,), lambda: text)}


NOTES = Feature("notes", "Notes", layout, (Output("notes", MARKDOWN),), view, controls=("detail",))
TABLE = (*tabs.TABS, NOTES)  # the table with one line more


def test_a_new_tab_is_laid_out_wired_and_drawn_from_its_line_in_the_table_alone():
    registry = Registry.of(tiny_pipelines())
    demo = build_demo(registry, TABLE)
    labels = {block.label for block in demo.blocks.values() if isinstance(block, gr.Tab)}
    assert "Notes" in labels
    run = next(d for d in demo.config["dependencies"] if d.get("api_name") == "ui_run")
    ids = {block._id: block for block in demo.blocks.values()}
    sent = [ids[i] for i in run["inputs"]]
    assert isinstance(sent[-1], gr.Checkbox) and sent[-1].label == "In detail"  # its control reaches every event
    answered = [ids[i] for i in run["outputs"]]
    notes = [b for b in answered if isinstance(b, gr.Markdown) and b.elem_id == "lab-notes"]
    assert len(notes) == 1  # and its output is one every decoding event may update
    lab = make_lab(registry, TABLE)
    user, c = UserState(), Controls("reverse", "abc", max_len=8, options={"detail": True})
    ran = lab.do(lab.decoding.run, user, c)
    assert "notes" not in ran  # closed: not drawn
    opened = lab.open_tab(user, c, "notes")
    assert opened == {"notes": f"step {user.shown} of the decoding"}
    assert lab.open_tab(user, c, "notes") == {}  # drawn once


def test_every_output_and_control_of_the_table_is_named_once():
    outputs = [o.name for o in tabs.outputs()]
    assert len(outputs) == len(set(outputs))
    controls = [*DECODING_CONTROLS, *tabs.options()]
    assert len(controls) == len(set(controls)) and tabs.CONTROLS == tuple(controls)
    ids = [feature.id for feature in tabs.features()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("feature", tabs.features(), ids=lambda f: f.id)
def test_every_feature_lays_out_a_component_for_each_of_its_outputs_and_controls(feature):
    registry = Registry.of(tiny_pipelines())
    with gr.Blocks():
        built = feature.layout(registry, "reverse") if feature.layout else {}
    for name in [o.name for o in feature.outputs] + list(feature.controls) + list(feature.publishes):
        assert name in built, (feature.id, name)


def test_every_event_a_feature_listens_to_is_published_by_one_feature_of_the_table():
    assert not tabs.unheard()
    assert {name for feature in tabs.features() for name in feature.listens} <= set(tabs.publishers())


def test_the_event_check_finds_an_event_nobody_publishes_and_one_published_twice():
    loud = Feature("loud", "Loud", publishes=("now",), listens=("noise",))
    assert tabs.unheard((*tabs.TABS, loud)) == [
        "now is published twice",
        "loud listens to noise, which no feature publishes",
    ]


def test_a_features_wire_is_handed_its_own_components_and_what_it_listens_to_only():
    own, heard = object(), object()
    laid = {"decoding": {"now": heard, "model": object()}, "notes": {"notes": own}}
    notes = Feature("notes", "Notes", listens=("now",))
    c = handed(notes, laid, {"now": tabs.LOOP, "model": tabs.LOOP})
    assert c["notes"] is own and c["now"] is heard
    with pytest.raises(NotListened, match="notes reads the component 'model', which is neither its own nor one it"):
        c["model"]
    with pytest.raises(ValueError, match="notes listens to now, which no feature of the table publishes"):
        handed(notes, laid, {})


def test_what_the_page_is_told_is_always_a_named_output():
    """The step loop's view and every tab's use the names of their outputs (a renamed output would otherwise
    silently stop being updated)."""
    names = {output.name for output in tabs.outputs()}
    lab = make_lab(Registry.of(tiny_pipelines()))
    for tab in tabs.TABS:
        for run in (False, True):
            user, c = UserState(), Controls("reverse", "abc", max_len=8)
            user.tab = tab.id
            if run:
                lab.do(lab.decoding.run, user, c)
            told = lab.views.wanted(lab.views.screen(user, c, None, 8))
            wanted = {o.name for part in tab.every() if part.view for o in part.outputs}
            assert set(told) <= names and wanted <= set(told), (tab.id, set(told) - names)
