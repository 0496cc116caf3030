"""The Patch tab through the Lab (as the page's events drive it) and in the page's drawing code (patch/patch.mjs, in
Node): the message patches the whole decoding after the click, a click on a source word corrupts it (noise, or a
close word of as many tokens), and what the page says at a step is where the reversal model reads it from."""

from __future__ import annotations

import pytest

from attention_lab.app import make_lab
from attention_lab.checks import InputError
from attention_lab.controls import Controls
from attention_lab.models.registry import load_models
from attention_lab.patch import corruption
from attention_lab.patch import feature as patch_tab
from attention_lab.patch.feature import NOISE, SWAP, PatchState, pick, set_corrupted, start_again
from attention_lab.run.state import UserState
from tests.node import needs_node, run_modules

SLOW = next(output.slow for output in patch_tab.OUTPUTS if output.name == "patch")


@pytest.fixture(scope="module")
def lab():
    return make_lab(load_models([]))


def opened(lab, source: str = "abcdef", model: str = "reverse"):
    """A run of `source` with the Patch tab open: (user, controls, the message filled after the click)."""
    user, c = UserState(), Controls(model, source)
    lab.do(lab.decoding.run, user, c)
    answered = lab.open_tab(user, c, "patch")
    assert answered["corrupted"] == source  # prefilled with the clean source
    assert answered["patch"] == {"op": "computing", "text": SLOW}  # the click does not wait for it
    return user, c, lab.fill(user)["patch"]


def test_the_corrupted_source_starts_as_the_clean_one_and_the_tab_says_so(lab):
    _, _, message = opened(lab)
    assert message["op"] == "patch" and message["steps"] == [] and "is the clean one" in message["hint"]
    assert [w["label"] for w in message["words"]] == list("abcdef")  # the end token is no word to click


def test_a_typed_corrupted_source_patches_every_step_and_the_page_says_where_the_difference_lives(lab):
    user, c, _ = opened(lab)
    lab.do(set_corrupted, user, c, "abcxef")
    message = lab.fill(user)["patch"]
    assert message["tokens"] == user.run.session.tokens and len(message["steps"]) == 7
    assert message["corrupted_output"] == "fexcba" and message["changed"] == [False] * 3 + [True] + [False] * 3
    step = message["steps"][2]  # writes "d", read from source position 4
    assert step["token"] == "d" and step["encoder_states"][-1][3] >= 0.9
    assert all(r is None for row in message["steps"][0]["encoder_states"] for r in row)  # "f" is not changed


@needs_node
def test_the_page_names_the_mirror_position_at_the_step_that_writes_it(lab):
    user, c, _ = opened(lab)
    lab.do(set_corrupted, user, c, "abcxef")
    message = lab.fill(user)["patch"]
    decoding = {"steps": [{"token": t} for t in message["tokens"]]}
    lines = run_modules(
        {"patch": "patch/patch.mjs"},
        "return [1, 2, 3].map((s) => patch.summary(patch.stepOf(data.m, data.d, s), data.m));",
        {"m": message, "d": decoding},
    )
    assert "nothing to restore" in lines[0] and "nothing to restore" in lines[1]
    assert "source position 4 (“d”)" in lines[2], lines[2]


def test_a_click_on_a_word_adds_or_removes_noise_or_swaps_it_for_a_close_word_of_as_many_tokens(lab):
    user, c, _ = opened(lab, "Der kleine Hund schläft im Garten.", model="de-en")
    lab.do(pick, user, c, 2, NOISE, "")
    message = lab.fill(user)["patch"]
    assert message["noise"] == [2] and message["steps"]
    assert message["changed"][3] and sum(message["changed"]) == 1  # "Hund" is one piece, after "Der kl ##eine"
    lab.do(pick, user, c, 2, NOISE, "")
    assert lab.fill(user)["patch"]["noise"] == []
    clean = user.run.session.src_ids
    swapped = []
    for _ in range(2):
        answered = lab.do(pick, user, c, 2, SWAP, user.run.states.get(PatchState).corrupted or "")
        swapped.append(answered["corrupted"])
    tokenizer = user.run.pipeline.tokenizer
    pipeline = user.run.pipeline
    assert swapped == [corruption.swapped(pipeline, clean, 2, nth) for nth in (0, 1)]  # the closest, then the next
    assert swapped[0] != swapped[1] and all("Hund" not in text for text in swapped)
    for text in swapped:
        ids = tokenizer.encode(text)
        assert len(ids) == len(clean) and sum(a != b for a, b in zip(ids, clean)) == 1
    answered = lab.do(start_again, user, c)
    assert answered["corrupted"] == "Der kleine Hund schläft im Garten."


def test_a_corrupted_source_of_another_length_is_said_in_the_tab(lab):
    user, c, _ = opened(lab)
    lab.do(set_corrupted, user, c, "abc")
    message = lab.fill(user)["patch"]
    assert message["steps"] == [] and message["hint"].startswith("The corrupted source is 4 tokens and the clean one 7")


def test_before_any_run_the_actions_ask_for_one(lab):
    with pytest.raises(InputError, match="Run a source first"):
        set_corrupted(UserState(), Controls("reverse", "abc"), "abd")
