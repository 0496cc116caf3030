"""The app's behaviour (Lab, no server), then the real app over HTTP with gradio_client."""

import json
from pathlib import Path

import pytest
from gradio_client import Client

from lab.actions import Lab
from lab.checks import InputError
from lab.registry import Registry
from lab.session import UserState
from tests.conftest import tiny_pipelines
from transformer import DecodingSession


@pytest.fixture(scope="module")
def lab():
    return Lab(Registry(models=tiny_pipelines()))


def test_run_equals_one_shot_decoding(lab):
    user = UserState()
    screen = lab.run(user, "reverse", "abc123", max_len=24)
    pipeline = lab.registry.models["reverse"]
    assert screen.output == pipeline.generate(["abc123"], max_new_tokens=24)[0]
    assert screen.n_steps == len(user.run.session.steps)
    eos = user.run.session.steps[-1].token == pipeline.model.config.eos_id
    assert screen.step == screen.n_steps - (1 if eos and screen.n_steps > 1 else 0)  # the last word, not eos
    assert {"encoder", "decoder_self", "cross", "spotlight", "top_k"} <= set(screen.figures)


def test_step_through_gives_the_same_tokens_as_run(lab):
    stepper, runner = UserState(), UserState()
    lab.run(runner, "de-en", "Ich habe Hunger.", max_len=10)
    for _ in range(10):
        if stepper.run is not None and stepper.run.session.finished:
            break
        screen = lab.step(stepper, "de-en", "Ich habe Hunger.", max_len=10)
    assert stepper.run.session.tokens == runner.run.session.tokens
    assert screen.output == lab.screen(runner).output
    with pytest.raises(InputError, match="finished"):
        lab.step(stepper, "de-en", "Ich habe Hunger.", max_len=10)


def test_back_and_what_if(lab):
    user = UserState()
    first = lab.step(user, "reverse", "hello", max_len=8)
    lab.step(user, "reverse", "hello", max_len=8)
    back = lab.back(user)
    assert back.n_steps == 1 and back.output == first.output
    _, token = first.candidates[1]  # the runner-up at step 1
    forced = lab.force(user, 1, token)
    session = user.run.session
    assert session.steps[0].token == int(token) and session.steps[0].forced
    assert forced.step == 1 and forced.n_steps == len(session.steps) and session.finished
    # decoding went on greedily from the forced token: the same as a fresh session forced the same way
    replay = DecodingSession(session.model, session.src_ids, max_new_tokens=8)
    replay.step(force=int(token))
    assert replay.run() == session.tokens
    with pytest.raises(InputError, match="candidate tokens"):
        lab.force(user, 1, "0")  # pad is no candidate; nothing is lost
    assert user.run.session.tokens == session.tokens
    assert lab.reset(user).output == "" and user.run is None
    with pytest.raises(InputError, match="Nothing to go back"):
        lab.back(user)


def test_stepping_works_when_the_max_length_exceeds_the_model_limit(lab):
    user = UserState()
    limit = lab.registry.models["reverse"].model.config.max_len
    for n in range(1, 4):
        screen = lab.step(user, "reverse", "abc", max_len=limit + 40)
        assert screen.n_steps == n  # the run continues rather than restarting


def test_changing_the_text_or_model_starts_over(lab):
    user = UserState()
    lab.step(user, "reverse", "abc", max_len=8)
    lab.step(user, "reverse", "abcd", max_len=8)
    assert len(user.run.session.steps) == 1 and user.run.text == "abcd"
    lab.step(user, "de-en", "Das ist ein Haus.", max_len=8)
    assert user.run.model_name == "de-en"


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (None, "empty"),
        ("\u200b\u200b", "empty"),
        (" \x00 ", "empty"),
    ],
)
def test_empty_input_is_refused_with_a_message(lab, text, message):
    with pytest.raises(InputError, match=message):
        lab.run(UserState(), "reverse", text)


def test_characters_outside_the_reversal_alphabet_are_named(lab):
    with pytest.raises(InputError, match=r"'A' \(latin capital letter a\), exclamation mark \(U\+0021\)"):
        lab.run(UserState(), "reverse", "abA!c")


def test_text_longer_than_the_model_limit_is_truncated_with_a_notice(lab):
    user = UserState()
    screen = lab.step(user, "reverse", "a" * 100, max_len=5)
    assert "only the first 23" in screen.status
    src_ids = user.run.session.src_ids
    assert len(src_ids) == 24 and src_ids[-1] == lab.registry.models["reverse"].tokenizer.eos_id  # </s> is kept


def test_unknown_model_is_a_message(lab):
    with pytest.raises(InputError, match="Unknown model"):
        lab.run(UserState(), "nope", "abc")


def test_beam_view_and_export(lab, tmp_path):
    user = UserState()
    screen = lab.run(user, "de-en", "Das ist ein Haus.", strategy="beam", beam_size=3, max_len=8)
    pipeline = lab.registry.models["de-en"]
    assert screen.output == pipeline.generate(["Das ist ein Haus."], strategy="beam", beam_size=3, max_new_tokens=8)[0]
    assert screen.beam_rows and screen.beam_rows[0][:2] == [1, 1] and len(screen.beam_rows[0]) == 4
    record = json.loads(Path(lab.export(user)).read_text(encoding="utf-8"))
    assert record["output_tokens"] == pipeline.tokenizer.tokens(user.run.session.tokens)
    with pytest.raises(InputError, match="Nothing to export"):
        lab.export(UserState())


def test_view_choices_follow_the_model(lab):
    layers, heads = lab.view_choices("reverse")
    assert layers == ["All layers", "Layer 1", "Layer 2"]
    assert heads[:2] == ["All heads", "Mean of heads"] and len(heads) == 2 + 4
    assert Lab.parse_view("Layer 2", "Head 3").layers == 1 and Lab.parse_view("Layer 2", "Head 3").heads == 2
    assert Lab.parse_view("All layers", "Mean of heads").heads == "mean"


@pytest.fixture(scope="module")
def served(served_app):
    url, registry, _ = served_app
    return Client(url, verbose=False), registry


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
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(repo)}
    result = subprocess.run(
        [sys.executable, "-c", UNREACHABLE], env=env, capture_output=True, text=True, timeout=120, cwd=repo, check=False
    )
    assert result.returncode == 0, result.stderr
    models, error = result.stdout.splitlines()[:2]
    assert models == "['de-en', 'reverse']"
    assert error.startswith("someone/not-cached: could not get it from the Hugging Face Hub")


def test_run_after_beam_with_greedy_decodes_greedily_again(lab):
    user = UserState()
    text = "Das ist ein Haus."
    beam = lab.run(user, "de-en", text, strategy="beam", beam_size=3, max_len=8)
    greedy = lab.run(user, "de-en", text, strategy="greedy", max_len=8)
    pipeline = lab.registry.models["de-en"]
    assert greedy.output == pipeline.generate([text], max_new_tokens=8)[0] and not greedy.beam_rows
    assert beam.beam_rows


def test_a_run_without_a_max_length_takes_the_models(lab):
    user = UserState()
    pipeline = lab.registry.models["reverse"]
    screen = lab.run(user, "reverse", "abc", max_len=None)
    assert user.run.max_len == pipeline.model.config.max_len
    assert screen.output == pipeline.generate(["abc"], max_new_tokens=pipeline.model.config.max_len)[0]
