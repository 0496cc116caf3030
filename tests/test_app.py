"""The app's behaviour through the Lab, as the page's events drive it, without a server (the served app: test_api.py)."""

import dataclasses
import json
import re
import threading
from pathlib import Path

import pytest

from attention_lab.app import make_lab
from attention_lab.attention import export
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.decoding.actions import BEAM_MODE
from attention_lab.heads import feature as heads_feature
from attention_lab.messages import jsonable
from attention_lab.models.examples import CURATED, example_for
from attention_lab.models.registry import Registry
from attention_lab.run.state import UserState, loop
from attention_lab.tabs import TABS
from tests.conftest import tiny_pipelines
from transformer import DecodingSession

COMPUTING = {"op": "computing"}


@pytest.fixture(scope="module")
def lab():
    return make_lab(Registry.of(tiny_pipelines(), trained_length={"reverse": 6}))


def computing(value) -> bool:
    return isinstance(value, dict) and value.get("op") == "computing"


def test_run_equals_one_shot_decoding(lab):
    user = UserState()
    changes = lab.do(lab.decoding.run, user, Controls("reverse", "abc123", max_len=24))
    pipeline = lab.registry.entry("reverse").pipeline
    session = user.run.session
    assert changes["output"] == pipeline.generate(["abc123"], max_new_tokens=24)[0]
    eos = session.steps[-1].token == pipeline.model.config.eos_id
    n = len(session.steps)
    shown = n - 1 if eos and n > 1 else n  # the last word, not eos
    assert changes["step"] is False and changes["back"] is True
    message = changes["steps"]  # the whole decoding, for the page to draw
    assert message["op"] == "full" and message["shown"] == shown and len(message["data"]["steps"]) == n
    assert [s["token"] for s in message["data"]["steps"]] == session.tokens
    assert {"output", "status", "original", "steps"} <= set(changes)
    tabs = {output.name for tab in TABS for feature in tab.every() for output in feature.outputs}
    assert tabs and not tabs & set(changes)  # no tab is drawn by the server while it is shut


def test_step_through_gives_the_same_tokens_as_run(lab):
    stepper, runner = UserState(), UserState()
    c = Controls("de-en", "Ich habe Hunger.", max_len=10)
    lab.do(lab.decoding.run, runner, c)
    outputs = []
    while stepper.run is None or not stepper.run.session.finished:
        outputs.append(lab.do(lab.decoding.step, stepper, c).get("output"))
    assert stepper.run.session.tokens == runner.run.session.tokens
    assert outputs[-1] == lab.registry.entry("de-en").pipeline.tokenizer.decode(runner.run.session.tokens)
    with pytest.raises(InputError, match="finished"):
        lab.do(lab.decoding.step, stepper, c)


