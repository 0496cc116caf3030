"""The app's behaviour (Lab, no server), then the real app over HTTP with gradio_client."""

import json
import re
from pathlib import Path

import pytest
from gradio_client import Client

import page
from lab.actions import BEAM_MODE, FOCUS_MEAN, Controls, Lab
from lab.checks import InputError
from lab.examples import CURATED
from lab.export import page_html
from lab.registry import Registry
from lab.session import UserState
from tests.conftest import tiny_pipelines
from transformer import DecodingSession

VIEWS = {"cross", "encoder", "decoder_self"}


@pytest.fixture(scope="module")
def lab():
    return Lab(Registry(models=tiny_pipelines(), trained_lengths={"reverse": 6}))


def test_run_equals_one_shot_decoding(lab):
    user = UserState()
    changes = lab.run(user, Controls("reverse", "abc123", max_len=24))
    pipeline = lab.registry.models["reverse"]
    session = user.run.session
    assert changes["output"] == pipeline.generate(["abc123"], max_new_tokens=24)[0]
    eos = session.steps[-1].token == pipeline.model.config.eos_id
    n = len(session.steps)
    shown = n - 1 if eos and n > 1 else n  # the last word, not eos
    assert changes["scrub"] == {"value": shown, "maximum": n, "interactive": True}
    assert changes["step_button"] is False and changes["back_button"] is True
    assert {"output", "status", "now", "top_k", "cross", "beams", "original"} <= set(changes)
    assert not {"encoder", "decoder_self", "compare"} & set(changes)  # only the open tab is drawn
    assert len(changes["cross"].data) == 2 and f"Step {shown} wrote" in changes["now"]


def test_step_through_gives_the_same_tokens_as_run(lab):
    stepper, runner = UserState(), UserState()
    c = Controls("de-en", "Ich habe Hunger.", max_len=10)
    lab.run(runner, c)
    outputs = []
    while stepper.run is None or not stepper.run.session.finished:
        outputs.append(lab.step(stepper, c).get("output"))
    assert stepper.run.session.tokens == runner.run.session.tokens
    assert outputs[-1] == lab.registry.models["de-en"].tokenizer.decode(runner.run.session.tokens)
    with pytest.raises(InputError, match="finished"):
        lab.step(stepper, c)


