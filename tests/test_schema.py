"""One schema for what the page is sent: the checked-in JSON Schema (attention_lab/assets/messages.schema.json) is
the one the typed records generate, and every message the app really sends (every view of every tab, their
placeholders, the names, a lesson file's state, a survey report's), made by the Lab as the page's events drive it,
passes it in Node (ajv, tests/js/messages.mjs), as the page's modules read them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from attention_lab import schema
from attention_lab.app import make_lab
from attention_lab.attention.export import as_html
from attention_lab.beam_tree.feature import pick
from attention_lab.controls import Controls
from attention_lab.core.looks import names
from attention_lab.feature import DATA, Feature, Output
from attention_lab.heads.actions import HeadTests
from attention_lab.messages import jsonable
from attention_lab.models.registry import load_models
from attention_lab.page.frame import in_page
from attention_lab.page.lab import ASK
from attention_lab.run.state import UserState
from attention_lab.survey.report import survey_html
from attention_lab.tabs import OUTPUTS, TABS
from attention_lab.trust.feature import score_translation
from attention_lab.why.feature import ask_contrast
from tests.node import needs_node, node

DATA_OUTPUTS = {output.name for output in OUTPUTS if output.kind == DATA}


def test_what_a_live_page_is_told_of_the_tabs_is_the_tables_own():
    """export/live.py reads the declaration as data (it sits below the features): it must be the table's."""
    assert schema.IN_PAGE.read_text(encoding="utf-8") == schema.text(jsonable(in_page(TABS))), (
        "the tabs the page makes changed: run python -m attention_lab.schema"
    )
    assert "flow" in json.loads(schema.IN_PAGE.read_text(encoding="utf-8"))["tabs"]


def test_the_checked_in_schema_is_the_records_own():
    assert schema.SCHEMA.read_text(encoding="utf-8") == schema.text(schema.page_schema()), (
        "the page's records changed: run python -m attention_lab.schema"
    )
    found = json.loads(schema.SCHEMA.read_text(encoding="utf-8"))
    assert found["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    ops = {kind.__dataclass_fields__["op"].default for kind in schema.page_messages()}
    assert {"full", "step", "back", "show", "clear", "names", "lesson", "computing", "why", "trust", "tree"} <= ops


def test_a_record_a_feature_adds_changes_the_schema():
    @dataclass
    class Jottings:
        text: str
        op: Literal["jottings"] = "jottings"

    more = (*TABS, Feature("jottings", "Jottings", messages=(Jottings,)))
    assert schema.page_schema(more) != schema.page_schema()
    assert "Jottings" in schema.page_schema(more)["$defs"] and Jottings in schema.page_messages(more)
    assert schema.page_messages((*TABS, Feature("other", outputs=(Output("x", DATA),)))) == schema.page_messages()


def sent(found: dict, into: list) -> None:
    """Keep what the page was sent to its modules (the DATA outputs) of a Lab's answer."""
    into += [value for name, value in found.items() if name in DATA_OUTPUTS and value is not None]


def every_message(lab) -> list[dict]:
    """What the page is sent, tab by tab, as a person uses the app: the decoding's messages, each tab's view and its
    placeholder, a tab's own actions (a contrast, a score, a tree's node, an ablation), the names, a lesson."""
    messages: list[dict] = [jsonable(names())]
    user, c = UserState(), Controls("reverse", "abcd", options={"method": "integrated_gradients", "tree_beam": 2})
    sent(lab.do(lab.decoding.step, user, c), messages)  # a whole decoding, then a step more and one fewer
    sent(lab.do(lab.decoding.step, user, c), messages)
    sent(lab.do(lab.decoding.back, user, c), messages)
    sent(lab.do(lab.decoding.run, user, c), messages)
    sent(lab.show(user, c), messages)
    for tab in [tab.id for tab in TABS]:
        sent(lab.open_tab(user, c, tab), messages)
        sent(lab.fill(user), messages)
    sent(lab.do(ask_contrast, user, c, user.run.session.steps[0].top_ids[1]), messages)
    sent(lab.fill(user), messages)
    sent(lab.do(score_translation, user, c, "dcba"), messages)
    sent(lab.fill(user), messages)
    sent(lab.do(pick, user, c, 2), messages)
    sent(lab.do(HeadTests(lab.decoding).ablate, user, c, ["cross:1:*"]), messages)
    sent(lab.open_tab(user, c, "heads"), messages)
    sent(lab.fill(user), messages)
    lab.do(HeadTests(lab.decoding).ablate, user, c, ["cross:2:*"])
    messages.append(lab.after(user, 0)[ASK.name])  # its effects still awaited: the page is told to ask for them
    sent(lab.fill(user), messages)
    user.tab = "beams"  # a beam search's live beams
    sent(lab.do(lab.decoding.run, user, Controls("reverse", "abcd", strategy="beam", beam_size=2)), messages)
    sent(lab.do(lab.decoding.reset, user, c), messages)
    page = Path(as_html(ran(lab), {"shown": 2})).read_text(encoding="utf-8")
    messages.append(json.loads(page.split("<script id='state' type='application/json'>")[1].split("</script>")[0]))
    survey = {"model": "reverse", "sentences": 2, "score": {"name": "exact match", "value": 1.0}, "pruning": [],
              "pruning_by_kind": {}, "heads": {"cross": [[{"entropy": 0.1, "special": 0.0, "offset": -1.0,
              "alignment": 1.0, "importance": 0.5}]]}}  # fmt: skip
    report = survey_html(survey)
    messages.append(json.loads(report.split("<script id='state' type='application/json'>")[1].split("</script>")[0]))
    return messages


def ran(lab) -> UserState:
    user = UserState()
    lab.do(lab.decoding.run, user, Controls("reverse", "abcd"))
    return user


def schema_errors(messages: list[dict]) -> list[str]:
    """Each message's errors against the schema, in Node, as the page's modules would read it ("" for none)."""
    import subprocess

    check = (Path(__file__).resolve().parent / "js" / "messages.mjs").as_uri()
    script = (
        f"import {{errors}} from {json.dumps(check)};\nimport {{readFileSync}} from 'node:fs';\n"
        "process.stdout.write(JSON.stringify(JSON.parse(readFileSync(0, 'utf8')).map(errors)));"
    )
    done = subprocess.run(
        node("--input-type=module", "-e", script), input=json.dumps(messages), capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@needs_node
@pytest.mark.slow
def test_every_message_the_app_sends_is_the_schemas():
    messages = every_message(make_lab(load_models([])))
    found = schema_errors(messages)
    wrong = [f"{m.get('op')}: {e}" for m, e in zip(messages, found) if e]
    assert not wrong, wrong
    ops = {m["op"] for m in messages}
    declared = {kind.__dataclass_fields__["op"].default for kind in schema.page_messages()}
    assert ops == declared, f"never sent here: {sorted(declared - ops)}"  # every record seen once, in a real message


@needs_node
def test_the_check_finds_a_message_the_page_would_misread():
    full = {"op": "show", "key": {"serial": 1, "version": 2}, "shown": 1}
    found = schema_errors([full, {**full, "key": "1.2"}, {**full, "extra": 1}, {"op": "trust"}])
    assert found[0] == "" and all(found[1:])