def test_a_step_after_the_first_sends_only_that_step(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    first = lab.do(lab.decoding.step, user, c)
    assert first["steps"]["shown"] == 1 and first["back"] is True and first["steps"]["op"] == "full"
    second = lab.do(lab.decoding.step, user, c)
    assert not {"original", "step", "back"} & set(second)
    step = second["steps"]
    assert step["op"] == "step" and step["after"] == first["steps"]["key"] and step["shown"] == 2
    assert step["step"]["token"] == user.run.session.steps[1].token and "encoder" not in step
    assert len(json.dumps(step)) < len(json.dumps(first["steps"]))  # the encoder and step 1 are not sent again


def test_a_tab_is_drawn_when_opened_and_only_once(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.do(lab.decoding.step, user, c)
    assert lab.open_tab(user, c, "compare") == {} and user.tab == "compare"  # the page draws it from what it holds
    stepped = lab.do(lab.decoding.step, user, c)
    assert stepped["steps"]["op"] == "step"
    heads = lab.open_tab(user, c, "heads")  # drawn by the server: slow, so a placeholder first, and a fill after
    assert set(heads) == {"heads", "effects"} and computing(heads["heads"])
    assert "Measuring every head" in heads["heads"]["text"]
    assert heads["effects"]["op"] == "none"  # no ablation yet: a hint, sent at once
    assert "No survey of de-en" in lab.open_tab(user, c, "survey")["survey"]["text"]  # at once: how to make one
    lab.open_tab(user, c, "heads")
    filled = lab.fill(user)
    assert set(filled) == {"heads"} and filled["heads"]["op"] == "summary"
    assert {row["key"] for row in filled["heads"]["metrics"]} == {"entropy", "special", "importance"}
    assert lab.fill(user) == {}  # nothing left to fill
    assert lab.open_tab(user, c, "attention") == {} and lab.open_tab(user, c, "heads") == {}  # nothing changed


def test_a_slow_output_already_waiting_for_its_value_is_not_sent_again(lab):
    """Its placeholder, sent again by a quick event (the source's change after a model switch), could reach the page
    after the fill that answers it and stay there: it is only filled."""
    user, c = UserState(), Controls("de-en", "Das ist ein Haus.", max_len=8)
    user.tab = "heads"
    first = lab.do(lab.decoding.run, user, c)
    assert computing(first["heads"])
    again = lab.show(user, c)
    assert "heads" not in again and "effects" not in again
    assert "heads" in lab.fill(user) and lab.fill(user) == {}


def test_a_fill_made_stale_by_a_later_click_is_not_sent_and_does_not_hold_the_user(lab, monkeypatch):
    """A fill is made outside the user's lock: a Step clicked meanwhile answers at once, and the summary of the
    decoding it replaced is not sent."""
    user, c = UserState(), Controls("de-en", "Das ist ein Haus.", max_len=8)
    user.tab = "heads"
    lab.do(lab.decoding.run, user, c)
    started, release = threading.Event(), threading.Event()
    summary = heads_feature.summary

    def slow_summary(run, kept):
        make = summary(run, kept)

        def waiting():
            started.set()
            release.wait(10)
            return make()

        return waiting

    monkeypatch.setattr(heads_feature, "summary", slow_summary)
    lab.do(lab.decoding.reset, user, c)
    lab.do(lab.decoding.run, user, Controls("de-en", "Wo ist der Bahnhof?", max_len=8))
    filled = {}
    fill = threading.Thread(target=lambda: filled.update(lab.fill(user)))
    fill.start()
    assert started.wait(10)
    other = Controls("de-en", "Ich habe Hunger.", max_len=8)
    stepped = {}
    step = threading.Thread(target=lambda: stepped.update(lab.do(lab.decoding.step, user, other)))
    step.start()
    step.join(5)
    assert not step.is_alive(), "a Step waited for the fill"
    assert stepped["output"] and computing(stepped["heads"])  # a new summary to make, later
    release.set()
    fill.join(10)
    assert "heads" not in filled  # the summary of "Wo ist der Bahnhof?" is stale: not sent
    assert lab.fill(user)["heads"]["op"] == "summary"  # the one the page waits for


def test_opening_a_tab_keeps_the_step_shown(lab):
    """The page selects its first tab as it opens, while its first Run may already have finished: the tab must
    show the run's step, not step 0."""
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.do(lab.decoding.run, user, c)
    shown = user.shown
    assert shown and shown > 0
    lab.open_tab(user, Controls("de-en", "Das ist ein Haus.", max_len=8, shown=0), "why")
    assert user.shown == shown


def test_step_in_beam_mode_is_refused_and_changes_nothing(lab):
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    lab.do(lab.decoding.step, user, c)
    drawn, steps = dict(user.drawn), list(user.run.session.steps)
    with pytest.raises(InputError, match="Beam mode: Step is off") as err:
        lab.do(lab.decoding.step, user, Controls("reverse", "abc", strategy="beam", max_len=8))
    assert str(err.value) == BEAM_MODE
    assert user.drawn == drawn and user.run.session.steps == steps
    switched = lab.show(user, Controls("reverse", "abc", strategy="beam", max_len=8))
    assert switched["step"] is False and BEAM_MODE in switched["status"]


def test_back_at_step_0_is_refused(lab):
    with pytest.raises(InputError, match=re.escape("Nothing to go back to: this is step 0.")):
        lab.do(lab.decoding.back, UserState(), Controls("reverse", "abc"))
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    stepped = lab.do(lab.decoding.step, user, c)
    back = lab.do(lab.decoding.back, user, c)
    assert back["back"] is False and back["output"] == ""
    assert back["steps"] == {
        "op": "back",
        "key": jsonable(user.drawn["steps"][0]),
        "after": stepped["steps"]["key"],
        "shown": 0,
        "steps": 0,
    }
    with pytest.raises(InputError, match="Nothing to go back"):
        lab.do(lab.decoding.back, user, c)


def test_back_and_what_if(lab):
    user = UserState()
    c = Controls("reverse", "hello", max_len=8)
    first = lab.do(lab.decoding.step, user, c)
    lab.do(lab.decoding.step, user, c)
    back = lab.do(lab.decoding.back, user, c)
    assert len(user.run.session.steps) == 1 and back["output"] == first["output"]
    label, token = first["steps"]["data"]["steps"][0]["top"][1][:2]  # the runner-up at step 1, as the page has it
    before = user.run.session.tokens
    forced = lab.do(lab.decoding.force, user, Controls("reverse", "hello", max_len=8, shown=1), token)
    session = user.run.session
    assert session.steps[0].token == token and session.steps[0].forced
    tokenizer = lab.registry.entry("reverse").pipeline.tokenizer
    assert tokenizer.id_to_token(token) == label  # the reversal model's labels are its characters
    data = forced["steps"]["data"]
    assert forced["steps"]["op"] == "full" and data["steps"][0]["forced"] and data["original"]["at"] == 1
    assert forced["original"] == {"value": tokenizer.decode(before), "label": "Before the what-if"}
    assert forced["steps"]["shown"] == 1 and session.finished and forced["step"] is False
    # decoding went on greedily from the forced token: the same as a fresh session forced the same way
    replay = DecodingSession(session.model, session.src_ids, max_new_tokens=8)
    replay.step(force=session.steps[0].token)
    assert replay.run() == session.tokens
    assert lab.open_tab(user, Controls("reverse", "hello", max_len=8, shown=1), "compare") == {}  # drawn in the page
    for bad in ("999999", "0", "not a candidate", "-1", None):  # out of range, pad, not an id: nothing is lost
        with pytest.raises(InputError, match="candidate"):
            lab.do(lab.decoding.force, user, Controls("de-en", "", shown=1), bad)
    assert user.run.session.tokens == session.tokens
    held = {"serial": user.run.serial, "version": user.run.version}
    reset = lab.do(lab.decoding.reset, user, c)
    assert reset["output"] == "" and reset["original"] is None and user.run is None
    assert reset["steps"] == {"op": "clear", "key": None, "shown": 0, "after": held}  # after what the page held
    with pytest.raises(InputError, match="Decode a step first"):
        lab.do(lab.decoding.force, user, Controls("reverse", "hello", shown=1), str(token))


def test_stepping_works_when_the_max_length_exceeds_the_model_limit(lab):
    user = UserState()
    limit = lab.registry.entry("reverse").pipeline.model.config.max_len
    for n in range(1, 4):
        changes = lab.do(lab.decoding.step, user, Controls("reverse", "abc", max_len=limit + 40))
        assert changes["steps"]["shown"] == n  # the run continues rather than restarting


def test_changing_the_text_or_model_starts_over(lab):
    user = UserState()
    lab.do(lab.decoding.step, user, Controls("reverse", "abc", max_len=8))
    serial = user.run.serial
    lab.do(lab.decoding.step, user, Controls("reverse", "abcd", max_len=8))
    assert len(user.run.session.steps) == 1 and user.run.text == "abcd" and user.run.serial != serial
    changes = lab.do(lab.decoding.step, user, Controls("de-en", "Das ist ein Haus.", max_len=8))
    assert user.run.entry.name == "de-en" and len(user.run.session.steps) == 1
    assert changes["steps"]["op"] == "full" and changes["steps"]["shown"] == 1  # a new decoding, at step 1 of 1


def test_a_new_model_keeps_text_it_can_read_and_otherwise_takes_its_first_example(lab):
    assert example_for(lab.registry, "reverse", "Ich habe Hunger.") == CURATED["reverse"][0][0]
    assert example_for(lab.registry, "reverse", "") == CURATED["reverse"][0][0]
    assert example_for(lab.registry, "reverse", "abc123") == "abc123"
    assert example_for(lab.registry, "de-en", "Das ist ein Haus.") == "Das ist ein Haus."
    assert example_for(lab.registry, "de-en", "Ich 😀 habe") == CURATED["de-en"][0][0]  # would be read with <unk>


def test_a_source_longer_than_the_training_data_gets_a_notice(lab):
    long = lab.do(lab.decoding.run, UserState(), Controls("reverse", "abcdefgh", max_len=12))
    assert "This source is 8 characters, longer than any the model saw in training (up to 6)" in long["status"]
    assert lab.do(lab.decoding.run, UserState(), Controls("reverse", "abcdef", max_len=12))["status"].startswith(
        "Finished"
    )
    assert (
        "longer than any"
        not in lab.do(lab.decoding.run, UserState(), Controls("de-en", "Das ist ein Haus " * 3))["status"]
    )


@pytest.mark.parametrize("text", ["", "   \n\t", None, "\u200b\u200b", " \x00 "])
def test_empty_input_is_refused_with_a_message(lab, text):
    with pytest.raises(InputError, match="empty"):
        lab.do(lab.decoding.run, UserState(), Controls("reverse", text))


def test_characters_outside_the_reversal_alphabet_are_named(lab):
    with pytest.raises(InputError, match=r"'A' \(latin capital letter a\), exclamation mark \(U\+0021\)"):
        lab.do(lab.decoding.run, UserState(), Controls("reverse", "abA!c"))


def test_text_longer_than_the_model_limit_is_truncated_with_a_notice(lab):
    user = UserState()
    changes = lab.do(lab.decoding.step, user, Controls("reverse", "a" * 100, max_len=5))
    assert "only the first 23" in changes["status"]
    src_ids = user.run.session.src_ids
    assert len(src_ids) == 24 and src_ids[-1] == lab.registry.entry("reverse").pipeline.tokenizer.eos_id  # </s> is kept


def test_unknown_model_is_a_message(lab):
    with pytest.raises(InputError, match="Unknown model"):
        lab.do(lab.decoding.run, UserState(), Controls("nope", "abc"))


def test_beam_view_and_the_json_export(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", strategy="beam", beam_size=3, max_len=8)
    changes = lab.do(lab.decoding.run, user, c)
    pipeline = lab.registry.entry("de-en").pipeline
    expected = pipeline.generate(["Das ist ein Haus."], strategy="beam", beam_size=3, max_new_tokens=8)[0]
    assert changes["output"] == expected and changes["step"] is False and BEAM_MODE in changes["status"]
    assert "beams" not in changes  # the Beams tab is drawn when it is opened
    table = lab.open_tab(user, c, "beams")["beams"]
    rows = table["rows"]
    assert table["headers"] == ["step", "rank", "hypothesis", "log-prob"] and table["op"] == "beams"
    assert rows and rows[0][:2] == [1, 1] and len(rows[0]) == 4 and {r[1] for r in rows} <= {1, 2, 3}
    record = json.loads(Path(export.as_json(user)).read_text(encoding="utf-8"))
    assert record["output_tokens"] == pipeline.tokenizer.tokens(user.run.session.tokens)
    with pytest.raises(InputError, match="Nothing to export"):
        export.as_json(UserState())


def test_the_html_export_holds_the_pages_own_views_and_escapes_the_text(lab):
    user = UserState()
    c = Controls("de-en", "<b>fett</b> & mehr", max_len=6)
    lab.do(lab.decoding.run, user, c)
    looked = {"look": {"focus": [1, 2], "scale": "log", "words": False}, "shown": 2, "kind": "encoder"}
    page = Path(export.as_html(user, looked)).read_text(encoding="utf-8")
    for part in ("lab.start(", "function kindFigures", "window.Plotly", "id='views'", "id='lab-steps'"):
        assert part in page, part  # the page's own modules, bundled; plotly.js; a place for each view
    assert "&lt;b&gt;fett&lt;/b&gt;" in page and "<b>fett</b>" not in page  # the source, escaped
    state = page.split("id='state' type='application/json'>")[1].split("</script>")[0]
    assert "<" not in state  # no "<" in the inlined decoding: it cannot end its script element
    state = json.loads(state)
    assert state["look"] == {
        "words": False,
        "hideSpecials": False,
        "scale": "log",
        "focus": [1, 2],
        "reading": "weights",
    }
    assert (state["shown"], state["kind"]) == (2, "encoder")
    odd = json.loads(Path(export.as_html(user, {"look": {"scale": "<x>", "focus": "all"}, "kind": 7})).read_text()
                     .split("type='application/json'>")[1].split("</script>")[0])  # fmt: skip
    assert odd["look"]["scale"] == "linear" and odd["look"]["focus"] is None and odd["kind"] == "cross"
    with pytest.raises(InputError, match="Nothing to export"):
        export.as_html(UserState(), looked)


def test_run_after_beam_with_greedy_decodes_greedily_again(lab):
    user = UserState()
    text = "Das ist ein Haus."
    user.tab = "beams"  # the Beams tab is open
    beam = lab.do(lab.decoding.run, user, Controls("de-en", text, strategy="beam", beam_size=3, max_len=8))
    greedy = lab.do(lab.decoding.run, user, Controls("de-en", text, max_len=8))
    pipeline = lab.registry.entry("de-en").pipeline
    assert pipeline.tokenizer.decode(user.run.session.tokens) == pipeline.generate([text], max_new_tokens=8)[0]
    assert not any(step.forced for step in user.run.session.steps)  # decoded, not the beam replayed
    assert beam["beams"]["rows"] and greedy.get("beams")["op"] == "none"  # a hint: no beam search now


def test_a_run_without_a_max_length_takes_the_models(lab):
    user = UserState()
    pipeline = lab.registry.entry("reverse").pipeline
    changes = lab.do(lab.decoding.run, user, Controls("reverse", "abc", max_len=None))
    assert user.run.max_len == pipeline.model.config.max_len
    assert changes["output"] == pipeline.generate(["abc"], max_new_tokens=pipeline.model.config.max_len)[0]
    serial = user.run.serial
    lab.show(user, Controls("reverse", "abc", max_len=None))
    lab.do(lab.decoding.run, user, Controls("reverse", "abc", max_len=0))
    assert user.run.serial == serial  # the same run, not one started afresh on every event


def test_step_is_off_when_finished_and_on_again_for_an_edited_source(lab):
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    assert lab.do(lab.decoding.run, user, c)["step"] is False
    c.source = "abcd"
    assert lab.show(user, c)["step"] is True  # Step would start the new source
    c.source = "abc"
    assert lab.show(user, c)["step"] is False


def test_a_tab_the_page_opened_with_no_request_is_drawn_with_the_next_event(lab):
    """The page opens a tab it draws itself with no request (decoding/in_page.mjs `opened`); every event it sends
    names the open tab, so the server draws that tab (what of it the page does not make) with the next one."""
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.do(lab.decoding.step, user, c)
    assert user.tab == "attention"
    named = dataclasses.replace(c, page=json.dumps({"servers": True, "tab": "survey"}))
    found = lab.do(lab.decoding.step, user, named)
    assert user.tab == "survey" and "No survey of de-en" in found["survey"]["text"]
    assert lab.open_tab(user, named, "survey") == {}  # drawn already
    unknown = dataclasses.replace(c, page=json.dumps({"servers": True, "tab": "nowhere"}))
    assert "survey" not in lab.do(lab.decoding.step, user, unknown) and user.tab == "survey"


def test_selecting_the_open_tab_draws_nothing(lab):
    """As the page opens, gradio selects the open tab beside the opening Run: that select must send nothing (an
    empty decoding sent after the Run's answer would blank the views)."""
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    assert lab.open_tab(user, c, "attention") == {}
    assert "steps" in lab.do(lab.decoding.run, user, c)


def test_the_next_step_is_decoded_ahead_and_taken_by_step_only_while_it_holds(lab):
    user, c = UserState(), Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.do(lab.decoding.step, user, c)
    lab.decoding.step_ahead(user)
    version, forked = loop(user.run).ahead
    assert version == user.run.version and len(forked.steps) == 2 and len(user.run.session.steps) == 1
    stepped = lab.do(lab.decoding.step, user, c)
    assert user.run.session is forked and stepped["steps"]["op"] == "step"  # taken, not decoded again
    plain = DecodingSession(forked.model, forked.src_ids, top_k=8, max_new_tokens=8)
    assert [plain.step().token for _ in range(2)] == user.run.session.tokens
    lab.decoding.step_ahead(user)
    _, third = loop(user.run).ahead
    lab.do(lab.decoding.back, user, c)  # the run changed: what was decoded ahead is dropped
    assert loop(user.run).ahead is None
    lab.do(lab.decoding.step, user, c)
    assert user.run.session is not third and user.run.session.tokens == plain.tokens
    lab.do(lab.decoding.run, user, c)
    lab.decoding.step_ahead(user)
    assert loop(user.run).ahead is None  # finished: nothing left to decode ahead


def test_a_lab_that_decodes_ahead_does_it_after_answering_a_step(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    lab = make_lab(Registry.of(tiny_pipelines()))
    lab.ahead = ThreadPoolExecutor(1)
    user, c = UserState(), Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.do(lab.decoding.step, user, c)
    lab.ahead.shutdown(wait=True)  # the step decoded ahead has been made
    assert loop(user.run).ahead is not None and loop(user.run).ahead[0] == user.run.version
    lab.ahead = ThreadPoolExecutor(1)
    lab.do(lab.decoding.run, user, c)  # finished: nothing to decode ahead
    lab.ahead.shutdown(wait=True)
    assert loop(user.run).ahead is None


def test_a_stream_to_the_page_ends_on_a_part_that_changes_nothing(lab):
    """gradio ends an answer's stream by sending its last part again, and on a loaded server that copy can come after
    a later answer (a Run clicked while a model switch's stream was ending put the Output back to ""). A Step's stream
    to the page still open while a Run is answered, and a calm one, both end on a part that changes no output; a
    script's (gradio_client reads the last part as the answer) ends on the answer."""
    from types import SimpleNamespace

    import gradio as gr

    from attention_lab.decoding.from_page import SERVERS
    from attention_lab.page.wiring import Wiring
    from attention_lab.tabs import LOOP

    def run_meanwhile(user, wait_s):  # Run, clicked while the Step's stream waits
        lab.do(lab.decoding.run, user, c)
        return {}

    def parts(user, sent):
        stream = wiring.streamed(user, lab.do, sent, lab.decoding.step, user, c)
        return [dict(zip([o.name for o in LOOP.outputs], part[1:])) for part in stream]

    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    wiring = Wiring.__new__(Wiring)  # its streams alone: no components
    wiring.lab, wiring.outputs = SimpleNamespace(after=run_meanwhile, shared=lab.shared), list(LOOP.outputs)
    page = dataclasses.replace(c, page=SERVERS)  # the page shows a decoding the server made
    for who in (UserState(), UserState()):
        answer, last = parts(who, page)
        assert answer["output"] and answer["back"] == {"__type__": "update", "interactive": True}
        assert all(update == gr.skip() for update in last.values())
        wiring.lab.after = lambda user, wait_s: {}
    [answer] = parts(UserState(), c)  # a script's
    assert answer["output"] and answer["back"] == {"__type__": "update", "interactive": True}


def test_a_streams_later_part_replaces_values_and_never_edits_inside_one():
    """gradio's client in the page applies an edit inside a value to the object it handed the page with the part
    before, which, when the parts arrive together, empties that part's updates before the page draws them
    (attention_lab/page/streams.py; the browser's case: test_browser.py). The app's Blocks sends such a part whole."""
    from types import SimpleNamespace

    import gradio as gr

    from attention_lab.page.streams import Blocks

    answer = [{"__type__": "update", "interactive": True}, "the output", {"__type__": "update", "value": "Finished"}]
    quiet = [{"__type__": "update"}] * 3
    fn = SimpleNamespace(outputs=[None] * 3)
    for blocks in (gr.Blocks(), Blocks()):
        first = blocks.handle_streaming_diffs(fn, list(answer), "session", "run", final=False)
        later = blocks.handle_streaming_diffs(fn, list(quiet), "session", "run", final=False)
        last = blocks.handle_streaming_diffs(fn, list(quiet), "session", "run", final=True)
        assert first == answer and last == quiet
        inside = [edit for edits in later for edit in edits if edit[1]]
        if isinstance(blocks, Blocks):
            assert not inside and later == [[["replace", [], value]] for value in quiet]
        else:
            assert inside  # gradio's own: the edits that emptied an answer's updates