def test_a_step_after_the_first_sends_the_open_view_but_never_the_encoder(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    first = lab.step(user, c)
    assert first["scrub"]["value"] == 1 and first["back_button"] is True
    second = lab.step(user, c)
    assert {"cross", "now", "top_k", "scrub"} <= set(second)
    assert not {"encoder", "decoder_self", "compare", "original", "step_button", "back_button"} & set(second)
    assert second["scrub"] == {"value": 2, "maximum": 2, "interactive": True}


def test_a_tab_is_drawn_when_opened_and_only_once(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.step(user, c)
    c.shown = 1
    opened = lab.show(user, c, tab="encoder")
    assert set(opened) == {"encoder"} and user.tab == "encoder" and len(opened["encoder"].data) == 2
    assert lab.show(user, c, tab="encoder") == {}  # nothing changed: nothing sent
    stepped = lab.step(user, c)  # the encoder does not change with the step; the hidden cross view is not drawn
    assert not VIEWS & set(stepped) and "now" in stepped
    back_to_cross = lab.show(user, Controls("de-en", "Das ist ein Haus.", max_len=8, shown=2), tab="cross")
    assert set(back_to_cross) == {"cross"}
    assert set(lab.show(user, c, tab="decoder_self")) == {"decoder_self"}  # a tab keeps the step shown (2)
    assert set(lab.show(user, Controls("de-en", "Das ist ein Haus.", max_len=8, shown=2, scale="log"))) == {
        "decoder_self",
        "now",
    }  # a new colour scale redraws the open view and the now view; the probabilities stay


def test_opening_a_tab_keeps_the_step_shown_whatever_the_slider_says(lab):
    """The page selects its first tab as it opens, with the slider still at 0, while its first Run may already have
    finished: the tab must show the run's step, not step 0."""
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    lab.run(user, c)
    shown = user.shown
    assert shown and shown > 0
    c.shown = 0
    lab.show(user, c, tab="cross")
    assert user.shown == shown
    assert lab.show(user, c)["now"].count("wrote") == 0  # the slider itself still goes to step 0


def test_step_in_beam_mode_is_refused_and_changes_nothing(lab):
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    lab.step(user, c)
    drawn, steps = dict(user.drawn), list(user.run.session.steps)
    with pytest.raises(InputError, match="Beam mode: Step is off") as err:
        lab.step(user, Controls("reverse", "abc", strategy="beam", max_len=8))
    assert str(err.value) == BEAM_MODE
    assert user.drawn == drawn and user.run.session.steps == steps
    switched = lab.show(user, Controls("reverse", "abc", strategy="beam", max_len=8))
    assert switched["step_button"] is False and BEAM_MODE in switched["status"]


def test_back_at_step_0_is_refused(lab):
    with pytest.raises(InputError, match=re.escape("Nothing to go back to: this is step 0.")):
        lab.back(UserState(), Controls("reverse", "abc"))
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    lab.step(user, c)
    back = lab.back(user, c)
    assert back["back_button"] is False and back["output"] == "" and back["scrub"]["value"] == 0
    assert "nothing written yet" in back["now"] and back["top_k"] is None
    with pytest.raises(InputError, match="Nothing to go back"):
        lab.back(user, c)


def test_step_0_can_be_shown(lab):
    user = UserState()
    lab.run(user, Controls("reverse", "abc", max_len=8))
    at_0 = lab.show(user, Controls("reverse", "abc", max_len=8, shown=0))
    assert "Step 0: nothing written yet" in at_0["now"] and at_0["top_k"] is None
    assert at_0["scrub"]["value"] == 0 and at_0["cross"].data == ()
    assert "output" not in at_0  # the decoding is the same; only the shown step moved
    too_far = lab.show(user, Controls("reverse", "abc", max_len=8, shown=99))
    assert too_far["scrub"]["value"] == len(user.run.session.steps)


def test_back_and_what_if(lab):
    user = UserState()
    c = Controls("reverse", "hello", max_len=8)
    first = lab.step(user, c)
    lab.step(user, c)
    back = lab.back(user, c)
    assert len(user.run.session.steps) == 1 and back["output"] == first["output"]
    label = list(first["top_k"])[1]  # the runner-up at step 1, as the page labels it
    before = user.run.session.tokens
    forced = lab.force(user, Controls("reverse", "hello", max_len=8, shown=1, candidate=label))
    session = user.run.session
    assert session.steps[0].forced and "(forced by a what-if)" in forced["now"]
    assert forced["original"] == {
        "value": lab.registry.models["reverse"].tokenizer.decode(before),
        "label": "Before the what-if",
    }
    assert forced["scrub"]["value"] == 1 and session.finished and forced["step_button"] is False
    # decoding went on greedily from the forced token: the same as a fresh session forced the same way
    replay = DecodingSession(session.model, session.src_ids, max_new_tokens=8)
    replay.step(force=session.steps[0].token)
    assert replay.run() == session.tokens
    assert "compare" not in forced
    compare = lab.show(user, Controls("reverse", "hello", max_len=8, shown=1), tab="compare")
    assert set(compare) == {"compare"} and len(compare["compare"].data) == 2
    for bad in ("999999", "0", "not a candidate"):  # out of range, pad, no such label: nothing is lost
        with pytest.raises(InputError, match="candidate tokens"):
            lab.force(user, Controls("de-en", "", shown=1, candidate=bad))
    assert user.run.session.tokens == session.tokens
    reset = lab.reset(user, c)
    assert reset["output"] == "" and reset["original"] is None and user.run is None
    with pytest.raises(InputError, match="Decode a step first"):
        lab.force(user, Controls("reverse", "hello", shown=1, candidate=label))


def test_a_what_if_takes_a_digit_label_as_the_token_it_shows(lab):
    """The reversal model's candidates include digits: the label "7" is the token "7", not the token id 7."""
    user = UserState()
    c = Controls("reverse", "abc123", max_len=8, top_k=20)
    shown = lab.step(user, c)
    digits = [label for label in shown["top_k"] if label.split()[0].isdigit()]
    assert digits, shown["top_k"]
    lab.force(user, Controls("reverse", "abc123", max_len=8, top_k=20, shown=1, candidate=digits[0]))
    tokenizer = lab.registry.models["reverse"].tokenizer
    assert tokenizer.id_to_token(user.run.session.steps[0].token) == digits[0].split()[0]


def test_stepping_works_when_the_max_length_exceeds_the_model_limit(lab):
    user = UserState()
    limit = lab.registry.models["reverse"].model.config.max_len
    for n in range(1, 4):
        changes = lab.step(user, Controls("reverse", "abc", max_len=limit + 40))
        assert changes["scrub"]["value"] == n  # the run continues rather than restarting


def test_changing_the_text_or_model_starts_over(lab):
    user = UserState()
    lab.step(user, Controls("reverse", "abc", max_len=8))
    serial = user.run.serial
    lab.step(user, Controls("reverse", "abcd", max_len=8))
    assert len(user.run.session.steps) == 1 and user.run.text == "abcd" and user.run.serial != serial
    changes = lab.step(user, Controls("de-en", "Das ist ein Haus.", max_len=8))
    assert user.run.model_name == "de-en" and len(user.run.session.steps) == 1
    assert {"output", "cross", "now", "top_k"} <= set(changes) and "scrub" not in changes  # still at step 1 of 1


def test_a_new_model_keeps_text_it_can_read_and_otherwise_takes_its_first_example(lab):
    assert lab.example_for("reverse", "Ich habe Hunger.") == CURATED["reverse"][0][0]
    assert lab.example_for("reverse", "") == CURATED["reverse"][0][0]
    assert lab.example_for("reverse", "abc123") == "abc123"
    assert lab.example_for("de-en", "Das ist ein Haus.") == "Das ist ein Haus."
    assert lab.example_for("de-en", "Ich 😀 habe") == CURATED["de-en"][0][0]  # would be read with <unk>
    assert lab.focus_choices("reverse")[0] == FOCUS_MEAN
    assert lab.focus_choices("reverse")[1:3] == ["Layer 1 · Head 1", "Layer 1 · Head 2"]
    assert len(lab.focus_choices("reverse")) == 1 + 2 * 4 and lab.focus_choices("reverse")[-1] == "Layer 2 · Head 4"
    assert Controls(focus="Layer 2 · Head 3").look.focus == (1, 2)
    assert Controls(focus=FOCUS_MEAN).look.focus is None and Controls(focus="Layer 0 · Head 1").look.focus is None


def test_a_source_longer_than_the_training_data_gets_a_notice(lab):
    long = lab.run(UserState(), Controls("reverse", "abcdefgh", max_len=12))
    assert "This source is 8 characters, longer than any the model saw in training (up to 6)" in long["status"]
    assert lab.run(UserState(), Controls("reverse", "abcdef", max_len=12))["status"].startswith("Finished")
    assert "longer than any" not in lab.run(UserState(), Controls("de-en", "Das ist ein Haus " * 3))["status"]


@pytest.mark.parametrize("text", ["", "   \n\t", None, "\u200b\u200b", " \x00 "])
def test_empty_input_is_refused_with_a_message(lab, text):
    with pytest.raises(InputError, match="empty"):
        lab.run(UserState(), Controls("reverse", text))


def test_characters_outside_the_reversal_alphabet_are_named(lab):
    with pytest.raises(InputError, match=r"'A' \(latin capital letter a\), exclamation mark \(U\+0021\)"):
        lab.run(UserState(), Controls("reverse", "abA!c"))


def test_text_longer_than_the_model_limit_is_truncated_with_a_notice(lab):
    user = UserState()
    changes = lab.step(user, Controls("reverse", "a" * 100, max_len=5))
    assert "only the first 23" in changes["status"]
    src_ids = user.run.session.src_ids
    assert len(src_ids) == 24 and src_ids[-1] == lab.registry.models["reverse"].tokenizer.eos_id  # </s> is kept


def test_unknown_model_is_a_message(lab):
    with pytest.raises(InputError, match="Unknown model"):
        lab.run(UserState(), Controls("nope", "abc"))


def test_beam_view_and_export(lab):
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", strategy="beam", beam_size=3, max_len=8)
    changes = lab.run(user, c)
    pipeline = lab.registry.models["de-en"]
    expected = pipeline.generate(["Das ist ein Haus."], strategy="beam", beam_size=3, max_new_tokens=8)[0]
    assert changes["output"] == expected and changes["step_button"] is False and BEAM_MODE in changes["status"]
    rows = changes["beams"]
    assert rows and rows[0][:2] == [1, 1] and len(rows[0]) == 4 and {r[1] for r in rows} <= {1, 2, 3}
    record = json.loads(Path(lab.export(user)).read_text(encoding="utf-8"))
    assert record["output_tokens"] == pipeline.tokenizer.tokens(user.run.session.tokens)
    with pytest.raises(InputError, match="Nothing to export"):
        lab.export(UserState())


def test_the_html_export_holds_every_view_and_escapes_the_text(lab):
    user = UserState()
    c = Controls("de-en", "<b>fett</b> & mehr", max_len=6)
    lab.run(user, c)
    page = Path(page_html(lab, user, c)).read_text(encoding="utf-8")
    assert page.count('class="plotly-graph-div"') == 3 and "Step " in page and "<li>" in page
    assert "&lt;b&gt;fett&lt;/b&gt;" in page and "<b>fett</b>" not in page
    with pytest.raises(InputError, match="Nothing to export"):
        page_html(lab, UserState(), c)


def test_run_after_beam_with_greedy_decodes_greedily_again(lab):
    user = UserState()
    text = "Das ist ein Haus."
    beam = lab.run(user, Controls("de-en", text, strategy="beam", beam_size=3, max_len=8))
    greedy = lab.run(user, Controls("de-en", text, max_len=8))
    pipeline = lab.registry.models["de-en"]
    assert pipeline.tokenizer.decode(user.run.session.tokens) == pipeline.generate([text], max_new_tokens=8)[0]
    assert not any(step.forced for step in user.run.session.steps)  # decoded, not the beam replayed
    assert beam["beams"] and greedy.get("beams") == []


def test_a_run_without_a_max_length_takes_the_models(lab):
    user = UserState()
    pipeline = lab.registry.models["reverse"]
    changes = lab.run(user, Controls("reverse", "abc", max_len=None))
    assert user.run.max_len == pipeline.model.config.max_len
    assert changes["output"] == pipeline.generate(["abc"], max_new_tokens=pipeline.model.config.max_len)[0]
    serial = user.run.serial
    lab.show(user, Controls("reverse", "abc", max_len=None))
    lab.run(user, Controls("reverse", "abc", max_len=0))
    assert user.run.serial == serial  # the same run, not one started afresh on every event


# The real app over HTTP -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(served_app):
    url, registry, _ = served_app
    return Client(url, verbose=False), registry


def ui(client, action: str, model: str, text: str, **controls) -> dict:
    """A button's endpoint called as the page calls it: every control, in page.INPUTS order; the answer by name (the
    Step and Back buttons' own updates do not reach an API client)."""
    values = {
        "strategy": "greedy",
        "beam_size": 4,
        "max_len": 64,
        "top_k_shown": 8,
        "scrub": 0,
        "words": True,
        "hide_specials": False,
        "scale": "linear",
        "focus": FOCUS_MEAN,
        "reading": "weights",
        "snapshot": 0,
        **controls,
    }
    inputs = [model, text, *(values[name] for name in page.INPUTS[2:])]
    names = [name for name in page.OUTPUTS if name not in ("step_button", "back_button")]
    answer = client.predict(*inputs, api_name=f"/ui_{action}")
    assert len(answer) == len(names)
    return dict(zip(names, answer))


def skipped(value) -> bool:
    """gr.skip() as gradio_client returns it: an update without a value."""
    return isinstance(value, dict) and value.get("__type__") == "update" and "value" not in value.get("props", value)


def test_the_buttons_endpoints_answer_with_only_what_changed(served):
    client, _ = served
    client.reset_session()
    ran = ui(client, "run", "reverse", "abc123")
    assert ran["output"] == "321cba" and ran["status"]["value"].startswith("Finished") and ran["status"]["visible"]
    assert ran["scrub"]["value"] == 6 and ran["cross"]["type"] == "plotly"
    assert skipped(ran["encoder"]) and skipped(ran["decoder_self"]) and skipped(ran["compare"])
    stepped = ui(client, "step", "reverse", "abc123", scrub=6)
    assert all(map(skipped, stepped.values()))  # a warning that the run has finished; the page keeps what it has
    client.reset_session()
    first = ui(client, "step", "reverse", "abc123")
    assert first["output"] == "3" and first["scrub"]["value"] == 1
    second = ui(client, "step", "reverse", "abc123", scrub=1)
    assert second["output"] == "32" and not skipped(second["cross"]) and skipped(second["encoder"])
    back = ui(client, "back", "reverse", "abc123", scrub=2)
    assert back["output"] == "3" and back["scrub"]["value"] == 1 and skipped(back["status"])


def test_the_api_page_documents_the_api_endpoints_only(served):
    client, _ = served
    documented = client.view_api(return_format="dict", print_info=False)["named_endpoints"]
    # no stray /UserState from the state's default, and none of the page's own events
    assert set(documented) == {"/translate", "/attention", "/heads", "/training", "/ablate", "/edit"}


def test_a_user_error_is_one_line_in_the_server_log_not_a_traceback(served, capfd, caplog):
    client, _ = served
    caplog.set_level("INFO", logger="attention_lab")
    with pytest.raises(Exception, match="empty"):
        client.predict("de-en", "   ", "greedy", 4, api_name="/translate")
    _, err = capfd.readouterr()
    assert "Traceback" not in err
    assert [r.getMessage() for r in caplog.records if r.name == "attention_lab"] == [
        "user error: Type a source text first: it is empty."
    ]


def test_api_translate_matches_the_model(served):
    client, registry = served
    assert {"reverse", "de-en"} <= set(registry.models)
    assert client.predict("reverse", "abc123", "greedy", 4, api_name="/translate") == "321cba"
    text = "Ich habe Hunger."
    expected = registry.models["de-en"].generate([text])[0]
    assert client.predict("de-en", text, "greedy", 4, api_name="/translate") == expected
    beam = registry.models["de-en"].generate([text], strategy="beam", beam_size=4)[0]
    assert client.predict("de-en", text, "beam", 4, api_name="/translate") == beam


def test_api_attention_returns_every_head(served):
    client, registry = served
    record = client.predict("reverse", "abc", "greedy", 4, api_name="/attention")
    cfg = registry.models["reverse"].model.config
    assert record["output_text"] == "cba" and record["output_tokens"][-1] == "</s>"
    assert len(record["encoder"]) == cfg.n_encoder_layers and len(record["encoder"][0]) == cfg.n_heads
    assert len(record["steps"]) == 4 and len(record["steps"][0]["cross"][0][0]) == 4  # a, b, c, </s>


def test_api_bad_input_is_a_clear_error_and_the_app_keeps_working(served):
    client, _ = served
    with pytest.raises(Exception, match="only knows lowercase letters and digits"):
        client.predict("reverse", "Hello!", "greedy", 4, api_name="/translate")
    with pytest.raises(Exception, match="empty"):
        client.predict("de-en", "   ", "greedy", 4, api_name="/translate")
    assert client.predict("reverse", "ok", "greedy", 4, api_name="/translate") == "ko"


def test_api_heads_ablate_and_edit_answer_in_their_documented_shapes(served):
    client, registry = served
    cfg = registry.models["reverse"].model.config
    heads = client.predict("reverse", "abc", api_name="/heads")
    assert set(heads) == {"encoder", "decoder_self", "cross"}
    assert [len(layer) for layer in heads["cross"]] == [cfg.n_heads] * cfg.n_decoder_layers
    assert set(heads["cross"][0][0]) == {"entropy", "special", "alignment"}
    assert heads["encoder"][0][0]["alignment"] is None and 0 <= heads["cross"][1][2]["alignment"] <= 1
    ablated = client.predict("reverse", "abc", ["cross:*:*"], api_name="/ablate")
    assert set(ablated) == {"output_text", "steps"} and len(ablated["steps"]) == 4  # a, b, c, </s>
    assert set(ablated["steps"][0]) == {"step", "token", "kl", "top_k"} and ablated["steps"][0]["token"] == "c"
    assert client.predict("reverse", "abc", [], api_name="/ablate")["output_text"] == "cba"
    edited = client.predict("reverse", "abc", 1, 2, ["cross:*:*"], api_name="/edit")
    assert set(edited) == {"token", "probability", "top_k", "output_text"}
    assert edited["token"] == "b" and edited["output_text"].startswith("b")


@pytest.mark.parametrize(
    ("endpoint", "args", "message"),
    [
        ("/ablate", ("reverse", "abc", ["mlp:1:1"]), "Unknown kind 'mlp'"),
        ("/ablate", ("reverse", "abc", ["cross:9:1"]), "No layer 9"),
        ("/edit", ("reverse", "abc", 7, 1, ["cross:*:*"]), "Step must be a whole number from 1 to 4"),
        ("/edit", ("reverse", "abc", 1, 7, ["cross:*:*"]), "Position must be a whole number from 1 to 4"),
        ("/heads", ("reverse", "  "), "empty"),
    ],
)
def test_api_bad_lens_requests_get_one_line_and_the_server_keeps_answering(served, endpoint, args, message):
    client, _ = served
    with pytest.raises(Exception, match=message):
        client.predict(*args, api_name=endpoint)
    assert client.predict("reverse", "ok", "greedy", 4, api_name="/translate") == "ko"


UNREACHABLE = """
import app
registry = app.load_models(["someone/not-cached"])
print(sorted(registry.models))
print(registry.errors["someone/not-cached"])
"""


@pytest.mark.slow
def test_unreachable_hub_model_is_reported_and_the_bundled_models_still_work():
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(repo)}
    result = subprocess.run(
        [sys.executable, "-c", UNREACHABLE], env=env, capture_output=True, text=True, timeout=120, cwd=repo, check=False
    )
    assert result.returncode == 0, result.stderr
    models, error = result.stdout.splitlines()[:2]
    assert models == "['de-en', 'reverse']"
    assert error.startswith("someone/not-cached: could not get it from the Hugging Face Hub")


def test_step_is_off_when_finished_and_on_again_for_an_edited_source(lab):
    user = UserState()
    c = Controls("reverse", "abc", max_len=8)
    assert lab.run(user, c)["step_button"] is False
    c.text = "abcd"
    assert lab.show(user, c)["step_button"] is True  # Step would start the new source
    c.text = "abc"
    assert lab.show(user, c)["step_button"] is False


def test_selecting_the_open_tab_draws_nothing(lab):
    """As the page opens, gradio selects the open tab beside the opening Run: that select must send no views."""
    user = UserState()
    c = Controls("de-en", "Das ist ein Haus.", max_len=8)
    assert lab.show(user, c, tab="cross") == {}
    assert "cross" in lab.run(user, c)
